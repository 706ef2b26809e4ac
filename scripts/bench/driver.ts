/**
 * The bench's driver: the load (create and create-then-retrieve loops over keep-alive connections, a bounded request
 * count and a time cap per slice, the servers taking turns in rounds), what each slice cost (CPU time of the server's
 * process tree and of PostgreSQL's from /proc, peak RSS of the server's Node processes, SQL statements from
 * pg_stat_statements), and the table with its ratios. It knows the servers only by their URL and pid (servers.ts
 * starts them).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type pg from 'pg';
import type { AuthMode, Credentials } from './credentials.js';
import { options } from './options.js';

const {
  requests: REQUESTS,
  concurrencies: CONCURRENCIES,
  maxSeconds: MAX_SECONDS,
  warmup: WARMUP,
  rounds: ROUNDS,
} = options;

interface Sample {
  ms: number;
  ok: boolean;
  /** For a failure: the status, or the error's code (ECONNRESET, timeout, …). */
  failure?: string;
}

let nextAddress = 0;
/** With BENCH_ADDRESSES above 1, the next client address (round robin over 10.x.y.1), as a proxy in front would send it. */
function forwardedFor(): Record<string, string> {
  if (options.addresses <= 1) return {};
  const i = nextAddress++ % options.addresses;
  return { 'x-forwarded-for': `10.${i >> 8}.${i & 255}.1` };
}

