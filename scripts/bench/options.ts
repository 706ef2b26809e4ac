/**
 * The bench's options, read once from the environment (scripts/bench.ts documents each one).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const env = process.env;
const CPU_PROF_DIR = env.BENCH_CPU_PROF_DIR;

export const options = {
  /** Requests per scenario and concurrency, over all rounds. */
  requests: Number(env.BENCH_REQUESTS ?? 4000),
  /** The numbers of connections to drive with, one slice each. */
  concurrencies: (env.BENCH_CONCURRENCY ?? '16,64').split(',').map(Number),
  /** The servers to drive (`ours`, `ours<N>`, `ours<N>@<flags>`, `bare`, `physical`); undefined: the default set. */
  servers: env.BENCH_SERVERS?.split(','),
  /** Time cap of one slice (one server, one scenario, one concurrency, one round). */
  maxSeconds: Number(env.BENCH_MAX_SECONDS ?? 60),
  /** Unmeasured requests per server, scenario and concurrency before the rounds. */
  warmup: Number(env.BENCH_WARMUP ?? 400),
  rounds: Math.max(1, Number(env.BENCH_ROUNDS ?? 4)),
  /** Ours' PWPUSH_WORKERS (undefined: the server's own default). */
  workers: env.BENCH_WORKERS,
  /** Ours' PWPUSH_RATE_LIMIT_PER_MINUTE: off by default, as one address sends everything. */
  rateLimit: env.BENCH_RATE_LIMIT ?? '0',
  /**
   * Client addresses the load comes from (X-Forwarded-For through one trusted proxy, round robin), default 1: every
   * request from one address, the worst case for per-address counters (the anonymous storage quota's window row).
   */
  addresses: Math.max(1, Math.min(65536, Number(env.BENCH_ADDRESSES ?? 1))),
  /**
   * How the create scenario sends its creates, a list: `anonymous` (no credential), `token` (the account token) and
   * `key` (an API key with only `pushes:create`); each mode is a scenario of its own (`create`, `create/token`,
   * `create/key`), in the same rounds. Default `anonymous`.
   */
  auth: (env.BENCH_AUTH ?? 'anonymous').split(',').map((mode) => {
    if (mode !== 'anonymous' && mode !== 'token' && mode !== 'key') throw new Error(`BENCH_AUTH: unknown mode ${mode}`);
    return mode;
  }),
  /**
   * BENCH_WEBHOOK=1: two more scenarios, create+retrieve by an owner without webhooks (`create+retrieve/token`) and by
   * one with a webhook for push.created and push.viewed (`create+retrieve/webhook`), whose deliveries reach a
   * receiver on loopback in the bench process: the throughput ratio and the delivery latency (event → receipt).
   */
  webhook: env.BENCH_WEBHOOK === '1',
  /**
   * BENCH_WEBHOOK_BUDGET: ours' send budgets with BENCH_WEBHOOK (PWPUSH_WEBHOOK_SENDS_PER_MINUTE and
   * PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE), default 1000000: counted at every batch but never reached, so the
   * bench measures what the budget costs (one owner sends far more than the product's default 600 a minute); `0`: off.
   */
  webhookBudget: env.BENCH_WEBHOOK_BUDGET ?? '1000000',
  /**
   * BENCH_OWNERS=N: an owner's creates and create+retrieve cycles beside the anonymous ones, on ours (and base) only
   * (the floors do not authenticate): `create/owner` and `create+retrieve/owner` by one owner (the bench user's
   * account token), and with N > 1 `create/owners` and `create+retrieve/owners` by N owners in turn (round robin, one
   * account token each). 0 (the default): none.
   */
  owners: Math.max(0, Math.min(10_000, Number(env.BENCH_OWNERS ?? 0))),
  /**
   * BENCH_SCALE=N: the scale mode. The rounds run once on the empty database, then N pushes (with two audit entries
   * each; scripts/bench/scale.ts) are loaded straight into it, and the rounds run again: the table of each, and each
   * scenario's throughput and p99 after / before. 0 (the default): off. Runnable here: 200000; the full size:
   * 2000000 (about 1.5 GB, minutes to load).
   */
  scale: Math.max(0, Number(env.BENCH_SCALE ?? 0)),
  /**
   * BENCH_SWEEP=N: after the rounds (and the scale mode's), N pushes already past their time are loaded at once, and
   * the first server's create+retrieve runs at the first concurrency until the sweeper has expired them all: the
   * sweep's duration and the p99 meanwhile against the rounds' p99. Ours then sweeps every second
   * (PWPUSH_SWEEP_INTERVAL_SECONDS=1). 0 (the default): off. Runnable here: 100000; the issue's: 1000000.
   */
  sweep: Math.max(0, Number(env.BENCH_SWEEP ?? 0)),
  /** BENCH_SCENARIOS: only these scenarios, by name (`create+retrieve/webhook,create+retrieve/token`); default all. */
  scenarios: env.BENCH_SCENARIOS?.split(',').filter(Boolean),
  logLevel: env.BENCH_LOG_LEVEL ?? 'info',
  /** BENCH_STATEMENTS=N: after each slice, its N most called SQL statements (calls per request, mean time). */
  topStatements: Number(env.BENCH_STATEMENTS ?? 0),
  /** More environment for ours and base, `NAME=value` pairs separated by spaces (`BENCH_SERVER_ENV='PWPUSH_X=1 PWPUSH_Y=2'`). */
  serverEnv: Object.fromEntries(
    (env.BENCH_SERVER_ENV ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => {
        const at = pair.indexOf('=');
        if (at < 1) throw new Error(`BENCH_SERVER_ENV: ${pair} is not NAME=value`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
  ) as Record<string, string>,
  /** Where each server's output goes (`<name>.log`) instead of being drained. */
  outputDir: env.BENCH_OUTPUT_DIR ? path.resolve(env.BENCH_OUTPUT_DIR) : undefined,
  /** NODE_OPTIONS of every server process: a CPU profile (BENCH_CPU_PROF_DIR) and BENCH_NODE_OPTIONS. */
  nodeOptions: [
    CPU_PROF_DIR ? `--cpu-prof --cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}` : '',
    env.BENCH_NODE_OPTIONS ?? '',
  ]
    .filter(Boolean)
    .join(' '),
  /** Run ours from its TypeScript sources (tsx) rather than its build. */
  source: env.BENCH_SOURCE === '1',
  /** Another checkout of this repository, driven too as `base`. */
  baseline: env.BENCH_BASELINE ? path.resolve(env.BENCH_BASELINE) : undefined,
} as const;
