/**
 * Lifetime and failure through the API: the background sweeper erases a push past its time that nobody touched,
 * and a database restart mid-run answers 503 (with the error body, promptly) and then recovers by itself.
 */
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPush, getPush, listExpiredPushes } from '@secret-push/sdk/generated';
import { createCore } from '../../src/core.js';
import { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { makeSettings } from '../support/db.js';
import { serve } from './support/serve.js';
import { startRealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

describe('the sweeper', () => {
  it('erases the secret of a push past its time within its interval, and the push lists as expired', async () => {
    const api = await startRealApi({ sweepIntervalSeconds: 1 }, { sweeper: true });
    try {
      const user = await api.user('sweep@example.org');
      api.setClock(new Date(Date.now() - 2 * 86_400_000));
      const push = expectData(
        await createPush({
          client: api.client,
          body: { push: { payload: 'sweep-me', note: 'n', expire_after_days: 1 } },
          auth: bearer(user.token),
        }),
        201,
      );
      api.setClock(null);
      const deadline = Date.now() + 10_000;
      let row: { payload_ciphertext: string | null; expired: boolean } | undefined;
      do {
        await new Promise((r) => setTimeout(r, 250));
        [row] = await api.db.query('select payload_ciphertext, expired from pushes where url_token = $1', [
          push.url_token,
        ]);
      } while (row?.payload_ciphertext !== null && Date.now() < deadline);
      expect(row).toEqual({ payload_ciphertext: null, expired: true });
      const expired = expectData(await listExpiredPushes({ client: api.client, auth: bearer(user.token) }));
      expect(expired.map((p) => [p.url_token, p.note])).toEqual([[push.url_token, '']]);
      const read = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
      expect([read.expired, read.payload]).toEqual([true, null]);
      expect(api.checker.violations).toEqual([]);
    } finally {
      await api.stop();
    }
  });
});

describe('a database restart mid-run', () => {
  let pgDir: string | undefined;
  let cluster: EmbeddedDatabase | undefined;
  afterAll(async () => {
    await cluster?.stop().catch(() => undefined);
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  });

  it('answers 503 service_unavailable while PostgreSQL is down and recovers when it is back', async () => {
    pgDir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-outage-'));
    chmodSync(pgDir, 0o755);
    const port = await freePort();
    cluster = await startEmbeddedPostgres({ dataDir: pgDir, database: 'outage', port });
    const core = await createCore(makeSettings({ databaseUrl: cluster.url }), { sweeper: false });
    const api = await serve(core);
    try {
      const push = expectData(
        await createPush({ client: api.client, body: { push: { payload: 'before', expire_after_views: 10 } } }),
        201,
      );
      expect((await api.raw('/readyz')).status).toBe(200);

      await cluster.stop();
      const started = Date.now();
      const down = await getPush({ client: api.client, path: { url_token: push.url_token } });
      const error = expectError(down, 503, 'service_unavailable');
      expect(error.retry_after).toBeGreaterThan(0);
      expect(down.response?.headers.get('retry-after')).toMatch(/^\d+$/);
      expectError(
        await createPush({ client: api.client, body: { push: { payload: 'during' } } }),
        503,
        'service_unavailable',
      );
      const ready = await api.raw('/readyz');
      expect([ready.status, ready.body.code]).toEqual([503, 'service_unavailable']);
      expect(Date.now() - started).toBeLessThan(20_000);

      cluster = await startEmbeddedPostgres({ dataDir: pgDir, database: 'outage', port });
      let after: Awaited<ReturnType<typeof getPush>> | undefined;
      for (let attempt = 0; attempt < 20; attempt++) {
        after = await getPush({ client: api.client, path: { url_token: push.url_token } });
        if (after.response?.status === 200) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(expectData(after!).payload).toBe('before');
      expect(expectData(await createPush({ client: api.client, body: { push: { payload: 'after' } } }), 201).kind).toBe(
        'text',
      );
      expect((await api.raw('/readyz')).status).toBe(200);
      expect(api.checker.violations).toEqual([]);
    } finally {
      await api.close();
      await core.close();
    }
  });
});
