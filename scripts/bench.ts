/**
 * `npm run bench`: how much the full stack (express + openapi-backend validation + MikroORM + logging) costs next to
 * a bare `node:http` + `pg` server that runs the same SQL (one statement that inserts a push and its creation audit
 * entry; a select by url_token, then one statement that claims a view, audits it and expires the push on its last
 * view), prepared once per connection as ours are, with the same AES-256-GCM encryption, on a pool of the same
 * size (10). The table shows, per scenario,
 * throughput, latency, the CPU time each server process (and PostgreSQL) spent per request, and the SQL statements
 * per request as pg_stat_statements counts them (BEGIN/COMMIT included), so both sides can be seen to run the same
 * SQL.
 *
 * One process tree: this process starts an embedded PostgreSQL in a temp folder, then two child processes (our
 * server via `tsx server/src/main.ts`, and this file in `--bare` mode), and drives both over loopback with a fixed
 * concurrency, a bounded request count and a time cap. Everything is stopped at the end.
 *
 * Options (env): BENCH_REQUESTS (default 2000 per scenario), BENCH_CONCURRENCY (10), BENCH_MAX_SECONDS (60 per
 * scenario), BENCH_WARMUP (400 requests per server, not measured), BENCH_ROUNDS (4: each scenario runs in that many
 * slices, the servers taking turns), BENCH_CPU_PROF_DIR (write a V8 CPU profile of each
 * server process there), BENCH_BASELINE (another checkout of this repository, with node_modules: its server is driven
 * too, as `base`, to compare two versions of our server within one run on a noisy machine).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 60);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 400);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;

// ------------------------------------------------------------------------------------------------ the bare server

async function runBare(databaseUrl: string, port: number, masterKeyHex: string): Promise<void> {
  const { createKeyring } = await import('@secret-push/server');
  const { newUrlToken } = await import('@secret-push/server');
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
        // The same statement as PushService.create: the push and its creation audit entry at once.
        const { rows } = await pool.query({
          name: 'bare_create',
          text: `with push as (
             insert into pushes (id, url_token, kind, user_id, payload_ciphertext, name_ciphertext, note_ciphertext,
               passphrase_hash, passphrase_protected, expire_after_days, expire_after_views, views_used,
               deletable_by_viewer, retrieval_step, expired, expired_on, deleted, created_at, updated_at, expires_at)
             values ($1, $2, 'text', null, $3, null, null, null, false, 7, 5, 0, true, false, false, null, false, $4, $4, $5)
             returning *
           ), creation as (
             insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
             select id, 'creation', $6, $7, '', null, $4 from push
           )
           select * from push`,
          values: [id, newUrlToken(), keyring.encryptText(payload, `push:${id}:payload`), now, new Date(now.getTime() + 7 * 86_400_000), ip, ua],
        });
        const row = rows[0] as { url_token: string };
        return send(res, 201, { url_token: row.url_token, kind: 'text', expired: false });
      }
      const match = /^\/api\/v2\/pushes\/([a-z0-9_-]{1,64})$/.exec(req.url ?? '');
      if (req.method === 'GET' && match) {
        const now = new Date();
        const found = await pool.query({ name: 'bare_find', text: 'select * from pushes where url_token = $1', values: [match[1]] });
        const row = found.rows[0] as { id: string; payload_ciphertext: string | null } | undefined;
        if (!row) return send(res, 404, { error: 'not found', code: 'not_found' });
        // Decrypt, then claim with the same statement as PushService.retrieve (claim, audit, last-view expiry).
        const payload = row.payload_ciphertext ? keyring.decryptText(row.payload_ciphertext, `push:${row.id}:payload`) : '';
        const { rows } = await pool.query({
          name: 'bare_claim',
          text: `with won as (
             update pushes set views_used = views_used + 1, updated_at = $1,
               expired = views_used + 1 >= expire_after_views,
               expired_on = case when views_used + 1 >= expire_after_views then $1 else expired_on end,
               payload_ciphertext = case when views_used + 1 >= expire_after_views then null else payload_ciphertext end,
               note_ciphertext = case when views_used + 1 >= expire_after_views then null else note_ciphertext end,
               passphrase_hash = case when views_used + 1 >= expire_after_views then null else passphrase_hash end
             where id = $2 and not expired and views_used < expire_after_views and expires_at > $1
             returning *
           ), viewed as (
             insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
             select id, 'view', $3, $4, '', null, $1 from won
           )
           select * from won`,
          values: [now, row.id, ip, ua],
        });
        const won = rows[0] as { id: string } | undefined;
        return send(res, 200, { url_token: match[1], payload: won ? payload : null, expired: !won });
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

/** One measured stretch of driving: what happened, and what it cost each process. */
interface Tally {
  samples: Sample[];
  seconds: number;
  serverCpuMs: number;
  postgresCpuMs: number;
  statements: number;
}

