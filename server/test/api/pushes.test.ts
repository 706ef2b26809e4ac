/**
 * The API on the real Core and a fresh PostgreSQL database, through the generated SDK. Every response is checked
 * against the contract (see support/spec-check.ts); afterAll asserts no violation and scans every log line for the
 * secrets the tests sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  downloadPushFile,
  expirePush,
  getPush,
  getPushAudit,
  getVersion,
  listActivePushes,
  listExpiredPushes,
  previewPush,
} from '@secret-push/sdk/generated';
import type { PushInput } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError, status } from './support/sdk.js';

let api: RealApi;
let owner: { token: string; email: string; userId: string };
let other: { token: string; email: string; userId: string };
/** Everything secret the tests send; none of it may reach a log line. */
const secrets: string[] = [];

function secret(label: string): string {
  const value = `${label}-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  secrets.push(value);
  return value;
}

async function create(push: PushInput, token?: string) {
  return expectData(
    await createPush({ client: api.client, body: { push }, auth: token ? bearer(token) : undefined }),
    201,
  );
}

async function auditKinds(urlToken: string): Promise<string[]> {
  const logs = expectData(
    await getPushAudit({ client: api.client, path: { url_token: urlToken }, auth: bearer(owner.token) }),
  );
  return logs.logs.map((l) => l.kind);
}

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('owner@example.org');
  other = await api.user('other@example.org');
  secrets.push(owner.token, other.token);
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  try {
    // The log scan: every line the app wrote during this file, against everything secret the tests sent.
    const logs = api.logs.join('\n');
    expect(api.logs.length).toBeGreaterThan(50);
    for (const s of secrets) expect(logs.includes(s), `a log line contains ${s.slice(0, 12)}…`).toBe(false);
    expect(logs).not.toMatch(/passphrase=|token=/);
    // The app checks its own answers too (validateResponses); it found nothing.
    expect(logs).not.toContain('response does not match the contract');
  } finally {
    await api?.stop();
  }
});

describe('version', () => {
  it('reports the instance features, and ignores a bad token', async () => {
    const report = expectData(await getVersion({ client: api.client, auth: bearer('spt_not_a_token') }));
    expect(report).toMatchObject({ api_version: '2.1', edition: 'oss', features: { anonymous_access: true } });
  });
});

describe('create', () => {
  it('creates a text push with the instance defaults and the owner fields, never the payload', async () => {
    const payload = secret('payload');
    const note = secret('note');
    const push = await create({ payload, note, name: 'label' }, owner.token);
    expect(push).toMatchObject({
      kind: 'text',
      expired: false,
      expired_on: null,
      deleted: false,
      expire_after_days: 7,
      expire_after_views: 5,
      views_remaining: 5,
      days_remaining: 7,
      deletable_by_viewer: true,
      retrieval_step: false,
      passphrase_protected: false,
      name: 'label',
      note,
      json_url: `${api.baseUrl}/api/v2/pushes/${push.url_token}`,
      html_url: `${api.baseUrl}/p/${push.url_token}`,
    });
    expect(Date.parse(push.expires_at) - Date.parse(push.created_at)).toBe(7 * 86_400_000);
    expect(JSON.stringify(push)).not.toContain(payload);
  });

  it('honours retrieval_step in html_url and never returns the passphrase', async () => {
    const passphrase = secret('pass');
    const push = await create({ payload: secret('p'), retrieval_step: true, passphrase });
    expect(push.html_url).toBe(`${api.baseUrl}/p/${push.url_token}/r`);
    expect(push.passphrase_protected).toBe(true);
    expect(JSON.stringify(push)).not.toContain(passphrase);
  });

  it('creates url and qr pushes anonymously and ignores unknown properties', async () => {
    expect((await create({ kind: 'url', payload: 'https://example.org/x?y=1' })).kind).toBe('url');
    expect((await create({ kind: 'qr', payload: secret('qr') })).kind).toBe('qr');
    // Typos and fields of no dialect. (Pro's account_id and workspace_id name a workspace on this server:
    // workspaces-pro-clients.test.ts.)
    const extra = await create({ payload: secret('p'), retrieval_step_x: 'y', expire_afer_days: 3 } as PushInput);
    expect(extra.kind).toBe('text');
  });

  it.each([
    ['unknown kind', { kind: 'bogus', payload: 'x' }, 'kind'],
    ['missing payload', {}, 'payload'],
    ['empty payload', { payload: '' }, 'payload'],
    ['url that is not http(s)', { kind: 'url', payload: 'ftp://example.org' }, 'payload'],
    ['qr over 1,024 characters', { kind: 'qr', payload: 'q'.repeat(1025) }, 'payload'],
    ['files on a text push', { kind: 'text', payload: 'x', files: [{ filename: 'a', content: 'YQ==' }] }, 'files'],
    ['a file push without files', { kind: 'file' }, 'files'],
    ['expire_after_days 0', { payload: 'x', expire_after_days: 0 }, 'expire_after_days'],
    ['expire_after_days 91', { payload: 'x', expire_after_days: 91 }, 'expire_after_days'],
    ['expire_after_views 0', { payload: 'x', expire_after_views: 0 }, 'expire_after_views'],
    ['expire_after_views 101', { payload: 'x', expire_after_views: 101 }, 'expire_after_views'],
    ['an empty passphrase', { payload: 'x', passphrase: '' }, 'passphrase'],
    ['a name over 1,024 characters', { payload: 'x', name: 'n'.repeat(1025) }, 'name'],
    ['a note over 10,000 characters', { payload: 'x', note: 'n'.repeat(10_001) }, 'note'],
    ['a string for a boolean', { payload: 'x', deletable_by_viewer: 'yes' }, 'deletable_by_viewer'],
  ])('answers 422 with a message on the field for %s', async (_name, push, field) => {
    const error = expectError(
      await createPush({ client: api.client, body: { push: push as PushInput }, auth: bearer(owner.token) }),
      422,
      'validation_failed',
    );
    expect(Object.keys(error.errors ?? {})).toContain(field);
    expect(error.errors?.[field]?.[0]).toMatch(/^[A-Za-z0-9 ]/);
    expect(JSON.stringify(error)).not.toMatch(/schemaPath|instancePath|must match "then"/);
  });

  it('answers 400 for a body without a push object and for malformed JSON', async () => {
    const noPush = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"payload":"x"}',
    });
    expect([noPush.status, noPush.body.code]).toEqual([400, 'missing_push']);
    const broken = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"push": {',
    });
    expect([broken.status, broken.body.code]).toEqual([400, 'invalid_json']);
  });

  it('answers 400 unsupported_media_type for a body in another media type (the decisions allow no 415)', async () => {
    // Forms are read since issue 11 (server/test/api/bodies.test.ts); any other media type is refused.
    const text = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'push[payload]=x',
    });
    expect([text.status, text.body.code]).toEqual([400, 'unsupported_media_type']);
  });

  it('accepts the .json suffix', async () => {
    const res = await api.raw('/api/v2/pushes.json', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: secret('p') } }),
    });
    expect(res.status).toBe(201);
    const read = await api.raw(`/api/v2/pushes/${res.body.url_token}.json`);
    expect([read.status, read.body.views_remaining]).toEqual([200, 4]);
  });
});

describe('retrieve', () => {
  it('counts views, returns the last one with views_remaining 0, then answers expired with failed_view', async () => {
    const payload = secret('payload');
    const push = await create({ payload, expire_after_views: 2 }, owner.token);
    const first = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expect([first.payload, first.views_remaining, first.expired]).toEqual([payload, 1, false]);
    const last = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expect([last.payload, last.views_remaining, last.expired]).toEqual([payload, 0, false]);
    const after = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expect([after.payload, after.files, after.expired, after.views_remaining]).toEqual([null, [], true, 0]);
    expect(after.expired_on).not.toBeNull();
    expect(await auditKinds(push.url_token)).toEqual(['creation', 'view', 'view', 'failed_view']);
    const [row] = await api.db.query('select payload_ciphertext, note_ciphertext from pushes where url_token = $1', [
      push.url_token,
    ]);
    expect(row).toEqual({ payload_ciphertext: null, note_ciphertext: null });
  });

  it("logs the owner's own retrieval as owner_view without counting it", async () => {
    const push = await create({ payload: secret('p'), expire_after_views: 1 }, owner.token);
    const mine = expectData(
      await getPush({ client: api.client, path: { url_token: push.url_token }, auth: bearer(owner.token) }),
    );
    expect([mine.views_remaining, mine.expired]).toEqual([1, false]);
    expect(await auditKinds(push.url_token)).toEqual(['creation', 'owner_view']);
  });

  it('answers 404 for an unknown token', async () => {
    expectError(await getPush({ client: api.client, path: { url_token: 'nosuchpushtoken00000' } }), 404, 'not_found');
  });

  it('asks for the passphrase (header preferred, query accepted) and rate-limits failures with 429', async () => {
    const passphrase = secret('pass');
    const payload = secret('payload');
    const push = await create({ payload, passphrase, expire_after_views: 10 }, owner.token);
    const path = { url_token: push.url_token };
    expectError(await getPush({ client: api.client, path }), 401, 'passphrase_required');
    expectError(
      await getPush({ client: api.client, path, headers: { 'X-Passphrase': 'wrong' } }),
      401,
      'passphrase_incorrect',
    );
    expect(
      expectData(await getPush({ client: api.client, path, headers: { 'X-Passphrase': passphrase } })).payload,
    ).toBe(payload);
    expect(expectData(await getPush({ client: api.client, path, query: { passphrase } })).payload).toBe(payload);
    // The header wins over the query.
    expect(
      status(
        await getPush({
          client: api.client,
          path,
          headers: { 'X-Passphrase': passphrase },
          query: { passphrase: 'x' },
        }),
      ),
    ).toBe(200);
    for (let i = 0; i < 3; i++) await getPush({ client: api.client, path, headers: { 'X-Passphrase': `wrong${i}` } });
    const limited = await getPush({ client: api.client, path, headers: { 'X-Passphrase': passphrase } });
    const error = expectError(limited, 429, 'too_many_attempts');
    expect(Number(limited.response?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(error.retry_after).toBeGreaterThan(0);
    const kinds = await auditKinds(push.url_token);
    expect(kinds.filter((k) => k === 'failed_passphrase')).toHaveLength(5);
  });

  it('answers expired (200) for a push past its time, decided at read time', async () => {
    api.setClock(new Date(Date.now() - 2 * 86_400_000));
    const push = await create({ payload: secret('p'), expire_after_days: 1 }, owner.token);
    api.setClock(null);
    const res = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expect([res.expired, res.payload, res.days_remaining]).toEqual([true, null, 0]);
  });
});

describe('preview', () => {
  it('answers the html_url without a view or an audit entry, also for expired pushes', async () => {
    const push = await create({ payload: secret('p'), expire_after_views: 1 }, owner.token);
    expect(expectData(await previewPush({ client: api.client, path: { url_token: push.url_token } }))).toEqual({
      url: push.html_url,
      client_encryption: null,
    });
    expect(expectData(await getPush({ client: api.client, path: { url_token: push.url_token } })).views_remaining).toBe(
      0,
    );
    expect(status(await previewPush({ client: api.client, path: { url_token: push.url_token } }))).toBe(200);
    expect(await auditKinds(push.url_token)).toEqual(['creation', 'view']);
    expectError(
      await previewPush({ client: api.client, path: { url_token: 'nosuchpushtoken00000' } }),
      404,
      'not_found',
    );
  });
});

describe('audit', () => {
  it('needs a token (401), the owner (403) and a known push (404)', async () => {
    const push = await create({ payload: secret('p') }, owner.token);
    expectError(
      await getPushAudit({ client: api.client, path: { url_token: push.url_token } }),
      401,
      'authentication_required',
    );
    expectError(
      await getPushAudit({ client: api.client, path: { url_token: push.url_token }, auth: bearer(other.token) }),
      403,
      'forbidden',
    );
    expectError(
      await getPushAudit({
        client: api.client,
        path: { url_token: 'nosuchpushtoken00000' },
        auth: bearer(owner.token),
      }),
      404,
      'not_found',
    );
    const res = await getPushAudit({
      client: api.client,
      path: { url_token: push.url_token },
      auth: bearer(owner.token),
    });
    expect(res.data?.logs[0]).toMatchObject({
      kind: 'creation',
      ip: expect.any(String),
      user_agent: expect.any(String),
    });
    expect(res.response?.headers.get('x-total-count')).toBe('1');
    const badPage = await api.raw(`/api/v2/pushes/${push.url_token}/audit?page=0`, {
      headers: { Authorization: `Bearer ${owner.token}` },
    });
    expect([badPage.status, badPage.body.code]).toEqual([400, 'invalid_page']);
  });
});

describe('lists', () => {
  it('pages the active list 50 at a time with Link and X-Total-Count, and needs a token', async () => {
    const lister = await api.user('lister@example.org');
    secrets.push(lister.token);
    for (let i = 0; i < 51; i++) await create({ payload: secret('bulk'), name: `n${i}` }, lister.token);
    const page1 = await listActivePushes({ client: api.client, auth: bearer(lister.token) });
    expect(expectData(page1)).toHaveLength(50);
    expect(page1.data?.[0]?.name).toBe('n50');
    expect(page1.response?.headers.get('x-total-count')).toBe('51');
    expect(page1.response?.headers.get('link')).toBe(`<${api.baseUrl}/api/v2/pushes/active?page=2>; rel="next"`);
    const page2 = await listActivePushes({ client: api.client, auth: bearer(lister.token), query: { page: 2 } });
    expect(expectData(page2)).toHaveLength(1);
    expect(page2.response?.headers.get('link')).toBe(`<${api.baseUrl}/api/v2/pushes/active?page=1>; rel="prev"`);
    expect(
      expectData(await listActivePushes({ client: api.client, auth: bearer(lister.token), query: { page: 3 } })),
    ).toEqual([]);
    expectError(await listActivePushes({ client: api.client }), 401, 'authentication_required');
    expectError(await listExpiredPushes({ client: api.client }), 401, 'authentication_required');
    for (const page of ['0', '201', 'x', '-1', '1e2', '0x10', '1.0', '%205', '']) {
      const res = await api.raw(`/api/v2/pushes/expired?page=${page}`, {
        headers: { Authorization: `Bearer ${lister.token}` },
      });
      expect([res.status, res.body.code]).toEqual([400, 'invalid_page']);
    }
  });

  it('lists a push past its time as expired though no request touched it', async () => {
    const user = await api.user('timer@example.org');
    secrets.push(user.token);
    api.setClock(new Date(Date.now() - 2 * 86_400_000));
    const old = await create({ payload: secret('p'), expire_after_days: 1 }, user.token);
    api.setClock(null);
    const fresh = await create({ payload: secret('p') }, user.token);
    const active = expectData(await listActivePushes({ client: api.client, auth: bearer(user.token) }));
    const expired = expectData(await listExpiredPushes({ client: api.client, auth: bearer(user.token) }));
    expect(active.map((p) => p.url_token)).toEqual([fresh.url_token]);
    expect(expired.map((p) => [p.url_token, p.expired])).toEqual([[old.url_token, true]]);
  });
});

describe('expire (DELETE)', () => {
  it('lets the owner expire a push, erasing it, and answers 200 unchanged when already expired', async () => {
    const push = await create({ payload: secret('p'), note: secret('note'), deletable_by_viewer: false }, owner.token);
    const gone = expectData(
      await expirePush({ client: api.client, path: { url_token: push.url_token }, auth: bearer(owner.token) }),
    );
    expect([gone.expired, gone.deleted]).toEqual([true, true]);
    const again = expectData(
      await expirePush({ client: api.client, path: { url_token: push.url_token }, auth: bearer(owner.token) }),
    );
    expect(again.expired_on).toBe(gone.expired_on);
    expect(await auditKinds(push.url_token)).toEqual(['creation', 'expire']);
    const [row] = await api.db.query('select payload_ciphertext, note_ciphertext from pushes where url_token = $1', [
      push.url_token,
    ]);
    expect(row).toEqual({ payload_ciphertext: null, note_ciphertext: null });
  });

  it('lets anyone expire a deletable push, and refuses others with 401 (anonymous) or 403 (not the owner)', async () => {
    const deletable = await create({ payload: secret('p') }, owner.token);
    expect(expectData(await expirePush({ client: api.client, path: { url_token: deletable.url_token } })).deleted).toBe(
      true,
    );
    const locked = await create({ payload: secret('p'), deletable_by_viewer: false }, owner.token);
    expectError(
      await expirePush({ client: api.client, path: { url_token: locked.url_token } }),
      401,
      'authentication_required',
    );
    expectError(
      await expirePush({ client: api.client, path: { url_token: locked.url_token }, auth: bearer(other.token) }),
      403,
      'forbidden',
    );
    expectError(
      await expirePush({ client: api.client, path: { url_token: 'nosuchpushtoken00000' } }),
      404,
      'not_found',
    );
  });
});

describe('authentication', () => {
  it('accepts the legacy pair only with the email of the token user', async () => {
    const ok = await api.raw('/api/v2/pushes/active', {
      headers: { 'X-User-Email': owner.email, 'X-User-Token': owner.token },
    });
    expect(ok.status).toBe(200);
    const wrong = await api.raw('/api/v2/pushes/active', {
      headers: { 'X-User-Email': other.email, 'X-User-Token': owner.token },
    });
    expect([wrong.status, wrong.body.code]).toEqual([401, 'invalid_token']);
    const alone = await api.raw('/api/v2/pushes/active', { headers: { 'X-User-Token': owner.token } });
    expect([alone.status, alone.body.code]).toEqual([401, 'invalid_token']);
  });

  it('answers 401 invalid_token for a bad token on every operation but version and download', async () => {
    const push = await create({ payload: secret('p') });
    const bad = bearer('spt_thisisnotavalidtoken');
    const path = { url_token: push.url_token };
    expectError(
      await createPush({ client: api.client, body: { push: { payload: 'x' } }, auth: bad }),
      401,
      'invalid_token',
    );
    expectError(await getPush({ client: api.client, path, auth: bad }), 401, 'invalid_token');
    expectError(await previewPush({ client: api.client, path, auth: bad }), 401, 'invalid_token');
    expectError(await expirePush({ client: api.client, path, auth: bad }), 401, 'invalid_token');
    expectError(await getPushAudit({ client: api.client, path, auth: bad }), 401, 'invalid_token');
    expectError(await listActivePushes({ client: api.client, auth: bad }), 401, 'invalid_token');
    expectError(await listExpiredPushes({ client: api.client, auth: bad }), 401, 'invalid_token');
    const malformed = await api.raw(`/api/v2/pushes/${push.url_token}`, { headers: { Authorization: 'Basic abc' } });
    expect([malformed.status, malformed.body.code]).toEqual([401, 'invalid_token']);
    // The push was not touched by any of it.
    expect(expectData(await getPush({ client: api.client, path })).views_remaining).toBe(4);
  });
});

describe('routing', () => {
  it('answers JSON 404 no_route and 405 method_not_allowed with Allow', async () => {
    const unknown = await api.raw('/api/v2/pushes/abc/nothing');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'no_route']);
    const wrong = await api.raw('/api/v2/version', { method: 'POST' });
    expect([wrong.status, wrong.body.code, wrong.headers.get('allow')]).toEqual([405, 'method_not_allowed', 'GET']);
    const listDelete = await api.raw('/api/v2/pushes/expired', { method: 'DELETE' });
    expect(listDelete.status).toBe(405);
  });

  it('ignores undeclared query parameters and answers 404 for a token no push can have', async () => {
    const push = await create({ payload: secret('p') });
    const withLocale = await api.raw(`/api/v2/pushes/${push.url_token}/preview?locale=en&_=1`);
    expect(withLocale.status).toBe(200);
    const long = await api.raw(`/api/v2/pushes/${'a'.repeat(200)}`);
    expect([long.status, long.body.code]).toEqual([404, 'not_found']);
  });
});

describe('files', () => {
  const bytesA = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256));
  const textB = 'ünïcode file ✓';

  it('needs a token to attach files', async () => {
    const res = await createPush({
      client: api.client,
      body: { push: { files: [{ filename: 'a.bin', content: bytesA.toString('base64') }] } },
    });
    expectError(res, 401, 'authentication_required');
  });

  it('stores files, serves them through the signed link without counting a view, and keeps the link valid right after the last view', async () => {
    const push = await create(
      {
        payload: secret('with-files'),
        expire_after_views: 1,
        files: [
          { filename: 'a.bin', content: bytesA.toString('base64') },
          { filename: 'résumé "v2".txt', content_type: 'text/plain', content: Buffer.from(textB).toString('base64') },
        ],
      },
      owner.token,
    );
    expect(push.kind).toBe('file');
    const got = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expect([got.views_remaining, got.expired]).toEqual([0, false]);
    expect(got.files.map((f) => [f.filename, f.size])).toEqual([
      ['a.bin', bytesA.length],
      ['résumé "v2".txt', Buffer.byteLength(textB)],
    ]);
    for (const f of got.files) secrets.push(new URL(f.url).searchParams.get('token')!);
    // The push is expired now; the links issued with the last view still work.
    const [a, b] = got.files;
    const downloadA = await api.raw(new URL(a!.url).pathname + new URL(a!.url).search);
    expect(downloadA.status).toBe(200);
    const rawA = await fetch(a!.url);
    expect(Buffer.from(await rawA.arrayBuffer()).equals(bytesA)).toBe(true);
    const viaSdk = await downloadPushFile({
      client: api.client,
      path: { url_token: push.url_token, file_id: b!.id },
      query: { token: new URL(b!.url).searchParams.get('token')! },
      parseAs: 'text',
    });
    expect(status(viaSdk)).toBe(200);
    expect(viaSdk.data).toBe(textB);
    // Served as octet-stream whatever was declared (no uploaded HTML or SVG runs on our origin); the declared type
    // stays in the retrieval's content_type.
    expect(viaSdk.response?.headers.get('content-type')).toBe('application/octet-stream');
    expect(viaSdk.response?.headers.get('x-content-type-options')).toBe('nosniff');
    expect(b!.content_type).toMatch(/^text\/plain/);
    expect(viaSdk.response?.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ _v2_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22.txt`,
    );
    // Downloads are not views.
    expect(await auditKinds(push.url_token)).toEqual(['creation', 'view']);
  });

  it('refuses a tampered link (invalid_link) and a lapsed one (link_expired) with 403', async () => {
    const push = await create({ files: [{ filename: 'k', content: bytesA.toString('base64') }] }, owner.token);
    // A link issued ten minutes ago has lapsed (5-minute lifetime).
    api.setClock(new Date(Date.now() - 10 * 60_000));
    const old = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    api.setClock(null);
    const fresh = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    const oldUrl = new URL(old.files[0]!.url);
    const freshUrl = new URL(fresh.files[0]!.url);
    secrets.push(oldUrl.searchParams.get('token')!, freshUrl.searchParams.get('token')!);
    const lapsed = await api.raw(oldUrl.pathname + oldUrl.search);
    expect([lapsed.status, lapsed.body.code]).toEqual([403, 'link_expired']);
    const token = freshUrl.searchParams.get('token')!;
    const tampered = await api.raw(`${freshUrl.pathname}?token=${token.slice(0, -2)}xx`);
    expect([tampered.status, tampered.body.code]).toEqual([403, 'invalid_link']);
    const missing = await api.raw(freshUrl.pathname);
    expect([missing.status, missing.body.code]).toEqual([400, 'invalid_parameter']);
    // A bad bearer token does not matter: the link is the credential.
    const withBadToken = await api.raw(freshUrl.pathname + freshUrl.search, {
      headers: { Authorization: 'Bearer nope' },
    });
    expect(withBadToken.status).toBe(200);
  });
});
