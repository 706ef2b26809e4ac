/**
 * `npm run bench`: how much the full stack costs next to two floors, in one run on one machine:
 *
 * - **ours**: the compiled server as `npm start` runs it (`server/dist/main.js`, its default workers for a PostgreSQL on
 *   this machine), and **ours×N** with N workers (by default the other of 1 and 2: one process is the figure the
 *   floors compare with, two show what a second worker adds);
 * - **same-SQL floor** (`bare`, scripts/bench/bare-floor.ts): a bare `node:http` + `pg` server that sends the SQL ours
 *   sends for these requests (a create: one statement with the deadline guard, the address's storage quota window,
 *   the push and its creation audit entry; a retrieve: a select by url_token, then one statement that claims a view,
 *   audits it and expires the push on its last view), prepared once per connection as ours are, with the same
 *   AES-256-GCM encryption, on a pool of the same size (10); its doc comment lists what it leaves out;
 * - **physical floor** (`physical`, scripts/bench/physical-floor.ts): bare `node:http` + `pg`, one INSERT per create
 *   (the same row, `stored_bytes` included) and one conditional UPDATE…RETURNING per retrieve, no validation, crypto,
 *   quota or audit: what this machine does at all.
 *
 * The table shows, per server, concurrency and scenario: throughput, p50/p99 latency, errors (a non-2xx answer, a
 * reset or a timeout), the CPU time each server process tree (and PostgreSQL) spent per request, the SQL statements
 * per request as pg_stat_statements counts them (BEGIN/COMMIT included), and the peak RSS of the largest server
 * process and of all of them; then each server's start-up time (spawn → listening) and the ratios.
 *
 * One process tree: this process starts an embedded PostgreSQL in a temp folder, then the servers as child processes
 * (against it, with DATABASE_URL; scripts/bench/servers.ts), and drives them over loopback with keep-alive
 * connections, a bounded request count and a time cap (scripts/bench/driver.ts: the load, the measurements, the table).
 * The servers take turns, in rounds (every other round with the scenarios in reverse order), so drift (table growth,
 * a noisy neighbour, the autovacuum after a slice) hits them alike.
 *
 * Options (env): BENCH_REQUESTS (default 4000 per scenario and concurrency), BENCH_CONCURRENCY (`16,64`: the number
 * of connections, a list), BENCH_MAX_SECONDS (60 per slice), BENCH_WARMUP (400 requests per server and scenario), BENCH_ROUNDS (4),
 * BENCH_SERVERS (which to drive, e.g. `ours,ours2,bare,physical`; `oursN` runs N workers, `ours1@--flag=1+--other=2`
 * runs ours with those Node flags instead of `npm start`'s, `ours1@` with none), BENCH_WORKERS (ours' PWPUSH_WORKERS;
 * default: the server's own default), BENCH_RATE_LIMIT (ours' PWPUSH_RATE_LIMIT_PER_MINUTE, default 0: off, as one address
 * sends everything; a high value such as 1000000 measures the limit's cost), BENCH_ADDRESSES (client addresses the load
 * comes from, sent as X-Forwarded-For to ours behind PWPUSH_TRUST_PROXY; default 1, the worst case for per-address
 * counters such as the anonymous storage quota's window row), BENCH_AUTH (how creates are sent, a list of `anonymous`,
 * `token` (the account token) and `key` (an API key with only `pushes:create`), each its own scenario in the same
 * rounds: `BENCH_SERVERS=ours BENCH_AUTH=token,key` compares a scoped key with the account token; default
 * `anonymous`; scripts/bench/credentials.ts), BENCH_LOG_LEVEL, BENCH_STATEMENTS=N (after each slice, its N most
 * called SQL statements from pg_stat_statements: calls per request and mean time), BENCH_SERVER_ENV (more environment for ours and base,
 * `NAME=value` pairs separated by spaces, e.g. `PWPUSH_ANONYMOUS_STORAGE_PER_HOUR=0`), BENCH_CPU_PROF_DIR
 * (a V8 CPU profile of each server process: wall-clock samples, so on a busy machine a system call that lets another
 * process run looks expensive), BENCH_NODE_OPTIONS (NODE_OPTIONS for every server process: `--perf-prof
 * --interpreted-frames-native-stack` lets Linux `perf record -k mono -p <pid>` sample CPU time with JavaScript
 * names, after `perf inject --jit`; the jit-<pid>.dump files land in each server's working directory), BENCH_OUTPUT_DIR
 * (each server's output, its request log or `--trace-gc` lines, goes to <name>.log there instead of being drained),
 * BENCH_WEBHOOK=1 (two more scenarios, create+retrieve by an owner without webhooks and by one with a webhook whose
 * deliveries reach a receiver on loopback: the throughput ratio, and the delivery latency from event to receipt; a
 * webhook slice ends when its deliveries have arrived, and the deliveries received twice and the rows left pending are
 * counted; scripts/bench/webhook.ts; BENCH_WEBHOOK_BUDGET sets ours' send budgets, default 1000000: counted, never
 * reached; 0: off), BENCH_OWNERS=N (an owner's creates and create+retrieve cycles on ours and base: `create/owner`
 * and `create+retrieve/owner` by one owner, and with N > 1 `create/owners` and `create+retrieve/owners` by N owners in
 * turn; each printed against its anonymous scenario), BENCH_SCALE=N (the scale mode: the rounds on the empty database,
 * then N pushes with their audit entries loaded straight into it, the rounds again, and each scenario's after/before
 * ratio; scripts/bench/scale.ts; 200000 runs here in minutes, the issue's size is 2000000), BENCH_SWEEP=N (N pushes
 * past their time loaded at once, then the first server's create+retrieve until the sweeper has expired them: the
 * sweep's duration and the p99 meanwhile; ours sweeps every second; 100000 here, the issue's 1000000),
 * BENCH_SCENARIOS (only these scenarios, by name, e.g. `create+retrieve/webhook`: a CPU
 * profile of one scenario), BENCH_SOURCE=1 (run ours from its TypeScript sources through tsx, as
 * before the build existed), BENCH_BASELINE (another checkout of this repository, with node_modules: its server is
 * driven too, as `base`, and compared with ours: its compiled server with ours' Node flags when it has one built,
 * else from its sources).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { benchCredentials } from './bench/credentials.js';
import { driveAll, driveUntil, type Results, type Target } from './bench/driver.js';
import { options } from './bench/options.js';
import { dueCount, loadDue, loadScale } from './bench/scale.js';
import { benchAdminUrl, benchDatabase, startServers, stopChild, type Started } from './bench/servers.js';
import { registerBenchWebhook, reportDeliveries, startBenchReceiver } from './bench/webhook.js';

/** BENCH_SCALE: each server's scenarios after the load against before it, in the same run. */
function printScaleRatios(targets: Target[], before: Results, after: Results): void {
  for (const t of targets) {
    const parts = [...after]
      .filter(([key]) => key.startsWith(`${t.name}|`))
      .map(([key, m]) => {
        const was = before.get(key);
        const [, conns, scenario] = key.split('|');
        return was
          ? `${scenario}@${conns} ${(m.rps / was.rps).toFixed(2)}× (p99 ${was.p99.toFixed(1)} → ${m.p99.toFixed(1)} ms)`
          : '';
      })
      .filter(Boolean);
    console.log(`${t.name} after/before the load: ${parts.join(', ')}`);
  }
}

