/**
 * The V8 flags a server process runs with (`npm start` passes them; the primary adds any that are missing to its
 * workers). Measured with the bench (issue 12): V8's default young generation on a large machine is 2 × 32 MB and the
 * old generation may grow to several times the live data between collections, which kept a worker near 200 MB of RSS
 * for about 40 MB of live objects. A smaller young generation and a tighter growth factor hold a worker under 150 MB at
 * 16 connections. Neither limits how large the heap may become (a big file push still fits).
 */
export const NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=30'] as const;

/** The flags of NODE_FLAGS that `execArgv` does not set already (an operator's own value wins). */
export function missingNodeFlags(execArgv: readonly string[]): string[] {
  const named = (flag: string) => flag.split('=')[0]!.replace(/_/g, '-');
  const given = new Set(execArgv.map(named));
  return NODE_FLAGS.filter((flag) => !given.has(named(flag)));
}
