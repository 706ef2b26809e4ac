/**
 * The V8 flags a server process runs with (`npm start` passes them; the primary adds any that are missing to its
 * workers). Measured with the bench (issue 12): V8's default young generation on a large machine is 2 × 32 MB and the
 * old generation may grow to several times the live data between collections, which kept a worker near 200 MB of RSS
 * for about 40 MB of live objects. A smaller young generation and a tighter growth factor hold a worker under 150 MB at
 * 16 connections. Neither limits how large the heap may become (a big file push still fits). Issue 21 halved the
 * semi-space again (8 → 4 MB): in one bench run (`BENCH_SERVERS="ours1,ours1@--max-semi-space-size=4+--heap-growing-percent=30,physical"`,
 * c16, 2 rounds) peak RSS went from 142–144 to 135 MB, with server CPU per request within the run's noise
 * (create 0.70 → 0.59 ms, create+retrieve 0.60 → 0.64 ms).
 */
export const NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=30'] as const;

/** The flags of NODE_FLAGS that `execArgv` does not set already (an operator's own value wins). */
export function missingNodeFlags(execArgv: readonly string[]): string[] {
  const named = (flag: string) => flag.split('=')[0]!.replace(/_/g, '-');
  const given = new Set(execArgv.map(named));
  return NODE_FLAGS.filter((flag) => !given.has(named(flag)));
}

/**
 * The environment a server process runs with (`npm start` sets it, an operator's own value winning; the primary gives
 * workers what they lack). `MALLOC_ARENA_MAX=2`: glibc's malloc otherwise gives each thread that allocates (V8's
 * compiler and GC helpers, libuv's pool) an arena of its own, which keeps freed memory mapped. In four alternating bench
 * runs (`BENCH_SERVERS=ours BENCH_ROUNDS=2`, with `BENCH_SERVER_ENV=MALLOC_ARENA_MAX=2` and without) peak RSS was
 * 137–141 MB with it and 143–148 MB without. Other C libraries (musl) ignore it.
 */
export const PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** The variables of PROCESS_ENV that `env` does not set already. */
export function missingProcessEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(PROCESS_ENV).filter(([name]) => env[name] === undefined));
}