/** Runs `iteration` from CONCURRENCY workers until `requests` requests were made or the time cap is hit. */
async function drive(requestsPerIteration: number, iteration: (samples: Sample[]) => Promise<void>, requests = REQUESTS) {
  const samples: Sample[] = [];
  const iterations = Math.ceil(requests / requestsPerIteration);
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
  return { samples, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

function summarise(tallies: Tally[]) {
  const samples = tallies.flatMap((t) => t.samples);
  const sum = (key: 'seconds' | 'serverCpuMs' | 'postgresCpuMs' | 'statements') => tallies.reduce((a, t) => a + t[key], 0);
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  const n = samples.length;
  return {
    requests: n,
    errors: samples.filter((s) => !s.ok).length,
    rps: n / sum('seconds'),
    p50: pct(50),
    p99: pct(99),
    serverCpuMsPerRequest: sum('serverCpuMs') / n,
    postgresCpuMsPerRequest: sum('postgresCpuMs') / n,
    statementsPerRequest: sum('statements') / n,
  };
}

/** CPU time (user + system, ms) used so far by a process and all its descendants, from /proc (Linux only). */
function treeCpuMs(rootPid: number): number {
  const ticksPerMs = 100 / 1000; // CLK_TCK is 100 on Linux
  const procs = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command (which may contain spaces): state ppid … utime(14) stime(15).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      /* exited meanwhile */
    }
  }
  let ticks = 0;
  for (const [pid, p] of procs) {
    for (let cur: number | undefined = pid; cur !== undefined && cur > 1; cur = procs.get(cur)?.ppid) {
      if (cur === rootPid) {
        ticks += p.ticks;
        break;
      }
    }
  }
  return ticks / ticksPerMs;
}

interface Meters {
  serverPid: number;
  postgresPid: number;
  /** A superuser connection to the bench database, with pg_stat_statements loaded. */
  admin: pg.Client;
}

const STATEMENTS_SQL = `select coalesce(sum(calls), 0)::int as n from pg_stat_statements
  where dbid = (select oid from pg_database where datname = current_database()) and query not like '%pg_stat_statements%'`;

async function measured(meters: Meters, run: () => Promise<{ samples: Sample[]; seconds: number }>): Promise<Tally> {
  await meters.admin.query('select pg_stat_statements_reset()');
  const server0 = treeCpuMs(meters.serverPid);
  const postgres0 = treeCpuMs(meters.postgresPid);
  const result = await run();
  const serverCpuMs = treeCpuMs(meters.serverPid) - server0;
  const postgresCpuMs = treeCpuMs(meters.postgresPid) - postgres0;
  const { rows } = await meters.admin.query<{ n: number }>(STATEMENTS_SQL);
  return { ...result, serverCpuMs, postgresCpuMs, statements: rows[0]!.n };
}

interface Target {
  name: string;
  base: string;
  agent: http.Agent;
  meters: Meters;
}

const createBody = () => JSON.stringify({ push: { payload: `bench ${randomBytes(12).toString('hex')}` } });

const createOnly = (t: Target) => async (samples: Sample[]) => {
  await timed(samples, 201, () => request(t.agent, t.base, 'POST', '/api/v2/pushes', createBody()));
};

const createThenRetrieve = (t: Target) => async (samples: Sample[]) => {
  const made = await timed(samples, 201, () => request(t.agent, t.base, 'POST', '/api/v2/pushes', createBody()));
  const token = made ? (JSON.parse(made.body) as { url_token?: string }).url_token : undefined;
  if (token) await timed(samples, 200, () => request(t.agent, t.base, 'GET', `/api/v2/pushes/${token}`));
};

