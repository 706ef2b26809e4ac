/**
 * The stateful mock's own controls and the rules the parity suite does not reach: seeding, the clock, instance
 * settings, routing details, the generated handlers it re-exports, and its self-check of every answer.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  createSecretPushClient,
  fileFromBytes,
  ForbiddenError,
  PassphraseIncorrectError,
  RateLimitError,
  ServerError,
  ValidationError,
} from '../../src/index.js';
import { createMockServerHandlers, createMswHandlers, type MockServer } from '../../src/mocks/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';
import { contract } from '@secret-push/contract';

const server = setupServer();
const checker = specCheckingFetch();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

let n = 0;
function start(options: Parameters<typeof createMockServerHandlers>[0] = {}): { mock: MockServer; baseUrl: string } {
  const baseUrl = `http://mock-${++n}.test`;
  const mock = createMockServerHandlers({ baseUrl, ...options });
  server.use(...mock.handlers);
  return { mock, baseUrl };
}

const DAY = 24 * 3600 * 1000;

describe('stateful mock: seeding and the clock', () => {
  it('seeds a push for an owner at a given time, listed and timestamped from the mock clock', async () => {
    const { mock, baseUrl } = start({ now: new Date('2026-03-01T12:00:00.000Z') });
    const seeded = mock.seedPush(
      { payload: 'seeded', name: 'seed' },
      { owner: 'alice@example.com', createdAt: '2026-02-28T12:00:00.000Z' },
    );
    expect(seeded).toMatchObject({
      created_at: '2026-02-28T12:00:00.000Z',
      expires_at: '2026-03-07T12:00:00.000Z',
      name: 'seed',
    });
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const page = await alice.activePushes.page(1);
    expect(page.items.map((p) => [p.url_token, p.days_remaining])).toEqual([[seeded.url_token, 6]]);
    const fresh = await alice.createPush({ payload: 'now' });
    expect(fresh.created_at).toBe('2026-03-01T12:00:00.000Z');
  });

  it('expires a seeded push once advanceClock passes expires_at, and answers the expired record', async () => {
    const { mock, baseUrl } = start({ now: new Date('2026-03-01T00:00:00.000Z') });
    const seeded = mock.seedPush({ payload: 'two days', expire_after_days: 2 }, { owner: 'bob@example.com' });
    const bob = createSecretPushClient({ baseUrl, token: mock.users[1]!.token, fetch: checker.fetch });
    mock.advanceClock(2 * DAY - 1);
    expect((await bob.activePushes.page(1)).items).toHaveLength(1);
    mock.advanceClock(1);
    expect((await bob.activePushes.page(1)).items).toHaveLength(0);
    const [expired] = (await bob.expiredPushes.page(1)).items;
    expect(expired).toMatchObject({
      url_token: seeded.url_token,
      expired: true,
      deleted: false,
      expired_on: '2026-03-03T00:00:00.000Z',
      note: '',
    });
  });

  it('lapses download links after 5 minutes of mock clock with ForbiddenError link_expired', async () => {
    const { mock, baseUrl } = start();
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const created = await alice.createPush({ files: [fileFromBytes(new Uint8Array([7]), 'seven.bin')] });
    const [file] = (await alice.retrievePush(created.url_token)).files;
    expect(await alice.downloadFile(file!)).toEqual(new Uint8Array([7]));
    mock.advanceClock(5 * 60 * 1000);
    const error = await alice.downloadFile(file!).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ code: 'link_expired' });
  });

  it('keeps the files of a push expired by its last view downloadable through links issued before, but not after a DELETE', async () => {
    const { mock, baseUrl } = start();
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const anon = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    const once = await alice.createPush({
      files: [fileFromBytes(new Uint8Array([1]), 'a.bin')],
      expire_after_views: 1,
    });
    const [file] = (await anon.retrievePush(once.url_token)).files;
    expect((await anon.retrievePush(once.url_token)).expired).toBe(true);
    expect(await anon.downloadFile(file!)).toEqual(new Uint8Array([1]));

    const deleted = await alice.createPush({ files: [fileFromBytes(new Uint8Array([2]), 'b.bin')] });
    const [file2] = (await anon.retrievePush(deleted.url_token)).files;
    await alice.expirePush(deleted.url_token);
    await expect(anon.downloadFile(file2!)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('lets passphrase attempts leave the one-minute window', async () => {
    const { mock, baseUrl } = start({ now: new Date('2026-03-01T00:00:00.000Z') });
    const seeded = mock.seedPush({ payload: 'p', passphrase: 'right' });
    const anon = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    for (let i = 0; i < 5; i++)
      await expect(anon.retrievePush(seeded.url_token, { passphrase: 'no' })).rejects.toBeInstanceOf(
        PassphraseIncorrectError,
      );
    const limited = await anon.retrievePush(seeded.url_token, { passphrase: 'right' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfterSeconds).toBe(60);
    mock.advanceClock(60_001);
    expect((await anon.retrievePush(seeded.url_token, { passphrase: 'right' })).payload).toBe('p');
  });

  it('rejects a seed the spec does not allow', () => {
    const { mock } = start();
    expect(() => mock.seedPush({ payload: 'x', expire_after_views: 0 })).toThrow(/expire_after_views/);
    expect(() => mock.seedPush({ payload: 'x' }, { owner: 'nobody@example.com' })).toThrow(/unknown owner/);
  });

  it('pages the audit log (50 per page, oldest first) and reset() forgets every push', async () => {
    const { mock, baseUrl } = start();
    const seeded = mock.seedPush({ payload: 'busy', expire_after_views: 60 }, { owner: 'alice@example.com' });
    const anon = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    for (let i = 0; i < 55; i++) await anon.retrievePush(seeded.url_token);
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const first = await alice.audit.page(seeded.url_token, 1);
    expect(first).toMatchObject({ totalCount: 56, nextPage: 2 });
    expect(first.items).toHaveLength(50);
    const kinds: string[] = [];
    for await (const entry of alice.audit(seeded.url_token)) kinds.push(entry.kind);
    expect(kinds).toEqual(['creation', ...Array(55).fill('view')]);
    mock.reset();
    await expect(anon.previewPush(seeded.url_token)).rejects.toMatchObject({ status: 404 });
  });
});

describe('stateful mock: instance settings', () => {
  it('requires a token everywhere but version when anonymous access is off', async () => {
    const { baseUrl } = start({ settings: { allowAnonymous: false } });
    const anon = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    expect((await anon.version()).features.anonymous_access).toBe(false);
    const error = await anon.createPush({ payload: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'authentication_required' });
  });

  it('answers 422 on kind for a disabled kind', async () => {
    const { baseUrl } = start({ settings: { enableUrlPushes: false } });
    const error = await createSecretPushClient({ baseUrl, fetch: checker.fetch })
      .createPush({ kind: 'url', payload: 'https://example.org' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(Object.keys((error as ValidationError).errors)).toEqual(['kind']);
  });

  it('uses publicBaseUrl for json_url and html_url', async () => {
    const { baseUrl } = start({ settings: { publicBaseUrl: 'https://push.example.org' } });
    const created = await createSecretPushClient({ baseUrl, fetch: checker.fetch }).createPush({ payload: 'x' });
    expect(created.html_url).toBe(`https://push.example.org/p/${created.url_token}`);
  });

  it('fails loudly (500) instead of answering a body the spec does not allow', async () => {
    const { baseUrl } = start({ settings: { publicBaseUrl: 'not a url' } });
    const client = createSecretPushClient({ baseUrl, maxRetries: 0 });
    await expect(client.createPush({ payload: 'x' })).rejects.toBeInstanceOf(ServerError);
  });
});

describe('stateful mock: routing and request errors', () => {
  it('accepts the .json suffix, answers 404 no_route and 405 method_not_allowed with Allow', async () => {
    const { baseUrl } = start();
    const fetch = checker.fetch;
    const created = await createSecretPushClient({ baseUrl, fetch }).createPush({ payload: 'json suffix' });
    const viaSuffix = await fetch(`${baseUrl}/api/v2/pushes/${created.url_token}.json`);
    expect(((await viaSuffix.json()) as { payload: string }).payload).toBe('json suffix');
    checker.clear(); // the next two answers are outside the spec's operations on purpose
    const noRoute = await fetch(`${baseUrl}/api/v2/nothing-here`);
    expect([noRoute.status, ((await noRoute.json()) as { code: string }).code]).toEqual([404, 'no_route']);
    const notAllowed = await fetch(`${baseUrl}/api/v2/version`, { method: 'POST' });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.get('Allow')).toBe('GET');
    checker.clear();
  });

  it("routes with the contract's route table: every operation, a trailing slash, and the 405 of the lists for every other method", async () => {
    const { mock, baseUrl } = start();
    const seeded = mock.seedPush({ payload: 'routed' }, { owner: 'alice@example.com' });
    const bearer = { authorization: `Bearer ${mock.users[0]!.token}` };
    checker.clear();
    // Every operation of the contract reaches its handler (no 404 no_route, no 405), by its own template.
    for (const op of contract().operations()) {
      const path = op.path.replace('{url_token}', seeded.url_token).replace('{file_id}', 'f1');
      const answer = await fetch(`${baseUrl}${path}${op.method === 'get' ? '/' : ''}`, {
        method: op.method.toUpperCase(),
        headers: bearer,
      });
      const code = answer.status >= 400 ? ((await answer.json()) as { code: string }).code : '';
      expect({ op: op.operationId, routed: !['no_route', 'method_not_allowed'].includes(code) }).toEqual({
        op: op.operationId,
        routed: true,
      });
    }
    // As on the server: `active` decides for every method, never a push called "active".
    const deleteList = await fetch(`${baseUrl}/api/v2/pushes/active`, { method: 'DELETE', headers: bearer });
    expect([deleteList.status, deleteList.headers.get('Allow')]).toEqual([405, 'GET']);
    const put = await fetch(`${baseUrl}/api/v2/pushes/${seeded.url_token}`, { method: 'PUT', headers: bearer });
    expect([put.status, put.headers.get('Allow')]).toEqual([405, 'GET, DELETE']);
    const encoded = await fetch(`${baseUrl}/api/v2/pushes/%ZZ`, { headers: bearer });
    expect([encoded.status, ((await encoded.json()) as { code: string }).code]).toEqual([404, 'not_found']);
    checker.clear();
  });

  it('answers 400 invalid_json, 400 missing_push and 400 unsupported_media_type for bodies the SDK would never send', async () => {
    const { baseUrl } = start();
    const post = (body: string, type = 'application/json') =>
      checker.fetch(`${baseUrl}/api/v2/pushes`, { method: 'POST', body, headers: { 'Content-Type': type } });
    expect(await (await post('{not json')).json()).toMatchObject({ code: 'invalid_json' });
    expect(await (await post('{"payload":"x"}')).json()).toMatchObject({ code: 'missing_push' });
    const wrongType = await post('{"push":{"payload":"x"}}', 'text/plain');
    expect([wrongType.status, ((await wrongType.json()) as { code: string }).code]).toEqual([
      400,
      'unsupported_media_type',
    ]);
  });

  it('echoes a safe X-Request-Id and puts it in error bodies', async () => {
    const { baseUrl } = start();
    const response = await checker.fetch(`${baseUrl}/api/v2/pushes/active`, {
      headers: { 'X-Request-Id': 'trace-42' },
    });
    expect(response.headers.get('X-Request-Id')).toBe('trace-42');
    expect(await response.json()).toMatchObject({ code: 'authentication_required', request_id: 'trace-42' });
  });

  it('rejects page=abc with BadRequestError invalid_page', async () => {
    const { mock, baseUrl } = start();
    const response = await checker.fetch(`${baseUrl}/api/v2/pushes/expired?page=abc`, {
      headers: { Authorization: `Bearer ${mock.users[0]!.token}` },
    });
    expect(await response.json()).toMatchObject({ code: 'invalid_page' });
    const error = await createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch })
      .expiredPushes.page(201)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
  });
});

describe('stateful mock: origins', () => {
  it('answers any origin when baseUrl is omitted, building URLs from the request origin', async () => {
    const mock = createMockServerHandlers();
    server.use(...mock.handlers);
    const created = await createSecretPushClient({
      baseUrl: 'https://anything.example:8443',
      fetch: checker.fetch,
    }).createPush({ payload: 'x' });
    expect(created.json_url).toBe(`https://anything.example:8443/api/v2/pushes/${created.url_token}`);
  });
});

describe('generated handlers (re-exported)', () => {
  it('serve the body given to them', async () => {
    const baseUrl = 'http://generated.test';
    const report = {
      application_version: '9.9.9',
      api_version: '2.1',
      edition: 'oss',
      features: {
        anonymous_access: true,
        api_token_authentication: true,
        accounts: { enabled: false },
        pushes: {
          enabled: true,
          email_auto_dispatch: false,
          file_attachments: { enabled: true, requires_authentication: true },
          url_pushes: { enabled: true },
          qr_code_pushes: { enabled: true },
        },
        requests: { enabled: false },
      },
    };
    server.use(...createMswHandlers({ baseUrl }).all({ pick: { getVersion: { body: report } } }));
    expect((await createSecretPushClient({ baseUrl }).version()).application_version).toBe('9.9.9');
  });
});

describe('stateful mock: form bodies and durations, as the server reads them', () => {
  it('reads a pwpush-cli multipart form (text values, Python booleans, file parts) and a form-urlencoded create', async () => {
    const { mock, baseUrl } = start({ now: new Date('2026-05-01T08:00:00.000Z') });
    const form = new FormData();
    form.append('push[payload]', 'the deploy key');
    form.append('push[kind]', 'file');
    form.append('push[expire_after_duration]', '3');
    form.append('push[expire_after_views]', '2');
    form.append('push[deletable_by_viewer]', 'False');
    form.append('push[files][]', new Blob([new Uint8Array([1, 2, 250])]), 'id_ed25519');
    const headers = { authorization: `Bearer ${mock.users[0]!.token}` };
    const created = await checker.fetch(`${baseUrl}/api/v2/pushes`, { method: 'POST', headers, body: form });
    expect(created.status).toBe(201);
    const push = (await created.json()) as {
      url_token: string;
      expires_at: string;
      expire_after_duration: number;
      deletable_by_viewer: boolean;
    };
    expect([push.expire_after_duration, push.expires_at, push.deletable_by_viewer]).toEqual([
      3,
      '2026-05-01T09:00:00.000Z',
      false,
    ]);
    const anon = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    const got = await anon.retrievePush(push.url_token);
    expect([got.payload, got.files.map((f) => [f.filename, f.size])]).toEqual(['the deploy key', [['id_ed25519', 3]]]);
    expect([...(await anon.downloadFile(got.files[0]!))]).toEqual([1, 2, 250]);

    const urlencoded = await checker.fetch(`${baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'push[payload]=hunter2&push[expire_after_views]=4&push[retrieval_step]=yes',
    });
    expect(urlencoded.status).toBe(201);
    expect(await urlencoded.json()).toMatchObject({ expire_after_views: 4, retrieval_step: true });
    const errorsOf = async (body: string) => {
      const res = await checker.fetch(`${baseUrl}/api/v2/pushes`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      return [res.status, ((await res.json()) as { errors: object }).errors];
    };
    expect(await errorsOf('push[payload]=x&push[payload]=y')).toEqual([422, { payload: ['must be given once'] }]);
    expect(await errorsOf('push[payload]=x&push[expire_after_views]=2.5')).toEqual([
      422,
      { expire_after_views: ['must be an integer'] },
    ]);
    const other = await checker.fetch(`${baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect([other.status, ((await other.json()) as { code: string }).code]).toEqual([400, 'unsupported_media_type']);
  });

  it('honours the shortest duration setting and reports the values it accepts', async () => {
    const { baseUrl } = start({
      settings: { expireAfterDurationMin: 3, expireAfterDays: { default: 7, min: 1, max: 30 } },
    });
    const anon = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    expect((await anon.version()).features.pushes.expire_after_duration).toEqual({
      enabled: true,
      min: 3,
      values: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    });
    const error = await anon.createPush({ payload: 'x', expire_after_duration: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).errors).toEqual({
      expire_after_duration: ['must be at least 3 (1 hour) on this instance'],
    });
  });
});

describe('stateful mock: requests (issue 24)', () => {
  it('runs a request through the SDK: ask, answer once, open, collected; a second answer 409, a revoked one 410', async () => {
    const { mock, baseUrl } = start();
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const anyone = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    const request = await alice.createRequest({ request: 'the staging password', expire_after_views: 2, note: 'n' });
    expect(request).toMatchObject({ state: 'pending', html_url: `${baseUrl}/r/${request.url_token}`, answer: null });
    expect((await alice.previewRequest(request.url_token)).url).toBe(request.html_url);
    const seen = await anyone.getRequest(request.url_token);
    expect(seen).toMatchObject({ audience: 'responder', request: 'the staging password', open: true });
    expect(seen).not.toHaveProperty('note');

    const receipt = await anyone.respondToRequest(request.url_token, { payload: 'hunter2' });
    expect(receipt.state).toBe('fulfilled');
    await expect(anyone.respondToRequest(request.url_token, { payload: 'again' })).rejects.toMatchObject({
      status: 409,
      code: 'request_answered',
    });
    const opened = await alice.openResponse(request.url_token);
    expect(opened).toMatchObject({ payload: 'hunter2', expire_after_views: 2 });
    expect((await alice.getRequest(request.url_token)).state).toBe('collected');
    const kinds: string[] = [];
    for await (const e of alice.requestAudit(request.url_token)) kinds.push(e.kind);
    expect(kinds).toEqual(['creation', 'fulfilled', 'collected']);

    const other = await alice.createRequest({ request: 'another' });
    expect((await alice.revokeRequest(other.url_token)).state).toBe('revoked');
    await expect(anyone.respondToRequest(other.url_token, { payload: 'late' })).rejects.toMatchObject({
      status: 410,
      code: 'request_closed',
    });
    const closed: string[] = [];
    for await (const r of alice.expiredRequests()) closed.push(r.url_token);
    expect(closed.sort()).toEqual([request.url_token, other.url_token].sort());
    await expect(anyone.revokeRequest(other.url_token)).rejects.toBeInstanceOf(AuthenticationError);
    const bob = createSecretPushClient({ baseUrl, token: mock.users[1]!.token, fetch: checker.fetch });
    await expect(bob.previewRequest(other.url_token)).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('takes a sealed answer only, and the requester opens it with the key pair', async () => {
    const { generateRequestKeyPair } = await import('../../src/index.js');
    const { mock, baseUrl } = start();
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const anyone = createSecretPushClient({ baseUrl, fetch: checker.fetch });
    const { keyPair, publicKey } = await generateRequestKeyPair();
    const request = await alice.createRequest({ request: 'seal it', public_key: publicKey });
    await anyone.respondToRequest(request.url_token, { payload: 'sealed in the mock' });
    expect((await alice.openResponse(request.url_token, { keyPair })).payload).toBe('sealed in the mock');
  });
});

describe('stateful mock: email (issue 22)', () => {
  it("without email: email_auto_dispatch false and the fields refused with the server's 422", async () => {
    const { mock, baseUrl } = start();
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    expect((await alice.version()).features.pushes.email_auto_dispatch).toBe(false);
    const refused = await alice
      .createPush({ payload: 'x', notify_emails_to: 'a@example.net' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).errors).toEqual({
      notify_emails_to: ['are not available'],
      notify_emails_to_locale: ['is not available'],
      base: ['Notify by email feature is not enabled'],
    });
  });

  it('notify_emails_to with an API key needs pushes:notify, as on the server (403, nothing made or sent)', async () => {
    const { mock, baseUrl } = start({ settings: { emailAutoDispatch: true, publicBaseUrl: 'https://s.example.org' } });
    const account = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const key = await account.createApiKey({ name: 'no notify', scopes: ['pushes:create', 'pushes:read'] });
    const withKey = createSecretPushClient({ baseUrl, token: key.token, fetch: checker.fetch, maxRetries: 0 });
    const refused = await withKey
      .createPush({ payload: 'mock secret', notify_emails_to: 'a@example.net' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect((refused as ForbiddenError).code).toBe('insufficient_scope');
    expect((refused as ForbiddenError).message).toContain('pushes:notify');
    expect(mock.sentEmails()).toEqual([]);
    expect((await account.activePushes.page(1)).items).toHaveLength(0);
  });

  it('with email: create and notifyEmails "send" into the outbox; the audit shows completed; the limits hold', async () => {
    const { mock, baseUrl } = start({ settings: { emailAutoDispatch: true, publicBaseUrl: 'https://s.example.org' } });
    const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
    const bob = createSecretPushClient({ baseUrl, token: mock.users[1]!.token, fetch: checker.fetch });
    expect((await alice.version()).features.pushes.email_auto_dispatch).toBe(true);
    const push = await alice.createPush({
      payload: 'mock secret',
      notify_emails_to: 'a@example.net,b@example.net',
      notify_emails_to_locale: 'de',
    });
    expect(push).toMatchObject({ notify_emails_to: 'a@example.net,b@example.net', notify_emails_to_locale: 'de' });
    expect(await alice.notifyEmails(push.url_token, { to: ['c@example.net'] })).toEqual({
      message: 'Recipient(s) are added to the queue to be sent.',
    });
    expect(mock.sentEmails().map((m) => [m.to, m.link])).toEqual([
      ['a@example.net', push.html_url],
      ['b@example.net', push.html_url],
      ['c@example.net', push.html_url],
    ]);
    const entries = [];
    for await (const e of alice.audit(push.url_token)) if (e.kind === 'creation_email_send') entries.push(e);
    expect(entries.map((e) => e.notify_by_email)).toMatchObject([
      { recipients: 'a@example.net,b@example.net', locale: 'de', status: 'completed' },
      { recipients: 'c@example.net', locale: null, status: 'completed', successful_sends: 'c@example.net' },
    ]);
    await expect(bob.notifyEmails(push.url_token, { to: 'd@example.net' })).rejects.toBeInstanceOf(ForbiddenError);
    const injected = await alice
      .notifyEmails(push.url_token, { to: 'd@example.net\r\nBcc: x@example.com' })
      .catch((e: unknown) => e);
    expect((injected as ValidationError).errors).toEqual({ notify_emails_to: ['contains invalid email(s)'] });
    const tooMany = await alice
      .notifyEmails(push.url_token, { to: 'd@example.net,e@example.net,f@example.net' })
      .catch((e: unknown) => e);
    expect((tooMany as ValidationError).errors).toEqual({
      base: ['You can notify up to 5 email(s) and you have already sent emails to 3 recipients'],
    });
    await alice.notifyEmails(push.url_token, { to: 'd@example.net' });
    await alice.notifyEmails(push.url_token, { to: 'e@example.net' }); // alice's 5th call this minute
    await expect(alice.notifyEmails(push.url_token, { to: 'f@example.net' })).rejects.toBeInstanceOf(RateLimitError);
  });

  it("requests: the link to notify_emails_to and the requester's notices, only with email; the pushes' address rules", async () => {
    for (const emailAutoDispatch of [false, true]) {
      const { mock, baseUrl } = start({ settings: { emailAutoDispatch, publicBaseUrl: 'https://s.example.org' } });
      const alice = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
      const anyone = createSecretPushClient({ baseUrl, fetch: checker.fetch });
      expect((await alice.version()).features.requests?.email_auto_dispatch).toBe(emailAutoDispatch);
      const request = await alice.createRequest({
        request: 'the vendor password',
        notify_emails_to: 'vendor@example.net, ops@example.net',
        notify_emails_to_locale: 'de',
      });
      expect(request.notify_emails_to).toBe('vendor@example.net,ops@example.net');
      await anyone.respondToRequest(request.url_token, { payload: 'never in a mail' });
      await alice.openResponse(request.url_token);
      const sent = mock.sentEmails().map((m) => [m.request, m.to, m.link]);
      const page = `https://s.example.org/requests/${request.url_token}`;
      expect(sent).toEqual(
        emailAutoDispatch
          ? [
              ['created', 'vendor@example.net', request.html_url],
              ['created', 'ops@example.net', request.html_url],
              ['fulfilled', 'alice@example.com', page],
              ['collected', 'alice@example.com', page],
            ]
          : [],
      );
      const bad = await alice
        .createRequest({ request: 'x', notify_emails_to: 'a@example.net\r\nBcc: x@example.com' })
        .catch((e: unknown) => e);
      expect((bad as ValidationError).errors).toEqual({ notify_emails_to: ['contains invalid email(s)'] });
    }
  });
});
