/**
 * The production process as `npm start` runs it: the compiled bundle, a primary and two workers on one port, against
 * a database of the test cluster (DATABASE_URL). Real processes, real sockets: no TypeScript loader or compiler in
 * the process tree, the per-client limit counted once for the host, /metrics summed over the workers (and never
 * holding a secret), a killed worker replaced, and SIGTERM draining every worker.
 */
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, TEST_KEY_A, type TestDatabase } from '../support/db.js';
import {
  COMPILED_MAIN,
  descendants,
  eventually,
  startCompiledServer,
  type ServerProcess,
} from '../support/compiled-server.js';

const METRICS_TOKEN = 'scrape-token-0123456789';
const LIMIT = 30;

let db: TestDatabase;
let server: ServerProcess;

/** One request on a connection of its own (so the primary hands it to the next worker), from `client` (X-Forwarded-For). */
function call(
  method: string,
  urlPath: string,
  opts: { client: string; body?: unknown; headers?: Record<string, string> },
) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(new URL(urlPath, server.baseUrl), {
      method,
      agent: false,
      timeout: 10_000,
      headers: {
        'x-forwarded-for': opts.client,
        ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
        ...opts.headers,
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath} timed out`)));
    req.end(body);
  });
}

const scrape = () =>
  call('GET', '/metrics', { client: '192.0.2.250', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });

/** The value of one series (exact name and labels as exposed), or undefined. */
function series(text: string, nameAndLabels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? undefined : Number(line.slice(nameAndLabels.length + 1));
}

const workerPids = () =>
  descendants(server.child.pid!)
    .filter((p) => p.cmdline.includes(COMPILED_MAIN))
    .map((p) => p.pid);

beforeAll(async () => {
  db = await createMigratedDatabase('sp_cluster');
  server = await startCompiledServer({
    DATABASE_URL: db.url,
    PWPUSH_WORKERS: '2',
    PWPUSH_TRUST_PROXY: 'true',
    PWPUSH_RATE_LIMIT_PER_MINUTE: String(LIMIT),
    PWPUSH_METRICS: 'true',
    PWPUSH_METRICS_TOKEN: METRICS_TOKEN,
    PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
    // A typo of a setting: named at start-up with the closest known name, its value never printed.
    PWPUSH_RATE_LIMT_PER_MINUTE: 'typo-value-7f3a',
  });
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

describe('the compiled server in a cluster', () => {
  it('runs compiled JavaScript in a primary and two workers, with no TypeScript loader or compiler', async () => {
    expect(server.output()).toContain('(2 workers)');
    expect(workerPids()).toHaveLength(2);
    // A browser bundle is served from the build, not made on request.
    const qr = await call('GET', '/assets/vendor/qrcode.js', { client: '192.0.2.1' });
    expect(qr.status).toBe(200);
    expect(qr.body).toContain('QRCode');
    for (const p of [
      { pid: server.child.pid!, cmdline: readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8') },
      ...descendants(server.child.pid!),
    ]) {
      expect(p.cmdline).not.toMatch(/tsx|esbuild|typescript|\.ts\b/);
    }
    const dist = path.dirname(COMPILED_MAIN);
    for (const file of readdirSync(dist).filter((f) => f.endsWith('.js'))) {
      expect(readFileSync(path.join(dist, file), 'utf8'), file).not.toMatch(
        /from ["'](esbuild|tsx|typescript)["']|import\(["'](esbuild|tsx|typescript)["']\)/,
      );
    }
  });

  it('names an unknown PWPUSH_* variable once at start-up, with the closest known name, never its value', () => {
    const warnings = server
      .output()
      .split('\n')
      .filter((l) => l.includes('Unknown settings ignored'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('PWPUSH_RATE_LIMT_PER_MINUTE (did you mean PWPUSH_RATE_LIMIT_PER_MINUTE?)');
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 40,
      unknown_settings: [{ name: 'PWPUSH_RATE_LIMT_PER_MINUTE', closest: 'PWPUSH_RATE_LIMIT_PER_MINUTE' }],
    });
    expect(server.output()).not.toContain('typo-value-7f3a');
  });

  it('counts the per-client limit once for the host: the workers share it', async () => {
    const client = '203.0.113.7';
    const answers = [];
    for (let i = 0; i < LIMIT + 10; i++) answers.push(await call('GET', '/api/v2/version', { client }));
    expect(answers.slice(0, LIMIT).map((a) => a.status)).toEqual(Array(LIMIT).fill(200));
    expect(answers.slice(LIMIT).map((a) => a.status)).toEqual(Array(10).fill(429));
    expect(Number(answers[LIMIT]!.headers['retry-after'])).toBeGreaterThan(0);
    // Both workers answered some of them (the kernel spreads connections over them). Their request lines are written
    // a few kilobytes at a time, or 200 ms after the last (runtime/logger.ts): read them once both have had the time.
    const workersSeen = () =>
      new Set(
        server
          .output()
          .split('\n')
          .filter((l) => l.includes('"operation":"getVersion"'))
          .map((l) => (JSON.parse(l) as { worker: number }).worker),
      );
    const until = Date.now() + 5_000;
    while (workersSeen().size < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect([...workersSeen()].sort()).toEqual([0, 1]);
    // Another client is not affected.
    expect((await call('GET', '/api/v2/version', { client: '203.0.113.8' })).status).toBe(200);
  });

  it('serves /metrics only with the token: request series by operation summed over the workers, no secret in them', async () => {
    const client = '198.51.100.20';
    const payload = `metrics-secret-${Date.now()}`;
    const passphrase = 'correct horse battery';
    const made: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await call('POST', '/api/v2/pushes', { client, body: { push: { payload, passphrase } } });
      expect(created.status).toBe(201);
      made.push((JSON.parse(created.body) as { url_token: string }).url_token);
    }
    for (const token of made) {
      expect(
        (await call('GET', `/api/v2/pushes/${token}`, { client, headers: { 'x-passphrase': 'wrong one' } })).status,
      ).toBe(401);
      const got = await call('GET', `/api/v2/pushes/${token}`, { client, headers: { 'x-passphrase': passphrase } });
      expect(JSON.parse(got.body)).toMatchObject({ payload });
    }
    expect((await call('GET', '/api/v2/pushes/no-such-token-here', { client })).status).toBe(404);

    const refused = await call('GET', '/metrics', { client });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    const wrong = await call('GET', '/metrics', { client, headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(wrong.status).toBe(401);

    const { status, headers, body: text } = await scrape();
    expect(status).toBe(200);
    expect(headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    // Six creates and twelve retrievals, whichever worker answered them, in one series each.
    expect(series(text, 'secret_push_http_requests_total{operation="createPush",method="POST",status="201"}')).toBe(6);
    expect(series(text, 'secret_push_http_requests_total{operation="getPush",method="GET",status="200"}')).toBe(6);
    expect(series(text, 'secret_push_http_requests_total{operation="getPush",method="GET",status="401"}')).toBe(6);
    expect(
      series(
        text,
        'secret_push_http_request_duration_seconds_count{operation="createPush",method="POST",status="201"}',
      ),
    ).toBe(6);
    expect(series(text, 'secret_push_passphrase_refusals_total{reason="passphrase_incorrect"}')).toBe(6);
    expect(series(text, 'secret_push_rate_limit_refusals_total')).toBe(10);
    expect(series(text, 'secret_push_workers')).toBe(2);
    expect(series(text, 'secret_push_db_pool_max_connections')).toBe(20);
    expect(series(text, 'secret_push_db_pool_connections{state="open"}')).toBeGreaterThan(0);
    expect(series(text, 'secret_push_db_pool_wait_seconds_count')).toBeGreaterThan(0);
    expect(series(text, 'secret_push_sweeper_runs_total{result="ok"}')).toBeGreaterThanOrEqual(1);
    for (const worker of ['primary', '0', '1'])
      expect(series(text, `process_resident_memory_bytes{worker="${worker}"}`)).toBeGreaterThan(0);
    // Nothing secret: no payload, passphrase, url_token, token, key or client address.
    for (const secret of [
      payload,
      passphrase,
      ...made,
      METRICS_TOKEN,
      TEST_KEY_A.key.toString('hex'),
      client,
      db.url,
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('replaces a worker that dies, and keeps serving meanwhile', async () => {
    const [victim] = workerPids();
    process.kill(victim!, 'SIGKILL');
    // A connection the kernel queued for the dying worker at that instant is reset (never left hanging): a client's
    // retry on a connection error gets through to the other worker.
    const retried = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await call('GET', '/api/v2/version', { client: '192.0.2.30' });
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
    };
    for (let i = 0; i < 5; i++) expect((await retried()).status).toBe(200);
    await eventually(
      async () => {
        const pids = workerPids();
        return (
          pids.length === 2 &&
          !pids.includes(victim!) &&
          series((await scrape()).body, 'process_resident_memory_bytes{worker="1"}') !== undefined &&
          series((await scrape()).body, 'process_resident_memory_bytes{worker="0"}') !== undefined
        );
      },
      30_000,
      'a replacement worker',
    );
    const text = (await scrape()).body;
    expect(series(text, 'secret_push_worker_restarts_total')).toBe(1);
    expect(server.output()).toContain('worker exited unexpectedly; replacing it');
    for (let i = 0; i < 4; i++) expect((await call('GET', '/readyz', { client: '192.0.2.31' })).status).toBe(200);
  });

  it('drains every worker on SIGTERM and exits 0', async () => {
    const pids = workerPids();
    expect(await server.stop()).toBe(0);
    const out = server.output();
    const stops = out
      .split('\n')
      .filter((l) => l.includes('"msg":"shutting down"'))
      .map((l) => (JSON.parse(l) as { worker?: number }).worker);
    expect(stops.sort()).toEqual([0, 1, undefined]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });
});
