// Shared page behaviour: copy buttons and the status line screen readers hear (aria-live).
(function () {
  'use strict';

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
        button.textContent = 'Copied';
        announce('Copied to the clipboard.');
      },
      function () {
        announce('Could not copy. Select the text and copy it by hand.');
      },
    );
  });

  window.SecretPush = { announce: announce };
})();
