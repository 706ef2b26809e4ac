/**
 * Unit tests of the HTTP layer alone (routing, validation → error mapping, authentication, headers), on the
 * in-memory double from server/test/http-doubles. The behaviour of pushes is tested on the real Core in the other
 * files of this folder.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPush, getVersion, listActivePushes } from '@secret-push/sdk/generated';
import { memoryCore } from '../http-doubles/memory-core.js';
import { makeSettings } from '../support/db.js';
import { serve, type Served } from './support/serve.js';

const user = { userId: 'u1', email: 'owner@example.org', token: 'spt_unit_token_owner' };

describe('HTTP layer on the in-memory double', () => {
  const core = memoryCore(makeSettings({ fileMaxCount: 1, fileMaxBytes: 1024, rateLimitPerMinute: 0 }), [user]);
  let api: Served;
  beforeAll(async () => {
    api = await serve(core);
  });
  afterAll(async () => api.close());
  afterEach(() => {
    expect(api.checker.violations).toEqual([]);
    core.down = false;
  });

  it('answers the version report with the common headers and echoes a safe request id', async () => {
    const res = await getVersion({ client: api.client, headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.response?.status).toBe(200);
    expect(res.data?.api_version).toBe('2.1');
    expect(res.response?.headers.get('x-request-id')).toBe('abc-123');
    expect(res.response?.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(res.response?.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('gives every API answer (success, error, 405, v1) the headers the other pages carry, beside its own', async () => {
    const common = [
      'cache-control',
      'x-robots-tag',
      'content-security-policy',
      'strict-transport-security',
      'x-content-type-options',
      'x-frame-options',
      'referrer-policy',
      'cross-origin-resource-policy',
    ];
    // The probes go through express's router, as every page does; API requests take the shorter way.
    const probe = await fetch(`${api.baseUrl}/healthz`);
    expect(probe.status).toBe(200);
    const answers = {
      ok: await api.raw('/api/v2/version'),
      noRoute: await api.raw('/api/v2/nothing-here'),
      methodNotAllowed: await api.raw('/api/v2/pushes/active', { method: 'DELETE' }),
      v1: await api.raw('/api/v1/version.json'),
    };
    expect(Object.values(answers).map((a) => a.status)).toEqual([200, 404, 405, 200]);
    for (const answer of Object.values(answers)) {
      for (const name of common) expect([name, answer.headers.get(name)]).toEqual([name, probe.headers.get(name)]);
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
    expect(answers.methodNotAllowed.headers.get('allow')).toBe('GET');
    expect(answers.noRoute.body.request_id).toBe(answers.noRoute.headers.get('x-request-id'));
  });

  it('replaces an unsafe request id with its own', async () => {
    const res = await api.raw('/api/v2/version', { headers: { 'X-Request-Id': 'bad id<script>' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('maps envelope, JSON and field errors to 400 and 422', async () => {
    const notJson = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"push":',
    });
    expect([notJson.status, notJson.body.code]).toEqual([400, 'invalid_json']);
    const noPush = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect([noPush.status, noPush.body.code]).toEqual([400, 'missing_push']);
    const arrayBody = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[1]',
    });
    expect([arrayBody.status, arrayBody.body.code]).toEqual([400, 'missing_push']);
    const pushString = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"push":"x"}',
    });
    expect([pushString.status, pushString.body.code]).toEqual([400, 'missing_push']);
    const bad = await createPush({
      client: api.client,
      body: { push: { kind: 'url', payload: 'not a url', expire_after_days: 0, extra_field: 1 } as never },
    });
    expect(bad.response?.status).toBe(422);
    expect(bad.error?.code).toBe('validation_failed');
    expect(Object.keys(bad.error?.errors ?? {}).sort()).toEqual(['expire_after_days', 'payload']);
    expect(JSON.stringify(bad.error)).not.toMatch(/must match|schemaPath|\^\[/);
  });

  it('answers 400 unsupported_media_type for a non-JSON body and 413 for an oversized one', async () => {
    const form = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'payload=x',
    });
    expect([form.status, form.body.code]).toEqual([400, 'unsupported_media_type']);
    const huge = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'x'.repeat(9 * 1024 * 1024) } }),
    });
    expect([huge.status, huge.body.code]).toEqual([413, 'payload_too_large']);
  });

  it('routes .json suffixes, literal paths before {url_token}, and answers 404/405 in JSON', async () => {
    const suffixed = await api.raw('/api/v2/version.json');
    expect(suffixed.status).toBe(200);
    const unknown = await api.raw('/api/v2/nope');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'no_route']);
    // `/` is the web create page now (server/src/web); any other path outside the API still falls through to it.
    const outside = await api.raw('/no-such-page');
    expect([outside.status, outside.body.code]).toEqual([404, 'no_route']);
    const wrong = await api.raw('/api/v2/pushes/active', { method: 'DELETE' });
    expect([wrong.status, wrong.body.code, wrong.headers.get('allow')]).toEqual([405, 'method_not_allowed', 'GET']);
    const put = await api.raw('/api/v2/pushes/abcdefghijkl', { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, DELETE');
  });

  it('authenticates bearer and legacy pairs, and rejects bad tokens', async () => {
    const ok = await listActivePushes({ client: api.client, auth: user.token });
    expect(ok.response?.status).toBe(200);
    const legacy = await api.raw('/api/v2/pushes/active', {
      headers: { 'X-User-Email': user.email, 'X-User-Token': user.token },
    });
    expect(legacy.status).toBe(200);
    const mismatch = await api.raw('/api/v2/pushes/active', {
      headers: { 'X-User-Email': 'other@example.org', 'X-User-Token': user.token },
    });
    expect([mismatch.status, mismatch.body.code]).toEqual([401, 'invalid_token']);
    const none = await listActivePushes({ client: api.client });
    expect([none.response?.status, none.error?.code]).toEqual([401, 'authentication_required']);
    const badOnCreate = await createPush({ client: api.client, auth: 'spt_nope', body: { push: { payload: 'x' } } });
    expect([badOnCreate.response?.status, badOnCreate.error?.code]).toEqual([401, 'invalid_token']);
    const badOnVersion = await getVersion({ client: api.client, headers: { Authorization: 'Bearer spt_nope' } });
    expect(badOnVersion.response?.status).toBe(200);
  });

  it('answers 400 invalid_page for pages outside 1..200', async () => {
    for (const page of ['0', '-1', '201', 'abc', '1.5']) {
      const res = await api.raw(`/api/v2/pushes/active?page=${page}`, {
        headers: { Authorization: `Bearer ${user.token}` },
      });
      expect([page, res.status, res.body.code]).toEqual([page, 400, 'invalid_page']);
    }
  });

  it('answers 503 with Retry-After when the database is down, and /readyz says so', async () => {
    core.down = true;
    const res = await createPush({ client: api.client, body: { push: { payload: 'x' } } });
    expect([res.response?.status, res.error?.code]).toEqual([503, 'service_unavailable']);
    const ready = await api.raw('/readyz');
    expect(ready.status).toBe(503);
    core.down = false;
    expect((await api.raw('/readyz')).status).toBe(200);
    expect((await api.raw('/healthz')).status).toBe(200);
  });

  it('answers 500 internal_error without the failure text, and logs the failure class only', async () => {
    const original = core.pushes.preview;
    core.pushes.preview = async () => {
      throw new TypeError('boom with secret-detail-123');
    };
    try {
      const res = await api.raw('/api/v2/pushes/abcdefghijklmnop/preview');
      expect([res.status, res.body.code]).toEqual([500, 'internal_error']);
      expect(JSON.stringify(res.body)).not.toContain('secret-detail');
      expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
      const line = api.logs.map((l) => JSON.parse(l)).find((l) => l.status === 500);
      expect(line.failure.name).toBe('TypeError');
      expect(api.logs.join('\n')).not.toContain('secret-detail');
    } finally {
      core.pushes.preview = original;
    }
  });

  it('logs one line per request with the route template, never the query string', async () => {
    await api.raw('/api/v2/pushes/abcdefghijklmnop?passphrase=hunter2-secret');
    const line = api.logs
      .map((l) => JSON.parse(l))
      .find((l) => l.route === '/api/v2/pushes/{url_token}' && l.method === 'GET');
    expect(line).toMatchObject({ method: 'GET', status: 404 });
    expect(api.logs.join('\n')).not.toContain('hunter2-secret');
    expect(api.logs.join('\n')).not.toContain('abcdefghijklmnop');
  });
});

describe('per-client rate limit', () => {
  it('answers 429 rate_limited with Retry-After past the limit', async () => {
    const api = await serve(memoryCore(makeSettings({ rateLimitPerMinute: 3 })));
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await api.raw('/api/v2/version')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limited = await api.raw('/api/v2/version');
      expect(limited.body.code).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Probes are never throttled, even for a client over its limit.
      expect((await api.raw('/healthz')).status).toBe(200);
      expect(api.checker.violations).toEqual([]);
    } finally {
      await api.close();
    }
  });
});
