/**
 * What every statement of the push repository shares (../push-repository.ts says what those statements guarantee):
 * the deadline's guard, the audit entry's columns and parameters, the readers of a guarded statement's row, the more
 * writes a statement may carry (`ClaimWrites`, the webhooks' events) and the transaction a change runs them in.
 */
import { ApiError } from '@secret-push/rules';
import type { Db, Statement } from '../../db/sql.js';
import type { Actor } from '../../request-context.js';
import { PUSHES, type PushRow } from '../push-tables.js';

/** Who did something to a push, for its audit entry: the request's actor. */
export type AuditActor = Actor;

export interface PageOf<T> {
  items: T[];
  total: number;
}

/**
 * More writes of a view inside the claim's own statement: CTEs after `won` (the push as claimed, which they may read),
 * their parameters, and what to run once the statement committed (it claimed).
 */
export interface ClaimWrites {
  /** The CTEs ('' for none). */
  ctes: string;
  params: Record<string, unknown>;
  /** A SQL expression over the CTEs, answered by the statement (`writes_result`) and given to `written`. */
  result?: string;
  /**
   * The audit entry the statement writes (`creation`, `view`) joins the webhooks' outbox (webhooks/outbox.ts): given
   * the SQL of the push owner's id and of its workspace's, the expression of its `tx` (the transaction's id, or null:
   * not marked); a marked view entry keeps the push's count of views after it. Without `result`, `written` is then
   * given whether the entry was marked.
   */
  outbox?: (owner: string, workspace: string) => string;
  written(db: Db, result: unknown): void;
}

/**
 * The columns and values an audit entry adds for the outbox (ClaimWrites.outbox), given its push's owner, workspace
 * and views.
 */
export function outboxAudit(more: ClaimWrites | null, owner: string, workspace: string, viewsUsed: string) {
  if (!more?.outbox) return { columns: '', values: '', returning: '' };
  return {
    columns: ', tx, views_used',
    values: `, ${more.outbox(owner, workspace)}, ${viewsUsed}`,
    returning: ' returning tx',
  };
}

/** What a statement answers as `writes_result`: `more`'s result, or (outbox) whether its audit entry `cte` was marked. */
export function writesResultOf(more: ClaimWrites | null, cte: string): string {
  if (more?.result) return `${more.result} as writes_result, `;
  if (more?.outbox) return `(select bool_or(tx is not null) from ${cte}) as writes_result, `;
  return '';
}

/**
 * A statement variant's key for `more`: its CTEs' text (a constant, whose hash the string keeps: no key is built per
 * call), or for the outbox (whose writes are no CTEs) a constant of its own.
 */
const OUTBOX_KEY = '(outbox)';
export const writesKey = (more: ClaimWrites | null) => (more?.outbox ? OUTBOX_KEY : (more?.ctes ?? ''));

/**
 * More writes in the transaction of a change to a push, given the push as the change left it (its events, queued
 * with it: webhooks/push-events.ts). Without one, each change stays the single statement it was.
 */
export type WithinChange = (tx: Db, row: PushRow) => Promise<void>;

/** Runs `statement` alone, or in a transaction with `within` on the push it changed (none changed: not called). */
export async function changed<P extends object, R>(
  db: Db,
  statement: Statement<P, R>,
  params: P,
  within: WithinChange | undefined,
  read: (rows: R[]) => PushRow | null,
): Promise<PushRow | null> {
  if (!within) return read(await db.query(statement, params));
  return db.transaction(async (tx) => {
    const row = read(await tx.query(statement, params));
    if (row) await within(tx, row);
    return row;
  });
}

const P = PUSHES;
const FIELD_MAX = 255;

/** The answer when a write reached the database after its request's deadline: it changed nothing. */
export function tooLate(): ApiError {
  return new ApiError('service_unavailable');
}

/** The audit columns are varchar(255). */
function cut(value: string | null | undefined): string {
  if (!value) return '';
  return value.length > FIELD_MAX ? value.slice(0, FIELD_MAX) : value;
}

export type AuditParams = { ip: string; userAgent: string; referrer: string; userId: string | null; now: Date };
export type Guarded = { deadline: Date };

export function auditParams(actor: AuditActor, now: Date): AuditParams {
  return {
    ip: cut(actor.ip),
    userAgent: cut(actor.userAgent),
    referrer: cut(actor.referrer),
    userId: actor.userId,
    now,
  };
}

export type Total = { total: string | number };
export type InTime = { in_time: boolean };

export const ERASE_SECRETS = 'payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null';
export const AUDIT_COLUMNS = 'push_id, kind, ip, user_agent, referrer, user_id, created_at';
/**
 * For an audit entry of a push its statement does not itself insert or update: the push's row, locked `for key share`
 * until the commit (none when the push is gone: the entry is not written). The entries have no foreign key to
 * `pushes` (Migration20270105000000_audit_entries_unkeyed): this lock is what makes a concurrent delete of the push
 * wait for the entry, and so delete it with the push.
 */
export const PUSH_KEPT = 'kept as (select id from pushes where id = :pushId for key share)';
/** The first CTE of every guarded statement: whether the database's clock is still before the deadline. */
export const GUARD = 'guard as (select clock_timestamp() < :deadline as in_time)';
export const IN_TIME = '(select in_time from guard)';

/** The pushes of a statement's rows. */
export const pushesOf = async (rows: Promise<Record<string, unknown>[]>): Promise<PushRow[]> =>
  (await rows).map((r) => P.fromRow(r));
/** The first push of a statement's rows, or null. */
export const firstPushOf = async (rows: Promise<Record<string, unknown>[]>): Promise<PushRow | null> =>
  (await pushesOf(rows))[0] ?? null;

/** The row a guarded statement wrote (null when its condition left nothing to write); a late write throws. */
function guardedRow(rows: (InTime & Record<string, unknown>)[]): Record<string, unknown> | null {
  const row = rows[0];
  if (!row?.in_time) throw tooLate();
  return row.id === null || row.id === undefined ? null : row;
}

/**
 * The push a create inserted: the row it was given (every column is written from it, none is computed by the
 * database, so nothing comes back but its id), or null when its condition refused it (the quota).
 */
export function insertedPush(rows: (InTime & Record<string, unknown>)[], push: PushRow): PushRow | null {
  return guardedRow(rows) ? push : null;
}

/** The push of a guarded statement's one row, null when none changed; throws when it came too late. */
export function guardedPush(rows: (InTime & Record<string, unknown>)[]): PushRow | null {
  const row = guardedRow(rows);
  return row ? P.fromRow(row) : null;
}

export function checkInTime(rows: InTime[]): void {
  if (!rows[0]?.in_time) throw tooLate();
}
