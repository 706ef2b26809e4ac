/**
 * The durable job queue: pg-boss on the server's own PostgreSQL (schema `pgboss`). Shared by every area that has
 * emails to send after a request (pushes' links, account mail, requests' moves, owners' read receipts; webhook
 * deliveries are sent from their own table instead, webhooks/dispatcher.ts): an area names a queue with its retry policy,
 * enqueues jobs **in the transaction of the change that needs them** (so a crash leaves neither a change without its
 * job nor a job without its change), and registers a handler. Every server process works every queue; pg-boss hands
 * a job to one worker at a time (`FOR UPDATE SKIP LOCKED`), retries a job whose handler throws (backoff from the
 * queue's policy, up to its limit), and retries a job whose worker stopped sending heartbeats (a process killed
 * mid-job), so a restart loses nothing.
 *
 * The schema is installed by the migration step (`installJobQueue`, under the migrations' advisory lock), as the
 * role that owns the database's objects; at run time each process only uses it.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Db as BossDb, JobWithMetadata, PgBoss } from 'pg-boss';
import type { Pool } from 'pg';
import type { Db } from '../db/sql.js';

export const QUEUE_SCHEMA = 'pgboss';

/** A queue's policy: how often and how long to retry a job whose handler throws. */
interface QueuePolicy {
  /** Tries in all (the first and the retries). */
  attempts: number;
  /** Seconds before the first retry; doubles each time (with jitter), up to `retryDelayMaxSeconds`. */
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** A job whose handler runs longer than this is taken as failed and retried. */
  expireInSeconds: number;
}

/** A job as a handler gets it: its data, and which try this is. */
export interface QueuedJob<T> {
  id: string;
  data: T;
  /** 1 for the first try. */
  attempt: number;
  /** Whether a throw now gives the job up (no retry follows). */
  lastAttempt: boolean;
}

export interface QueueOptions {
  /** Seconds between polls for new jobs (default 2). */
  pollingIntervalSeconds?: number;
  /** Seconds between the supervisor's checks for lost jobs (default 10). */
  monitorIntervalSeconds?: number;
  /** Seconds without a heartbeat after which a running job is taken as lost and retried (default 30, at least 10). */
  heartbeatSeconds?: number;
  /** Where pg-boss's errors and warnings go (never job data). */
  onError?: (error: Error) => void;
}

/** The queue depth: jobs of each queue by state, for /metrics. */
export interface QueueDepth {
  queue: string;
  /** Waiting to run (now or after a retry delay). */
  queued: number;
  active: number;
}

