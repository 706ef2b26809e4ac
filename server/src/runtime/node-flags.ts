/**
 * The V8 flags a server process runs with (`npm start` passes them; the primary adds any that are missing to its
 * workers): a smaller young generation and a tighter heap growth. Why, measured: docs/decisions/0001-node-heap-flags.md.
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
 * workers what they lack): `MALLOC_ARENA_MAX=2`. Why, measured: docs/decisions/0002-malloc-arena-max.md.
 */
export const PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** The variables of PROCESS_ENV that `env` does not set already. */
export function missingProcessEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(PROCESS_ENV).filter(([name]) => env[name] === undefined));
}