/** BENCH_SWEEP: a million pushes due at once, and traffic while the sweeper expires them. */
async function benchSweep(admin: pg.Client, adminUrl: string, target: Target, quiet: Results): Promise<void> {
  const concurrency = options.concurrencies[0]!;
  console.log(`\nBENCH_SWEEP: loading ${options.sweep.toLocaleString('en')} pushes past their time…`);
  const loadSeconds = await loadDue(admin, options.sweep);
  // Its own connection: the slice's meters use `admin` meanwhile. One count at a time, the last awaited.
  const counter = new pg.Client({ connectionString: adminUrl });
  await counter.connect();
  const t0 = performance.now();
  let left = await dueCount(counter);
  let doneAt = left === 0 ? t0 : 0;
  let counting: Promise<void> = Promise.resolve();
  const poll = setInterval(() => {
    counting = counting.then(async () => {
      left = await dueCount(counter);
      if (left === 0 && !doneAt) doneAt = performance.now();
    });
  }, 250);
  const during = await driveUntil(target, 'create+retrieve', concurrency, () => doneAt > 0);
  clearInterval(poll);
  await counting;
  await counter.end();
  const was = quiet.get(`${target.name}|${concurrency}|create+retrieve`);
  console.log(
    `Loaded in ${loadSeconds.toFixed(0)} s; ${doneAt ? `swept in ${((doneAt - t0) / 1000).toFixed(1)} s` : `${left} still due when the slice's cap came`} ` +
      `(from the load's end, sweeping every second); ${target.name} create+retrieve@${concurrency} meanwhile: ${during.rps.toFixed(0)} req/s, ` +
      `p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, ${during.errors} errors` +
      (was
        ? `; in the rounds: ${was.rps.toFixed(0)} req/s, p99 ${was.p99.toFixed(1)} ms (${(during.p99 / was.p99).toFixed(2)}×)`
        : ''),
  );
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-bench-'));
chmodSync(dir, 0o755);
const started: Started[] = [];
const db = await benchDatabase(dir);
try {
  await startServers(db.url, dir, randomBytes(32).toString('hex'), started);
  const postgresPid = Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const admin = new pg.Client({ connectionString: benchAdminUrl(db) });
  // A failure below stops the database: its connection's end is then no news (the failure is what is thrown).
  admin.on('error', () => {});
  await admin.connect();
  const credentials = await benchCredentials(admin, options.webhook, options.owners);
  const receiver = options.webhook ? await startBenchReceiver() : null;
  const firstOurs = started.find((s) => s.name.startsWith('ours'));
  if (receiver && firstOurs) await registerBenchWebhook(firstOurs.url, credentials.webhookOwner!, receiver.url);
  const targets: Target[] = started.map((s) => ({
    name: s.name,
    base: s.url,
    startupMs: s.startupMs,
    meters: { serverPid: s.child.pid!, postgresPid, admin },
    credentials,
  }));
  const driven = await driveAll(targets, receiver ? () => receiver.receipts.length : undefined);
  let quiet = driven.results;
  if (options.scale > 0) {
    console.log(`\nBENCH_SCALE: loading ${options.scale.toLocaleString('en')} pushes…`);
    const loaded = await loadScale(admin, options.scale, credentials.ownerId!);
    console.log(
      `Loaded in ${loaded.seconds.toFixed(0)} s (${loaded.users.toLocaleString('en')} owners besides the busy one; database ${loaded.size}). The same rounds again:`,
    );
    const after = await driveAll(targets, receiver ? () => receiver.receipts.length : undefined);
    printScaleRatios(targets, driven.results, after.results);
    quiet = after.results;
  }
  // The sweep's traffic against the rounds just before it (after the scale mode's load, when it ran).
  if (options.sweep > 0) await benchSweep(admin, benchAdminUrl(db), targets[0]!, quiet);
  if (receiver) {
    await reportDeliveries(receiver, driven.webhookEvents, driven.webhookPushes, benchAdminUrl(db));
    await receiver.close();
  }
  await admin.end();
} finally {
  await Promise.all(started.map((s) => stopChild(s.child)));
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
