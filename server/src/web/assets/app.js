// Shared page behaviour: copy buttons, the status line screen readers hear (aria-live), and the page's texts
// (window.SecretPush.t): the catalogue's ICU messages the server put in the page as JSON (#sp-messages, its
// data-messages attribute), formatted
// with intl-messageformat (/assets/vendor/intl-messageformat.js) in the page's language.
(function () {
  'use strict';

  var catalogue = null;

  function t(key, values) {
    if (!catalogue) {
      var node = document.getElementById('sp-messages');
      try {
        catalogue = node ? JSON.parse(node.getAttribute('data-messages') || '{}') : {};
      } catch (e) {
        catalogue = {};
      }
    }
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

  window.SecretPush = { announce: announce, t: t };
})();
