/**
 * `npm run bench`: how much the full stack (express + openapi-backend validation + MikroORM + logging) costs next to
 * a bare `node:http` + `pg` server that runs the same SQL (insert a push + its creation audit in a transaction;
 * claim a view with the same single UPDATE … RETURNING, audit it, expire on the last view) with the same
 * AES-256-GCM encryption.
 *
 * One process tree: this process starts an embedded PostgreSQL in a temp folder, then two child processes (our
 * server via `tsx server/src/main.ts`, and this file in `--bare` mode), and drives both over loopback with a fixed
 * concurrency, a bounded request count and a time cap. Everything is stopped at the end.
 *
 * Options (env): BENCH_REQUESTS (default 2000 per scenario), BENCH_CONCURRENCY (10), BENCH_MAX_SECONDS (60 per
 * scenario).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 60);

// ------------------------------------------------------------------------------------------------ the bare server

async function runBare(databaseUrl: string, port: number, masterKeyHex: string): Promise<void> {
  const { createKeyring } = await import('../server/src/crypto/envelope.js');
  const { newUrlToken } = await import('../server/src/crypto/tokens.js');
  const keyring = createKeyring([{ id: 'bench', key: Buffer.from(masterKeyHex, 'hex') }]);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });

  const readJson = (req: http.IncomingMessage): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          reject(e);
        }
      });
      req.on('error', reject);
    });

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(text);
  };

  const server = http.createServer(async (req, res) => {
    const ip = req.socket.remoteAddress ?? '';
    const ua = String(req.headers['user-agent'] ?? '');
    try {
      if (req.method === 'POST' && req.url === '/api/v2/pushes') {
        const body = (await readJson(req)) as { push?: { payload?: string } };
        const payload = body.push?.payload;
        if (typeof payload !== 'string' || payload === '') return send(res, 422, { error: 'payload', code: 'validation_failed' });
        const id = randomUUID();
        const now = new Date();
        const client = await pool.connect();
        try {
          await client.query('begin');
          const { rows } = await client.query(
            `insert into pushes (id, url_token, kind, user_id, payload_ciphertext, name_ciphertext, note_ciphertext,
               passphrase_hash, passphrase_protected, expire_after_days, expire_after_views, views_used,
               deletable_by_viewer, retrieval_step, expired, expired_on, deleted, created_at, updated_at, expires_at)
             values ($1, $2, 'text', null, $3, null, null, null, false, 7, 5, 0, true, false, false, null, false, $4, $4, $5)
             returning *`,
            [id, newUrlToken(), keyring.encryptText(payload, `push:${id}:payload`), now, new Date(now.getTime() + 7 * 86_400_000)],
          );
          await client.query(
            'insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at) values ($1, $2, $3, $4, $5, $6, $7)',
            [id, 'creation', ip, ua, '', null, now],
          );
          await client.query('commit');
          const row = rows[0] as { url_token: string };
          return send(res, 201, { url_token: row.url_token, kind: 'text', expired: false });
        } catch (e) {
          await client.query('rollback').catch(() => undefined);
          throw e;
        } finally {
          client.release();
        }
      }
      const match = /^\/api\/v2\/pushes\/([a-z0-9_-]{1,64})$/.exec(req.url ?? '');
      if (req.method === 'GET' && match) {
        const now = new Date();
        const found = await pool.query('select * from pushes where url_token = $1', [match[1]]);
        const row = found.rows[0] as { id: string } | undefined;
        if (!row) return send(res, 404, { error: 'not found', code: 'not_found' });
        const client = await pool.connect();
        try {
          await client.query('begin');
          const { rows } = await client.query(
            `update pushes set views_used = views_used + 1, updated_at = $1
             where id = $2 and not expired and views_used < expire_after_views and expires_at > $1
             returning *`,
            [now, row.id],
          );
          const won = rows[0] as
            | { id: string; url_token: string; payload_ciphertext: string; views_used: number; expire_after_views: number }
            | undefined;
          let payload: string | null = null;
          if (won) {
            await client.query(
              'insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at) values ($1, $2, $3, $4, $5, $6, $7)',
              [won.id, 'view', ip, ua, '', null, now],
            );
            payload = keyring.decryptText(won.payload_ciphertext, `push:${won.id}:payload`);
            if (won.views_used >= won.expire_after_views) {
              await client.query(
                `update pushes set expired = true, expired_on = $1, updated_at = $1,
                   payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null where id = $2`,
                [now, won.id],
              );
            }
          }
          await client.query('commit');
          return send(res, 200, { url_token: match[1], payload, expired: !won });
        } catch (e) {
          await client.query('rollback').catch(() => undefined);
          throw e;
        } finally {
          client.release();
        }
      }
      send(res, 404, { error: 'no route', code: 'no_route' });
    } catch {
      if (!res.headersSent) send(res, 500, { error: 'internal', code: 'internal_error' });
    }
  });
  server.keepAliveTimeout = 5_000;
  server.listen(port, '127.0.0.1', () => console.log(`bare listening on http://127.0.0.1:${port}`));
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// ------------------------------------------------------------------------------------------------ the driver

interface Sample {
  ms: number;
  ok: boolean;
}

function request(agent: http.Agent, base: string, method: string, urlPath: string, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(urlPath, base);
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function timed(samples: Sample[], expected: number, fn: () => Promise<{ status: number; body: string }>) {
  const t0 = process.hrtime.bigint();
  let result: { status: number; body: string } | undefined;
  try {
    result = await fn();
  } catch {
    result = undefined;
  }
  samples.push({ ms: Number(process.hrtime.bigint() - t0) / 1e6, ok: result?.status === expected });
  return result;
}

/** Runs `iteration` from CONCURRENCY workers until `requests` requests were made or the time cap is hit. */
async function drive(requestsPerIteration: number, iteration: (samples: Sample[]) => Promise<void>) {
  const samples: Sample[] = [];
  const iterations = Math.ceil(REQUESTS / requestsPerIteration);
  let started = 0;
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < iterations && Date.now() < deadline) {
        started += 1;
        await iteration(samples);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  return {
    requests: samples.length,
    errors: samples.filter((s) => !s.ok).length,
    rps: samples.length / seconds,
    p50: pct(50),
    p99: pct(99),
  };
}

