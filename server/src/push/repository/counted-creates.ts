/**
 * Creates counted against the storage quotas (../storage-quota.ts decides with them): an anonymous create against
 * its address's window (this process's leases, ../address-leases.ts, or the create's own statement), a user's
 * against the user's storage lock; a request's answer in one transaction with the request's claim; the user's
 * storage lock for a request's create (`userStorage`).
 */
import pg from 'pg';
import { sql, UnstorableTextError, type Db } from '../../db/sql.js';
import { AddressLeases, type AddressQuota } from '../address-leases.js';
import type { PushFileRow, PushRow } from '../push-tables.js';
import { type CreateWrites, insertFor, insertParams, statementWrites } from './create.js';
import type { KeyRef } from './idempotency-keys.js';
import { type AuditActor, insertedPush, type InTime, tooLate } from './statement-parts.js';

/** A create counted against a storage quota: the push and the bytes now used, or a refusal with the bytes in use. */
type CountedInsert = { row: PushRow; usedBytes: number } | { refused: true; usedBytes: number; freeAt: Date | null };

/** The answer of a refused create inside its transaction: thrown, so that what `ahead` wrote rolls back. */
class RefusedCreate extends Error {
  constructor(readonly refusal: CountedInsert & { refused: true }) {
    super('refused by the storage quota');
  }
}

/** The anonymous storage quota counts bytes per clock hour (UTC). */
export const STORAGE_WINDOW_MS = 60 * 60 * 1000;

/** The start of the clock hour `now` falls in. */
export function storageWindowStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / STORAGE_WINDOW_MS) * STORAGE_WINDOW_MS);
}

const S = {
  forgetStorageWindows: sql<{ before: Date }>('delete from storage_windows where window_start < :before'),
  /** Adds a lease's bytes to an address's window, when the window stays within the quota (address-leases.ts). */
  reserveWindow: sql<{ scope: string; windowStart: Date; bytes: number; limit: number }, { bytes: string }>(
    `insert into storage_windows (scope, window_start, bytes)
     select :scope, :windowStart, :bytes where :bytes::bigint <= :limit::bigint
     on conflict (scope, window_start) do update set bytes = storage_windows.bytes + excluded.bytes
       where storage_windows.bytes + excluded.bytes <= :limit::bigint
     returning bytes`,
    { prepare: true },
  ),
  /** Gives a lease's unused bytes back to its window. */
  returnToWindow: sql<{ scope: string; windowStart: Date; bytes: number }>(
    'update storage_windows set bytes = greatest(0, bytes - :bytes::bigint) where scope = :scope and window_start = :windowStart',
  ),
  windowBytes: sql<{ scope: string; windowStart: Date }, { bytes: string }>(
    'select bytes from storage_windows where scope = :scope and window_start = :windowStart',
  ),
  /**
   * The bytes of a user's active pushes, taking the user's storage lock until the transaction ends (the user's creates
   * are counted one after the other; the migration that made `user_storage_used` says how).
   */
  userStorageUsed: sql<{ ownerId: string; now: Date; deadline: Date }, { used: string | null }>(
    'select user_storage_used(:ownerId::uuid, :now::timestamptz, :deadline) as used',
  ),
  /**
   * The first instant at which enough of a user's active pushes and open requests (both counted in `user_storage`)
   * will have expired by time to free `need` bytes.
   */
  userBytesFreeAt: sql<{ ownerId: string; now: Date; need: number }, { expires_at: Date | string }>(
    `select expires_at from (
       select expires_at, sum(stored_bytes) over (order by expires_at, id rows unbounded preceding) as freed
       from (
         select expires_at, id, stored_bytes from pushes where user_id = :ownerId and not expired and expires_at > :now
         union all
         select expires_at, id, stored_bytes from requests
         where user_id = :ownerId and state = 'pending' and expires_at > :now
       ) held
     ) t where freed >= :need order by expires_at limit 1`,
  ),
  /** The workspace's storage lock and count (workspace_storage_used: Migration20270121000000_workspaces). */
  workspaceStorageUsed: sql<
    { workspaceId: number; now: Date; deadline: Date; bytes: number | null; quota: number },
    { used: string | null }
  >(
    'select workspace_storage_used(:workspaceId::int, :now::timestamptz, :deadline, :bytes::bigint, :quota::bigint) as used',
  ),
  /** The user's storage lock and count for a create of `bytes` under `quota` (user_storage_used: see its migrations). */
  lockUserStorage: sql<
    { ownerId: string; now: Date; deadline: Date; bytes: number; quota: number },
    { used: string | null }
  >('select user_storage_used(:ownerId::uuid, :now::timestamptz, :deadline, :bytes::bigint, :quota::bigint) as used'),
};