export interface JobQueue {
  /** Creates (or updates) a queue with its policy; call once per process before enqueueing or working it. */
  define(name: string, policy: QueuePolicy): Promise<void>;
  /**
   * Adds a job inside the transaction `tx` (committed or rolled back with it); this process's worker wakes at COMMIT.
   * `id` (a UUID): the job's own id, so that a second enqueue of it (a retried caller) adds nothing.
   */
  enqueue(tx: Db, name: string, data: object, options?: { id?: string }): Promise<void>;
  /**
   * Runs `handler` for the queue's jobs in this process; a throw retries the job (until its last attempt). With
   * `batchSize` above 1, up to that many jobs are fetched at once and run side by side, and while fetches come back
   * full the worker fetches again at once (a burst drains without waiting a poll between jobs); each job succeeds or
   * is retried on its own.
   */
  work<T>(name: string, handler: (job: QueuedJob<T>) => Promise<void>, options?: { batchSize?: number }): Promise<void>;
  depth(): Promise<QueueDepth[]>;
  /** Stops taking jobs and waits (at most `timeoutMs`) for the ones in hand. */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Names of pg-boss's statements, by their text: a job's insert is a long statement whose text is fixed per queue, so
 * it is prepared once per connection (as our own `prepare` statements are) rather than parsed and planned per job.
 * Bounded: texts past the first PREPARED_MAX run unprepared.
 */
const preparedNames = new Map<string, string>();
const PREPARED_MAX = 64;

function preparedName(text: string): string | undefined {
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < PREPARED_MAX) {
    name = `boss_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/** pg-boss's statements on one of our connections (a transaction's): its SQL runs as given, with its own `$n`. */
function bossDb(tx: Db): BossDb {
  return {
    executeSql: async (text, values = []) => {
      const names = values.map((_, i) => `v${i}`);
      const params = Object.fromEntries(values.map((v, i) => [`v${i}`, v ?? null]));
      const name = preparedName(text);
      return { rows: await tx.query({ text, names, ...(name ? { name } : {}) }, params) };
    },
  };
}

/** pg-boss on a pool of ours (the migration step's). */
function poolBossDb(pool: Pool): BossDb {
  return { executeSql: async (text, values) => ({ rows: (await pool.query(text, values)).rows }) };
}

const SCHEMA_EXISTS = `select exists (select 1 from pg_namespace where nspname = $1) as present,
  has_database_privilege(current_user, current_database(), 'CREATE') as may_create,
  to_regclass($1 || '.version') is not null as versioned`;

/**
 * pg-boss is loaded only by a process that installs or upgrades its schema, or works a queue: a server without
 * email (or, later, webhooks) never loads it (about 5 MB of RSS).
 */
async function loadPgBoss(): Promise<typeof PgBoss> {
  return (await import('pg-boss')).PgBoss;
}

/** The schema version this pg-boss installs (its package.json's `pgboss.schema`), read without loading it. */
function bossSchemaVersion(): number {
  const pkg = createRequire(import.meta.url)('pg-boss/package.json') as { pgboss?: { schema?: unknown } };
  return typeof pkg.pgboss?.schema === 'number' ? pkg.pgboss.schema : -1;
}

/**
 * Installs or upgrades the queue's schema (the migration step, under its advisory lock). The role needs CREATE on
 * the database to make the schema, unless an administrator made it for the role beforehand
 * (`CREATE SCHEMA pgboss AUTHORIZATION <role>`: the grants of docs/operations.md).
 */
export async function installJobQueue(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ present: boolean; may_create: boolean; versioned: boolean }>(SCHEMA_EXISTS, [
    QUEUE_SCHEMA,
  ]);
  const { present, may_create: mayCreate, versioned } = rows[0]!;
  if (versioned) {
    const installed = await pool.query<{ version: number }>(`select version from ${QUEUE_SCHEMA}.version`);
    // Already at this pg-boss's schema: nothing to do, and no need to load it.
    if (installed.rows.length === 1 && installed.rows[0]!.version === bossSchemaVersion()) return;
  }
  if (!present && !mayCreate) {
    throw new Error(
      `the job queue's schema "${QUEUE_SCHEMA}" does not exist and this database role may not create it: as an administrator, run CREATE SCHEMA ${QUEUE_SCHEMA} AUTHORIZATION <the server's role>; (docs/operations.md, "The database role")`,
    );
  }
  const Boss = await loadPgBoss();
  const boss = new Boss({
    db: poolBossDb(pool),
    schema: QUEUE_SCHEMA,
    createSchema: !present,
    migrate: true,
    supervise: false,
    schedule: false,
    reindex: false,
    monitorVacuum: false,
  });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.stop({ graceful: false, close: false });
}

/** A fetched job as a handler gets it. */
function queuedJob<T>(job: JobWithMetadata<T>): QueuedJob<T> {
  return { id: job.id, data: job.data, attempt: job.retryCount + 1, lastAttempt: job.retryCount >= job.retryLimit };
}

/** Starts this process's queue client on `databaseUrl` (its own small pool). The schema must be installed. */
export async function startJobQueue(databaseUrl: string, options: QueueOptions = {}): Promise<JobQueue> {
  const heartbeatSeconds = Math.max(10, options.heartbeatSeconds ?? 30);
  const Boss = await loadPgBoss();
  const boss = new Boss({
    connectionString: databaseUrl,
    schema: QUEUE_SCHEMA,
    max: 4,
    application_name: 'secret-push-jobs',
    migrate: false,
    createSchema: false,
    supervise: true,
    schedule: false,
    reindex: false,
    monitorVacuum: false,
    monitorIntervalSeconds: options.monitorIntervalSeconds ?? 10,
    superviseIntervalSeconds: options.monitorIntervalSeconds ?? 10,
  });
  boss.on('error', (error: Error) => options.onError?.(error));
  await boss.start();
  const names: string[] = [];
  /** This process's workers of each queue, woken when a job of it is committed here. */
  const workers = new Map<string, string[]>();
  const wake = (name: string) => {
    for (const id of workers.get(name) ?? []) boss.notifyWorker(id);
  };
  const started = (name: string, id: string) => workers.set(name, [...(workers.get(name) ?? []), id]);
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 2;
  let stopped = false;
  async function workBatches<T>(
    name: string,
    handler: (jobs: QueuedJob<T>[]) => Promise<{ failed: Set<string> }>,
    { batchSize }: { batchSize: number },
  ) {
    const batchOptions = {
      includeMetadata: true as const,
      perJobResults: true as const,
      burstWhenBatchFull: true,
      batchSize,
      pollingIntervalSeconds,
    };
    const id = await boss.work(name, batchOptions, async (jobs: JobWithMetadata<T>[]) => {
      const { failed } = await handler(jobs.map(queuedJob));
      return jobs.map((job) => ({
        id: job.id,
        status: failed.has(job.id) ? ('failed' as const) : ('completed' as const),
      }));
    });
    started(name, id);
  }
  return {
    async define(name, policy) {
      const queue = {
        retryLimit: Math.max(0, policy.attempts - 1),
        retryDelay: policy.retryDelaySeconds,
        retryBackoff: true,
        retryDelayMax: policy.retryDelayMaxSeconds,
        expireInSeconds: policy.expireInSeconds,
        heartbeatSeconds,
      };
      if (await boss.getQueue(name)) {
        const { retryDelayMax: _max, heartbeatSeconds: _beat, ...changeable } = queue;
        await boss.updateQueue(name, changeable);
      } else {
        await boss.createQueue(name, queue).catch(async (error: unknown) => {
          // Another process created it meanwhile.
          if (!(await boss.getQueue(name))) throw error;
        });
      }
      if (!names.includes(name)) names.push(name);
    },
    async enqueue(tx, name, data, options = {}) {
      const id = await boss.send(name, data, { db: bossDb(tx), ...(options.id ? { id: options.id } : {}) });
      // With its own id, no row back means that job is already there.
      if (!id && !options.id) throw new Error(`the job queue refused a job for ${name}`);
      // This process's worker fetches as soon as the job is committed, not at its next poll.
      tx.afterCommit(() => wake(name));
    },
    async work<T>(name: string, handler: (job: QueuedJob<T>) => Promise<void>, workOpts: { batchSize?: number } = {}) {
      const batchSize = workOpts.batchSize ?? 1;
      if (batchSize > 1) {
        await workBatches<T>(
          name,
          async (jobs) => {
            const outcomes = await Promise.allSettled(jobs.map((job) => handler(job)));
            return { failed: new Set(jobs.filter((_, i) => outcomes[i]!.status === 'rejected').map((j) => j.id)) };
          },
          { batchSize },
        );
        return;
      }
      const workOptions = { includeMetadata: true as const, batchSize: 1, pollingIntervalSeconds };
      const id = await boss.work(name, workOptions, async ([job]: JobWithMetadata<T>[]) => {
        if (!job) return;
        await handler(queuedJob(job));
      });
      started(name, id);
    },
    async depth() {
      if (names.length === 0) return [];
      const queues = await boss.getQueues(names);
      return queues.map((q) => ({ queue: q.name, queued: q.queuedCount, active: q.activeCount }));
    },
    async stop(timeoutMs = 10_000) {
      if (stopped) return;
      stopped = true;
      await boss.stop({ graceful: true, close: true, timeout: timeoutMs });
    },
  };
}
