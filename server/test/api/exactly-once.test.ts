/**
 * Exactly-once views over HTTP: 50 concurrent retrievals of a one-view push deliver the payload once, on one server
 * and across two server processes sharing one database (the second is a real OS process: the compiled server,
 * `server/dist/main.js` as `npm start` runs it, with its default workers and DATABASE_URL pointing at the same
 * database).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, getPush } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { startCompiledServer, type ServerProcess } from '../support/compiled-server.js';
import { TEST_KEY_A } from '../support/db.js';
import { startRealApi, type RealApi } from './support/real.js';
import { expectData } from './support/sdk.js';

let api: RealApi;
let second: ServerProcess | undefined;

beforeAll(async () => {
  api = await startRealApi({ expireAfterViews: { default: 5, min: 1, max: 100 } });
});

afterAll(async () => {
  await second?.stop();
  await api?.stop();
});

async function retrieveConcurrently(urlToken: string, baseUrls: string[], n = 50) {
  const clients = baseUrls.map((baseUrl) => createClient({ baseUrl }));
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      getPush({ client: clients[i % clients.length]!, path: { url_token: urlToken } }),
    ),
  );
  return results.map((r) => ({
    status: r.response?.status,
    payload: r.data?.payload ?? null,
    expired: r.data?.expired,
  }));
}

describe('exactly once', () => {
  it('delivers a one-view push to exactly one of 50 concurrent retrievals', async () => {
    const payload = `once-${Date.now()}`;
    const push = expectData(
      await createPush({ client: api.client, body: { push: { payload, expire_after_views: 1 } } }),
      201,
    );
    const results = await retrieveConcurrently(push.url_token, [api.baseUrl]);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.payload === payload)).toHaveLength(1);
    expect(results.filter((r) => r.expired === true && r.payload === null)).toHaveLength(49);
    const [row] = await api.db.query<{ views_used: number; expired: boolean }>(
      'select views_used, expired from pushes where url_token = $1',
      [push.url_token],
    );
    expect(row).toEqual({ views_used: 1, expired: true });
    expect(api.checker.violations).toEqual([]);
  });

  it('delivers it once across two server processes sharing the database, and the second stops cleanly on SIGTERM', async () => {
    second = await startCompiledServer({
      DATABASE_URL: api.db.url,
      // 150 requests from one address in a few seconds: the per-client limit (default 120/min) is not under test here.
      PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
      PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
      PWPUSH_SIGNING_SECRET: '^'.repeat(32),
    });
    for (let round = 0; round < 3; round++) {
      const payload = `twice-${round}-${Date.now()}`;
      const push = expectData(
        await createPush({ client: api.client, body: { push: { payload, expire_after_views: 1 } } }),
        201,
      );
      const results = await retrieveConcurrently(push.url_token, [api.baseUrl, second.baseUrl]);
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(results.filter((r) => r.payload === payload)).toHaveLength(1);
    }
    // A push made on one process is readable on the other (same database, same key).
    const push = expectData(await createPush({ client: api.client, body: { push: { payload: 'shared' } } }), 201);
    const viaSecond = await getPush({
      client: createClient({ baseUrl: second.baseUrl }),
      path: { url_token: push.url_token },
    });
    expect(viaSecond.data?.payload).toBe('shared');
    expect(await second.stop()).toBe(0);
    const logs = second.output();
    expect(logs).toContain('shutting down');
    expect(logs).not.toContain('shared');
    expect(logs).not.toContain('twice-');
  });
});
