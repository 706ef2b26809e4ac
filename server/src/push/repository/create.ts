/**
 * A push's create: the push, its `creation` entry, its files and its idempotency key in one statement, one text per
 * variant (file count, key, the storage quota it counts, the writes it carries), and the plain create (the creates
 * counted against a storage quota: counted-creates.ts).
 */
import { sql, type Db, type Statement } from '../../db/sql.js';
import { PUSH_FILES, type PushFileRow, PUSHES, type PushRow } from '../push-tables.js';
import type { KeyRef } from './idempotency-keys.js';
import {
  AUDIT_COLUMNS,
  type AuditActor,
  auditParams,
  type ClaimWrites,
  GUARD,
  IN_TIME,
  insertedPush,
  type InTime,
  outboxAudit,
  writesKey,
  writesResultOf,
} from './statement-parts.js';

const P = PUSHES;
const F = PUSH_FILES;

/** More writes of a create, in its transaction, after the push is inserted (its email notification and job). */
export type WithinCreate = (tx: Db, row: PushRow) => Promise<void>;

/**
 * A create's writes in its transaction: `ahead` runs before the push is inserted, given the push as it will be
 * stored, for writes that need not see it (its webhook events: their deliveries and jobs); `after` runs after it, for
 * rows that refer to it (the email notification, the read-receipt choice). Under the user's storage lock, `ahead`
 * runs before the lock is taken, so the section that lock serialises (a user's creates, one at a time) is no longer
 * with events than without; a refused create rolls them back with it.
 */
export interface CreateWrites {
  ahead?: WithinCreate;
  after?: WithinCreate;
  /**
   * `ahead`'s writes as CTEs of the create's own statement, given the push as it will be stored (they read `won`, the
   * inserted push's id and user_id); null when they cannot be. Used when nothing runs `after`: the create stays one
   * statement (and a user's storage lock is held by it alone, never across a round trip).
   */
  inStatement?: (push: PushRow) => ClaimWrites | null;
}

/** The writes of `writes` that the create's own statement can hold, when nothing else needs a transaction. */
export function statementWrites(push: PushRow, writes: CreateWrites): ClaimWrites | null {
  if (writes.after || !writes.inStatement) return null;
  return writes.inStatement(push);
}

/**
 * Which storage quota a create's own statement counts: an address's window, a user's active pushes, a workspace's
 * (`workspace_storage_used`, Migration20270121000000_workspaces), or none.
 */
type CountedBy = 'address' | 'user' | 'userLocked' | 'workspace' | null;

/**
 * A create: the push, its `creation` entry, each file and the key, as one statement (one text per file count).
 * - `address` (an anonymous create counted in its own statement, when this process holds no lease for its address:
 *   address-leases.ts): the statement first adds the push's bytes to its address's window, on the condition that the
 *   window stays within the quota: `on conflict do update … where` takes the window's row lock and reads its latest
 *   version, so concurrent creates from one address (on any instance) are counted one after the other, and the push
 *   is inserted only when its bytes were counted.
 * - `user`: `user_storage_take` takes the push's bytes from the connection's own share of the user's quota (that
 *   share's lock only: Migration20270213000000_user_storage_shares), and the push is inserted only when they fit
 *   there (a trigger then counts them on that share); -1 when they do not (nothing written: the create runs again,
 *   `userLocked`).
 * - `userLocked`: `user_storage_used` takes all the user's shares' locks and reads the bytes of the user's active
 *   pushes with a snapshot taken after them (its migrations say how, and why that is fresh; given the push's bytes and
 *   the quota, it reads `pushes` only when they do not fit: Migration20270104000000_user_storage_fits), and grants the
 *   free bytes to the shares anew; the push is inserted only when its bytes fit. The locks are held until the
 *   statement (or the transaction it runs in) commits: such creates are counted one after the other on any instance.
 * A refused create changes nothing.
 */
