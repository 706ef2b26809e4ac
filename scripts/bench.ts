/**
 * `npm run bench`: how much the full stack costs next to two floors, in one run on one machine:
 *
 * - **ours**: the compiled server as `npm start` runs it (`server/dist/main.js`, its default workers for a PostgreSQL on
 *   this machine), and **ours×N** with N workers (by default the other of 1 and 2: one process is the figure the
 *   floors compare with, two show what a second worker adds);
 * - **same-SQL floor** (`bare`): a bare `node:http` + `pg` server that runs our SQL (one statement that inserts a push
 *   and its creation audit entry; a select by url_token, then one statement that claims a view, audits it and expires
 *   the push on its last view), prepared once per connection as ours are, with the same AES-256-GCM encryption, on a
 *   pool of the same size (10);
 * - **physical floor** (`physical`): bare `node:http` + `pg`, one INSERT per create and one UPDATE…RETURNING per
 *   retrieve, no validation, crypto or audit: what this machine does at all.
 *
 * The table shows, per server, concurrency and scenario: throughput, p50/p99 latency, errors (a non-2xx answer, a
 * reset or a timeout), the CPU time each server process tree (and PostgreSQL) spent per request, the SQL statements
 * per request as pg_stat_statements counts them (BEGIN/COMMIT included), and the peak RSS of the largest server
 * process and of all of them; then each server's start-up time (spawn → listening) and the ratios.
 *
 * One process tree: this process starts an embedded PostgreSQL in a temp folder, then the servers as child processes
 * (against it, with DATABASE_URL), and drives them over loopback with keep-alive connections, a bounded request count
 * and a time cap. The servers take turns, in rounds, so drift (table growth, a noisy neighbour) hits them alike.
 *
 * Options (env): BENCH_REQUESTS (default 4000 per scenario and concurrency), BENCH_CONCURRENCY (`16,64`: the number
 * of connections, a list), BENCH_MAX_SECONDS (60 per slice), BENCH_WARMUP (400 requests per server), BENCH_ROUNDS (4),
 * BENCH_SERVERS (which to drive, e.g. `ours,ours2,bare,physical`; `oursN` runs N workers, `ours1@--flag=1+--other=2`
 * runs ours with those Node flags instead of `npm start`'s, `ours1@` with none), BENCH_WORKERS (ours' PWPUSH_WORKERS;
 * default: the server's own default), BENCH_RATE_LIMIT (ours' PWPUSH_RATE_LIMIT_PER_MINUTE, default 0: off, as one address
 * sends everything; a high value such as 1000000 measures the limit's cost), BENCH_LOG_LEVEL, BENCH_CPU_PROF_DIR
 * (a V8 CPU profile of each server process: wall-clock samples, so on a busy machine a system call that lets another
 * process run looks expensive), BENCH_NODE_OPTIONS (NODE_OPTIONS for every server process: `--perf-prof
 * --interpreted-frames-native-stack` lets Linux `perf record -k mono -p <pid>` sample CPU time with JavaScript
 * names, after `perf inject --jit`; the jit-<pid>.dump files land in each server's working directory), BENCH_OUTPUT_DIR
 * (each server's output, its request log or `--trace-gc` lines, goes to <name>.log there instead of being drained),
 * BENCH_SOURCE=1 (run ours from its TypeScript sources through tsx, as
 * before the build existed), BENCH_BASELINE (another checkout of this repository, with node_modules: its server is
 * driven too, as `base`, and compared with ours: its compiled server with ours' Node flags when it has one built,
 * else from its sources).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { defaultWorkers } from '../server/src/config/settings.js';
import { NODE_FLAGS } from '../server/src/runtime/node-flags.js';
import { checkBuild } from './build-info.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '16,64').split(',').map(Number);
const SERVERS = process.env.BENCH_SERVERS?.split(',');
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 60);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 400);
const OUTPUT_DIR = process.env.BENCH_OUTPUT_DIR ? path.resolve(process.env.BENCH_OUTPUT_DIR) : undefined;
/** Node options for every server process: CPU profiles, and BENCH_NODE_OPTIONS (e.g. `--perf-prof` for `perf`). */
const NODE_OPTIONS = [CPU_PROF_DIR ? `--cpu-prof --cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}` : '', process.env.BENCH_NODE_OPTIONS ?? '']
  .filter(Boolean)
  .join(' ');
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;

