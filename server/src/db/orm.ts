/**
 * Opens MikroORM on PostgreSQL and applies the committed migrations. Secrets never reach the ORM's logger: query
 * logging stays off (queries carry ciphertexts and digests, not plaintext, but they are still nobody's business).
 */
import { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities.js';
import {
  CONNECT_TIMEOUT_MS,
  IDLE_IN_TRANSACTION_MS,
  LOCK_TIMEOUT_MS,
  QUERY_TIMEOUT_MS,
  STATEMENT_TIMEOUT_MS,
} from './deadlines.js';
import { installJobQueue } from '../jobs/queue.js';
import { migrationsList } from './migrations/index.js';

export { migrationsList };

export interface OrmOptions {
  /** Largest number of pooled connections (default 10). */
  poolMax?: number;
  /**
   * A pool without the request deadlines (for migrations: waiting for another instance's migrations, or building an
   * index, is not a request and may take longer than a statement of one).
   */
  noTimeouts?: boolean;
}

export async function openOrm(databaseUrl: string, options: OrmOptions = {}): Promise<MikroORM> {
  const orm = await MikroORM.init({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    debug: false,
    allowGlobalContext: false,
    discovery: { warnWhenNoEntities: false },
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 },
    // Every layer has a deadline shorter than the one above it (./deadlines.ts): the database gives up before the
    // client, the client before the HTTP layer, and a connection that cannot be had fails fast (503, nothing sent).
    driverOptions: options.noTimeouts
      ? { connectionTimeoutMillis: CONNECT_TIMEOUT_MS }
      : {
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          statement_timeout: STATEMENT_TIMEOUT_MS,
          lock_timeout: LOCK_TIMEOUT_MS,
          idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
          query_timeout: QUERY_TIMEOUT_MS,
        },
    migrations: {
      migrationsList,
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
      transactional: true,
      allOrNothing: true,
    },
  });
  return orm;
}

/**
 * The `pg` pool MikroORM's connection owns: the same connections and settings as the ORM's. The statements of
 * ./sql.ts run on it with bind parameters (MikroORM's `em.execute` formats values into the SQL text instead).
 */
export function nativePool(orm: MikroORM): Promise<Pool> {
  return (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
}

/** Applies pending migrations on a pool of their own, without the request deadlines; closes it after. */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const orm = await openOrm(databaseUrl, { poolMax: 2, noTimeouts: true });
  try {
    await migrate(orm);
  } finally {
    await orm.close(true);
  }
}

/**
 * Applies pending migrations, then installs or upgrades the job queue's schema; safe when several processes start at
 * once (an advisory lock serialises them).
 */
export async function migrate(orm: MikroORM): Promise<void> {
  // Every instance may start at the same time: hold a session-level advisory lock on a dedicated connection.
  const pool = await nativePool(orm);
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock(727274001)');
    await orm.migrator.up();
    // The job queue's own schema (pg-boss: its tables and its upgrades), as the same role, under the same lock.
    await installJobQueue(pool);
  } finally {
    await client.query('select pg_advisory_unlock(727274001)').catch(() => undefined);
    client.release();
  }
}
