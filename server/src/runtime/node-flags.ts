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
