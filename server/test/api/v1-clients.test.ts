/**
 * The legacy v1 JSON API (issue 11), driven through real HTTP with the requests the v1 clients of
 * /work/shared/reference/client-dialects.md send, each flow checked by its effect: what was created is retrieved,
 * the audit log shows the views, a delete makes the push expired. Every answer is checked against the v1 document
 * (serve.ts → spec-check.ts), and the server checks its own answers too (validateResponses; a mismatch is logged).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient } from '@secret-push/sdk';
import { multipart } from './support/multipart.js';
import { startRealApi, type RealApi } from './support/real.js';

let api: RealApi;
let alice: { token: string; userId: string; email: string };
let bob: { token: string; userId: string; email: string };

beforeAll(async () => {
  api = await startRealApi({ fileMaxBytes: 64 * 1024 });
  alice = await api.user('v1-alice@example.org');
  bob = await api.user('v1-bob@example.org');
});
afterEach(() => {
  expect(api.checker.violations).toEqual([]);
  expect(api.logs.filter((line) => line.includes('does not match the contract'))).toEqual([]);
});
afterAll(async () => {
  // Every v1 operation was called and its answers checked against the v1 document.
  const seen = new Set(api.checker.checked.map((c) => c.operationId));
  for (const id of [
    'getVersionV1',
    'createPasswordV1',
    'createFilePushV1',
    'createUrlPushV1',
    'getPushV1',
    'previewPushV1',
    'getPushAuditV1',
    'expirePushV1',
    'listActivePushesV1',
    'listExpiredPushesV1',
  ]) {
    expect(seen.has(id), id).toBe(true);
  }
  await api?.stop();
});

/** The legacy header pair, as PassPushPosh, the Terraform providers and pwpush-cli ≤ 0.13 send it. */
const legacy = (user: { email: string; token: string }) => ({ 'X-User-Email': user.email, 'X-User-Token': user.token });
const json = { 'content-type': 'application/json' };
const secret = (label: string) => `${label}-${Math.random().toString(36).slice(2)}`;

const get = (path: string, headers: Record<string, string> = {}) => api.raw(path, { headers });
const del = (path: string, headers: Record<string, string> = {}) => api.raw(path, { method: 'DELETE', headers });
const post = (path: string, body: BodyInit, headers: Record<string, string>) =>
  api.raw(path, { method: 'POST', headers, body });

