// Shared page behaviour: copy buttons, the status line screen readers hear (aria-live), and the page's texts
// (window.SecretPush.t): the catalogue's ICU messages the server put in the page as JSON (#sp-messages, its
// data-messages attribute), formatted
// with intl-messageformat (/assets/vendor/intl-messageformat.js) in the page's language.
(function () {
  'use strict';

  var catalogue = null;

  function load() {
    if (!catalogue) {
      var node = document.getElementById('sp-messages');
      try {
        catalogue = node ? JSON.parse(node.getAttribute('data-messages') || '{}') : {};
      } catch (e) {
        catalogue = {};
      }
    }
    return catalogue;
  }

  function t(key, values) {
    load();
    var message = catalogue.messages && catalogue.messages[key];
    if (typeof message !== 'string') return key;
    var intl = window.SecretPushIntl;
    if (!intl) return message;
    try {
      return String(new intl.IntlMessageFormat(message, catalogue.locale).format(values));
    } catch (e) {
      return message;
    }
  }

  function announce(message) {
    var status = document.getElementById('status');
    if (!status) return;
    status.textContent = '';
    // A fresh text node after clearing, so the same message is announced again.
    window.setTimeout(function () {
      status.textContent = message;
    }, 30);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'visually-hidden';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand('copy');
      } catch (e) {
        ok = false;
      }
      document.body.removeChild(area);
      if (ok) resolve();
      else reject(new Error('copy failed'));
    });
  }

  document.addEventListener('click', function (event) {
    var button = event.target instanceof Element ? event.target.closest('button[data-copy-target]') : null;
    if (!button) return;
    var target = document.getElementById(button.getAttribute('data-copy-target'));
    if (!target) return;
    var text = 'value' in target && typeof target.value === 'string' ? target.value : target.textContent || '';
    copyText(text).then(
      function () {
        button.textContent = t('js.app.copied');
        announce(t('js.app.copiedAnnounce'));
      },
      function () {
        announce(t('js.app.copyFailed'));
      },
    );
  });

  // A refusal's text (issue 42), as the server's pages say it (server/src/web/error-text.ts): the API's own `error` in
  // English, else the catalogue's sentence for its `code` (js.apiError.<code in camel case>), else the API's text,
  // else `fallback`.
  function apiError(body, fallback) {
    var english = body && typeof body.error === 'string' && body.error !== '' ? body.error : fallback;
    if (!body || typeof body.code !== 'string' || load().locale === 'en') return english;
    var key =
      'js.apiError.' +
      body.code.replace(/_([a-z0-9])/g, function (_m, c) {
        return c.toUpperCase();
      });
    var text = t(key);
    return text === key ? english : text;
  }

  window.SecretPush = { announce: announce, t: t, apiError: apiError };
})();
