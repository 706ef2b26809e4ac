/** The sweeper's statements (../sweeper.ts runs them): batches of rows, each taken with FOR UPDATE SKIP LOCKED. */
import { sql, type Db } from '../../db/sql.js';
import { PUSHES } from '../push-tables.js';
import { ERASE_SECRETS, type WithinChange } from './statement-parts.js';

const P = PUSHES;
const BATCH = 500;

const S = {
  // The sweeper: batches of rows picked with FOR UPDATE SKIP LOCKED, so any number of instances may sweep at once.
  sweepPastTime: sql<{ now: Date }>(
    `update pushes set expired = true, expired_on = expires_at, updated_at = :now, ${ERASE_SECRETS}
     where id in (
       select id from pushes where not expired and expires_at <= :now
       order by expires_at limit ${BATCH} for update skip locked)
     returning ${P.list}`,
  ),
  sweepLapsedFiles: sql<{ cutoff: Date }>(
    `delete from push_files where id in (
       select f.id from push_files f join pushes p on p.id = f.push_id
       where p.expired and p.expired_on <= :cutoff
       limit ${BATCH} for update of f skip locked)
     returning id, object_key`,
  ),
  forgetAttempts: sql<{ before: Date }>('delete from passphrase_attempts where attempted_at < :before'),
  forgetKeys: sql<{ now: Date }>('delete from idempotency_keys where expires_at <= :now'),
  purgeExpired: sql<{ cutoff: Date }>(
    `delete from pushes where id in (
       select id from pushes where expired and expired_on <= :cutoff
       limit ${BATCH} for update skip locked)
     returning id`,
  ),
};

/** The sweeper's statements (sweeper.ts runs them). */
export function sweepOperations(db: Db, objectsGone?: (keys: string[]) => void) {
  return {
    /**
     * One sweep step: pushes past their time expired and erased (in batches); how many. With `within`, each batch is
     * a transaction that also runs it on every push of the batch.
     */
    async sweepPastTime(now: Date, within?: WithinChange): Promise<number> {
      if (!within) return drain(() => db.query(S.sweepPastTime, { now }));
      return drain(() =>
        db.transaction(async (tx) => {
          const rows = await tx.query(S.sweepPastTime, { now });
          for (const row of rows) await within(tx, P.fromRow(row));
          return rows;
        }),
      );
    },

    /** File bytes of pushes expired before `cutoff`; how many files. */
    async sweepLapsedFiles(cutoff: Date): Promise<number> {
      return drain(async () => {
        const rows = await db.query(S.sweepLapsedFiles, { cutoff });
        const keys = rows.flatMap((r) => (r.object_key ? [String(r.object_key)] : []));
        if (keys.length > 0) objectsGone?.(keys);
        return rows;
      });
    },

    async forgetAttempts(before: Date): Promise<void> {
      await db.query(S.forgetAttempts, { before });
    },

    async forgetKeys(now: Date): Promise<void> {
      await db.query(S.forgetKeys, { now });
    },

    /** Deletes expired pushes (with their audit and files) expired before `cutoff`; how many. */
    async purgeExpired(cutoff: Date): Promise<number> {
      return drain(() => db.query(S.purgeExpired, { cutoff }));
    },
  };
}

/** Repeats a batch statement until a batch comes back short; the number of rows in all batches. */
async function drain(batch: () => Promise<unknown[]>): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await batch();
    total += rows.length;
    if (rows.length < BATCH) return total;
  }
}