describe('PassPushPosh (and CIPP through it)', () => {
  it('checks the version, creates in the password wrapper, retrieves with ?passphrase=, previews, audits, lists and deletes', async () => {
    const version = await get('/api/v1/version.json');
    expect(version.status).toBe(200);
    expect(Number.parseFloat(version.body.api_version)).toBeGreaterThan(1.0);
    expect(version.body).toEqual({
      application_version: expect.stringMatching(/^\d+(\.\d+)*$/),
      api_version: '1.5',
      edition: 'oss',
    });

    const payload = secret('posh');
    const created = await post(
      '/p.json',
      JSON.stringify({
        password: {
          payload,
          expire_after_days: 2,
          expire_after_views: 3,
          deletable_by_viewer: false,
          retrieval_step: false,
          passphrase: 'blue-giraffe-42',
          note: 'ticket 7',
        },
      }),
      { ...json, ...legacy(alice) },
    );
    expect(created.status).toBe(201);
    const token: string = created.body.url_token;
    expect(created.body).toMatchObject({
      kind: 'text',
      expire_after_days: 2,
      expire_after_views: 3,
      views_remaining: 3,
      passphrase_protected: true,
      note: 'ticket 7',
      expired: false,
    });
    expect(created.body).not.toHaveProperty('passphrase');
    // PassPushPosh builds its link from json_url without ".json" (decision 3).
    expect(created.body.json_url).toBe(`${api.baseUrl}/p/${token}.json`);
    expect(created.body.json_url.replace('.json', '')).toBe(created.body.html_url);

    const withoutPhrase = await get(`/p/${token}.json`);
    expect([withoutPhrase.status, withoutPhrase.body.error, withoutPhrase.body.status]).toEqual([
      401,
      'This push has a passphrase that was incorrect or not provided.',
      'unauthorized',
    ]);
    const wrong = await get(`/p/${token}.json?passphrase=nope`);
    expect([wrong.status, wrong.body.code, wrong.body.message]).toEqual([
      401,
      'passphrase_incorrect',
      'That passphrase is incorrect.',
    ]);

    const retrieved = await get(`/p/${token}.json?passphrase=blue-giraffe-42`);
    expect(retrieved.status).toBe(200);
    expect([
      retrieved.body.payload,
      retrieved.body.views_remaining,
      retrieved.body.expired,
      retrieved.body.files,
    ]).toEqual([payload, 2, false, []]);
    expect(retrieved.body).not.toHaveProperty('note');

    const preview = await get(`/p/${token}/preview.json`);
    expect(preview.body).toEqual({ url: created.body.html_url });

    const audit = await get(`/p/${token}/audit.json`, legacy(alice));
    expect(audit.status).toBe(200);
    expect(audit.body.views.map((v: { kind: string; successful: boolean }) => [v.kind, v.successful])).toEqual([
      ['creation', true],
      ['failed_passphrase', false],
      ['failed_passphrase', false],
      ['view', true],
    ]);
    for (const entry of audit.body.views) expect(entry.updated_at).toBe(entry.created_at);
    expect(audit.headers.get('x-total-count')).toBe('4');

    const active = await get('/p/active.json', legacy(alice));
    expect(active.body.find((p: { url_token: string }) => p.url_token === token)).toMatchObject({
      views_remaining: 2,
      note: 'ticket 7',
      json_url: created.body.json_url,
    });

    const deleted = await del(`/p/${token}.json`, legacy(alice));
    expect([deleted.status, deleted.body.expired, deleted.body.deleted]).toEqual([200, true, true]);
    const after = await get(`/p/${token}.json?passphrase=blue-giraffe-42`);
    expect([after.status, after.body.expired, after.body.payload]).toEqual([200, true, null]);
    const expired = await get('/p/expired.json', legacy(alice));
    expect(expired.body.find((p: { url_token: string }) => p.url_token === token)).toMatchObject({
      expired: true,
      deleted: true,
      note: '',
    });
    expect(
      (await get(`/p/${token}/audit.json`, legacy(alice))).body.views.map((v: { kind: string }) => v.kind),
    ).toContain('expire');
  });

  it('shows its own "not found" text: an unknown push is exactly {"error": "not-found"}', async () => {
    for (const path of ['/p/k7mz4qv2xw5nrt3hbj6ypa2c.json', '/p/k7mz4qv2xw5nrt3hbj6ypa2c/preview.json']) {
      const missing = await get(path);
      expect([missing.status, missing.body.error, missing.body.code], path).toEqual([404, 'not-found', 'not_found']);
    }
    const audit = await get('/p/k7mz4qv2xw5nrt3hbj6ypa2c/audit.json', legacy(alice));
    expect([audit.status, audit.body.error]).toEqual([404, 'not-found']);
  });

  it('creates a QR push through /p.json with kind qr, retrieved as such', async () => {
    const created = await post(
      '/p.json',
      JSON.stringify({
        password: { kind: 'qr', payload: 'WIFI:T:WPA;S:guest;P:tangerine-7;;', expire_after_views: 2 },
      }),
      {
        ...json,
        ...legacy(alice),
      },
    );
    expect([created.status, created.body.kind]).toEqual([201, 'qr']);
    const got = await get(`/p/${created.body.url_token}.json`);
    expect([got.body.kind, got.body.payload]).toEqual(['qr', 'WIFI:T:WPA;S:guest;P:tangerine-7;;']);
  });
});