function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  cwd = repoRoot,
): Promise<{ child: ChildProcess; url: string }> {
  // Workspace packages resolve to their TypeScript sources (a checkout without the condition ignores it).
  const child = spawn(process.execPath, [path.join(cwd, 'node_modules/tsx/dist/cli.mjs'), '--conditions=@secret-push/source', ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(CPU_PROF_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}` } : {}),
      ...env,
    },
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
  const { startEmbeddedPostgres, freePort } = await import('@secret-push/server');
  const { openOrm, migrate } = await import('@secret-push/server');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-bench-'));
  chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  // pg_stat_statements counts the statements each server sends; loading it needs a restart.
  const first = await startEmbeddedPostgres({ dataDir: dir, database: 'bench' });
  const setup = new pg.Client({ connectionString: first.url });
  await setup.connect();
  await setup.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
  await setup.end();
  await first.stop();
  const db = await startEmbeddedPostgres({ dataDir: dir, database: 'bench' });
  try {
    const ext = new pg.Client({ connectionString: db.url });
    await ext.connect();
    await ext.query('create extension if not exists pg_stat_statements');
    await ext.end();
    const orm = await openOrm(db.url);
    await migrate(orm);
    await orm.close(true);
    const keyHex = randomBytes(32).toString('hex');

    // Our server logs one JSON line per request to stdout, as in production, into a pipe that this process drains
    // (what a container runtime or journald does with it).
    const startOurs = async (name: string, cwd: string) => {
      const started = await startChild(
        name,
        ['server/src/main.ts'],
        {
          PWPUSH_ENV: 'production',
          DATABASE_URL: db.url,
          PORT: String(await freePort()),
          PWPUSH_HOST: '127.0.0.1',
          PWPUSH_DATA_DIR: dir,
          PWPUSH_MASTER_KEY: `bench:${keyHex}`,
          PWPUSH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
          // The bench drives thousands of requests from one address: the per-client limit would answer 429.
          PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
        },
        /Secret Push listening on (http:\/\/\S+)/,
        cwd,
      );
      children.push(started.child);
      started.child.stdout!.resume();
      return started;
    };
    const ours = await startOurs('our server', repoRoot);
    const base = BASELINE ? await startOurs('baseline server', BASELINE) : undefined;
    const bare = await startChild(
      'bare server',
      ['scripts/bench.ts', '--bare', db.url, String(await freePort()), keyHex],
      {},
      /bare listening on (http:\/\/\S+)/,
    );
    children.push(bare.child);

    const postgresPid = Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const target = (name: string, url: string, child: ChildProcess): Target => ({
      name,
      base: url,
      agent: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }),
      meters: { serverPid: child.pid!, postgresPid, admin },
    });
    const targets = [
      target('ours', ours.url, ours.child),
      ...(base ? [target('base', base.url, base.child)] : []),
      target('bare', bare.url, bare.child),
    ];

    console.log(
      `Driving ${REQUESTS} requests per scenario, concurrency ${CONCURRENCY}, cap ${MAX_SECONDS}s each, ` +
        `after ${WARMUP} warm-up requests per server; the servers take turns in ${ROUNDS} rounds…`,
    );
    // Warm-up (JIT, pool connections, plans) of both paths at full concurrency, not measured.
    for (const t of targets) await drive(2, createThenRetrieve(t), WARMUP);
    // The servers take turns, scenario by scenario and in ROUNDS slices, so drift (table growth, a noisy neighbour on
    // a shared machine) hits them alike.
    const tallies = new Map<string, Tally[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [scenario, loop, perIteration] of [
        ['create', createOnly, 1],
        ['create+retrieve', createThenRetrieve, 2],
      ] as const) {
        for (const t of targets) {
          const key = `${t.name}|${scenario}`;
          const tally = await measured(t.meters, () => drive(perIteration, loop(t), Math.ceil(REQUESTS / ROUNDS)));
          tallies.set(key, [...(tallies.get(key) ?? []), tally]);
        }
      }
    }
    const results: Record<string, Record<string, ReturnType<typeof summarise>>> = {};
    for (const [key, list] of tallies) {
      const [server, scenario] = key.split('|') as [string, string];
      (results[server] ??= {})[scenario] = summarise(list);
    }
    for (const t of targets) t.agent.destroy();
    await admin.end();

    const rows: string[][] = [
      ['server', 'scenario', 'requests', 'errors', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'PG CPU ms/req', 'SQL stmts/req'],
    ];
    for (const [server, r] of Object.entries(results)) {
      for (const [scenario, m] of Object.entries(r)) {
        rows.push([
          server,
          scenario,
          String(m.requests),
          String(m.errors),
          m.rps.toFixed(0),
          m.p50.toFixed(2),
          m.p99.toFixed(2),
          m.serverCpuMsPerRequest.toFixed(3),
          m.postgresCpuMsPerRequest.toFixed(3),
          m.statementsPerRequest.toFixed(2),
        ]);
      }
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log(line(rows[0]!));
    console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
    for (const row of rows.slice(1)) console.log(line(row));
    const ratio = (a: string, b: string, scenario: string, key: 'rps' | 'serverCpuMsPerRequest') =>
      (results[a]![scenario]![key] / results[b]![scenario]![key]).toFixed(2);
    const compare = (a: string, b: string) =>
      console.log(
        `${a}/${b} throughput: create ${ratio(a, b, 'create', 'rps')}×, create+retrieve ${ratio(a, b, 'create+retrieve', 'rps')}×; ` +
          `server CPU per request: create ${ratio(a, b, 'create', 'serverCpuMsPerRequest')}×, ` +
          `create+retrieve ${ratio(a, b, 'create+retrieve', 'serverCpuMsPerRequest')}×`,
      );
    compare('ours', 'bare');
    if (base) {
      compare('base', 'bare');
      compare('ours', 'base');
    }
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
