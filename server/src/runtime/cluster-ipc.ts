/**
 * What the primary process and its workers say to each other over the cluster's IPC channel (JSON messages, each
 * tagged `sp`): a worker asks the primary to count a hit of the per-client limit and to gather the host's metrics;
 * the primary asks each worker for its metrics; a worker says when it listens. Client addresses travel here (they
 * are the limit's keys); nothing secret does.
 */
import type { Worker } from 'node:cluster';
import type { HitCounter, WindowHit } from './window-counter.js';
import type { MetricsJson } from './metrics.js';

type ToPrimary =
  | { sp: 'hit'; id: number; key: string; now: number }
  | { sp: 'scrape'; id: number }
  | { sp: 'metrics'; id: number; metrics: MetricsJson }
  | { sp: 'listening'; url: string };

type ToWorker =
  | { sp: 'hit'; id: number; hit: WindowHit }
  | { sp: 'scrape'; id: number; text?: string; error?: string }
  | { sp: 'collect'; id: number };

const isMessage = (m: unknown): m is { sp: string } =>
  typeof m === 'object' && m !== null && typeof (m as { sp?: unknown }).sp === 'string';

/** How long a worker waits for the primary before it counts a hit alone / gives up a scrape. */
const HIT_TIMEOUT_MS = 2_000;
const SCRAPE_TIMEOUT_MS = 10_000;

export interface WorkerChannel {
  /** The per-client limit's counter, kept by the primary for every worker of the host. */
  hit: HitCounter;
  /** The host's metrics, summed by the primary. */
  scrape(): Promise<string>;
  /** Tells the primary this worker listens. */
  listening(url: string): void;
}

/**
 * The worker's side. `collect` answers the primary's request for this worker's metrics; `fallback` counts a hit when
 * the primary does not answer in time (a hit is never left waiting, and never waved through uncounted).
 */
export function workerChannel(
  collect: () => Promise<MetricsJson>,
  fallback: (key: string, now: number) => WindowHit,
): WorkerChannel {
  let next = 0;
  const pending = new Map<number, (message: ToWorker) => void>();
  // A failed send (the primary is gone) is not an error event: the worker stops on 'disconnect'.
  const send = (message: ToPrimary) => process.connected && process.send?.(message, undefined, {}, () => undefined);

  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return;
    const m = message as ToWorker;
    if (m.sp === 'collect') {
      collect().then(
        (metrics) => send({ sp: 'metrics', id: m.id, metrics }),
        () => send({ sp: 'metrics', id: m.id, metrics: [] }),
      );
      return;
    }
    const resolve = pending.get(m.id);
    if (resolve) {
      pending.delete(m.id);
      resolve(m);
    }
  });

  const ask = <T>(
    message: ToPrimary & { id: number },
    timeoutMs: number,
    onTimeout: () => T,
    pick: (answer: ToWorker) => T,
  ): Promise<T> =>
    new Promise<T>((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(message.id);
        resolve(onTimeout());
      }, timeoutMs);
      pending.set(message.id, (answer) => {
        clearTimeout(timer);
        resolve(pick(answer));
      });
      send(message);
    });

  return {
    hit: (key, now) =>
      ask(
        { sp: 'hit', id: next++, key, now },
        HIT_TIMEOUT_MS,
        () => fallback(key, now),
        (a) => (a.sp === 'hit' ? a.hit : fallback(key, now)),
      ),
    async scrape() {
      const answer = await ask<ToWorker | null>(
        { sp: 'scrape', id: next++ },
        SCRAPE_TIMEOUT_MS,
        () => null,
        (a) => a,
      );
      if (answer?.sp === 'scrape' && answer.text !== undefined) return answer.text;
      throw new Error(
        answer?.sp === 'scrape'
          ? `the primary process could not gather the metrics (${answer.error ?? 'error'})`
          : 'the primary process did not answer',
      );
    },
    listening: (url) => send({ sp: 'listening', url }),
  };
}

/** Sends to a worker unless it is gone (a failed send is dropped: the worker's exit is handled where it is forked). */
function tell(worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message, undefined, () => undefined);
}

/** The primary's side: answers its workers' hits and scrapes, and collects metrics from every worker. */
export function primaryChannel(opts: {
  hit: (key: string, now: number) => WindowHit;
  /** The primary's own metrics, added to the workers'. */
  ownMetrics: () => Promise<MetricsJson>;
  aggregate: (parts: MetricsJson[]) => Promise<string>;
  workers: () => Worker[];
  onListening: (worker: Worker, url: string) => void;
}) {
  let next = 0;
  const collecting = new Map<number, { parts: MetricsJson[]; waiting: number; done: () => void }>();

  async function gather(): Promise<string> {
    const id = next++;
    const live = opts.workers().filter((w) => w.isConnected());
    const parts: MetricsJson[] = [await opts.ownMetrics()];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, SCRAPE_TIMEOUT_MS / 2);
      function finish() {
        clearTimeout(timer);
        collecting.delete(id);
        resolve();
      }
      collecting.set(id, { parts, waiting: live.length, done: finish });
      if (live.length === 0) finish();
      for (const w of live) tell(w, { sp: 'collect', id });
    });
    return opts.aggregate(parts);
  }

  return {
    /** Handles one message of `worker`. */
    onMessage(worker: Worker, message: unknown): void {
      if (!isMessage(message)) return;
      const m = message as ToPrimary;
      if (m.sp === 'hit') {
        tell(worker, { sp: 'hit', id: m.id, hit: opts.hit(m.key, m.now) });
      } else if (m.sp === 'scrape') {
        gather().then(
          (text) => tell(worker, { sp: 'scrape', id: m.id, text }),
          (err: unknown) => tell(worker, { sp: 'scrape', id: m.id, error: err instanceof Error ? err.name : 'Error' }),
        );
      } else if (m.sp === 'metrics') {
        const c = collecting.get(m.id);
        if (c) {
          c.parts.push(m.metrics);
          c.waiting -= 1;
          if (c.waiting === 0) c.done();
        }
      } else if (m.sp === 'listening') {
        opts.onListening(worker, m.url);
      }
    },
  };
}