describe('terraform-provider-pwpush', () => {
  it('creates with a multipart password form and the legacy headers, and a delete makes the push expired (404 means gone)', async () => {
    const payload = secret('tf');
    const form = multipart([
      { name: 'password[payload]', value: payload },
      { name: 'password[kind]', value: 'text' },
      { name: 'password[expire_after_days]', value: '3' },
      { name: 'password[expire_after_views]', value: '1' },
      { name: 'password[deletable_by_viewer]', value: 'true' },
      { name: 'password[retrieval_step]', value: 'false' },
      { name: 'password[note]', value: 'managed by terraform' },
    ]);
    const created = await post('/p.json', form.body, { 'content-type': form.type, ...legacy(alice) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      expire_after_days: 3,
      expire_after_views: 1,
      deletable_by_viewer: true,
      retrieval_step: false,
      note: 'managed by terraform',
    });
    const token = created.body.url_token;
    expect(created.body.html_url).toBe(`${api.baseUrl}/p/${token}`);
    // The recipient's page still answers at the link the provider builds (HTML, not v1).
    const page = await fetch(`${api.baseUrl}/p/${token}`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);

    const deleted = await del(`/p/${token}.json`, legacy(alice));
    expect([deleted.status, deleted.body.expired, deleted.body.deleted]).toEqual([200, true, true]);
    const again = await del(`/p/${token}.json`, legacy(alice));
    expect([again.status, again.body.expired, again.body.expired_on]).toEqual([200, true, deleted.body.expired_on]);
    const read = await get(`/p/${token}.json`);
    expect([read.body.expired, read.body.payload]).toEqual([true, null]);
    const gone = await del('/p/zz2zz2zz2zz2zz2zz2zz2zz2.json', legacy(alice));
    expect([gone.status, gone.body.error]).toEqual([404, 'not-found']);
  });
});

describe('terraform-provider-pwpusher', () => {
  it('creates with push fields at the top level and a null passphrase, retrieves and deletes', async () => {
    const payload = secret('pusher');
    const created = await post(
      '/p.json',
      JSON.stringify({
        payload,
        passphrase: null,
        deletable_by_viewer: false,
        retrieval_step: false,
        kind: 'text',
        expire_after_views: 2,
      }),
      {
        ...json,
        ...legacy(alice),
      },
    );
    expect(created.status).toBe(201);
    expect([
      created.body.passphrase_protected,
      created.body.deletable_by_viewer,
      created.body.expire_after_views,
    ]).toEqual([false, false, 2]);
    const got = await get(`/p/${created.body.url_token}.json`, legacy(bob));
    expect([got.body.payload, got.body.views_remaining]).toEqual([payload, 1]);
    // Not deletable by viewers: anonymous 401 and another user 403, with the reference's text (decision 9).
    const anonymous = await del(`/p/${created.body.url_token}.json`);
    expect([anonymous.status, anonymous.body.error, anonymous.body.code]).toEqual([
      401,
      'That push is not deletable by viewers.',
      'authentication_required',
    ]);
    const other = await del(`/p/${created.body.url_token}.json`, legacy(bob));
    expect([other.status, other.body.error, other.body.code]).toEqual([
      403,
      'That push is not deletable by viewers.',
      'forbidden',
    ]);
    const owner = await del(`/p/${created.body.url_token}.json`, legacy(alice));
    expect([owner.status, owner.body.expired]).toEqual([200, true]);
  });
});

