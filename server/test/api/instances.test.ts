/**
 * Instance settings seen through the API, each on its own real Core and database: anonymous access off, disabled
 * kinds, a configured public base URL, small file limits (413), and the per-client rate limit.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPush, expirePush, getPush, getPushAudit, getVersion, previewPush } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

describe('an instance with anonymous access off, url/qr disabled and a public base URL', () => {
  let api: RealApi;
  let token: string;
  beforeAll(async () => {
    api = await startRealApi({
      allowAnonymous: false,
      enableUrlPushes: false,
      enableQrPushes: false,
      publicBaseUrl: 'https://push.example.org',
      fileMaxCount: 1,
      fileMaxBytes: 1024,
      trustProxy: true,
    });
    token = (await api.user('solo@example.org')).token;
  });
  afterEach(() => expect(api.checker.violations).toEqual([]));
  afterAll(async () => api?.stop());

  it('keeps version public and reports the settings', async () => {
    const report = expectData(await getVersion({ client: api.client }));
    expect(report.features).toMatchObject({
      anonymous_access: false,
      pushes: { url_pushes: { enabled: false }, qr_code_pushes: { enabled: false } },
    });
  });

  it('needs a token for create, retrieve, preview and delete', async () => {
    expectError(
      await createPush({ client: api.client, body: { push: { payload: 'x' } } }),
      401,
      'authentication_required',
    );
    const push = expectData(
      await createPush({ client: api.client, body: { push: { payload: 'x' } }, auth: bearer(token) }),
      201,
    );
    const path = { url_token: push.url_token };
    expectError(await getPush({ client: api.client, path }), 401, 'authentication_required');
    expectError(await previewPush({ client: api.client, path }), 401, 'authentication_required');
    expectError(await expirePush({ client: api.client, path }), 401, 'authentication_required');
    expect(expectData(await previewPush({ client: api.client, path, auth: bearer(token) })).url).toBe(
      `https://push.example.org/p/${push.url_token}`,
    );
    expect(push.json_url).toBe(`https://push.example.org/api/v2/pushes/${push.url_token}`);
  });

  it('records the client address from X-Forwarded-For behind a trusted proxy', async () => {
    const push = expectData(
      await createPush({
        client: api.client,
        body: { push: { payload: 'x' } },
        auth: bearer(token),
        headers: { 'X-Forwarded-For': '203.0.113.7', 'User-Agent': 'bench-agent/1', Referer: 'https://ref.example/' },
      }),
      201,
    );
    const audit = expectData(
      await getPushAudit({ client: api.client, path: { url_token: push.url_token }, auth: bearer(token) }),
    );
    expect(audit.logs[0]).toMatchObject({
      kind: 'creation',
      ip: '203.0.113.7',
      user_agent: 'bench-agent/1',
      referrer: 'https://ref.example/',
    });
  });

  it('answers 422 on kind for disabled kinds', async () => {
    for (const kind of ['url', 'qr'] as const) {
      const payload = kind === 'url' ? 'https://example.org' : 'qr text';
      const error = expectError(
        await createPush({ client: api.client, body: { push: { kind, payload } }, auth: bearer(token) }),
        422,
        'validation_failed',
      );
      expect(Object.keys(error.errors ?? {})).toEqual(['kind']);
    }
  });

  it('answers 422 for a file over the instance limit and 413 for a body over the request limit', async () => {
    const error = expectError(
      await createPush({
        client: api.client,
        body: { push: { files: [{ filename: 'big', content: Buffer.alloc(2048).toString('base64') }] } },
        auth: bearer(token),
      }),
      422,
      'validation_failed',
    );
    expect(Object.keys(error.errors ?? {})).toEqual(['files']);
    const huge = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ push: { payload: 'x'.repeat(9 * 1024 * 1024) } }),
    });
    expect([huge.status, huge.body.code]).toEqual([413, 'payload_too_large']);
  });
});

describe('an instance with a per-client rate limit', () => {
  let api: RealApi;
  beforeAll(async () => {
    api = await startRealApi({ rateLimitPerMinute: 5 });
  });
  afterEach(() => expect(api.checker.violations).toEqual([]));
  afterAll(async () => api?.stop());

  it('answers 429 rate_limited with Retry-After past the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await getVersion({ client: api.client })).response!.status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await createPush({ client: api.client, body: { push: { payload: 'x' } } });
    const error = expectError(limited, 429, 'rate_limited');
    expect(Number(limited.response?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(error.retry_after).toBeGreaterThan(0);
  });
});
