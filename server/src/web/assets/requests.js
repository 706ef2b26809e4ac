// Sealed requests in the browser (issue 24), with the e2e bundle (window.SecretPushE2E): the requester's key pair is
// made here and kept in IndexedDB as non-extractable CryptoKeys; a responder's answer is sealed here before it is
// sent; the requester's page opens the sealed key here and links to the answer with the content key in the fragment.
(() => {
  'use strict';
  const E2E = window.SecretPushE2E;
  const DB = 'secret-push-requests';
  const STORE = 'key-pairs';
  const $ = (id) => document.getElementById(id);
  const t = (key, values) => window.SecretPush.t(key, values);

  function store(mode, action) {
    return new Promise((resolve, reject) => {
      const open = indexedDB.open(DB, 1);
      open.onupgradeneeded = () => open.result.createObjectStore(STORE);
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const tx = open.result.transaction(STORE, mode);
        const req = action(tx.objectStore(STORE));
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      };
    });
  }

  // 1. "Request a secret" with sealing: make the key pair, keep it, send its public half.
  const requestForm = $('request-form');
  if (requestForm) {
    requestForm.addEventListener('submit', async (event) => {
      if (!requestForm.elements.seal.checked || requestForm.dataset.sealed === 'yes') return;
      event.preventDefault();
      const { keyPair, publicKey } = await E2E.generateRequestKeyPair();
      await store('readwrite', (s) => s.put(keyPair, publicKey.x));
      requestForm.elements.public_key.value = JSON.stringify(publicKey);
      requestForm.dataset.sealed = 'yes';
      requestForm.submit();
    });
  }

  // 2. The responder's page of a sealed request: seal the answer, send it to the API. Its fields have no name and its
  // button is off in the page as served, so that nothing typed can leave without this script: it turns the button on.
  const answerForm = $('answer-form');
  if (answerForm && answerForm.dataset.sealing) {
    answerForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      const sealing = JSON.parse(answerForm.dataset.sealing);
      const token = answerForm.dataset.token;
      const passphrase = $('passphrase').value;
      const error = $('answer-error');
      try {
        const sealed = await E2E.sealPush({
          kind: 'text',
          payload: $('payload').value,
          ...(passphrase ? { passphrase } : {}),
        });
        const sealedKey = await E2E.sealContentKey(sealing.public_key, token, E2E.base64UrlToBytes(sealed.key));
        const response = await fetch(`/api/v2/requests/${encodeURIComponent(token)}/response`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ push: sealed.push, sealed_key: sealedKey }),
        });
        if (response.status !== 201)
          throw new Error(
            window.SecretPush.apiError(
              await response.json().catch(() => null),
              t('js.requests.errorStatus', { status: response.status }),
            ),
          );
        answerForm.hidden = true;
        $('answer-sent').hidden = false;
      } catch (e) {
        error.textContent = t('js.requests.notSent', { reason: e.message });
        error.hidden = false;
      }
    });
    for (const button of answerForm.querySelectorAll('button[data-needs-script]')) button.disabled = false;
  }

  // 3. The requester's page: open the sealed key with the key pair this browser kept.
  const open = $('open-answer');
  if (open && open.dataset.sealedKey) {
    (async () => {
      const fail = (message) => {
        const error = $('open-answer-error');
        error.textContent = message;
        error.hidden = false;
      };
      try {
        const keyPair = await store('readonly', (s) => s.get(open.dataset.publicX));
        if (!keyPair) return fail(t('js.requests.noKeyPair'));
        const key = await E2E.openContentKey(keyPair, open.dataset.token, open.dataset.sealedKey);
        open.href = `${open.dataset.answerUrl}#k=${E2E.bytesToBase64Url(key)}`;
        open.hidden = false;
      } catch (e) {
        fail(t('js.requests.wrongKeyPair', { reason: e.code || e.name }));
      }
    })();
  }
})();