function insertStatement(
  files: number,
  keyed: boolean,
  countedBy: CountedBy,
  more: ClaimWrites | null,
): Statement<Record<string, unknown>, InTime & Record<string, unknown>> {
  const addressQuota = countedBy === 'address';
  const writes = more?.ctes ? `, won as (select id, user_id, workspace_id from push), ${more.ctes}` : '';
  const outbox = outboxAudit(more, 'push.user_id', 'push.workspace_id', '0');
  const fileCtes = Array.from(
    { length: files },
    (_, i) =>
      `, file${i} as (insert into push_files (${F.list}) select ${F.placeholders.replace(/:(\w+)/g, `:f${i}_$1`)} from push)`,
  ).join('');
  const keyCte = keyed
    ? `, key as (update idempotency_keys set state = 'done', push_id = push.id from push where scope = :keyScope and key_digest = :keyDigest)`
    : '';
  const quotaCte = addressQuota
    ? `, quota as (
         insert into storage_windows (scope, window_start, bytes)
         select :quotaScope, :quotaWindow, :storedBytes where ${IN_TIME} and :storedBytes::bigint <= :quotaLimit::bigint
         on conflict (scope, window_start) do update set bytes = storage_windows.bytes + excluded.bytes
           where storage_windows.bytes + excluded.bytes <= :quotaLimit::bigint
         returning bytes
       )`
    : '';
  const usedCte =
    countedBy === 'user'
      ? `, used as (select user_storage_take(:quotaUser::uuid, :deadline, :storedBytes::bigint, :quotaLimit::bigint) as bytes where ${IN_TIME})`
      : countedBy === 'userLocked'
        ? `, used as (select user_storage_used(:quotaUser::uuid, :quotaNow::timestamptz, :deadline, :storedBytes::bigint, :quotaLimit::bigint) as bytes where ${IN_TIME})`
        : countedBy === 'workspace'
          ? `, used as (select workspace_storage_used(:quotaWorkspace::integer, :quotaNow::timestamptz, :deadline, :storedBytes::bigint, :quotaLimit::bigint) as bytes where ${IN_TIME})`
          : '';
  const byUsed = countedBy === 'user' || countedBy === 'userLocked' || countedBy === 'workspace';
  // A take's -1 (no room in its share) writes nothing.
  const taken = countedBy === 'user' ? ' and (select bytes from used) >= 0' : '';
  const counted = addressQuota
    ? ' and exists (select 1 from quota)'
    : byUsed
      ? `${taken} and (select bytes from used) + :storedBytes::bigint <= :quotaLimit::bigint`
      : '';
  const quotaColumn = addressQuota
    ? '(select bytes from quota) as window_bytes, '
    : byUsed
      ? '(select bytes from used) as used_bytes, '
      : '';
  return sql(
    `with ${GUARD}${quotaCte}${usedCte}, push as (
       insert into pushes (${P.list}) select ${P.placeholders} where ${IN_TIME}${counted} returning id, user_id, workspace_id
     ), creation as (
       insert into audit_entries (${AUDIT_COLUMNS}${outbox.columns})
       select id, 'creation', :ip, :userAgent, :referrer, :userId, :now${outbox.values} from push${outbox.returning}
     )${fileCtes}${keyCte}${writes}
     select guard.in_time, ${quotaColumn}${writesResultOf(more, 'creation')}push.id from guard left join push on true`,
    { prepare: files === 0 },
  );
}

/** Named parameters of file `i` of a create (`f0_id`, `f0_pushId`, …). */
function fileParams(files: PushFileRow[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  files.forEach((file, i) => {
    for (const [key, value] of Object.entries(file)) out[`f${i}_${key}`] = value;
  });
  return out;
}

/**
 * The create statements, one text per variant: by the more writes' CTEs (a constant text, whose hash the string keeps),
 * then by file count, keyed, the quota counted in it and the writes' result.
 */
const insertStatements = new Map<string, Map<string, ReturnType<typeof insertStatement>>>();
export function insertFor(
  files: number,
  key: KeyRef | undefined,
  countedBy: CountedBy,
  writes: ClaimWrites | null = null,
) {
  let variants = insertStatements.get(writesKey(writes));
  if (!variants) insertStatements.set(writesKey(writes), (variants = new Map()));
  const variant = `${files}:${key ? 'k' : ''}:${countedBy ?? ''}:${writes?.result ?? ''}`;
  let statement = variants.get(variant);
  if (!statement) {
    statement = insertStatement(files, key !== undefined, countedBy, writes);
    variants.set(variant, statement);
  }
  return statement;
}

/** The named parameters of a create. */
export const insertParams = (
  push: PushRow,
  files: PushFileRow[],
  by: AuditActor,
  deadline: Date,
  key: KeyRef | undefined,
) => ({
  ...push,
  ...auditParams(by, push.createdAt),
  deadline,
  ...fileParams(files),
  ...(key ? { keyScope: key.scope, keyDigest: key.keyDigest } : {}),
});

/** The plain create (storage quotas aside: storageOperations). */
export function insertOperations(db: Db) {
  return {
    /**
     * A new push with its `creation` entry, its files (already encrypted) and its key marked done, in one statement;
     * with `within`, in a transaction that also runs it (the push's email notification and its job).
     */
    async insert(
      push: PushRow,
      files: PushFileRow[],
      by: AuditActor,
      deadline: Date,
      key?: KeyRef,
      writes: CreateWrites = {},
    ): Promise<PushRow> {
      const inStatement = statementWrites(push, writes);
      if (inStatement) {
        const params = { ...insertParams(push, files, by, deadline, key), ...inStatement.params };
        const rows = await db.query(insertFor(files.length, key, null, inStatement), params);
        const row = insertedPush(rows, push)!;
        inStatement.written(db, rows[0]?.writes_result);
        return row;
      }
      const statement = insertFor(files.length, key, null);
      const params = insertParams(push, files, by, deadline, key);
      if (!writes.ahead && !writes.after) return insertedPush(await db.query(statement, params), push)!;
      return db.transaction(async (tx) => {
        await writes.ahead?.(tx, push);
        const row = insertedPush(await tx.query(statement, params), push)!;
        await writes.after?.(tx, row);
        return row;
      });
    },
  };
}