/** An anonymous create counted in its own statement (the window's row updated and locked until it commits). */
async function insertCountedInStatement(
  db: Db,
  push: PushRow,
  files: PushFileRow[],
  by: AuditActor,
  deadline: Date,
  quota: AddressQuota,
  key?: KeyRef,
): Promise<CountedInsert> {
  const params = {
    ...insertParams(push, files, by, deadline, key),
    quotaScope: quota.scope,
    quotaWindow: quota.windowStart,
    quotaLimit: quota.limit,
  };
  const rows = await db.query(insertFor(files.length, key, 'address'), params);
  const row = insertedPush(rows, push);
  if (row) return { row, usedBytes: Number(rows[0]!.window_bytes) };
  const [window] = await db.query(S.windowBytes, windowOf(quota));
  return {
    refused: true,
    usedBytes: window ? Number(window.bytes) : 0,
    freeAt: new Date(quota.windowStart.getTime() + STORAGE_WINDOW_MS),
  };
}

const windowOf = (quota: AddressQuota) => ({ scope: quota.scope, windowStart: quota.windowStart });

/**
 * A counted create's statement, run again under all the user's shares when it found no room, and whether it is alone
 * in its statement (no transaction): a personal create alone in its statement first takes its bytes from its
 * connection's share of the quota (one share's lock: the user's other connections create meanwhile); in a
 * transaction, or when the share lacks room, under all the user's shares (Migration20270213000000_user_storage_shares).
 * A workspace's create under the workspace's lock.
 */
function userStatements(
  files: number,
  key: KeyRef | undefined,
  workspaceId: number | null,
  inStatement: ReturnType<typeof statementWrites>,
  writes: CreateWrites,
) {
  const alone = inStatement !== null || (!writes.ahead && !writes.after);
  const locked = insertFor(files, key, workspaceId === null ? 'userLocked' : 'workspace', inStatement);
  const statement = workspaceId === null && alone ? insertFor(files, key, 'user', inStatement) : locked;
  const run = async (q: Db, params: Record<string, unknown>) => {
    const rows = await q.query(statement, params);
    // No room in the connection's share (nothing written, and the share's lock released with the statement).
    return statement !== locked && Number(rows[0]!.used_bytes) === -1 ? q.query(locked, params) : rows;
  };
  return { run, alone };
}

