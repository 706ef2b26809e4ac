// Recipient page. The page itself never consumes a view: the secret is fetched only here, when the person acts
// (Reveal, or the passphrase form), or on load when the push has no retrieval step and no passphrase. Bots that do
// not run script therefore consume nothing. Everything fetched is put in the page as text nodes.
//
// Two ways to fetch, chosen by the server (data-reveal): "api", the API without credentials (anonymous visitors of an
// open instance), or "web", the page's own POST steps as the signed-in user (session cookie, CSRF token in a header,
// passphrase in the JSON body). Both answer the same statuses and bodies, so everything below handles them alike.
//
// An end-to-end encrypted push (data-e2e) comes back as the sender's envelopes: it is decrypted here with the key in
// the link's fragment (location.hash, never sent to a server) by the SDK's own code (window.SecretPushE2E), and its
// files are downloaded, decrypted and saved under their real names. A missing or damaged key, or a browser without
// WebCrypto, is reported before anything is fetched, so it costs no view.
(function () {
  'use strict';
  var root = document.getElementById('push');
  if (!root) return;
  var token = root.getAttribute('data-token');
  var viaWeb = root.getAttribute('data-reveal') === 'web';
  var csrf = root.getAttribute('data-csrf') || '';
  var api = '/api/v2/pushes/' + encodeURIComponent(token);
  var step = '/p/' + encodeURIComponent(token);
  var busy = false;
  var e2e = root.getAttribute('data-e2e');
  var E = window.SecretPushE2E;
  /** The key from the fragment (end-to-end encrypted pushes only). */
  var key = null;
  /** Set when nothing may be fetched (the secret could not be decrypted here anyway). */
  var blocked = false;

  function $(id) {
    return document.getElementById(id);
  }
  function t(key, values) {
    return window.SecretPush ? window.SecretPush.t(key, values) : key;
  }

  // A refusal's text in the page's language (app.js).
  function apiError(body, fallback) {
    if (window.SecretPush) return window.SecretPush.apiError(body, fallback);
    return (body && body.error) || fallback;
  }
  function announce(message) {
    if (window.SecretPush) window.SecretPush.announce(message);
  }

  function showError(message) {
    var box = $('push-error');
    box.textContent = message;
    box.hidden = false;
  }

  function clearError() {
    var box = $('push-error');
    box.textContent = '';
    box.hidden = true;
  }

  function setBusy(on) {
    busy = on;
    $('loading').hidden = !on;
    var buttons = root.querySelectorAll('button');
    for (var i = 0; i < buttons.length; i += 1) buttons[i].disabled = on;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showGone(deleted) {
    root.hidden = true;
    $('revealed').hidden = true;
    var gone = $('gone');
    gone.hidden = false;
    if (deleted) $('gone-text').textContent = t('js.recipient.deleted');
    $('gone-title').focus();
    announce($('gone-title').textContent);
  }

  function isWebUrl(text) {
    try {
      var u = new URL(text);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch (e) {
      return false;
    }
  }

  function renderSecret(push) {
    var box = $('secret-content');
    box.textContent = '';
    var payload = typeof push.payload === 'string' ? push.payload : '';
    if (push.kind === 'url' && isWebUrl(payload)) {
      var p = el('p');
      var a = el(
        'a',
        { href: payload, rel: 'noopener noreferrer', target: '_blank', id: 'secret-value', class: 'share' },
        payload,
      );
      p.appendChild(a);
      box.appendChild(p);
      box.appendChild(copyButton('secret-value', t('js.recipient.copyUrl')));
    } else if (push.kind === 'qr') {
      var figure = el('figure', { class: 'qr' });
      var caption = el('figcaption', { class: 'visually-hidden' }, t('js.recipient.qrCaption'));
      var holder = el('div', { id: 'qr-code', role: 'img', 'aria-label': t('js.recipient.qrLabel') });
      figure.appendChild(holder);
      figure.appendChild(caption);
      box.appendChild(figure);
      var details = el('details');
      details.appendChild(el('summary', null, t('js.recipient.qrShowText')));
      details.appendChild(el('pre', { class: 'secret', id: 'secret-value' }, payload));
      box.appendChild(details);
      if (window.QRCode && payload) {
        window.QRCode.toString(payload, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }).then(
          function (svgText) {
            // The SVG is made by the QR library from the module matrix only (paths, no text of the payload).
            var doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
            var svg = doc.documentElement;
            if (svg && svg.nodeName.toLowerCase() === 'svg') holder.appendChild(document.importNode(svg, true));
          },
          function () {
            holder.appendChild(el('p', { class: 'error' }, t('js.recipient.qrFailed')));
          },
        );
      }
    } else {
      if (payload || push.kind !== 'file') {
        box.appendChild(el('pre', { class: 'secret', id: 'secret-value', tabindex: '0' }, payload));
        box.appendChild(copyButton('secret-value', t('js.recipient.copySecret')));
      }
    }
    var files = Array.isArray(push.files) ? push.files : [];
    if (files.length > 0) {
      box.appendChild(el('h3', null, t('js.recipient.filesHeading', { count: files.length })));
      var list = el('ul', { class: 'files' });
      files.forEach(function (f) {
        var li = el('li');
        if (key) {
          // The server's link serves the envelope: the click downloads, decrypts and saves it here.
          var button = el('a', { href: f.url, rel: 'noopener noreferrer', 'data-decrypt': '' }, safeName(f.filename));
          var state = el('span', { class: 'muted', role: 'status' });
          button.addEventListener('click', function (event) {
            event.preventDefault();
            downloadDecrypted(f, state);
          });
          li.appendChild(button);
          li.appendChild(
            document.createTextNode(
              ' ' + t('js.recipient.fileSize', { size: Math.max(f.size - E.BINARY_OVERHEAD, 0) }) + ' ',
            ),
          );
          li.appendChild(state);
        } else {
          var link = el(
            'a',
            { href: f.url, download: safeName(f.filename), rel: 'noopener noreferrer' },
            safeName(f.filename),
          );
          li.appendChild(link);
          li.appendChild(document.createTextNode(' ' + t('js.recipient.fileSize', { size: f.size })));
        }
        list.appendChild(li);
      });
      box.appendChild(list);
      box.appendChild(el('p', { class: 'hint' }, t('js.recipient.downloadWindow')));
    }
  }

  // Stops the page before it fetches anything: the reason is shown, the reveal controls go away, no view is spent.
  function block(message) {
    blocked = true;
    showError(message);
    ['passphrase-form', 'reveal-step', 'auto-note', 'access-step'].forEach(function (id) {
      if ($(id)) $(id).hidden = true;
    });
  }

  function checkKey() {
    if (!E || !window.crypto || !window.crypto.subtle) {
      block(t('js.recipient.noCrypto'));
      return;
    }
    if (e2e !== E.CLIENT_ENCRYPTION.scheme + ':' + E.CLIENT_ENCRYPTION.version) {
      block(t('js.recipient.unknownScheme'));
      return;
    }
    var link = null;
    try {
      link = E.parseShareLink(location.href);
    } catch (e) {
      link = null;
    }
    key = link ? link.key : null;
    if (!key) {
      block(t('js.recipient.missingKey'));
    } else if (!E.isKey(key)) {
      key = null;
      block(t('js.recipient.damagedKey'));
    }
  }

  // The answer was fetched (a view was spent) but does not open with this key.
  function decryptFailed(error) {
    var code = error && error.code;
    if (code === 'not_encrypted') {
      block(t('js.recipient.notEncrypted'));
    } else if (error instanceof E.UnsupportedEncryptionError) {
      block(t('js.recipient.unknownSchemeFetched'));
    } else {
      block(t('js.recipient.wrongKey'));
    }
  }

  function fileError(status, body) {
    if (status === 0) return t('js.recipient.unreachableShort');
    if (body && body.code === 'link_expired') return t('js.recipient.fileLinkExpired');
    return t('js.recipient.fileFailedReason', {
      reason: apiError(body, t('js.recipient.status', { status: status })),
    });
  }

  // A file name without control or bidi characters (a decrypted name never passed the server's cleaning), as the
  // server stores and serves names (@secret-push/rules safeFilename).
  function safeName(name) {
    var clean = String(name).replace(
      /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
      '',
    );
    return clean === '' ? 'file' : clean;
  }

  // An encrypted file: fetch its envelope, decrypt it here, and save it under its real name.
  function downloadDecrypted(file, status) {
    status.textContent = t('js.recipient.decrypting');
    fetch(file.url, { credentials: 'omit', cache: 'no-store' })
      .then(function (response) {
        if (response.ok) return response.arrayBuffer();
        return response
          .json()
          .catch(function () {
            return {};
          })
          .then(function (body) {
            throw { message: fileError(response.status, body) };
          });
      })
      .then(function (buffer) {
        return E.openFile(file, new Uint8Array(buffer));
      })
      .then(function (bytes) {
        var url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
        var save = el('a', { href: url, download: safeName(file.filename), hidden: '' });
        document.body.appendChild(save);
        save.click();
        document.body.removeChild(save);
        window.setTimeout(function () {
          URL.revokeObjectURL(url);
        }, 60000);
        status.textContent = t('js.recipient.saved');
        announce(t('js.recipient.savedAnnounce', { name: safeName(file.filename) }));
      })
      .catch(function (error) {
        if (error instanceof E.EndToEndError) status.textContent = t('js.recipient.fileWrongKey');
        else if (error instanceof Error) status.textContent = t('js.recipient.fileFailed');
        else status.textContent = error.message;
      });
  }

  function copyButton(targetId, label) {
    var b = el('button', { type: 'button', class: 'secondary', 'data-copy-target': targetId }, label);
    return b;
  }

  function showRevealed(push) {
    root.hidden = true;
    renderSecret(push);
    var info = $('expiry-info');
    if (push.views_remaining === 0) {
      info.textContent = t('js.recipient.lastView');
    } else {
      info.textContent = t('js.recipient.expiresIn', { days: push.days_remaining, views: push.views_remaining });
    }
    $('delete-area').hidden = !(push.deletable_by_viewer && push.views_remaining > 0);
    $('revealed').hidden = false;
    $('revealed-title').focus();
    announce(t('js.recipient.shown'));
  }

  // A POST to the page's own step: same origin, the session cookie, the CSRF token in a header, a JSON body.
  function webInit(body) {
    return {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    };
  }

  // Why the server refused (not a passphrase problem): the sign-in ended, the page is stale, or not allowed.
  function refusal(status, body) {
    if (status === 401 && body.code === 'authentication_required') {
      return t('js.recipient.signedOut');
    }
    if (status === 403 && body.code === 'csrf_rejected') {
      return t('js.recipient.pageExpired');
    }
    if (status === 403) return t('js.recipient.notAllowed');
    return apiError(body, t('js.recipient.refused', { status: status }));
  }

  // A wrong code (issue 42): said, the field emptied and focused for the next one.
  function codeRefused(message) {
    showError(message);
    var input = $('access_code');
    if (input) {
      input.value = '';
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
  }

  // `code`: the access code of a push for specific people (the code form), else undefined.
  function retrieve(passphrase, code) {
    if (busy || blocked) return;
    clearError();
    setBusy(true);
    var request;
    if (viaWeb) {
      var body = {};
      if (passphrase !== undefined) body.passphrase = passphrase;
      if (code !== undefined) body.access_code = code;
      request = fetch(step + '/reveal', webInit(body));
    } else {
      var headers = { Accept: 'application/json' };
      if (passphrase !== undefined) headers['X-Passphrase'] = passphrase;
      if (code !== undefined) headers['X-Access-Code'] = code;
      request = fetch(api, { method: 'GET', headers: headers, credentials: 'omit', cache: 'no-store' });
    }
    request
      .then(function (response) {
        return response
          .json()
          .catch(function () {
            return {};
          })
          .then(function (body) {
            return { response: response, body: body };
          });
      })
      .then(function (r) {
        setBusy(false);
        var status = r.response.status;
        var body = r.body || {};
        if (status === 200) {
          if (body.expired) showGone(body.deleted);
          else if (key) E.openPush(body, key).then(showRevealed, decryptFailed);
          else showRevealed(body);
        } else if (status === 401 && (body.code === 'access_code_incorrect' || body.code === 'access_code_required')) {
          codeRefused(t('js.recipient.codeWrong'));
        } else if (status === 401 && body.code === 'passphrase_incorrect') {
          // A right code is not used up by a wrong passphrase: it stays in its field for the next try.
          showError(t('js.recipient.passphraseWrong'));
          var input = $('passphrase');
          if (input) {
            input.value = '';
            input.setAttribute('aria-invalid', 'true');
            input.focus();
          }
        } else if (status === 401 && body.code === 'passphrase_required') {
          showError(t('js.recipient.passphraseRequired'));
          if ($('passphrase')) $('passphrase').focus();
        } else if (status === 429) {
          var wait = r.response.headers.get('Retry-After');
          showError(
            wait && Number(wait) >= 0
              ? t('js.recipient.tooManyWait', { seconds: Number(wait) })
              : t('js.recipient.tooManyMinute'),
          );
        } else if (status === 404) {
          showGone(false);
        } else if (status === 401 || status === 403) {
          showError(refusal(status, body));
        } else {
          showError(
            t('js.recipient.fetchFailed', {
              reason: apiError(body, t('js.recipient.errorStatus', { status: status })),
            }),
          );
        }
      })
      .catch(function () {
        setBusy(false);
        showError(t('js.recipient.unreachable'));
      });
  }

  function deleteNow() {
    if (busy) return;
    setBusy(true);
    var request = viaWeb
      ? fetch(step + '/delete', webInit({}))
      : fetch(api, {
          method: 'DELETE',
          headers: { Accept: 'application/json' },
          credentials: 'omit',
          cache: 'no-store',
        });
    request
      .then(function (response) {
        return response
          .json()
          .catch(function () {
            return {};
          })
          .then(function (body) {
            setBusy(false);
            if (response.ok) {
              $('secret-content').textContent = '';
              showGone(true);
            } else if (response.status === 401 || response.status === 403) {
              $('delete-status').textContent = refusal(response.status, body || {});
            } else {
              $('delete-status').textContent = t('js.recipient.deleteFailed', { status: response.status });
            }
          });
      })
      .catch(function () {
        setBusy(false);
        $('delete-status').textContent = t('js.recipient.unreachableShort');
      });
  }

  if (e2e) checkKey();

  var form = $('passphrase-form');
  if (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      retrieve($('passphrase').value);
    });
  }
  // The code form (issue 42) works without this script too (a POST answered with the secret); here it goes through the
  // same fetch as the reveal, so an end-to-end encrypted secret is decrypted in the page.
  var codeForm = $('code-form');
  if (codeForm) {
    codeForm.addEventListener('submit', function (event) {
      event.preventDefault();
      var code = $('access_code').value.trim();
      if (code === '') {
        codeRefused(t('js.recipient.codeMissing'));
        return;
      }
      retrieve($('passphrase') ? $('passphrase').value : undefined, code);
    });
  }
  var reveal = $('reveal');
  if (reveal)
    reveal.addEventListener('click', function () {
      retrieve(undefined);
    });
  var del = $('delete-now');
  if (del) del.addEventListener('click', deleteNow);

  if (root.getAttribute('data-auto') === 'true') retrieve(undefined);
})();