// ------------------------------------------------------------------------------------------------ the same-SQL floor

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

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
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
               deletable_by_viewer, retrieval_step, expired, expired_on, deleted, created_at, updated_at, expires_at, stored_bytes)
             values ($1, $2, 'text', null, $3, null, null, null, false, 7, 5, 0, true, false, false, null, false, $4, $4, $5, $8)
             returning *
           ), creation as (
             insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
             select id, 'creation', $6, $7, '', null, $4 from push
           )
           select * from push`,
          values: [id, newUrlToken(), keyring.encryptText(payload, `push:${id}:payload`), now, new Date(now.getTime() + 7 * 86_400_000), ip, ua, Buffer.byteLength(payload)],
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
  };
  // node:http ignores the promise a handler returns: a failure that escapes the handler closes the connection.
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : undefined));
  });
  server.keepAliveTimeout = 5_000;
  server.listen(port, '127.0.0.1', () => console.log(`bare listening on http://127.0.0.1:${port}`));
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}


// ------------------------------------------------------------------------------------------------ the physical floor

/** One INSERT per create, one UPDATE…RETURNING per retrieve (both prepared), no validation, crypto or audit. */
async function runPhysical(databaseUrl: string, port: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const send = (res: http.ServerResponse, status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = async () => {
        if (req.method === 'POST' && req.url === '/api/v2/pushes') {
          const payload = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { push: { payload: string } }).push.payload;
          const now = new Date();
          const { rows } = await pool.query({
            name: 'physical_create',
            text: `insert into pushes (id, url_token, kind, payload_ciphertext, passphrase_protected, expire_after_days, expire_after_views,
               deletable_by_viewer, retrieval_step, created_at, updated_at, expires_at, stored_bytes)
             values ($1, $2, 'text', $3, false, 7, 5, true, false, $4, $4, $5, $6) returning url_token`,
            values: [randomUUID(), randomBytes(15).toString('base64url'), payload, now, new Date(now.getTime() + 7 * 86_400_000), Buffer.byteLength(payload)],
          });
          return send(res, 201, JSON.stringify({ url_token: (rows[0] as { url_token: string }).url_token }));
        }
        const token = req.method === 'GET' && req.url?.startsWith('/api/v2/pushes/') ? req.url.slice('/api/v2/pushes/'.length) : null;
        if (token) {
          const { rows } = await pool.query({
            name: 'physical_retrieve',
            text: `update pushes set views_used = views_used + 1 where url_token = $1 and views_used < expire_after_views
             returning payload_ciphertext`,
            values: [token],
          });
          const row = rows[0] as { payload_ciphertext: string } | undefined;
          return row ? send(res, 200, JSON.stringify({ payload: row.payload_ciphertext })) : send(res, 404, '{"code":"not_found"}');
        }
        send(res, 404, '{"code":"no_route"}');
      };
      answer().catch(() => send(res, 500, '{"code":"internal_error"}'));
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(port, '127.0.0.1', () => console.log(`physical listening on http://127.0.0.1:${port}`));
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// ------------------------------------------------------------------------------------------------ the driver

interface Sample {
  ms: number;
  ok: boolean;
  /** For a failure: the status, or the error's code (ECONNRESET, timeout, …). */
  failure?: string;
}

/** A request that gives up after 30 s (a timeout counts as an error, as a reset does). */
function request(agent: http.Agent, base: string, method: string, urlPath: string, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(urlPath, base);
    const req = http.request(url, {
      method,
      agent,
      timeout: 30_000,
      headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {},
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function timed(samples: Sample[], expected: number, fn: () => Promise<{ status: number; body: string }>) {
  const t0 = process.hrtime.bigint();
  let result: { status: number; body: string } | undefined;
  let failure: string | undefined;
  try {
    result = await fn();
    if (result.status !== expected) failure = String(result.status);
  } catch (error) {
    failure = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  }
  samples.push({ ms: Number(process.hrtime.bigint() - t0) / 1e6, ok: failure === undefined, ...(failure ? { failure } : {}) });
  return result;
}

/** One measured stretch of driving: what happened, and what it cost each process. */
interface Tally {
  samples: Sample[];
  seconds: number;
  serverCpuMs: number;
  postgresCpuMs: number;
  statements: number;
  /** Peak RSS (bytes) of the largest server process, and of all of them together. */
  rssMax: number;
  rssTotal: number;
}

/** Runs `iteration` from `concurrency` loops until `requests` requests were made or the time cap is hit. */
async function drive(concurrency: number, requestsPerIteration: number, iteration: (samples: Sample[]) => Promise<void>, requests = REQUESTS) {
  const samples: Sample[] = [];
  const iterations = Math.ceil(requests / requestsPerIteration);
  let started = 0;
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
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
    failures: [...samples.reduce((m, s) => (s.failure ? m.set(s.failure, (m.get(s.failure) ?? 0) + 1) : m), new Map<string, number>())]
      .map(([what, n]) => `${n}× ${what}`)
      .join(', '),
    rps: n / sum('seconds'),
    /** Each round's throughput: their spread shows the machine's noise. */
    roundRps: tallies.map((t) => t.samples.length / t.seconds),
    p50: pct(50),
    p99: pct(99),
    serverCpuMsPerRequest: sum('serverCpuMs') / n,
    postgresCpuMsPerRequest: sum('postgresCpuMs') / n,
    statementsPerRequest: sum('statements') / n,
    rssMax: Math.max(...tallies.map((t) => t.rssMax)),
    rssTotal: Math.max(...tallies.map((t) => t.rssTotal)),
  };
}

/** Every process of /proc: parent, CPU ticks (user + system), RSS bytes and command line. */
function processTable() {
  const procs = new Map<number, { ppid: number; ticks: number; rss: number; node: boolean }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command (which may contain spaces): state ppid … utime(14) stime(15) … rss(24, pages).
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), {
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        rss: Number(fields[21]) * 4096,
        node: command === 'node' || command === 'MainThread',
      });
    } catch {
      /* exited meanwhile */
    }
  }
  return procs;
}