describe('the other v1 clients', () => {
  it('.NET: a form-urlencoded create with True; PwPush-PHP: integers and booleans as text inside JSON', async () => {
    const dotnet = await post(
      '/p.json',
      new URLSearchParams({
        'password[payload]': 'dotnet',
        'password[expire_after_days]': '7',
        'password[expire_after_views]': '5',
        'password[deletable_by_viewer]': 'True',
      }),
      {
        'content-type': 'application/x-www-form-urlencoded',
      },
    );
    expect([dotnet.status, dotnet.body.deletable_by_viewer, dotnet.body.expire_after_days]).toEqual([201, true, 7]);
    expect((await get(`/p/${dotnet.body.url_token}.json`)).body.payload).toBe('dotnet');
    const php = await post(
      '/p.json',
      JSON.stringify({
        password: {
          payload: 'php',
          expire_after_days: '3',
          expire_after_views: '2',
          retrieval_step: 'true',
          deletable_by_viewer: 'false',
        },
      }),
      json,
    );
    expect([
      php.status,
      php.body.expire_after_days,
      php.body.expire_after_views,
      php.body.retrieval_step,
      php.body.deletable_by_viewer,
    ]).toEqual([201, 3, 2, true, false]);
    expect(php.body.html_url).toBe(`${api.baseUrl}/p/${php.body.url_token}/r`);
    expect(php.body.json_url).toBe(`${api.baseUrl}/p/${php.body.url_token}.json`);
  });

  it('pwpush-cli 0.13 and Keypirinha: a file push as one file_push[files][] part; its bytes download back', async () => {
    const key = Buffer.from([0, 1, 2, 3, 250, 255, 10]);
    const form = multipart([{ name: 'file_push[files][]', filename: 'id_ed25519', bytes: key }]);
    const anonymous = await post('/f.json', form.body, { 'content-type': form.type });
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'authentication_required']);
    const created = await post('/f.json', form.body, { 'content-type': form.type, ...legacy(alice) });
    expect([created.status, created.body.kind]).toEqual([201, 'file']);
    const got = await get(`/f/${created.body.url_token}.json`);
    expect(got.body.files.map((f: { filename: string; size: number }) => [f.filename, f.size])).toEqual([
      ['id_ed25519', key.length],
    ]);
    const download = await fetch(got.body.files[0].url);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(key);
    // pwpush-cli 0.13 reads `successful` of each audit entry.
    const audit = await get(`/f/${created.body.url_token}/audit.json`, legacy(alice));
    expect(audit.body.views.map((v: { kind: string; successful: boolean }) => [v.kind, v.successful])).toEqual([
      ['creation', true],
      ['view', true],
    ]);
  });

  it('kppwpush: a URL push through /r.json, retrieved under /r/ and listed under /r/active.json', async () => {
    const created = await post(
      '/r.json',
      JSON.stringify({ url: { payload: 'https://vault.example.com/share/91f3', expire_after_views: 2 } }),
      { ...json, ...legacy(alice) },
    );
    expect([created.status, created.body.kind, created.body.deletable_by_viewer]).toEqual([201, 'url', true]);
    expect((await get(`/r/${created.body.url_token}.json`)).body.payload).toBe('https://vault.example.com/share/91f3');
    const active = await get('/r/active.json', legacy(alice));
    expect(active.body.map((p: { url_token: string }) => p.url_token)).toContain(created.body.url_token);
    const notUrl = await post('/r.json', JSON.stringify({ url: { payload: 'not a url' } }), {
      ...json,
      ...legacy(alice),
    });
    expect([notUrl.status, notUrl.body.error]).toEqual([422, 'payload: must be a valid HTTP or HTTPS URL']);
  });

  it('one domain: a v1 push reads through v2 and a v2 push through v1, with the same views', async () => {
    const v1 = await post('/p.json', JSON.stringify({ password: { payload: 'from v1', expire_after_views: 3 } }), json);
    const v2read = await api.raw(`/api/v2/pushes/${v1.body.url_token}`);
    expect([v2read.body.payload, v2read.body.views_remaining]).toEqual(['from v1', 2]);
    const v2 = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ push: { payload: 'from v2', expire_after_views: 3 } }),
    });
    const v1read = await get(`/p/${v2.body.url_token}.json`);
    expect([v1read.body.payload, v1read.body.views_remaining]).toEqual(['from v2', 2]);
  });
});