/** Creates counted against the storage quotas (storage-quota.ts decides with them), and their windows. */
export function storageOperations(db: Db) {
  const leases = new AddressLeases(
    async (quota, bytes) => {
      const [row] = await db.query(S.reserveWindow, { ...windowOf(quota), bytes, limit: quota.limit });
      return row ? Number(row.bytes) : null;
    },
    async (quota) => Number((await db.query(S.windowBytes, windowOf(quota)))[0]?.bytes ?? 0),
    async (quota, bytes) => {
      await db.query(S.returnToWindow, { ...windowOf(quota), bytes });
    },
  );
  return {
    /**
     * The same, counted against the anonymous storage quota: the push's bytes are taken from this process's lease
     * on the address's window (address-leases.ts), then the push is inserted; refused (nothing stored) when the
     * window would go over the quota. With too many addresses leased at once, counted in the create's own statement.
     */
    async insertCountedByAddress(
      push: PushRow,
      files: PushFileRow[],
      by: AuditActor,
      deadline: Date,
      quota: AddressQuota,
      key?: KeyRef,
    ): Promise<CountedInsert> {
      const freeAt = new Date(quota.windowStart.getTime() + STORAGE_WINDOW_MS);
      const taken = await leases.take(quota, push.storedBytes);
      if (taken === null) return insertCountedInStatement(db, push, files, by, deadline, quota, key);
      if ('refused' in taken) return { refused: true, usedBytes: taken.used, freeAt };
      let rows: (InTime & Record<string, unknown>)[];
      try {
        rows = await db.query(insertFor(files.length, key, null), insertParams(push, files, by, deadline, key));
      } catch (err) {
        // Refused before it ran, or by PostgreSQL: it stored nothing. (A lost connection may hide a commit: kept counted.)
        if (err instanceof UnstorableTextError || err instanceof pg.DatabaseError) taken.untake();
        throw err;
      }
      if (!rows[0]?.in_time) taken.untake();
      return { row: insertedPush(rows, push)!, usedBytes: taken.used };
    },

    /** Gives this process's unused leases back to their windows (when it stops). */
    async returnQuotaLeases(): Promise<void> {
      await leases.returnAll();
    },

    /**
     * The same, counted against the user's storage quota in the create's own statement (insertStatement, `user`): the
     * user's creates are counted one after the other on any instance, and a refused one stores nothing; refused, the
     * instant at which enough space frees by time. With `writes`, in a transaction that also runs them (a refusal rolls
     * back what `ahead` wrote).
     */
    async insertCountedForUser(
      push: PushRow,
      files: PushFileRow[],
      by: AuditActor,
      deadline: Date,
      limit: number,
      now: Date,
      key?: KeyRef,
      writes: CreateWrites = {},
    ): Promise<CountedInsert> {
      const ownerId = push.ownerId!;
      const inStatement = statementWrites(push, writes);
      // A workspace's push counts against the workspace's quota, not its creator's.
      const workspaceId = push.workspaceId;
      const { run, alone } = userStatements(files.length, key, workspaceId, inStatement, writes);
      const params = {
        ...insertParams(push, files, by, deadline, key),
        ...inStatement?.params,
        ...(workspaceId === null ? { quotaUser: ownerId } : { quotaWorkspace: workspaceId }),
        quotaNow: now,
        quotaLimit: limit,
      };
      const counted = async (q: Db): Promise<{ row: PushRow; usedBytes: number }> => {
        const rows = await run(q, params);
        const row = insertedPush(rows, push);
        // The user's lock came after the deadline: nothing was written.
        if (rows[0]!.used_bytes === null) throw tooLate();
        const used = Number(rows[0]!.used_bytes);
        if (row) {
          inStatement?.written(q, rows[0]!.writes_result);
          return { row, usedBytes: used + push.storedBytes };
        }
        const [free] =
          workspaceId === null
            ? await q.query(S.userBytesFreeAt, { ownerId, now, need: used + push.storedBytes - limit })
            : [];
        throw new RefusedCreate({ refused: true, usedBytes: used, freeAt: free ? new Date(free.expires_at) : null });
      };
      try {
        if (alone) return await counted(db);
        return await db.transaction(async (tx) => {
          await writes.ahead?.(tx, push);
          const result = await counted(tx);
          await writes.after?.(tx, result.row);
          return result;
        });
      } catch (error) {
        if (error instanceof RefusedCreate) return error.refusal;
        throw error;
      }
    },

    /**
     * The push of a request's answer, in one transaction with the request's claim: `claim.before` locks and checks the
     * request (throwing refuses, and nothing is stored), then the owner's storage quota when `limit` is set (as
     * insertCountedForUser, less the `released` bytes that `claim.after` frees in the same transaction: the request's
     * ask), the push with its `creation` entry, then `claim.after` links the request to it. A refusal gives no instant:
     * the one who answers is not told when the owner's pushes expire.
     */
    async insertAnswer(
      push: PushRow,
      files: PushFileRow[],
      by: AuditActor,
      deadline: Date,
      quota: { limit: number; released: number } | null,
      now: Date,
      claim: { before(tx: Db): Promise<void>; after(tx: Db, push: PushRow): Promise<void> },
    ): Promise<CountedInsert> {
      const ownerId = push.ownerId!;
      return db.transaction(async (tx) => {
        await claim.before(tx);
        let used = 0;
        if (quota !== null) {
          // A workspace's answer counts against the workspace's quota (its lock), a personal one against its owner's.
          const workspaceId = push.workspaceId;
          const [counted] =
            workspaceId === null
              ? await tx.query(S.userStorageUsed, { ownerId, now, deadline })
              : await tx.query(S.workspaceStorageUsed, { workspaceId, now, deadline, bytes: null, quota: quota.limit });
          if (counted!.used === null) throw tooLate();
          used = Number(counted!.used) - quota.released;
          if (used + push.storedBytes > quota.limit) return { refused: true as const, usedBytes: used, freeAt: null };
        }
        const row = insertedPush(
          await tx.query(insertFor(files.length, undefined, null), insertParams(push, files, by, deadline, undefined)),
          push,
        )!;
        await claim.after(tx, row);
        return { row, usedBytes: used + push.storedBytes };
      });
    },

    /** Forgets the anonymous storage windows that ended before `now`'s window. */
    async forgetStorageWindows(now: Date): Promise<void> {
      await db.query(S.forgetStorageWindows, { before: storageWindowStart(now) });
    },
  };
}

/**
 * The user's storage quota for a write of another area that counts against it (a request's attachments:
 * ../request/request-repository.ts), in that write's transaction `tx`.
 */
export const userStorage = {
  /**
   * Takes the user's storage lock until `tx` ends and reads what the user's pushes and open requests hold, as a push
   * create does: exact when `bytes` would not fit in `quota`, else possibly counting some past their time (errs low);
   * null when the lock came after the deadline (nothing may be written).
   */
  async lock(tx: Db, ownerId: string, now: Date, deadline: Date, bytes: number, quota: number): Promise<number | null> {
    const [row] = await tx.query(S.lockUserStorage, { ownerId, now, deadline, bytes, quota });
    return row?.used === null || row?.used === undefined ? null : Number(row.used);
  },

  /** The same, for a workspace's request: the workspace's storage lock and what its pushes and open requests hold. */
  async lockWorkspace(
    tx: Db,
    workspaceId: number,
    now: Date,
    deadline: Date,
    bytes: number,
    quota: number,
  ): Promise<number | null> {
    const [row] = await tx.query(S.workspaceStorageUsed, { workspaceId, now, deadline, bytes, quota });
    return row?.used === null || row?.used === undefined ? null : Number(row.used);
  },

  /** The first instant at which enough of the user's pushes and open requests expire by time to free `need` bytes. */
  async freeAt(tx: Db, ownerId: string, now: Date, need: number): Promise<Date | null> {
    const [free] = await tx.query(S.userBytesFreeAt, { ownerId, now, need });
    return free ? new Date(free.expires_at) : null;
  },
};
