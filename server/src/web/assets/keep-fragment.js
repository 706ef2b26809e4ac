// The key of an end-to-end encrypted secret lives in its link's fragment (`#k=…`), which browsers never send to a
// server. When a closed instance sends a signed-out recipient to sign in, the key must come back to the link without
// ever being sent anywhere. Two ways, both in this script:
//
// - Sign-in and sign-up pages reached from a secret's link carry the fragment onto the prompt's links and onto the
//   password forms' action, whose fragment the browser keeps through the redirect back to the link (a Location without
//   a fragment inherits the request's).
// - A trip through the identity provider (single sign-on) or through a second-factor step loses that fragment: the
//   provider's pages are another site, and the forms after it post to addresses of their own. So, when a form here is
//   sent, the fragment is also kept in this tab's sessionStorage (this origin only, never sent with a request), with the
//   secret's path; the secret's page, opened without a fragment, puts it back into its own address (replaceState: no
//   navigation, so nothing here can send the browser anywhere) and forgets it. Only for a way back to a secret's page
//   (`/p/<token>` or `/p/<token>/r`), and for 15 minutes. The "Sign in with …" form does not put the key into its
//   action, so it is in no address of the trip at all.
(function () {
  'use strict';
  var STORE = 'secret-push:fragment';
  var MAX_AGE_MS = 15 * 60 * 1000;
  var SECRET_PAGE = /^\/p\/[^/?#]+(?:\/r)?$/;
  var HAS_KEY = /^#(?:.*&)?k=/;

  function kept() {
    try {
      var entry = JSON.parse(sessionStorage.getItem(STORE) || 'null');
      return entry && typeof entry.path === 'string' && typeof entry.hash === 'string' && typeof entry.at === 'number'
        ? entry
        : null;
    } catch (e) {
      return null;
    }
  }
  function forget() {
    try {
      sessionStorage.removeItem(STORE);
    } catch (e) {
      /* no storage: nothing was kept */
    }
  }

  // A secret's page (the recipient's, or the closed instance's prompt to sign in): put back the fragment kept for it,
  // and forget it, or a stale one.
  var entry = SECRET_PAGE.test(location.pathname) ? kept() : null;
  if (entry) {
    var age = Date.now() - entry.at;
    var fresh = age >= 0 && age < MAX_AGE_MS;
    var mine = entry.path === location.pathname;
    if (mine || !fresh) forget();
    if (fresh && mine && !location.hash && HAS_KEY.test(entry.hash) && entry.hash.length <= 512)
      history.replaceState(history.state, '', location.pathname + location.search + entry.hash);
  }

  var hash = location.hash;
  if (!HAS_KEY.test(hash)) return;
  var links = document.querySelectorAll('a[data-keep-fragment]');
  for (var i = 0; i < links.length; i += 1)
    links[i].setAttribute('href', links[i].getAttribute('href').split('#')[0] + hash);
  var forms = document.querySelectorAll('form[data-keep-fragment]');
  for (var j = 0; j < forms.length; j += 1) {
    var form = forms[j];
    var next = form.querySelector('input[name="next"]');
    // Only for a way back to a secret's page: the key has no business anywhere else.
    if (!next || !SECRET_PAGE.test(next.value)) continue;
    if (form.getAttribute('data-keep-fragment') !== 'storage-only')
      form.setAttribute('action', form.getAttribute('action').split('#')[0] + hash);
    form.addEventListener('submit', function (event) {
      var back = event.currentTarget.querySelector('input[name="next"]').value;
      try {
        sessionStorage.setItem(STORE, JSON.stringify({ path: back, hash: hash, at: Date.now() }));
      } catch (e) {
        /* no storage: the password forms still carry the fragment in their action */
      }
    });
  }
})();
