/**
 * Prometheus metrics (prom-client): what an operator scrapes from `GET /metrics` when `PWPUSH_METRICS` is on.
 *
 * Every server process keeps its own registry. A process serving alone answers /metrics from it; in a cluster the
 * worker that receives the scrape asks the primary, which gathers every worker's registry and its own and sums them
 * (prom-client's `AggregatorRegistry.aggregate`), so one scrape sees the whole host. Process figures carry a `worker`
 * label (`primary`, `0`, `1`, … a slot, kept by a replacement worker) instead of being summed.
 *
 * Labels are route templates and operationIds, statuses and fixed words, never a URL, a token, a url_token, an address
 * or anything from a body: nothing secret can reach a series.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Pool } from 'pg';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import { ApiError, errorBody } from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import type { CoreMetrics } from '../core.js';
import type { QueueDepth } from '../jobs/queue.js';
import { writeAnswer, writeJson } from '../http/answer.js';
import { state, type Part } from '../http/middleware.js';
import { headerOf, targetPath } from '../http/request-target.js';

const METRICS_PATH = '/metrics';
const PREFIX = 'secret_push_';

/** Error codes counted as refusals (the rest of the 4xx are in the request series). */
const PASSPHRASE_REFUSALS = new Set(['passphrase_required', 'passphrase_incorrect', 'too_many_attempts']);

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export interface ServerMetrics extends CoreMetrics {
  registry: Registry;
  /** One answer: operation (operationId, or the page's route template), method, status, seconds. */
  answered(
    operation: string,
    method: string,
    status: number,
    seconds: number,
    errorCode?: string,
    errorReason?: string,
  ): void;
}