/** A request that gives up after 30 s (a timeout counts as an error, as a reset does). */
function request(
  agent: http.Agent,
  base: string,
  method: string,
  urlPath: string,
  body?: string,
  authorization?: string,
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(urlPath, base);
    const req = http.request(url, {
      method,
      agent,
      timeout: 30_000,
      headers: {
        ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        ...(authorization ? { authorization } : {}),
        ...forwardedFor(),
      },
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
  samples.push({
    ms: Number(process.hrtime.bigint() - t0) / 1e6,
    ok: failure === undefined,
    ...(failure ? { failure } : {}),
  });
  return result;
}

/** One measured stretch of driving: what happened, and what it cost each process. */
interface Tally {
  samples: Sample[];
  seconds: number;
  serverCpuMs: number;
  postgresCpuMs: number;
  /** This process's CPU: the driver, and with BENCH_WEBHOOK the receiver of the deliveries (it shares the cores). */
  benchCpuMs: number;
  statements: number;
  /** Peak RSS (bytes) of the largest server process, and of all of them together. */
  rssMax: number;
  rssTotal: number;
}

/** Runs `iteration` from `concurrency` loops until `requests` requests were made or the time cap is hit. */
async function drive(
  concurrency: number,
  requestsPerIteration: number,
  iteration: (samples: Sample[]) => Promise<void>,
  requests = REQUESTS,
  settle?: () => Promise<void>,
  /** Ends the slice early once it answers true (BENCH_SWEEP: when the sweeper is done). */
  stop?: () => boolean,
) {
  const samples: Sample[] = [];
  const iterations = Math.ceil(requests / requestsPerIteration);
  let started = 0;
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < iterations && Date.now() < deadline && !stop?.()) {
        started += 1;
        await iteration(samples);
      }
    }),
  );
  // The work the slice's requests left behind (its webhook deliveries) is the slice's: its clock and CPU run until done.
  await settle?.();
  return { samples, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

function summarise(tallies: Tally[]) {
  const samples = tallies.flatMap((t) => t.samples);
  const sum = (key: 'seconds' | 'serverCpuMs' | 'postgresCpuMs' | 'benchCpuMs' | 'statements') =>
    tallies.reduce((a, t) => a + t[key], 0);
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  const n = samples.length;
  return {
    requests: n,
    errors: samples.filter((s) => !s.ok).length,
    failures: [
      ...samples.reduce(
        (m, s) => (s.failure ? m.set(s.failure, (m.get(s.failure) ?? 0) + 1) : m),
        new Map<string, number>(),
      ),
    ]
      .map(([what, n]) => `${n}× ${what}`)
      .join(', '),
    rps: n / sum('seconds'),
    /** Each round's throughput: their spread shows the machine's noise. */
    roundRps: tallies.map((t) => t.samples.length / t.seconds),
    p50: pct(50),
    p99: pct(99),
    serverCpuMsPerRequest: sum('serverCpuMs') / n,
    postgresCpuMsPerRequest: sum('postgresCpuMs') / n,
    benchCpuMsPerRequest: sum('benchCpuMs') / n,
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
  const rss = tree(procs, rootPid)
    .filter((pid) => procs.get(pid)!.node)
    .map((pid) => procs.get(pid)!.rss);
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

const TOP_STATEMENTS_SQL = `select calls::int as calls, total_exec_time::float8 as ms, query from pg_stat_statements
  where dbid = (select oid from pg_database where datname = current_database()) and query not like '%pg_stat_statements%'
  order by calls desc limit $1`;

/** BENCH_STATEMENTS=N: a slice's N most called statements, per request, with their execution time. */
async function printTopStatements(admin: pg.Client, n: number, requests: number): Promise<void> {
  const { rows } = await admin.query<{ calls: number; ms: number; query: string }>(TOP_STATEMENTS_SQL, [n]);
  for (const r of rows) {
    const text = r.query.replace(/\s+/g, ' ').slice(0, 140);
    console.log(`  ${(r.calls / requests).toFixed(3)}/req ${(r.ms / r.calls).toFixed(3)} ms  ${text}`);
  }
}

async function measured(meters: Meters, run: () => Promise<{ samples: Sample[]; seconds: number }>): Promise<Tally> {
  await meters.admin.query('select pg_stat_statements_reset()');
  const server0 = treeCpuMs(meters.serverPid);
  const postgres0 = treeCpuMs(meters.postgresPid);
  const bench0 = process.cpuUsage();
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
  const bench = process.cpuUsage(bench0);
  const benchCpuMs = (bench.user + bench.system) / 1000;
  const { rows } = await meters.admin.query<{ n: number }>(STATEMENTS_SQL);
  if (options.topStatements > 0) await printTopStatements(meters.admin, options.topStatements, result.samples.length);
  return { ...result, serverCpuMs, postgresCpuMs, benchCpuMs, statements: rows[0]!.n, rssMax, rssTotal };
}

export interface Target {
  name: string;
  base: string;
  meters: Meters;
  startupMs: number;
  /** The credential of each BENCH_AUTH mode (./credentials.ts). */
  credentials: Credentials;
}

const createBody = () => JSON.stringify({ push: { payload: `bench ${randomBytes(12).toString('hex')}` } });

const createOnly = (mode: AuthMode) => (t: Target, agent: http.Agent) => {
  const credential = t.credentials[mode];
  const authorization = credential ? `Bearer ${credential}` : undefined;
  return async (samples: Sample[]) => {
    await timed(samples, 201, () => request(agent, t.base, 'POST', '/api/v2/pushes', createBody(), authorization));
  };
};

const createThenRetrieve = (t: Target, agent: http.Agent) => async (samples: Sample[]) => {
  const made = await timed(samples, 201, () => request(agent, t.base, 'POST', '/api/v2/pushes', createBody()));
  const token = made?.status === 201 ? (JSON.parse(made.body) as { url_token?: string }).url_token : undefined;
  if (token) await timed(samples, 200, () => request(agent, t.base, 'GET', `/api/v2/pushes/${token}`));
};

/**
 * BENCH_OWNERS: the credential of an owner's create, by one owner (the bench user's account token) or by many in turn
 * (round robin over BENCH_OWNERS users, per server).
 */
const ownerTurn = new Map<string, number>();
function ownerCredential(t: Target, who: 'owner' | 'owners'): string {
  if (who === 'owner') return `Bearer ${t.credentials.token!}`;
  const tokens = t.credentials.owners!;
  const turn = ownerTurn.get(t.name) ?? 0;
  ownerTurn.set(t.name, turn + 1);
  return `Bearer ${tokens[turn % tokens.length]!}`;
}

/** An owner's create (BENCH_OWNERS). */
const ownerCreate = (who: 'owner' | 'owners') => (t: Target, agent: http.Agent) => async (samples: Sample[]) => {
  const authorization = ownerCredential(t, who);
  await timed(samples, 201, () => request(agent, t.base, 'POST', '/api/v2/pushes', createBody(), authorization));
};

/** An owner's create, then a recipient's view of it (BENCH_OWNERS; the view sends no credential, as a recipient's). */
const ownerCreateThenRetrieve = (who: 'owner' | 'owners') => (t: Target, agent: http.Agent) => {
  return async (samples: Sample[]) => {
    const authorization = ownerCredential(t, who);
    const made = await timed(samples, 201, () =>
      request(agent, t.base, 'POST', '/api/v2/pushes', createBody(), authorization),
    );
    const token = made?.status === 201 ? (JSON.parse(made.body) as { url_token?: string }).url_token : undefined;
    if (token) await timed(samples, 200, () => request(agent, t.base, 'GET', `/api/v2/pushes/${token}`));
  };
};

/**
 * The webhook owner's events on each server (BENCH_WEBHOOK): one per create answered 201, one per view answered 200;
 * each is one delivery to the bench's receiver.
 */
const webhookEvents = new Map<string, number>();
const countEvent = (server: string) => webhookEvents.set(server, (webhookEvents.get(server) ?? 0) + 1);
/** The server that made each of the webhook owner's pushes (by push_id): whose delivery a receipt is. */
const webhookPushes = new Map<string, string>();

/** create+retrieve with an authenticated create: by the token's owner, or (`webhook`) by the owner with a webhook. */
const ownedCreateThenRetrieve = (who: 'token' | 'webhook') => (t: Target, agent: http.Agent) => {
  const credential = who === 'token' ? t.credentials.token : t.credentials.webhookOwner;
  const authorization = credential ? `Bearer ${credential}` : undefined;
  return async (samples: Sample[]) => {
    const made = await timed(samples, 201, () =>
      request(agent, t.base, 'POST', '/api/v2/pushes', createBody(), authorization),
    );
    const created =
      made?.status === 201 ? (JSON.parse(made.body) as { url_token?: string; push_id?: string }) : undefined;
    if (who === 'webhook' && created?.push_id) {
      webhookPushes.set(created.push_id, t.name);
      countEvent(t.name);
    }
    const token = created?.url_token;
    if (!token) return;
    const viewed = await timed(samples, 200, () => request(agent, t.base, 'GET', `/api/v2/pushes/${token}`));
    if (who === 'webhook' && viewed?.status === 200) countEvent(t.name);
  };
};

export type Results = Map<string, ReturnType<typeof summarise>>;

/** Ours (any workers or flags) and the baseline checkout's server: the servers that authenticate. */
const isOurs = (name: string) => name.startsWith('ours') || name === 'base';

function printTable(targets: Target[], results: Results): void {
  const rows: string[][] = [
    [
      'server',
      'conns',
      'scenario',
      'requests',
      'errors',
      'req/s',
      'req/s by round',
      'p50 ms',
      'p99 ms',
      'server CPU ms/req',
      'PG CPU ms/req',
      'bench CPU ms/req',
      'SQL/req',
      'RSS MB (largest)',
      'RSS MB (all)',
    ],
  ];
  for (const concurrency of CONCURRENCIES) {
    for (const scenario of SCENARIOS) {
      for (const t of targets) {
        const m = results.get(`${t.name}|${concurrency}|${scenario.name}`);
        if (!m) continue;
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
          m.benchCpuMsPerRequest.toFixed(3),
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
  console.log(
    `Start-up (spawn → listening): ${targets.map((t) => `${t.name} ${t.startupMs.toFixed(0)} ms`).join(', ')}`,
  );
  const names = targets.map((t) => t.name);
  const ratio = (a: string, b: string, key: string, keyOfB = key) => {
    const [x, y] = [results.get(`${a}|${key}`), results.get(`${b}|${keyOfB}`)];
    return x && y ? (x.rps / y.rps).toFixed(2) : '–';
  };
  for (const ours of names.filter(isOurs)) {
    for (const floor of names.filter((n) => n === 'bare' || n === 'physical' || (n === 'base' && ours !== 'base'))) {
      const parts = CONCURRENCIES.flatMap((c) =>
        SCENARIOS.filter((s) => floor === 'base' || !s.oursOnly).map(
          (s) => `${s.name}@${c} ${ratio(ours, floor, `${c}|${s.name}`)}×`,
        ),
      );
      console.log(`${ours}/${floor} throughput: ${parts.join(', ')}`);
    }
    // BENCH_OWNERS: each owner scenario against its anonymous counterpart, on the same server in the same rounds.
    const owned = SCENARIOS.filter((s) => s.oursOnly).flatMap((s) => {
      const anonymous = s.name.split('/')[0]!;
      return CONCURRENCIES.map((c) => `${s.name}@${c} ${ratio(ours, ours, `${c}|${s.name}`, `${c}|${anonymous}`)}×`);
    });
    if (owned.length > 0) console.log(`${ours} owner/anonymous throughput: ${owned.join(', ')}`);
  }
}

/** A scenario's loop on one server: one iteration (its requests timed into `samples`). */
type Loop = (t: Target, agent: http.Agent) => (samples: Sample[]) => Promise<void>;

/** The longest a webhook slice waits for its deliveries after its last answer. */
const SETTLE_MS = 30_000;

/** A scenario: its loop, requests per iteration, whether it waits for its deliveries, and whether only ours run it. */
interface Scenario {
  name: string;
  loop: Loop;
  perIteration: number;
  settle?: boolean;
  /** Ours and base only: the floors neither authenticate nor own pushes (BENCH_OWNERS). */
  oursOnly?: boolean;
}

/** Whether a server runs a scenario (the floors skip ours-only ones). */
const runs = (t: Target, scenario: Scenario) => !scenario.oursOnly || isOurs(t.name);

const ownerScenarios = (): Scenario[] => {
  if (options.owners < 1) return [];
  const whos: ('owner' | 'owners')[] = options.owners > 1 ? ['owner', 'owners'] : ['owner'];
  return whos.flatMap((who) => [
    { name: `create/${who}`, loop: ownerCreate(who), perIteration: 1, oursOnly: true },
    { name: `create+retrieve/${who}`, loop: ownerCreateThenRetrieve(who), perIteration: 2, oursOnly: true },
  ]);
};

const ALL_SCENARIOS: Scenario[] = [
  ...options.auth.map((mode) => ({
    name: mode === 'anonymous' ? 'create' : `create/${mode}`,
    loop: createOnly(mode),
    perIteration: 1,
  })),
  { name: 'create+retrieve', loop: createThenRetrieve, perIteration: 2 },
  ...(options.webhook
    ? [
        { name: 'create+retrieve/token', loop: ownedCreateThenRetrieve('token'), perIteration: 2 },
        { name: 'create+retrieve/webhook', loop: ownedCreateThenRetrieve('webhook'), perIteration: 2, settle: true },
      ]
    : []),
  ...ownerScenarios(),
];
const SCENARIOS = ALL_SCENARIOS.filter((s) => !options.scenarios || options.scenarios.includes(s.name));
if (SCENARIOS.length === 0) {
  throw new Error(
    `BENCH_SCENARIOS: none of ${options.scenarios?.join(', ')} is one of ${ALL_SCENARIOS.map((s) => s.name).join(', ')}`,
  );
}

/**
 * Drives every target at each concurrency: a warm-up, then `rounds` rounds in which each scenario runs on each target
 * in turn (so drift, such as table growth or a noisy neighbour, hits them alike); prints the table and the ratios.
 */
export async function driveAll(
  targets: Target[],
  /** The deliveries the bench's receiver has had (BENCH_WEBHOOK): a webhook slice ends when its events arrived. */
  received?: () => number,
): Promise<{ webhookEvents: Map<string, number>; webhookPushes: Map<string, string>; results: Results }> {
  // A webhook slice's deliveries still on their way when its last answer came are its work: it ends when they all
  // arrived (at most SETTLE_MS more), so the slice after it does not pay for them.
  const settle = async () => {
    const expected = [...webhookEvents.values()].reduce((a, b) => a + b, 0);
    const end = Date.now() + SETTLE_MS;
    while (received && received() < expected && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
  };
  console.log(
    `Driving ${REQUESTS} requests per scenario and concurrency (${CONCURRENCIES.join(', ')} connections), cap ${MAX_SECONDS}s a slice, ` +
      `after ${WARMUP} warm-up requests per server and scenario; the servers (${targets.map((t) => t.name).join(', ')}) take turns in ${ROUNDS} rounds…`,
  );
  const results: Results = new Map();
  for (const concurrency of CONCURRENCIES) {
    // Keep-alive connections, fresh for each slice: one left idle while the other servers take their turn would be
    // closed by the server (keep-alive timeout) and could be reused at that instant (a reset that no server caused).
    const agent = () => new http.Agent({ keepAlive: true, maxSockets: concurrency });
    // Warm-up (JIT, pool connections, plans) of every scenario's path at this concurrency, not measured: a path first
    // run in a measured round paid its compilation there (the webhook scenario's first round was the slowest of its
    // three in every run, by up to a quarter, when only create+retrieve was warmed).
    for (const t of targets) {
      for (const scenario of SCENARIOS.filter((x) => runs(t, x))) {
        const warm = agent();
        await drive(
          concurrency,
          scenario.perIteration,
          scenario.loop(t, warm),
          WARMUP,
          scenario.settle ? settle : undefined,
        );
        warm.destroy();
      }
    }
    const tallies = new Map<string, Tally[]>();
    for (let round = 0; round < ROUNDS; round++) {
      // Every other round in the reverse order: what a slice leaves behind (autovacuum, say) falls on the slices of
      // each scenario alike, not always on the one after it.
      for (const scenario of round % 2 === 0 ? SCENARIOS : [...SCENARIOS].reverse()) {
        for (const t of targets.filter((x) => runs(x, scenario))) {
          const key = `${t.name}|${concurrency}|${scenario.name}`;
          const sliceAgent = agent();
          const loop = scenario.loop(t, sliceAgent);
          const tally = await measured(t.meters, () =>
            drive(
              concurrency,
              scenario.perIteration,
              loop,
              Math.ceil(REQUESTS / ROUNDS),
              scenario.settle ? settle : undefined,
            ),
          );
          sliceAgent.destroy();
          tallies.set(key, [...(tallies.get(key) ?? []), tally]);
        }
      }
    }
    for (const [key, list] of tallies) results.set(key, summarise(list));
  }
  printTable(targets, results);
  if (options.webhook) {
    for (const t of targets.filter((x) => x.name.startsWith('ours') || x.name === 'base')) {
      const parts = CONCURRENCIES.map((c) => {
        const [hook, plain] = [
          results.get(`${t.name}|${c}|create+retrieve/webhook`),
          results.get(`${t.name}|${c}|create+retrieve/token`),
        ];
        return `@${c} ${hook && plain ? (hook.rps / plain.rps).toFixed(2) : '–'}×`;
      });
      console.log(`${t.name} create+retrieve with a webhook / without: ${parts.join(', ')}`);
    }
  }
  return { webhookEvents, webhookPushes, results };
}

/**
 * BENCH_SWEEP: one scenario's loop on one server until `done` answers true (or the slice's time cap): what traffic
 * meets while the sweeper works.
 */
export async function driveUntil(t: Target, scenarioName: string, concurrency: number, done: () => boolean) {
  const scenario = SCENARIOS.find((s) => s.name === scenarioName);
  if (!scenario) throw new Error(`BENCH_SWEEP needs the scenario ${scenarioName} (BENCH_SCENARIOS)`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const loop = scenario.loop(t, agent);
  const tally = await measured(t.meters, () =>
    drive(concurrency, scenario.perIteration, loop, Number.MAX_SAFE_INTEGER, undefined, done),
  );
  agent.destroy();
  return summarise([tally]);
}
