// The join page of an invitation link (`/workspaces/join#<token>`): the token lives in the fragment, which browsers
// never send. This script takes it out of the address at once (replaceState: it stays out of the history too) and,
// signed in, puts it into the page's form and sends it (a POST body: no address, no access log, ever holds it); the
// answer shows what the invitation offers, and a button accepts it. Signed out, the token waits in this tab's
// sessionStorage (this origin only, sent nowhere) while the visitor signs in, for 30 minutes; the page they come back
// to (the sign-in's `next`) finds it there and forgets it.
(function () {
  'use strict';
  var STORE = 'secret-push:invitation';
  var MAX_AGE_MS = 30 * 60 * 1000;
  var TOKEN = /^[A-Za-z0-9_-]{43}$/;

  function kept() {
    try {
      var entry = JSON.parse(sessionStorage.getItem(STORE) || 'null');
      var age = entry && typeof entry.at === 'number' ? Date.now() - entry.at : -1;
      return entry && typeof entry.token === 'string' && TOKEN.test(entry.token) && age >= 0 && age < MAX_AGE_MS
        ? entry.token
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

  var fromAddress = location.hash.slice(1);
  var token = TOKEN.test(fromAddress) ? fromAddress : null;
  if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);

  var form = document.getElementById('join-form');
  if (!form) {
    // Signed out: keep it for the way back from the sign-in.
    if (token) {
      try {
        sessionStorage.setItem(STORE, JSON.stringify({ token: token, at: Date.now() }));
      } catch (e) {
        /* no storage: the visitor opens the link again once signed in (the page says so) */
      }
    }
    return;
  }
  if (!token) token = kept();
  forget();
  if (!token) return;
  var input = document.getElementById('join-token');
  var wait = document.getElementById('join-wait');
  input.value = token;
  if (wait) wait.hidden = false;
  form.submit();
})();