/** The metrics of one server process. `worker` labels its process figures. */
export function createServerMetrics(worker: string, registry = new Registry()): ServerMetrics {
  collectDefaultMetrics({ register: registry, labels: { worker } });
  const registers = [registry];
  const requests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'Answers, by operation (API operationId or page route template), method and status.',
    labelNames: ['operation', 'method', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from the request line to the last byte of the answer, by operation, method and status.',
    labelNames: ['operation', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const passphraseRefusals = new Counter({
    name: `${PREFIX}passphrase_refusals_total`,
    help: 'Retrievals refused for their passphrase: passphrase_required, passphrase_incorrect, too_many_attempts (the per-push limit).',
    labelNames: ['reason'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: `${PREFIX}rate_limit_refusals_total`,
    help: 'Requests refused with 429 rate_limited by the per-client limit.',
    registers,
  });
  const quotaRefusals = new Counter({
    name: `${PREFIX}storage_quota_refusals_total`,
    help: 'Creates refused with 429 storage_quota_exceeded, by quota (anonymous: bytes per address per hour; user: active bytes).',
    labelNames: ['quota'] as const,
    registers,
  });
  const sweeps = new Counter({
    name: `${PREFIX}sweeper_runs_total`,
    help: 'Sweeper runs, by result (ok, failed).',
    labelNames: ['result'] as const,
    registers,
  });
  const erased = new Counter({
    name: `${PREFIX}sweeper_erased_total`,
    help: 'What the sweeper erased: pushes (secrets of pushes past their time), files (lapsed file bytes), purged (old expired records).',
    labelNames: ['what'] as const,
    registers,
  });
  const fileStore = fileStoreMetrics(registers);
  const poolWait = new Histogram({
    name: `${PREFIX}db_pool_wait_seconds`,
    help: 'Time a statement waited for a pooled PostgreSQL connection (includes opening a new one).',
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers,
  });
  const mailSends = new Counter({
    name: `${PREFIX}email_sends_total`,
    help: 'Emails handed to the SMTP relay, by outcome: sent, temporary_failure (retried), permanent_failure (refused for good).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const notifications = new Counter({
    name: `${PREFIX}email_notifications_finished_total`,
    help: 'Email notifications (one per creation_email_send entry) finished, by status: completed, partially_failed, failed.',
    labelNames: ['status'] as const,
    registers,
  });
  const queueDepths: (() => Promise<QueueDepth[]>)[] = [];
  new Gauge({
    name: `${PREFIX}job_queue_jobs`,
    help: 'Jobs in the durable queue (PostgreSQL, every instance together), by queue and state: queued (waiting, retries included) and active.',
    labelNames: ['queue', 'state'] as const,
    registers,
    // Every process reads the same table: a cluster's scrape takes the largest, never the sum.
    aggregator: 'max',
    async collect() {
      this.reset();
      for (const depth of queueDepths) {
        for (const q of await depth().catch(() => [])) {
          this.set({ queue: q.queue, state: 'queued' }, q.queued);
          this.set({ queue: q.queue, state: 'active' }, q.active);
        }
      }
    },
  });
  const pools: Pool[] = [];
  new Gauge({
    name: `${PREFIX}db_pool_connections`,
    help: 'Pooled PostgreSQL connections, by state: open, idle, and statements waiting for one (waiting).',
    labelNames: ['state'] as const,
    registers,
    collect() {
      this.reset();
      for (const pool of pools) {
        this.inc({ state: 'open' }, pool.totalCount);
        this.inc({ state: 'idle' }, pool.idleCount);
        this.inc({ state: 'waiting' }, pool.waitingCount);
      }
    },
  });
  new Gauge({
    name: `${PREFIX}db_pool_max_connections`,
    help: 'The most connections the pools may open (PWPUSH_DATABASE_POOL_SIZE per worker).',
    registers,
    collect() {
      this.set(pools.reduce((sum, pool) => sum + (pool.options.max ?? 10), 0));
    },
  });

  return {
    registry,
    answered(operation, method, status, seconds, errorCode, errorReason) {
      const labels = { operation, method, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
      if (errorCode === 'rate_limited') rateLimited.inc();
      else if (errorCode === 'storage_quota_exceeded') quotaRefusals.inc({ quota: errorReason ?? 'unknown' });
      else if (errorCode && PASSPHRASE_REFUSALS.has(errorCode)) passphraseRefusals.inc({ reason: errorCode });
    },
    sweepRan(result) {
      sweeps.inc({ result: 'ok' });
      erased.inc({ what: 'pushes' }, result.erasedPushes);
      erased.inc({ what: 'files' }, result.erasedFiles);
      erased.inc({ what: 'purged' }, result.purgedPushes);
    },
    sweepFailed() {
      sweeps.inc({ result: 'failed' });
    },
    ...fileStore,
    mail: {
      mailSent: (outcome) => mailSends.inc({ outcome }),
      notificationFinished: (status) => notifications.inc({ status }),
    },
    observeQueue(depth) {
      queueDepths.push(depth);
    },
    observePool(pool) {
      pools.push(pool);
      instrumentConnect(pool, (seconds) => poolWait.observe(seconds));
    },
  };
}

/** The reconciles of the object store of file bytes (files/reconcile.ts) and what they found. */
function fileStoreMetrics(registers: Registry[]): Pick<CoreMetrics, 'filesReconciled' | 'filesReconcileFailed'> {
  const reconciles = new Counter({
    name: `${PREFIX}file_store_reconciles_total`,
    help: 'Reconciles of the object store of file bytes with the rows (PWPUSH_FILE_STORAGE=s3://…), by result (ok, failed).',
    labelNames: ['result'] as const,
    registers,
  });
  const orphans = new Counter({
    name: `${PREFIX}file_store_orphans_total`,
    help: 'What reconciles found: kind object_without_row (a create that did not commit, a delete that failed) or row_without_object (an object deleted outside the server), and whether it was removed (outcome removed) or left for now (outcome kept: an object younger than the grace period, a row whose object was there when asked again).',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  return {
    filesReconciled(result) {
      reconciles.inc({ result: 'ok' });
      orphans.inc({ kind: 'object_without_row', outcome: 'removed' }, result.objectsRemoved);
      orphans.inc({ kind: 'object_without_row', outcome: 'kept' }, result.objectsWithoutRow - result.objectsRemoved);
      orphans.inc({ kind: 'row_without_object', outcome: 'removed' }, result.rowsDeleted);
      orphans.inc({ kind: 'row_without_object', outcome: 'kept' }, result.rowsWithoutObject - result.rowsDeleted);
    },
    filesReconcileFailed() {
      reconciles.inc({ result: 'failed' });
    },
  };
}

/**
 * Times every checkout of a pooled connection: pg-pool's `query()` and our transactions both go through `connect`.
 * Only the time is recorded; the statement is never looked at.
 */
function instrumentConnect(pool: Pool, observe: (seconds: number) => void): void {
  type Callback = (err: Error | undefined, client: unknown, release: unknown) => void;
  const connect = pool.connect.bind(pool) as (cb?: Callback) => Promise<unknown> | void;
  const timed = (cb?: Callback) => {
    const t0 = process.hrtime.bigint();
    const done = () => observe(Number(process.hrtime.bigint() - t0) / 1e9);
    if (cb) {
      return connect((err, client, release) => {
        done();
        cb(err, client, release);
      });
    }
    return (connect() as Promise<unknown>).then(
      (client) => {
        done();
        return client;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  };
  (pool as unknown as { connect: typeof timed }).connect = timed;
}

/** The primary process's own figures (cluster and embedded database), added to the workers' sum. */
export interface PrimaryMetrics {
  registry: Registry;
  workers: Gauge;
  workerRestarts: Counter;
  /** Adds the embedded PostgreSQL's figures (only when there is one); call `restarted()` on each restart. */
  watchEmbedded(up: () => boolean): { restarted(): void };
}

/**
 * The figures of the process that owns the workers and the embedded PostgreSQL (the primary of a cluster, or the one
 * process serving alone, whose registry it then joins).
 */
export function createPrimaryMetrics(registry = new Registry(), worker: string | null = 'primary'): PrimaryMetrics {
  if (worker !== null) collectDefaultMetrics({ register: registry, labels: { worker } });
  const registers = [registry];
  return {
    registry,
    workers: new Gauge({
      name: `${PREFIX}workers`,
      help: 'Worker processes running (PWPUSH_WORKERS; 1 when serving alone).',
      registers,
    }),
    workerRestarts: new Counter({
      name: `${PREFIX}worker_restarts_total`,
      help: 'Workers that exited unexpectedly and were replaced.',
      registers,
    }),
    watchEmbedded(up) {
      new Gauge({
        name: `${PREFIX}embedded_postgres_up`,
        help: 'Whether the embedded PostgreSQL runs (1) or is down and being restarted (0).',
        registers,
        collect() {
          this.set(up() ? 1 : 0);
        },
      });
      const restarts = new Counter({
        name: `${PREFIX}embedded_postgres_restarts_total`,
        help: 'Times the embedded PostgreSQL exited unexpectedly and was started again by its supervisor.',
        registers,
      });
      return { restarted: () => restarts.inc() };
    },
  };
}

/** Sums the registries of several processes (a cluster's workers and its primary) into one exposition. */
export async function aggregate(parts: MetricsJson[]): Promise<string> {
  return AggregatorRegistry.aggregate(parts).metrics();
}

const CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * Records every answer of the app (once it is finished) and answers `GET /metrics` when the setting is on, with the
 * text `scrape` returns (this process's registry, or the cluster's sum). With a token, a scrape without the token gets
 * 401; with the setting off, /metrics is left to the routes behind (an unknown page).
 */
export function metricsMiddleware(
  metrics: ServerMetrics,
  settings: Pick<Settings, 'metricsEnabled' | 'metricsToken'>,
  scrape: () => Promise<string>,
): Part {
  const expected = settings.metricsToken ? Buffer.from(`Bearer ${settings.metricsToken}`) : null;
  return (req, res, next) => {
    if (settings.metricsEnabled && targetPath(req.url ?? '') === METRICS_PATH) {
      state(res).route = METRICS_PATH;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        writeJson(
          res,
          405,
          errorBody(new ApiError('method_not_allowed', 'This path answers GET, HEAD.'), state(res).requestId),
          ['Allow', 'GET, HEAD'],
        );
        return;
      }
      const given = Buffer.from(headerOf(req, 'authorization') ?? '');
      if (expected && (given.length !== expected.length || !timingSafeEqual(given, expected))) {
        writeJson(
          res,
          401,
          errorBody(
            new ApiError('authentication_required', 'Scraping the metrics needs the metrics token.'),
            state(res).requestId,
          ),
          ['WWW-Authenticate', 'Bearer'],
        );
        return;
      }
      scrape().then(
        (text) =>
          writeAnswer(
            res,
            200,
            ['Content-Type', CONTENT_TYPE, 'Content-Length', String(Buffer.byteLength(text))],
            req.method === 'HEAD' ? undefined : text,
          ),
        (error: unknown) => next(error),
      );
      return;
    }
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const s = state(res);
      const operation = s.operationId ?? s.route ?? 'unmatched';
      metrics.answered(
        operation,
        req.method ?? 'GET',
        res.statusCode,
        Number(process.hrtime.bigint() - started) / 1e9,
        s.errorCode,
        s.errorReason,
      );
    });
    next();
  };
}
