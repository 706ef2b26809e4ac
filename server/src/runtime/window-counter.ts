/**
 * Fixed one-minute windows per key (a client address), in the memory of one process. A server that runs alone keeps
 * it in its own process; a cluster keeps one in the primary process and its workers ask it over IPC
 * (./cluster-ipc.ts), so the per-client limit holds across the workers of a host.
 */
export const RATE_WINDOW_MS = 60_000;

/** The window a hit fell in: when it started, and how many hits it holds now (this one included). */
export interface WindowHit {
  start: number;
  count: number;
}

/** Counts one hit for `key` at `now`. */
export type HitCounter = (key: string, now: number) => WindowHit | Promise<WindowHit>;

export function windowCounter(windowMs = RATE_WINDOW_MS): (key: string, now: number) => WindowHit {
  const windows = new Map<string, WindowHit>();
  let lastPrune = 0;
  return (key, now) => {
    if (now - lastPrune > windowMs) {
      for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
      lastPrune = now;
    }
    let w = windows.get(key);
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    return { start: w.start, count: w.count };
  };
}