describe('v1 errors and paths', () => {
  it("answers a body without the wrapper with the reference's 400 text naming it", async () => {
    for (const [path, wrapper] of [
      ['/p.json', 'password'],
      ['/f.json', 'file_push'],
      ['/r.json', 'url'],
    ] as const) {
      const res = await post(path, JSON.stringify({ push: { payload: 'x' } }), { ...json, ...legacy(alice) });
      expect([res.status, res.body.code, res.body.error], path).toEqual([
        400,
        'missing_push',
        `param is missing or the value is empty or invalid: ${wrapper}`,
      ]);
    }
    const form = await post('/p.json', 'push[payload]=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([form.status, form.body.error]).toEqual([
      400,
      'param is missing or the value is empty or invalid: password',
    ]);
    const notJson = await post('/p.json', '{nope', json);
    expect([notJson.status, notJson.body.code]).toEqual([400, 'invalid_json']);
    // A form-urlencoded body cannot carry a file: /f.json does not take one.
    const urlencodedFile = await post('/f.json', 'file_push[payload]=x', {
      'content-type': 'application/x-www-form-urlencoded',
      ...legacy(alice),
    });
    expect([urlencodedFile.status, urlencodedFile.body.code]).toEqual([400, 'unsupported_media_type']);
  });

  it("answers 422 naming the first failing field, with v2's rules and messages", async () => {
    const views = await post('/p.json', JSON.stringify({ password: { payload: 'x', expire_after_views: 101 } }), json);
    expect([views.status, views.body.error, views.body.errors]).toEqual([
      422,
      'expire_after_views: must be at most 100',
      { expire_after_views: ['must be at most 100'] },
    ]);
    const many = await post(
      '/p.json',
      JSON.stringify({ password: { payload: '', deletable_by_viewer: 'maybe', expire_after_days: '1e2' } }),
      json,
    );
    expect([many.status, Object.keys(many.body.errors)]).toEqual([
      422,
      ['payload', 'expire_after_days', 'deletable_by_viewer'],
    ]);
    expect(many.body.error).toBe("payload: can't be blank (and 2 more)");
  });

  it('answers every unknown .json path under /p/, /f/, /r/ and /api/v1/ with JSON not-found, never the HTML page', async () => {
    for (const path of [
      '/p/k7mz4qv2xw5nrt3hbj6ypa2c/r.json',
      '/f/k7mz4qv2xw5nrt3hbj6ypa2c/nope.json',
      '/r/a/b/c.json',
      '/api/v1/nope.json',
      '/api/v1/nope',
    ]) {
      const res = await get(path);
      expect([res.status, res.headers.get('content-type')?.split(';')[0], res.body.error, res.body.code], path).toEqual(
        [404, 'application/json', 'not-found', 'no_route'],
      );
    }
    const put = await api.raw('/p/k7mz4qv2xw5nrt3hbj6ypa2c.json', { method: 'PUT' });
    expect([put.status, put.headers.get('allow'), put.body.code]).toEqual([405, 'GET, DELETE', 'method_not_allowed']);
    const deleteList = await del('/p/active.json', legacy(alice));
    expect([deleteList.status, deleteList.headers.get('allow')]).toEqual([405, 'GET']);
    expect((await get('/api/v1/version')).body.api_version).toBe('1.5');
  });

  it("needs a token for lists, audit, /f.json and /r.json (JSON 401s), and refuses another user's audit with the reference's text", async () => {
    for (const path of ['/p/active.json', '/p/expired.json']) {
      const res = await get(path);
      expect([res.status, res.body.code], path).toEqual([401, 'authentication_required']);
    }
    const r = await post('/r.json', JSON.stringify({ url: { payload: 'https://example.org/' } }), json);
    expect([r.status, r.body.code]).toEqual([401, 'authentication_required']);
    const mine = await post('/p.json', JSON.stringify({ password: { payload: 'mine' } }), {
      ...json,
      ...legacy(alice),
    });
    const audit = await get(`/p/${mine.body.url_token}/audit.json`, legacy(bob));
    expect([audit.status, audit.body.error, audit.body.code]).toEqual([
      403,
      "That push doesn't belong to you.",
      'forbidden',
    ]);
    const wrongEmail = await get('/p/active.json', { 'X-User-Email': bob.email, 'X-User-Token': alice.token });
    expect([wrongEmail.status, wrongEmail.body.code]).toEqual([401, 'invalid_token']);
    const page0 = await get('/p/active.json?page=0', legacy(alice));
    expect([page0.status, page0.body.code]).toEqual([400, 'invalid_page']);
  });

  it("answers the sixth failed passphrase within a minute with 429 and the reference's text", async () => {
    const created = await post(
      '/p.json',
      JSON.stringify({ password: { payload: 'guarded', passphrase: 'right' } }),
      json,
    );
    for (let i = 0; i < 5; i++)
      expect((await get(`/p/${created.body.url_token}.json?passphrase=wrong${i}`)).status).toBe(401);
    const limited = await get(`/p/${created.body.url_token}.json?passphrase=right`);
    expect([limited.status, limited.body.error, limited.body.code]).toEqual([
      429,
      'Too many passphrase attempts. Please try again in a minute.',
      'too_many_attempts',
    ]);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('end-to-end encrypted pushes and the v1 API (its records cannot say a payload is an envelope)', () => {
  const sdk = (on: RealApi, token?: string) =>
    createSecretPushClient({ baseUrl: on.baseUrl, token, fetch: on.checker.fetch(), maxRetries: 0 });

  it('PassPushPosh retrieving an encrypted push gets 409 and no envelope; no view, attempt or audit entry is spent; the link still opens it', async () => {
    const plaintext = secret('e2e-v1');
    const created = await sdk(api, alice.token).createPush(
      { payload: plaintext, expire_after_views: 1, passphrase: 'right' },
      { endToEnd: true },
    );
    const token = created.url_token;
    // Six tries with a wrong passphrase and one with the right one, as PassPushPosh sends them (?passphrase=).
    for (const passphrase of ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'right']) {
      const res = await get(`/p/${token}.json?passphrase=${passphrase}`, legacy(bob));
      expect([res.status, res.body.code, res.headers.get('content-type')?.split(';')[0]]).toEqual([
        409,
        'end_to_end_encrypted',
        'application/json',
      ]);
      expect(res.body.error).toMatch(/end-to-end encrypted: open its link .* in a browser\. No view was counted\./);
      expect(JSON.stringify(res.body)).not.toContain('spe1.');
      expect(res.body).not.toHaveProperty('payload');
    }
    // Nothing was counted: one view left, no audit entry but the creation, and no passphrase lock-out for the recipient.
    const listed = await get('/p/active.json', legacy(alice));
    expect(listed.body.find((p: { url_token: string }) => p.url_token === token)).toMatchObject({
      views_remaining: 1,
      expired: false,
    });
    expect(
      (await get(`/p/${token}/audit.json`, legacy(alice))).body.views.map((v: { kind: string }) => v.kind),
    ).toEqual(['creation']);
    const opened = await sdk(api).retrieveLink(created.shareLink, { passphrase: 'right' });
    expect([opened.payload, opened.expired, opened.views_remaining]).toEqual([plaintext, false, 0]);
    // Once expired, v1 answers the record as for any push: expired, no payload.
    const after = await get(`/p/${token}.json`, legacy(bob));
    expect([after.status, after.body.expired, after.body.payload]).toEqual([200, true, null]);
  });

  it('on an instance that requires encryption, v1 creates (JSON and multipart) get 422 with a text saying what to do, and make nothing', async () => {
    const required = await startRealApi(
      { clientEncryption: { enabled: true, default: true, required: true } },
      { db: api.db },
    );
    try {
      const carol = await required.user('v1-carol@example.org');
      const text =
        'This instance accepts only end-to-end encrypted pushes, which the v1 API cannot make: use the web page or an API v2 client that encrypts (PWPUSH_CLIENT_ENCRYPTION=default lets ordinary pushes in).';
      const viaJson = await required.raw('/p.json', {
        method: 'POST',
        headers: { ...json, ...legacy(carol) },
        body: JSON.stringify({ password: { payload: secret('x'), expire_after_days: 2 } }),
      });
      const form = multipart([
        { name: 'password[payload]', value: secret('y') },
        { name: 'password[expire_after_views]', value: '2' },
      ]);
      const viaForm = await required.raw('/p.json', {
        method: 'POST',
        headers: { 'content-type': form.type, ...legacy(carol) },
        body: form.body,
      });
      expect([viaJson.status, viaJson.body.code, viaJson.body.error, viaJson.body.errors]).toEqual([
        422,
        'validation_failed',
        `client_encryption: ${text}`,
        { client_encryption: [text] },
      ]);
      expect([viaForm.status, viaForm.body.error, viaForm.body.errors]).toEqual([
        422,
        `client_encryption: ${text}`,
        { client_encryption: [text] },
      ]);
      expect((await required.raw('/p/active.json', { headers: legacy(carol) })).body).toEqual([]);
      expect(required.checker.violations).toEqual([]);
    } finally {
      await required.stop();
    }
  });
});