/** The pids of a process and all its descendants. */
function tree(procs: ReturnType<typeof processTable>, rootPid: number): number[] {
  const found: number[] = [];
  for (const [pid] of procs) {
    for (let cur: number | undefined = pid; cur !== undefined && cur > 1; cur = procs.get(cur)?.ppid) {
      if (cur === rootPid) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** CPU time (user + system, ms) used so far by a process and all its descendants, from /proc (Linux only). */
function treeCpuMs(rootPid: number): number {
  const procs = processTable();
  return tree(procs, rootPid).reduce((sum, pid) => sum + procs.get(pid)!.ticks, 0) * 10; // CLK_TCK is 100
}

/** RSS of the Node processes of a tree: the largest one and all together. */
function treeRss(rootPid: number): { max: number; total: number } {
  const procs = processTable();
  const rss = tree(procs, rootPid).filter((pid) => procs.get(pid)!.node).map((pid) => procs.get(pid)!.rss);
  return { max: Math.max(0, ...rss), total: rss.reduce((a, b) => a + b, 0) };
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
  let rssMax = 0;
  let rssTotal = 0;
  const sample = () => {
    const rss = treeRss(meters.serverPid);
    rssMax = Math.max(rssMax, rss.max);
    rssTotal = Math.max(rssTotal, rss.total);
  };
  const sampler = setInterval(sample, 250);
  const result = await run();
  clearInterval(sampler);
  sample();
  const serverCpuMs = treeCpuMs(meters.serverPid) - server0;
  const postgresCpuMs = treeCpuMs(meters.postgresPid) - postgres0;
  const { rows } = await meters.admin.query<{ n: number }>(STATEMENTS_SQL);
  return { ...result, serverCpuMs, postgresCpuMs, statements: rows[0]!.n, rssMax, rssTotal };
}

interface Target {
  name: string;
  base: string;
  meters: Meters;
  startupMs: number;
}

const createBody = () => JSON.stringify({ push: { payload: `bench ${randomBytes(12).toString('hex')}` } });

const createOnly = (t: Target, agent: http.Agent) => async (samples: Sample[]) => {
  await timed(samples, 201, () => request(agent, t.base, 'POST', '/api/v2/pushes', createBody()));
};

const createThenRetrieve = (t: Target, agent: http.Agent) => async (samples: Sample[]) => {
  const made = await timed(samples, 201, () => request(agent, t.base, 'POST', '/api/v2/pushes', createBody()));
  const token = made?.status === 201 ? (JSON.parse(made.body) as { url_token?: string }).url_token : undefined;
  if (token) await timed(samples, 200, () => request(agent, t.base, 'GET', `/api/v2/pushes/${token}`));
};

/** Spawns `node <args>` and resolves once its output matches `ready` (the URL is the match's first group). */
function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  cwd = repoRoot,
): Promise<{ child: ChildProcess; url: string; startupMs: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(NODE_OPTIONS ? { NODE_OPTIONS } : {}),
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
        child.stdout!.off('data', onData);
        // Our server logs one JSON line per request to stdout, as in production, into a pipe that this process
        // drains (what a container runtime or journald does with it), or writes to a file when asked.
        if (OUTPUT_DIR) {
          const file = createWriteStream(path.join(OUTPUT_DIR, `${name.replace(/[^A-Za-z0-9.-]+/g, '_')}.log`));
          child.stdout!.pipe(file);
          child.stderr!.pipe(file);
        } else child.stdout!.resume();
        resolve({ child, url: m[1]!.replace('localhost', '127.0.0.1'), startupMs: performance.now() - t0 });
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

/** Workspace packages resolve to their TypeScript sources (a checkout without the condition ignores it). */
const tsxArgs = (cwd: string, entry: string) => [path.join(cwd, 'node_modules/tsx/dist/cli.mjs'), '--conditions=@secret-push/source', entry];

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

/** The bench's PostgreSQL: embedded, in a temp folder, with pg_stat_statements (loading it needs a restart). */
async function benchDatabase(dir: string) {
  const { startEmbeddedPostgres, openOrm, migrate } = await import('@secret-push/server');
  const first = await startEmbeddedPostgres({ dataDir: dir, database: 'bench', maxConnections: 200 });
  const setup = new pg.Client({ connectionString: first.url });
  await setup.connect();
  await setup.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
  await setup.end();
  await first.stop();
  const db = await startEmbeddedPostgres({ dataDir: dir, database: 'bench', maxConnections: 200 });
  const ext = new pg.Client({ connectionString: db.url });
  await ext.connect();
  await ext.query('create extension if not exists pg_stat_statements');
  await ext.end();
  const orm = await openOrm(db.url);
  await migrate(orm);
  await orm.close(true);
  return db;
}

/** Starts the servers named in BENCH_SERVERS (and the baseline) against `databaseUrl`. */
async function startServers(databaseUrl: string, dir: string, keyHex: string) {
  const { freePort } = await import('@secret-push/server');
  const ourEnv = async (workers = process.env.BENCH_WORKERS): Promise<NodeJS.ProcessEnv> => ({
    PWPUSH_ENV: 'production',
    DATABASE_URL: databaseUrl,
    PORT: String(await freePort()),
    PWPUSH_HOST: '127.0.0.1',
    PWPUSH_DATA_DIR: dir,
    PWPUSH_MASTER_KEY: `bench:${keyHex}`,
    PWPUSH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    // The bench drives everything from one address: the per-client limit would answer 429.
    PWPUSH_RATE_LIMIT_PER_MINUTE: process.env.BENCH_RATE_LIMIT ?? '0',
    ...(workers ? { PWPUSH_WORKERS: workers } : {}),
  });
  const LISTENING = /Secret Push listening on (http:\/\/\S+)/;
  /** Our server as `npm start` runs it; `flags` replace its Node flags (a server named `ours1@--a=1+--b=2`). */
  const oursArgs = (flags: readonly string[] = NODE_FLAGS) => {
    if (process.env.BENCH_SOURCE === '1') return tsxArgs(repoRoot, 'server/src/main.ts');
    const status = checkBuild();
    if (!status.fresh) throw new Error(`the compiled server is missing or stale (${status.reason}): run npm run build`);
    return [...flags, 'server/dist/main.js'];
  };
  const started: { name: string; child: ChildProcess; url: string; startupMs: number }[] = [];
  const add = async (name: string, start: () => Promise<{ child: ChildProcess; url: string; startupMs: number }>) => {
    started.push({ name, ...(await start()) });
  };
  // One at a time: start-up times are not measured against each other's start-up.
  // By default: ours as `npm start` runs it (its default workers), ours with the other of 1 or 2 workers, both floors.
  const defaultWorkersHere = defaultWorkers(databaseUrl);
  const servers = SERVERS ?? ['ours', defaultWorkersHere === 1 ? 'ours2' : 'ours1', 'bare', 'physical'];
  for (const spec of servers) {
    const [name, flagList] = spec.split('@') as [string, string | undefined];
    const flags = flagList === undefined ? undefined : flagList.split('+').filter(Boolean);
    const label = flags === undefined ? '' : `@${flags.join(' ') || 'no flags'}`;
    const ours = /^ours(\d*)$/.exec(name);
    if (ours) {
      const workers = ours[1] || undefined;
      const title = workers ? `ours×${workers}${label}` : `ours (${defaultWorkersHere} worker${defaultWorkersHere === 1 ? '' : 's'})${label}`;
      await add(title, async () => startChild(title, oursArgs(flags), await ourEnv(workers), LISTENING));
    }    else if (name === 'bare') {
      await add('bare', async () => startChild('bare server', tsxArgs(repoRoot, 'scripts/bench.ts').concat(['--bare', databaseUrl, String(await freePort()), keyHex]), {}, /bare listening on (http:\/\/\S+)/));
    } else if (name === 'physical') {
      await add('physical', async () => startChild('physical floor', tsxArgs(repoRoot, 'scripts/bench.ts').concat(['--physical', databaseUrl, String(await freePort())]), {}, /physical listening on (http:\/\/\S+)/));
    } else throw new Error(`BENCH_SERVERS: unknown server ${name} (ours, ours<N>, bare, physical)`);
  }
  if (BASELINE) {
    // A checkout with a build runs as its `npm start` does; an older one (no build) from its sources.
    const compiled = existsSync(path.join(BASELINE, 'server/dist/main.js'));
    const args = compiled ? [...NODE_FLAGS, 'server/dist/main.js'] : tsxArgs(BASELINE, 'server/src/main.ts');
    await add('base', async () => startChild('baseline server', args, await ourEnv(), LISTENING, BASELINE));
  }
  return started;
}

type Results = Map<string, ReturnType<typeof summarise>>;

function printTable(targets: Target[], results: Results): void {
  const rows: string[][] = [
    ['server', 'conns', 'scenario', 'requests', 'errors', 'req/s', 'req/s by round', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'PG CPU ms/req', 'SQL/req', 'RSS MB (largest)', 'RSS MB (all)'],
  ];
  for (const concurrency of CONCURRENCIES) {
    for (const scenario of SCENARIOS) {
      for (const t of targets) {
        const m = results.get(`${t.name}|${concurrency}|${scenario.name}`)!;
        rows.push([
          t.name,
          String(concurrency),
          scenario.name,
          String(m.requests),
          m.errors ? `${m.errors} (${m.failures})` : '0',
          m.rps.toFixed(0),
          m.roundRps.map((r) => r.toFixed(0)).join(' '),
          m.p50.toFixed(2),
          m.p99.toFixed(2),
          m.serverCpuMsPerRequest.toFixed(3),
          m.postgresCpuMsPerRequest.toFixed(3),
          m.statementsPerRequest.toFixed(2),
          (m.rssMax / 2 ** 20).toFixed(0),
          (m.rssTotal / 2 ** 20).toFixed(0),
        ]);
      }
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(rows[0]!));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows.slice(1)) console.log(line(row));
  console.log(`Start-up (spawn → listening): ${targets.map((t) => `${t.name} ${t.startupMs.toFixed(0)} ms`).join(', ')}`);
  const names = targets.map((t) => t.name);
  const ratio = (a: string, b: string, key: string) => {
    const [x, y] = [results.get(`${a}|${key}`), results.get(`${b}|${key}`)];
    return x && y ? (x.rps / y.rps).toFixed(2) : '–';
  };
  for (const ours of names.filter((n) => n.startsWith('ours') || n === 'base')) {
    for (const floor of names.filter((n) => n === 'bare' || n === 'physical' || (n === 'base' && ours !== 'base'))) {
      const parts = CONCURRENCIES.flatMap((c) => SCENARIOS.map((s) => `${s.name}@${c} ${ratio(ours, floor, `${c}|${s.name}`)}×`));
      console.log(`${ours}/${floor} throughput: ${parts.join(', ')}`);
    }
  }
}

const SCENARIOS = [
  { name: 'create', loop: createOnly, perIteration: 1 },
  { name: 'create+retrieve', loop: createThenRetrieve, perIteration: 2 },
] as const;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-bench-'));
  chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const db = await benchDatabase(dir);
  try {
    const keyHex = randomBytes(32).toString('hex');
    const started = await startServers(db.url, dir, keyHex);
    children.push(...started.map((s) => s.child));

    const postgresPid = Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const targets: Target[] = started.map((s) => ({ name: s.name, base: s.url, startupMs: s.startupMs, meters: { serverPid: s.child.pid!, postgresPid, admin } }));

    console.log(
      `Driving ${REQUESTS} requests per scenario and concurrency (${CONCURRENCIES.join(', ')} connections), cap ${MAX_SECONDS}s a slice, ` +
        `after ${WARMUP} warm-up requests per server; the servers (${targets.map((t) => t.name).join(', ')}) take turns in ${ROUNDS} rounds…`,
    );
    const results: Results = new Map();
    for (const concurrency of CONCURRENCIES) {
      // Keep-alive connections, fresh for each slice: one left idle while the other servers take their turn would be
      // closed by the server (keep-alive timeout) and could be reused at that instant (a reset that no server caused).
      const agent = () => new http.Agent({ keepAlive: true, maxSockets: concurrency });
      // Warm-up (JIT, pool connections, plans) of both paths at this concurrency, not measured.
      for (const t of targets) {
        const warm = agent();
        await drive(concurrency, 2, createThenRetrieve(t, warm), WARMUP);
        warm.destroy();
      }
      const tallies = new Map<string, Tally[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const scenario of SCENARIOS) {
          for (const t of targets) {
            const key = `${t.name}|${concurrency}|${scenario.name}`;
            const sliceAgent = agent();
            const loop = scenario.loop(t, sliceAgent);
            const tally = await measured(t.meters, () => drive(concurrency, scenario.perIteration, loop, Math.ceil(REQUESTS / ROUNDS)));
            sliceAgent.destroy();
            tallies.set(key, [...(tallies.get(key) ?? []), tally]);
          }
        }
      }
      for (const [key, list] of tallies) results.set(key, summarise(list));
    }
    await admin.end();
    printTable(targets, results);
  } finally {
    await Promise.all(children.map(stopChild));
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') {
  await runBare(process.argv[3]!, Number(process.argv[4]), process.argv[5]!);
} else if (process.argv[2] === '--physical') {
  await runPhysical(process.argv[3]!, Number(process.argv[4]));
} else {
  await main();
  process.exit(0);
}
