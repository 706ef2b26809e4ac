// Sign-in and sign-up pages reached from a secret's link (a closed instance sends signed-out recipients there): the
// link's fragment holds the key of an end-to-end encrypted secret, which browsers never send to a server, so it is
// carried here instead: onto the prompt's links, and onto the form's action, whose fragment the browser keeps through
// the redirect back to the link (a Location without a fragment inherits the request's).
(function () {
  'use strict';
  var hash = location.hash;
  if (!/^#(?:.*&)?k=/.test(hash)) return;
  var links = document.querySelectorAll('a[data-keep-fragment]');
  for (var i = 0; i < links.length; i += 1)
    links[i].setAttribute('href', links[i].getAttribute('href').split('#')[0] + hash);
  var forms = document.querySelectorAll('form[data-keep-fragment]');
  for (var j = 0; j < forms.length; j += 1) {
    var next = forms[j].querySelector('input[name="next"]');
    // Only for a way back to a secret's page: the key has no business anywhere else.
    if (next && /^\/p\/[^/?#]+(?:\/r)?$/.test(next.value))
      forms[j].setAttribute('action', forms[j].getAttribute('action').split('#')[0] + hash);
  }
})();
