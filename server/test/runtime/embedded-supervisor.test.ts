/**
 * Fault test with real processes: the compiled server on its embedded PostgreSQL (no DATABASE_URL, two workers). The
 * postmaster is killed with SIGKILL; the supervisor starts it again, /readyz comes back to 200 by itself, every push
 * answered 201 before the kill is still readable with its payload (PostgreSQL's crash recovery), and the server
 * writes new pushes again.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY_A } from '../support/db.js';
import { eventually, startCompiledServer, type ServerProcess } from '../support/compiled-server.js';

let server: ServerProcess;

const postmasterPid = () =>
  Number(readFileSync(path.join(server.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

async function call(method: string, urlPath: string, body?: unknown) {
  const res = await fetch(new URL(urlPath, server.baseUrl), {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

beforeAll(async () => {
  server = await startCompiledServer({
    PWPUSH_WORKERS: '2',
    PWPUSH_METRICS: 'true',
    PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
    PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
  });
});

afterAll(async () => {
  await server?.stop();
});

describe('the supervised embedded PostgreSQL', () => {
  it('runs its first sweep once it serves, and the sweep succeeds (it used to fail at every start on a busy machine)', async () => {
    const sweeps = async () =>
      (await (await fetch(new URL('/metrics', server.baseUrl))).text()).match(
        /^secret_push_sweeper_runs_total\{result="(ok|failed)"\} (\d+)$/gm,
      );
    await eventually(
      async () => (await sweeps())?.some((line) => /"ok"\} [1-9]/.test(line)) ?? false,
      30_000,
      'a sweep',
    );
    expect((await sweeps())?.filter((line) => /"failed"\} [1-9]/.test(line))).toEqual([]);
    expect(server.output()).not.toContain('sweep failed');
  });

  it('restarts after the postmaster is killed: /readyz back to 200 on its own, committed pushes readable, new ones written', async () => {
    const made = new Map<string, string>();
    for (let i = 0; i < 20; i++) {
      const payload = `before-kill-${i}-${Date.now()}`;
      const created = await call('POST', '/api/v2/pushes', { push: { payload } });
      expect(created.status).toBe(201);
      made.set(created.body!.url_token as string, payload);
    }
    expect((await call('GET', '/readyz')).status).toBe(200);

    const killed = postmasterPid();
    process.kill(killed, 'SIGKILL');
    // Down: the probe tells the truth while PostgreSQL is gone.
    await eventually(async () => (await call('GET', '/readyz')).status === 503, 10_000, '/readyz to answer 503');
    // Up again by itself.
    await eventually(async () => (await call('GET', '/readyz')).status === 200, 60_000, '/readyz to answer 200 again');
    expect(postmasterPid()).not.toBe(killed);
    expect(() => process.kill(postmasterPid(), 0)).not.toThrow();

    for (const [token, payload] of made) {
      const got = await call('GET', `/api/v2/pushes/${token}`);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ payload, expired: false });
    }
    const after = await call('POST', '/api/v2/pushes', { push: { payload: 'after the restart' } });
    expect(after.status).toBe(201);
    expect((await call('GET', `/api/v2/pushes/${after.body!.url_token as string}`)).body).toMatchObject({
      payload: 'after the restart',
    });

    // The primary's log lines are written in batches (at most 200 ms late): wait for the restart's line.
    await eventually(
      async () => server.output().includes('embedded PostgreSQL restarted'),
      5_000,
      'the restart to be logged',
    );
    const out = server.output();
    expect(out).toContain('embedded PostgreSQL exited unexpectedly; restarting it');
    expect(out).toContain('embedded PostgreSQL restarted');
    const metrics = await (await fetch(new URL('/metrics', server.baseUrl))).text();
    expect(metrics).toMatch(/^secret_push_embedded_postgres_restarts_total 1$/m);
    expect(metrics).toMatch(/^secret_push_embedded_postgres_up 1$/m);
  });

  it('stops PostgreSQL with the server on SIGTERM', async () => {
    const pid = postmasterPid();
    expect(await server.stop()).toBe(0);
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