async function scenarios(base: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const createBody = () => JSON.stringify({ push: { payload: `bench ${randomBytes(12).toString('hex')}` } });
  // Warm-up (JIT, pools, prepared plans), not measured.
  for (let i = 0; i < 50; i++) await request(agent, base, 'POST', '/api/v2/pushes', createBody());
  const create = await drive(1, async (samples) => {
    await timed(samples, 201, () => request(agent, base, 'POST', '/api/v2/pushes', createBody()));
  });
  const createRetrieve = await drive(2, async (samples) => {
    const made = await timed(samples, 201, () => request(agent, base, 'POST', '/api/v2/pushes', createBody()));
    const token = made ? (JSON.parse(made.body) as { url_token?: string }).url_token : undefined;
    if (token) await timed(samples, 200, () => request(agent, base, 'GET', `/api/v2/pushes/${token}`));
  });
  agent.destroy();
  return { create, createRetrieve };
}

function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'node_modules/tsx/dist/cli.mjs'), ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => {
      if (output.length < 100_000) output += c.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function main(): Promise<void> {
  const { startEmbeddedPostgres, freePort } = await import('../server/src/db/embedded.js');
  const { openOrm, migrate } = await import('../server/src/db/orm.js');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-bench-'));
  chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const db = await startEmbeddedPostgres({ dataDir: dir, database: 'bench' });
  try {
    const orm = await openOrm(db.url);
    await migrate(orm);
    await orm.close(true);
    const keyHex = randomBytes(32).toString('hex');

    const ours = await startChild(
      'our server',
      ['server/src/main.ts'],
      {
        PWPUSH_ENV: 'production',
        DATABASE_URL: db.url,
        PORT: String(await freePort()),
        PWPUSH_HOST: '127.0.0.1',
        PWPUSH_DATA_DIR: dir,
        PWPUSH_MASTER_KEY: `bench:${keyHex}`,
        PWPUSH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      },
      /Secret Push listening on (http:\/\/\S+)/,
    );
    children.push(ours.child);
    ours.child.stdout!.resume();
    const bare = await startChild(
      'bare server',
      ['scripts/bench.ts', '--bare', db.url, String(await freePort()), keyHex],
      {},
      /bare listening on (http:\/\/\S+)/,
    );
    children.push(bare.child);

    console.log(`Driving ${REQUESTS} requests per scenario, concurrency ${CONCURRENCY}, cap ${MAX_SECONDS}s each…`);
    const results = { ours: await scenarios(ours.url), bare: await scenarios(bare.url) };

    const rows: string[][] = [['server', 'scenario', 'requests', 'errors', 'req/s', 'p50 ms', 'p99 ms']];
    for (const [server, r] of Object.entries(results)) {
      for (const [scenario, s] of Object.entries({ 'create': r.create, 'create+retrieve': r.createRetrieve })) {
        rows.push([server, scenario, String(s.requests), String(s.errors), s.rps.toFixed(0), s.p50.toFixed(2), s.p99.toFixed(2)]);
      }
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log(line(rows[0]!));
    console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
    for (const row of rows.slice(1)) console.log(line(row));
    console.log(
      `ours/bare throughput: create ${(results.ours.create.rps / results.bare.create.rps).toFixed(2)}×, ` +
        `create+retrieve ${(results.ours.createRetrieve.rps / results.bare.createRetrieve.rps).toFixed(2)}×`,
    );
  } finally {
    await Promise.all(children.map(stopChild));
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') {
  await runBare(process.argv[3]!, Number(process.argv[4]), process.argv[5]!);
} else {
  await main();
  process.exit(0);
}
