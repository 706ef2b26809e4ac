/**
 * SQL with named parameters on MikroORM's own `pg` pool (the same connections the ORM uses). A statement is written
 * once with `:name` placeholders and run with an object of values: nothing to keep in order, and every value travels
 * as a bind parameter (never formatted into the SQL text). Statements marked `prepare` are prepared once per
 * connection under a name derived from their text, so every instance agrees on it.
 */
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

export interface Statement<P extends object, R = Record<string, unknown>> {
  readonly text: string;
  readonly names: readonly string[];
  /** Set for prepared statements. */
  readonly name?: string;
  /** Phantom: the parameters the statement takes and the rows it returns. */
  readonly __types?: { params: P; row: R };
}

// `:name`, but not the `::` of a cast.
const PLACEHOLDER = /(?<!:):([A-Za-z_][A-Za-z0-9_]*)/g;

/** A statement with `:name` placeholders, turned into pg's `$1…$n` once. */
export function sql<P extends object = Record<string, never>, R = Record<string, unknown>>(
  text: string,
  options: { prepare?: boolean } = {},
): Statement<P, R> {
  // Each occurrence is a parameter of its own: PostgreSQL infers each one's type from where it stands, and one
  // parameter used in two places of different types (a select list and a comparison) would not prepare.
  const names: string[] = [];
  const numbered = text.replace(PLACEHOLDER, (_match, name: string) => `$${names.push(name)}`);
  return {
    text: numbered,
    names,
    ...(options.prepare ? { name: `sp_${createHash('sha256').update(numbered).digest('hex').slice(0, 24)}` } : {}),
  };
}

/** Text PostgreSQL cannot store (a NUL character): refused here, as the client's error it is, before it is sent. */
export class UnstorableTextError extends Error {
  constructor(readonly parameter: string) {
    super(`SQL parameter :${parameter} holds a NUL character`);
    this.name = 'UnstorableTextError';
  }
}

function values<P extends object, R>(statement: Statement<P, R>, params: P): unknown[] {
  return statement.names.map((name) => {
    const value = (params as Record<string, unknown>)[name];
    if (value === undefined) throw new Error(`SQL parameter :${name} has no value`);
    if (typeof value === 'string' && value.includes('\u0000')) throw new UnstorableTextError(name);
    // Every time column is timestamptz: the UTC ISO text is the same instant, made natively (pg's own conversion
    // formats the local time field by field, one of the larger allocations of a create in a heap profile).
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    return value;
  });
}

/** Somewhere statements run: the pool, or one connection inside a transaction. */
export interface Db {
  query<P extends object, R>(statement: Statement<P, R>, params: P): Promise<R[]>;
  /** Runs `fn` in a transaction on one connection (rolled back when it throws). */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` once what was written here is committed: inside a transaction, after its COMMIT succeeded (never when
   * it rolls back); on the pool, at once (each statement commits on its own). For hints only (a worker woken): `fn`
   * must not throw, and nothing may depend on it running (a process may stop right after the commit).
   */
  afterCommit(fn: () => void): void;
}

type Queryable = Pick<Pool, 'query'> | PoolClient;

function runner(target: Queryable): Db['query'] {
  return async <P extends object, R>(statement: Statement<P, R>, params: P): Promise<R[]> => {
    const config = {
      text: statement.text,
      values: values(statement, params),
      ...(statement.name ? { name: statement.name } : {}),
    };
    return (await target.query(config)).rows as R[];
  };
}

/** The pool as a Db. Transactions take a connection of their own. */
export function poolDb(pool: Pool): Db {
  const db: Db = {
    query: runner(pool),
    afterCommit: (hint) => hint(),
    async transaction(fn) {
      const client = await pool.connect();
      let released = false;
      const committed: (() => void)[] = [];
      try {
        await client.query('begin');
        const tx: Db = {
          query: runner(client),
          transaction: (inner) => inner(tx),
          afterCommit: (hint) => committed.push(hint),
        };
        const result = await fn(tx);
        await client.query('commit');
        for (const hint of committed) hint();
        return result;
      } catch (error) {
        try {
          await client.query('rollback');
        } catch (rollbackError) {
          // The connection is broken: discard it rather than return it to the pool.
          client.release(rollbackError as Error);
          released = true;
        }
        throw error;
      } finally {
        if (!released) client.release();
      }
    },
  };
  return db;
}
