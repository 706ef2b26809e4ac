// Create page: show only the fields that fit the chosen kind (without script every field stays visible), and
// "Encrypt in my browser": the secret, the file names and the files are encrypted here (SecretPushE2E, the SDK's own
// code) before the form is sent. The key travels to the page that shows the link in the fragment of the form's
// action (`/#k=…`): browsers never send a fragment, so the server never sees the key.
(function () {
  'use strict';

  // The page that shows the link: the key comes from this page's fragment, never from the server.
  var shareLink = document.getElementById('share-link');
  if (shareLink && shareLink.getAttribute('data-e2e') === '1') {
    var match = /(?:^#|&)k=([A-Za-z0-9_-]{43})(?:&|$)/.exec(location.hash);
    if (match) {
      var link = shareLink.getAttribute('href').split('#')[0] + '#k=' + match[1];
      shareLink.setAttribute('href', link);
      shareLink.textContent = link;
    } else {
      shareLink.hidden = true;
      document.getElementById('key-missing').hidden = false;
    }
    // The key stays in the link on the page, not in the address bar (where a reload or a shared screen shows it).
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    return;
  }

  var form = document.getElementById('create-form');
  if (!form) return;
  // A refused encrypted form comes back at `/#k=…`: that key encrypted nothing that was stored; drop it from the bar.
  if (/(?:^#|&)k=/.test(location.hash)) history.replaceState(null, '', location.pathname + location.search);
  var payloadLabel = document.getElementById('payload-label');
  var payloadHint = document.getElementById('payload-hint');
  var filesField = document.getElementById('files-field');
  var payload = document.getElementById('payload');
  var filesInput = document.getElementById('files');
  var encryptBox = document.getElementById('encrypt_in_browser');
  var encryptError = document.getElementById('encrypt-error');
  var t = window.SecretPush.t;
  var KINDS = ['text', 'url', 'qr', 'file'];
  function kindOf() {
    var checked = form.querySelector('input[name="kind"]:checked');
    return checked ? checked.value : 'text';
  }
  function update() {
    var kind = kindOf();
    var k = KINDS.indexOf(kind) === -1 ? 'text' : kind;
    payloadLabel.textContent = t('js.create.' + k + 'Label');
    payloadHint.textContent = t('js.create.' + k + 'Hint');
    payload.required = kind !== 'file';
    if (filesField) filesField.hidden = kind !== 'file';
  }
  form.addEventListener('change', function (event) {
    if (event.target && event.target.name === 'kind') update();
  });
  update();

  if (!encryptBox) return;
  var E = window.SecretPushE2E;
  var sealing = false;

  function showEncryptError(message) {
    encryptError.textContent = message;
    encryptError.hidden = false;
    encryptError.setAttribute('tabindex', '-1');
    encryptError.focus();
  }

  function canEncrypt() {
    return Boolean(E && window.crypto && window.crypto.subtle && typeof DataTransfer === 'function');
  }

  // Without WebCrypto (an http:// address that is not localhost, an old browser) nothing can be encrypted here: say
  // so at once; a submit with the box ticked is then refused by the server instead of storing the plaintext.
  if (!canEncrypt()) {
    encryptError.textContent = t(
      encryptBox.disabled ? 'js.create.cannotEncryptRequired' : 'js.create.cannotEncryptUntick',
    );
    encryptError.hidden = false;
    return;
  }

  function messages(errors) {
    var out = [];
    for (var field in errors) {
      if (Object.prototype.hasOwnProperty.call(errors, field)) {
        out.push(
          t('js.create.fieldErrors', {
            field: t('js.create.field', { field: field }),
            errors: errors[field].join('; '),
          }),
        );
      }
    }
    return out.join(' ');
  }

  // Puts the envelopes into the form, submits it, and puts the person's own input back at once: the browser reads
  // the form's entries when submit() is called, so only the envelopes are sent, and a page restored by the Back
  // button shows the plaintext form again (never envelopes that a second submit would encrypt once more).
  function submitSealed(sealed) {
    var plaintext = payload.value;
    var chosen = filesInput ? filesInput.files : null;
    var marker = document.createElement('input');
    marker.type = 'hidden';
    marker.name = 'client_encryption';
    marker.value = sealed.push.client_encryption.scheme + ':' + sealed.push.client_encryption.version;
    payload.value = typeof sealed.push.payload === 'string' ? sealed.push.payload : '';
    if (filesInput) {
      var transfer = new DataTransfer();
      (sealed.push.files || []).forEach(function (f) {
        transfer.items.add(new File([E.base64ToBytes(f.content)], f.filename, { type: 'application/octet-stream' }));
      });
      filesInput.files = transfer.files;
    }
    form.appendChild(marker);
    form.setAttribute('action', '/#k=' + sealed.key);
    try {
      form.submit();
    } finally {
      form.removeChild(marker);
      form.setAttribute('action', '/');
      payload.value = plaintext;
      if (filesInput && chosen) filesInput.files = chosen;
    }
  }

  // One submit at a time (a second click while encrypting would make a second push); a page restored by Back is new.
  window.addEventListener('pageshow', function () {
    sealing = false;
  });

  form.addEventListener('submit', function (event) {
    if (!encryptBox.checked) return;
    event.preventDefault();
    if (sealing) return;
    sealing = true;
    encryptError.hidden = true;
    var kind = kindOf();
    var files = kind === 'file' && filesInput ? Array.prototype.slice.call(filesInput.files) : [];
    var params = {
      kind: kind,
      files: files.map(function (f) {
        return { filename: f.name, data: f };
      }),
    };
    if (payload.value !== '' || kind !== 'file') params.payload = payload.value;
    E.sealPush(params).then(submitSealed, function (error) {
      sealing = false;
      if (error instanceof E.ValidationError && error.errors)
        showEncryptError(t('js.create.notSent', { reasons: messages(error.errors) }));
      else
        showEncryptError(
          t('js.create.encryptFailed', {
            reason: error && error.message ? error.message : t('js.create.unknownError'),
          }),
        );
    });
  });
})();
