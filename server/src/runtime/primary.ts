/**
 * The primary process of a cluster (`PWPUSH_WORKERS` > 1), through Node's cluster module: it forks one worker per
 * slot, all listening on the one port, and serves none itself. On Linux each worker binds the port with SO_REUSEPORT
 * and the kernel spreads connections over them; elsewhere the primary accepts connections and hands them out in turn. It keeps what must be one per host: the per-client limit's windows (workers ask over IPC), the sum of the
 * metrics, and (main.ts) the embedded PostgreSQL and its supervisor. Slot 0's worker runs the sweeper.
 *
 * A worker that dies is replaced in its slot after a delay (1 s, doubling to 30 s while replacements die young). A
 * worker that dies before the cluster first listens fails the start. `stop()` sends SIGTERM to every worker (each
 * drains: see serve.ts) and waits for them, killing any still running after the grace period.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import { primaryChannel } from './cluster-ipc.js';
import { aggregate, type PrimaryMetrics } from './metrics.js';
import { missingNodeFlags, missingProcessEnv } from './node-flags.js';
import { windowCounter } from './window-counter.js';

/** The environment variable that tells a worker its slot (set by the primary only; not a setting). */
export const WORKER_SLOT_ENV = 'SECRET_PUSH_WORKER_SLOT';

const RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that lived this long resets its slot's delay. */
const HEALTHY_AFTER_MS = 60_000;

export interface ClusterOptions {
  logger: Logger;
  /** The database every worker connects to (the embedded one's URL, or DATABASE_URL). */
  databaseUrl: string;
  metrics: PrimaryMetrics;
  /** How long a worker may take to drain before it is killed. */
  graceMs: number;
}

export interface RunningCluster {
  /** Resolves with the URL once every worker listens; rejects when one dies first. */
  ready: Promise<string>;
  stop(): Promise<void>;
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  delayMs: number;
  timer?: NodeJS.Timeout;
}

export function startCluster(settings: Settings, opts: ClusterOptions): RunningCluster {
  const { logger, metrics } = opts;
  const slots: Slot[] = Array.from({ length: settings.workers }, (_, index) => ({
    index,
    startedAt: 0,
    delayMs: RESTART_DELAY_MS,
  }));
  const listening = new Set<number>();
  let stopping = false;
  let started = false;
  let resolveReady!: (url: string) => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<string>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => undefined);

  const live = () => slots.flatMap((s) => (s.worker ? [s.worker] : []));
  const channel = primaryChannel({
    hit: windowCounter(),
    ownMetrics: () => metrics.registry.getMetricsAsJSON(),
    aggregate,
    workers: live,
    onListening: (worker, url) => {
      listening.add(worker.id);
      if (!started && slots.every((s) => s.worker && listening.has(s.worker.id))) {
        started = true;
        resolveReady(url);
      }
    },
  });

  const fork = (slot: Slot) => {
    slot.timer = undefined;
    slot.startedAt = Date.now();
    const worker = cluster.fork({
      ...missingProcessEnv(process.env),
      DATABASE_URL: opts.databaseUrl,
      [WORKER_SLOT_ENV]: String(slot.index),
    });
    slot.worker = worker;
    metrics.workers.set(live().length);
    worker.on('message', (message: unknown) => channel.onMessage(worker, message));
    // An IPC write to a worker that just died: its 'exit' below is what counts.
    worker.on('error', () => undefined);
    worker.once('exit', (code, signal) => {
      listening.delete(worker.id);
      slot.worker = undefined;
      metrics.workers.set(live().length);
      if (stopping) return;
      if (!started) {
        rejectReady(
          new Error(`worker ${slot.index} exited with ${signal ?? `code ${code}`} before the server was ready`),
        );
        return;
      }
      const lived = Date.now() - slot.startedAt;
      if (lived >= HEALTHY_AFTER_MS) slot.delayMs = RESTART_DELAY_MS;
      const delayMs = slot.delayMs;
      slot.delayMs = Math.min(MAX_RESTART_DELAY_MS, delayMs * 2);
      metrics.workerRestarts.inc();
      logger.error(
        { worker: slot.index, code, signal, lived_ms: lived, restart_in_ms: delayMs },
        'worker exited unexpectedly; replacing it',
      );
      slot.timer = setTimeout(() => fork(slot), delayMs);
    });
  };
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...missingNodeFlags(process.execArgv)] });
  for (const slot of slots) fork(slot);

  return {
    ready,
    async stop() {
      if (stopping) return;
      stopping = true;
      for (const slot of slots) clearTimeout(slot.timer);
      const exits = live().map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), opts.graceMs + 2_000);
            worker.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            worker.process.kill('SIGTERM');
          }),
      );
      await Promise.all(exits);
    },
  };
}
