/**
 * Every statement about pushes, their files, their audit entries, their passphrase attempts and the idempotency keys
 * of creates (push-tables.ts). The service above keeps the rules; this module keeps the SQL, its rows and their
 * mapping. Whatever SQL can guarantee lives here: a counting view is claimed by one conditional UPDATE (never
 * read-then-write) that also writes its audit entry and, on the last view, expires the push and erases its secrets;
 * a create is one statement with its audit entry, its files and its idempotency key; the passphrase limit is counted
 * in a table every instance shares. The hot paths are prepared once per connection.
 *
 * **Nothing changes after a request's deadline.** Every statement that writes on behalf of a request carries the
 * request's deadline and changes nothing once the database's clock has passed it (`clock_timestamp()`, read while
 * the statement runs). A statement the database only gets to late (it was stopped, or busy) is then a no-op, so an
 * answer of 503 (given only after the deadline) cannot hide a commit. What is left is the instant between a commit
 * and its reply: a database that stops exactly there leaves the outcome unknown, as with any database.
 *
 * Statements list their columns rather than `*`: a prepared `*` whose expansion changes (another instance migrating
 * a column in during a rolling deploy) fails with "cached plan must not change result type".
 */
import { ApiError } from '@secret-push/rules';
import pg from 'pg';
import { sql, UnstorableTextError, type Db, type Statement } from '../db/sql.js';
import type { Actor } from '../request-context.js';
import { AddressLeases, type AddressQuota } from './address-leases.js';
import {
  AUDIT_ENTRIES,
  type AuditKind,
  type AuditRow,
  IDEMPOTENCY_KEYS,
  type IdempotencyKeyRow,
  PASSPHRASE_ATTEMPTS,
  PUSH_FILES,
  type PushFileRow,
  PUSHES,
  type PushRow,
} from './push-tables.js';

/** Who did something to a push, for its audit entry: the request's actor. */
export type AuditActor = Actor;

/** A file without its bytes (where they are: `objectKey`, null when they are in `content`). */
export type FileMeta = Pick<PushFileRow, 'id' | 'filenameCiphertext' | 'contentType' | 'size' | 'objectKey'>;

export interface PageOf<T> {
  items: T[];
  total: number;
}

/** A create counted against a storage quota: the push and the bytes now used, or a refusal with the bytes in use. */
type CountedInsert = { row: PushRow; usedBytes: number } | { refused: true; usedBytes: number; freeAt: Date | null };

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
function statementWrites(push: PushRow, writes: CreateWrites): ClaimWrites | null {
  if (writes.after || !writes.inStatement) return null;
  return writes.inStatement(push);
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
   * the SQL of the push owner's id, the expression of its `tx` (the transaction's id, or null: not marked); a marked
   * view entry keeps the push's count of views after it. Without `result`, `written` is then given whether the entry
   * was marked.
   */
  outbox?: (owner: string) => string;
  written(db: Db, result: unknown): void;
}

/** The columns and values an audit entry adds for the outbox (ClaimWrites.outbox), given its push's owner and views. */
function outboxAudit(more: ClaimWrites | null, owner: string, viewsUsed: string) {
  if (!more?.outbox) return { columns: '', values: '', returning: '' };
  return { columns: ', tx, views_used', values: `, ${more.outbox(owner)}, ${viewsUsed}`, returning: ' returning tx' };
}

/** What a statement answers as `writes_result`: `more`'s result, or (outbox) whether its audit entry `cte` was marked. */
function writesResultOf(more: ClaimWrites | null, cte: string): string {
  if (more?.result) return `${more.result} as writes_result, `;
  if (more?.outbox) return `(select bool_or(tx is not null) from ${cte}) as writes_result, `;
  return '';
}

/**
 * A statement variant's key for `more`: its CTEs' text (a constant, whose hash the string keeps: no key is built per
 * call), or for the outbox (whose writes are no CTEs) a constant of its own.
 */
const OUTBOX_KEY = '(outbox)';
const writesKey = (more: ClaimWrites | null) => (more?.outbox ? OUTBOX_KEY : (more?.ctes ?? ''));

/** The answer of a refused create inside its transaction: thrown, so that what `ahead` wrote rolls back. */
class RefusedCreate extends Error {
  constructor(readonly refusal: CountedInsert & { refused: true }) {
    super('refused by the storage quota');
  }
}

/**
 * More writes in the transaction of a change to a push, given the push as the change left it (its events, queued
 * with it: webhooks/push-events.ts). Without one, each change stays the single statement it was.
 */
export type WithinChange = (tx: Db, row: PushRow) => Promise<void>;

/** Runs `statement` alone, or in a transaction with `within` on the push it changed (none changed: not called). */
async function changed<P extends object, R>(
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

/** Ties a create to its idempotency key: the create's own statement marks the key done. */
export interface KeyRef {
  scope: string;
  keyDigest: string;
}

const P = PUSHES;
const F = PUSH_FILES;
const A = AUDIT_ENTRIES;
const K = IDEMPOTENCY_KEYS;
const BATCH = 500;
const FIELD_MAX = 255;

/** The anonymous storage quota counts bytes per clock hour (UTC). */
export const STORAGE_WINDOW_MS = 60 * 60 * 1000;

/** The start of the clock hour `now` falls in. */
export function storageWindowStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / STORAGE_WINDOW_MS) * STORAGE_WINDOW_MS);
}

/** The answer when a write reached the database after its request's deadline: it changed nothing. */
function tooLate(): ApiError {
  return new ApiError('service_unavailable');
}

/** The audit columns are varchar(255). */
function cut(value: string | null | undefined): string {
  if (!value) return '';
  return value.length > FIELD_MAX ? value.slice(0, FIELD_MAX) : value;
}

type AuditParams = { ip: string; userAgent: string; referrer: string; userId: string | null; now: Date };
type Guarded = { deadline: Date };

function auditParams(actor: AuditActor, now: Date): AuditParams {
  return {
    ip: cut(actor.ip),
    userAgent: cut(actor.userAgent),
    referrer: cut(actor.referrer),
    userId: actor.userId,
    now,
  };
}

type Total = { total: string | number };
type InTime = { in_time: boolean };

const ERASE_SECRETS = 'payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null';
const AUDIT_COLUMNS = 'push_id, kind, ip, user_agent, referrer, user_id, created_at';
/**
 * For an audit entry of a push its statement does not itself insert or update: the push's row, locked `for key share`
 * until the commit (none when the push is gone: the entry is not written). The entries have no foreign key to
 * `pushes` (Migration20270105000000_audit_entries_unkeyed): this lock is what makes a concurrent delete of the push
 * wait for the entry, and so delete it with the push.
 */
const PUSH_KEPT = 'kept as (select id from pushes where id = :pushId for key share)';
/** The first CTE of every guarded statement: whether the database's clock is still before the deadline. */
const GUARD = 'guard as (select clock_timestamp() < :deadline as in_time)';
const IN_TIME = '(select in_time from guard)';
/**
 * The SET clause of a won view, on the pushes row named `row` (`pushes` or an alias): one more view, and on the last
 * one the push expires and its secrets are erased (file bytes stay until the links issued lapse).
 */
const VIEW_SET = (row: string) => {
  const last = `${row}.views_used + 1 >= ${row}.expire_after_views`;
  return `views_used = ${row}.views_used + 1, updated_at = :now,
         expired = ${last},
         expired_on = case when ${last} then :now else ${row}.expired_on end,
         payload_ciphertext = case when ${last} then null else ${row}.payload_ciphertext end,
         note_ciphertext = case when ${last} then null else ${row}.note_ciphertext end,
         passphrase_hash = case when ${last} then null else ${row}.passphrase_hash end`;
};
/**
 * Nobody listens to the events of the owner's pushes (webhooks, read receipts: `event_owners`). The one-statement
 * view claims only then; a listened-to owner's view is claimed by `claimView` in the transaction that queues its
 * events. An anonymous push never has listeners.
 */
const NOBODY_LISTENS =
  '(cur.user_id is null or not exists (select 1 from event_owners e where e.user_id = cur.user_id))';
/**
 * The key id of an envelope in its base64 text form (../crypto/envelope.ts: version, id length, id, …), read from
 * its first 344 characters (258 bytes: room for the longest id), so a view is claimed only when it can be opened.
 */
const ENVELOPE_KEY_ID = (column: string) =>
  `convert_from(substring(decode(left(${column}, 344), 'base64') from 3 for get_byte(decode(left(${column}, 4), 'base64'), 1)), 'UTF8')`;

/** Which storage quota a create's own statement counts: an address's window, a user's active pushes, or none. */
type CountedBy = 'address' | 'user' | null;

/**
 * A create: the push, its `creation` entry, each file and the key, as one statement (one text per file count).
 * - `address` (an anonymous create counted in its own statement, when this process holds no lease for its address:
 *   address-leases.ts): the statement first adds the push's bytes to its address's window, on the condition that the
 *   window stays within the quota: `on conflict do update … where` takes the window's row lock and reads its latest
 *   version, so concurrent creates from one address (on any instance) are counted one after the other, and the push
 *   is inserted only when its bytes were counted.
 * - `user`: `user_storage_used` takes the user's storage lock and reads the bytes of the user's active pushes with a
 *   snapshot taken after it (its migration says how, and why that is fresh; given the push's bytes and the quota, it
 *   reads `pushes` only when they do not fit: Migration20270104000000_user_storage_fits), and the push is inserted
 *   only when its bytes fit (a trigger then counts them). The lock is held until the statement (or the transaction
 *   it runs in) commits: a user's creates are counted one after the other on any instance.
 * A refused create changes nothing.
 */
function insertStatement(
  files: number,
  keyed: boolean,
  countedBy: CountedBy,
  more: ClaimWrites | null,
): Statement<Record<string, unknown>, InTime & Record<string, unknown>> {
  const addressQuota = countedBy === 'address';
  const writes = more?.ctes ? `, won as (select id, user_id from push), ${more.ctes}` : '';
  const outbox = outboxAudit(more, 'push.user_id', '0');
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
      ? `, used as (select user_storage_used(:quotaUser::uuid, :quotaNow::timestamptz, :deadline, :storedBytes::bigint, :quotaLimit::bigint) as bytes where ${IN_TIME})`
      : '';
  const counted = addressQuota
    ? ' and exists (select 1 from quota)'
    : countedBy === 'user'
      ? ' and (select bytes from used) + :storedBytes::bigint <= :quotaLimit::bigint'
      : '';
  const quotaColumn = addressQuota
    ? '(select bytes from quota) as window_bytes, '
    : countedBy === 'user'
      ? '(select bytes from used) as used_bytes, '
      : '';
  return sql(
    `with ${GUARD}${quotaCte}${usedCte}, push as (
       insert into pushes (${P.list}) select ${P.placeholders} where ${IN_TIME}${counted} returning id, user_id
     ), creation as (
       insert into audit_entries (${AUDIT_COLUMNS}${outbox.columns})
       select id, 'creation', :ip, :userAgent, :referrer, :userId, :now${outbox.values} from push${outbox.returning}
     )${fileCtes}${keyCte}${writes}
     select guard.in_time, ${quotaColumn}${writesResultOf(more, 'creation')}push.id from guard left join push on true`,
    { prepare: files === 0 },
  );
}

/**
 * The push as a claim of a view left it, from the row read before: only the counter, the time of change and (on the
 * last view) the expiry and the erased secrets move (nothing else of a push changes while it can be viewed).
 */
export function claimedPush(row: PushRow, viewsUsed: number, updatedAt: Date, now: Date): PushRow {
  const won: PushRow = { ...row, viewsUsed, updatedAt };
  if (viewsUsed >= row.expireAfterViews) {
    Object.assign(won, {
      expired: true,
      expiredOn: now,
      payloadCiphertext: null,
      noteCiphertext: null,
      passphraseHash: null,
    });
  }
  return won;
}

/**
 * claimView's statements with more CTEs (ClaimWrites), by their text (a writes' texts are constants, whose hash a
 * string keeps: no key is built per call), and the claim only from a given views_used.
 */
const claimsWith = new Map<string, Map<string, Statement<Record<string, unknown>, InTime & Record<string, unknown>>>>();

function claimViewWith(more: ClaimWrites): Statement<Record<string, unknown>, InTime & Record<string, unknown>> {
  let byResult = claimsWith.get(more.ctes);
  if (!byResult) claimsWith.set(more.ctes, (byResult = new Map()));
  let statement = byResult.get(more.result ?? '');
  if (!statement) {
    statement = sql(
      `with ${GUARD}, won as (
         update pushes set ${VIEW_SET('pushes')}
         where id = :id and views_used = :viewsUsedBefore
           and not expired and views_used < expire_after_views and expires_at > :now and ${IN_TIME}
         returning ${P.list}
       ), viewed as (
         insert into audit_entries (${AUDIT_COLUMNS})
         select id, 'view', :ip, :userAgent, :referrer, :userId, :now from won
       ), ${more.ctes}
       select guard.in_time, ${writesResultOf(more, 'viewed')}won.* from guard left join won on true`,
      { prepare: true },
    );
    byResult.set(more.result ?? '', statement);
  }
  return statement;
}

type ViewByToken = Statement<
  { urlToken: string; keyIds: string[]; plaintextOnly: boolean } & AuditParams & Guarded & Record<string, unknown>,
  InTime & { won_views_used: number | null; won_updated_at: Date | null } & Record<string, unknown>
>;

/**
 * A recipient's view in one statement: the push by its token (as it was read), and the claim of a view when the
 * push needs nothing more than a claim (a text, URL or QR push without a passphrase, not the caller's own, whose
 * payload was sealed under a key this process holds, and not end-to-end encrypted when a plaintext is required). The
 * claim is claimView's, with its `view` audit entry; `won_views_used` is set when it won. Otherwise the row is what
 * the service decides with (expired, passphrase, owner, files), as findByToken's.
 *
 * Without `more`, only pushes nobody listens to are claimed (NOBODY_LISTENS); with it (a view's events: its audit
 * entry marked for the webhooks' outbox, webhooks/push-events.ts and outbox.ts), every push is, and `writes_result`
 * reports whether the entry was marked. One statement per `more` (writesKey).
 */
const viewsWith = new Map<string, ViewByToken>();

function viewByTokenStatement(more: ClaimWrites | null): ViewByToken {
  let statement = more ? viewsWith.get(writesKey(more)) : undefined;
  if (statement) return statement;
  const outbox = outboxAudit(more, 'cur.user_id', 'won.views_used');
  statement = sql(
    `with ${GUARD}, cur as (
       select ${P.list} from pushes where url_token = :urlToken
     ), won as (
       update pushes p set ${VIEW_SET('p')}
       from cur
       where p.id = cur.id and cur.kind <> 'file' and cur.passphrase_hash is null
         and (cur.user_id is null or :userId::uuid is null or cur.user_id <> :userId::uuid)
         and (cur.client_encryption is null or not :plaintextOnly::boolean)
         and (cur.payload_ciphertext is null or ${ENVELOPE_KEY_ID('cur.payload_ciphertext')} = any(:keyIds::text[]))
         and ${more ? 'true' : NOBODY_LISTENS}
         and not p.expired and p.views_used < p.expire_after_views and p.expires_at > :now and ${IN_TIME}
       returning p.id, p.views_used, p.updated_at, p.expired
     ), viewed as (
       insert into audit_entries (${AUDIT_COLUMNS}${outbox.columns})
       select won.id, 'view', :ip, :userAgent, :referrer, :userId, :now${outbox.values}
       from won${more?.outbox ? ' join cur on cur.id = won.id' : ''}${outbox.returning}
     )${more?.ctes ? `, ${more.ctes}` : ''}
     select guard.in_time, ${writesResultOf(more, 'viewed')}won.views_used as won_views_used, won.updated_at as won_updated_at, cur.*
     from guard left join cur on true left join won on true`,
    { prepare: true },
  ) as ViewByToken;
  if (more) viewsWith.set(writesKey(more), statement);
  return statement;
}

const S = {
  findByToken: sql<{ urlToken: string }>(`select ${P.list} from pushes where url_token = :urlToken`, { prepare: true }),
  findById: sql<{ id: string }>(`select ${P.list} from pushes where id = :id`),
  /**
   * The claim of a view: succeeds for at most `expire_after_views` callers, on any instance, writes the `view` audit
   * entry and, on the last view, expires the push and erases its secrets (file bytes stay until the links issued
   * lapse), as one statement.
   */
  claimView: sql<{ id: string } & AuditParams & Guarded, InTime & Record<string, unknown>>(
    `with ${GUARD}, won as (
       update pushes set ${VIEW_SET('pushes')}
       where id = :id and not expired and views_used < expire_after_views and expires_at > :now and ${IN_TIME}
       returning ${P.list}
     ), viewed as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select id, 'view', :ip, :userAgent, :referrer, :userId, :now from won
     )
     select guard.in_time, won.* from guard left join won on true`,
    { prepare: true },
  ),
  /** viewByTokenStatement's, for pushes nobody listens to. */
  viewByToken: viewByTokenStatement(null),
  /** Marks a push past its time as expired (as of its expires_at) and erases its secrets; idempotent, any time. */
  expireByTime: sql<{ id: string; now: Date }>(
    `update pushes set expired = true, expired_on = expires_at, updated_at = :now, ${ERASE_SECRETS}
     where id = :id and not expired and expires_at <= :now returning ${P.list}`,
  ),
  /** Expire by request: flag, erase, drop the files and audit `expire`, as one statement. */
  expireByRequest: sql<{ id: string } & AuditParams & Guarded, InTime & Record<string, unknown>>(
    `with ${GUARD}, updated as (
       update pushes set expired = true, deleted = true, expired_on = :now, updated_at = :now, ${ERASE_SECRETS}
       where id = :id and not expired and expires_at > :now and ${IN_TIME} returning ${P.list}
     ), gone as (
       delete from push_files where push_id in (select id from updated) returning object_key
     ), logged as (
       insert into audit_entries (${AUDIT_COLUMNS}) select id, 'expire', :ip, :userAgent, :referrer, :userId, :now from updated
     )
     select guard.in_time, (select array_agg(object_key) from gone where object_key is not null) as gone_objects,
       updated.*
     from guard left join updated on true`,
  ),
  insertAudit: sql<{ pushId: string; kind: AuditKind } & AuditParams & Guarded, InTime>(
    `with ${GUARD}, ${PUSH_KEPT}, logged as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select kept.id, :kind, :ip, :userAgent, :referrer, :userId, :now from kept where ${IN_TIME}
     )
     select in_time from guard`,
  ),
  /** At most one `failed_view` per push, client address and window. */
  insertFailedView: sql<{ pushId: string; since: Date } & AuditParams & Guarded, InTime>(
    `with ${GUARD}, ${PUSH_KEPT}, logged as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select kept.id, 'failed_view', :ip, :userAgent, :referrer, :userId, :now from kept
       where ${IN_TIME} and not exists (
         select 1 from audit_entries where push_id = :pushId and kind = 'failed_view' and ip = :ip and created_at > :since)
     )
     select in_time from guard`,
  ),
  filesOf: sql<{ pushId: string }>(
    'select id, filename_ciphertext, content_type, size, object_key from push_files where push_id = :pushId order by position',
  ),
  fileOf: sql<{ pushId: string; fileId: string }>(
    `select ${F.list} from push_files where id = :fileId and push_id = :pushId`,
  ),
  auditCount: sql<{ pushId: string }, Total>('select count(*) as total from audit_entries where push_id = :pushId'),
  auditPage: sql<{ pushId: string; limit: number; offset: number }>(
    `select ${A.list} from audit_entries where push_id = :pushId order by created_at, id limit :limit offset :offset`,
  ),
  activeCount: sql<{ ownerId: string; now: Date }, Total>(
    'select count(*) as total from pushes where user_id = :ownerId and not expired and expires_at > :now',
  ),
  activePage: sql<{ ownerId: string; now: Date; limit: number; offset: number }>(
    `select ${P.list} from pushes where user_id = :ownerId and not expired and expires_at > :now
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  expiredCount: sql<{ ownerId: string; now: Date }, Total>(
    'select count(*) as total from pushes where user_id = :ownerId and (expired or expires_at <= :now)',
  ),
  expiredPage: sql<{ ownerId: string; now: Date; limit: number; offset: number }>(
    `select ${P.list} from pushes where user_id = :ownerId and (expired or expires_at <= :now)
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  // Passphrase attempts. Attempts of one push are serialised by a lock on its row, in a short transaction.
  lockPush: sql<{ id: string }>('select id from pushes where id = :id for update'),
  attemptsSince: sql<{ pushId: string; failuresSince: Date; inFlightSince: Date }>(
    `select ${PASSPHRASE_ATTEMPTS.list} from passphrase_attempts
     where push_id = :pushId and ((failed and attempted_at > :failuresSince) or (not failed and attempted_at > :inFlightSince))
     order by attempted_at, id`,
  ),
  reserveAttempt: sql<{ pushId: string; now: Date }, { id: string }>(
    'insert into passphrase_attempts (push_id, attempted_at, failed) values (:pushId, :now, false) returning id',
  ),
  releaseAttempt: sql<{ id: string }>('delete from passphrase_attempts where id = :id'),
  /** A wrong (or missing) passphrase: the reservation becomes a failure, with its `failed_passphrase` entry. */
  failAttempt: sql<{ id: string; pushId: string } & AuditParams & Guarded, InTime>(
    `with ${GUARD}, failed as (
       update passphrase_attempts set failed = true, attempted_at = :now where id = :id and ${IN_TIME} returning push_id
     ), ${PUSH_KEPT}, logged as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select kept.id, 'failed_passphrase', :ip, :userAgent, :referrer, :userId, :now from kept where ${IN_TIME}
     )
     select in_time from guard`,
  ),
  // Idempotency keys.
  claimKey: sql<
    { scope: string; keyDigest: string; fingerprint: string; now: Date; expiresAt: Date; staleBefore: Date },
    { outcome: 'claimed' | 'existing' } & Record<string, unknown>
  >(
    `with claimed as (
       insert into idempotency_keys (${K.list}) values (:scope, :keyDigest, :fingerprint, 'in_flight', null, :now, :expiresAt)
       on conflict (scope, key_digest) do update
         set fingerprint = excluded.fingerprint, state = 'in_flight', push_id = null, created_at = excluded.created_at,
             expires_at = excluded.expires_at
         where idempotency_keys.expires_at <= excluded.created_at
            or (idempotency_keys.state = 'in_flight' and idempotency_keys.created_at < :staleBefore)
       returning ${K.list}
     )
     select 'claimed' as outcome, * from claimed
     union all
     select 'existing' as outcome, ${K.list} from idempotency_keys
     where scope = :scope and key_digest = :keyDigest and not exists (select 1 from claimed)`,
  ),
  releaseKey: sql<{ scope: string; keyDigest: string }>(
    "delete from idempotency_keys where scope = :scope and key_digest = :keyDigest and state = 'in_flight'",
  ),
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
  /** The user's storage lock and count for a create of `bytes` under `quota` (user_storage_used: see its migrations). */
  lockUserStorage: sql<
    { ownerId: string; now: Date; deadline: Date; bytes: number; quota: number },
    { used: string | null }
  >('select user_storage_used(:ownerId::uuid, :now::timestamptz, :deadline, :bytes::bigint, :quota::bigint) as used'),
  purgeExpired: sql<{ cutoff: Date }>(
    `delete from pushes where id in (
       select id from pushes where expired and expired_on <= :cutoff
       limit ${BATCH} for update skip locked)
     returning id`,
  ),
};

async function count(rows: Promise<Total[]>): Promise<number> {
  return Number((await rows)[0]?.total ?? 0);
}

/** The push of a guarded statement's one row, null when none changed; throws when it came too late. */
/**
 * The push a create stored: the row it was given (every column is written from it, none is computed by the
 * database, so nothing comes back but its id), or null when the statement stored nothing (the quota refused it).
 */
/** The row a guarded statement wrote (null when its condition left nothing to write); a late write throws. */
function guardedRow(rows: (InTime & Record<string, unknown>)[]): Record<string, unknown> | null {
  const row = rows[0];
  if (!row?.in_time) throw tooLate();
  return row.id === null || row.id === undefined ? null : row;
}

/** The push a create inserted (the statement returns only its id), or null when its condition refused it. */
function insertedPush(rows: (InTime & Record<string, unknown>)[], push: PushRow): PushRow | null {
  return guardedRow(rows) ? push : null;
}

function guardedPush(rows: (InTime & Record<string, unknown>)[]): PushRow | null {
  const row = guardedRow(rows);
  return row ? P.fromRow(row) : null;
}

function checkInTime(rows: InTime[]): void {
  if (!rows[0]?.in_time) throw tooLate();
}

/** Named parameters of file `i` of a create (`f0_id`, `f0_pushId`, …). */
function fileParams(files: PushFileRow[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  files.forEach((file, i) => {
    for (const [key, value] of Object.entries(file)) out[`f${i}_${key}`] = value;
  });
  return out;
}

/** The outcome of presenting an idempotency key. */
type KeyClaim = { outcome: 'claimed' } | { outcome: 'existing'; key: IdempotencyKeyRow };

/** The outcome of asking for a place to check a passphrase. */
type AttemptReservation =
  | { state: 'reserved'; id: string }
  /** Too many failures in the window: their instants, for Retry-After. */
  | { state: 'blocked'; failures: Date[] }
  /** Enough attempts are being checked right now that one more might exceed the limit: ask again shortly. */
  | { state: 'busy' };

/**
 * The create statements, one text per variant: by the more writes' CTEs (a constant text, whose hash the string keeps),
 * then by file count, keyed, the quota counted in it and the writes' result.
 */
const insertStatements = new Map<string, Map<string, ReturnType<typeof insertStatement>>>();
function insertFor(files: number, key: KeyRef | undefined, countedBy: CountedBy, writes: ClaimWrites | null = null) {
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
const insertParams = (
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

/**
 * The statements of the bench's requests (an anonymous text push, then its retrieval), for the bench's same-SQL floor
 * (scripts/bench/bare-floor.ts), which sends them without the rest of the server: the very texts, so the floor cannot
 * drift from what the server sends.
 */
export const BENCH_STATEMENTS = {
  create: () => insertFor(0, undefined, 'address'),
  viewByToken: S.viewByToken,
};

export type PushRepository = ReturnType<typeof createPushRepository>;

/**
 * `objectsGone`: told, after the commit, the object keys of file rows a statement deleted (an expiry by request, the
 * sweeper's lapsed files), whose objects it deletes (../files/). Absent: the files are all in PostgreSQL.
 */
export function createPushRepository(db: Db, objectsGone?: (keys: string[]) => void) {
  const pushes = async (rows: Promise<Record<string, unknown>[]>): Promise<PushRow[]> =>
    (await rows).map((r) => P.fromRow(r));
  const first = async (rows: Promise<Record<string, unknown>[]>): Promise<PushRow | null> =>
    (await pushes(rows))[0] ?? null;

  async function findById(id: string): Promise<PushRow | null> {
    return first(db.query(S.findById, { id }));
  }

  return {
    async findByToken(urlToken: string): Promise<PushRow | null> {
      return first(db.query(S.findByToken, { urlToken }));
    },

    findById,

    ...insertOperations(db),

    /**
     * The row of `urlToken` (null: no such push) and, when the view was claimed with it, the row after the claim.
     * `writes`: the view's events, written by the same statement (then a listened-to owner's push is claimed too).
     */
    async viewByToken(
      urlToken: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      opts: { keyIds: string[]; plaintextOnly: boolean; writes: ClaimWrites | null },
    ): Promise<{ row: PushRow; won: PushRow | null } | null> {
      const { keyIds, plaintextOnly, writes } = opts;
      const [raw] = await db.query(viewByTokenStatement(writes), {
        ...writes?.params,
        urlToken,
        ...auditParams(by, now),
        deadline,
        keyIds,
        plaintextOnly,
      });
      if (!raw?.in_time) throw tooLate();
      if (raw.id === null || raw.id === undefined) return null;
      const row = P.fromRow(raw);
      if (raw.won_views_used === null || raw.won_views_used === undefined) return { row, won: null };
      writes?.written(db, raw.writes_result);
      return { row, won: claimedPush(row, raw.won_views_used, new Date(raw.won_updated_at!), now) };
    },
    /** Claims a view; null when none is left (or the time ran out). `within`: in the claim's transaction. */
    async claimView(
      id: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      within?: WithinChange,
    ): Promise<PushRow | null> {
      return changed(db, S.claimView, { id, ...auditParams(by, now), deadline }, within, guardedPush);
    },

    /**
     * Claims a view in one statement with more writes (`writes`: a view's events), only when the push's views_used is
     * still `viewsUsedBefore` (the count the writes were made for); null when it did not claim (a view taken
     * meanwhile, none left, past its time), and then nothing was written.
     */
    async claimViewWith(
      id: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      viewsUsedBefore: number,
      writes: ClaimWrites,
    ): Promise<PushRow | null> {
      const params = { ...writes.params, id, viewsUsedBefore, ...auditParams(by, now), deadline };
      const rows = await db.query(claimViewWith(writes), params);
      const row = guardedPush(rows);
      if (row) writes.written(db, rows[0]?.writes_result);
      return row;
    },

    /** Expires a push past its time (idempotent; the sweeper does the same); returns its current row. */
    async expireByTime(row: PushRow, now: Date, within?: WithinChange): Promise<PushRow> {
      const done = await changed(db, S.expireByTime, { id: row.id, now }, within, (rows) =>
        rows[0] ? P.fromRow(rows[0]) : null,
      );
      return done ?? (await findById(row.id)) ?? row;
    },

    /** Expire by request; null when it was already expired (or ran out of time). */
    async expireByRequest(
      id: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      within?: WithinChange,
    ): Promise<PushRow | null> {
      let gone: string[] = [];
      const row = await changed(db, S.expireByRequest, { id, ...auditParams(by, now), deadline }, within, (rows) => {
        gone = (rows[0]?.gone_objects as string[] | null | undefined) ?? [];
        return guardedPush(rows);
      });
      // After the commit: the objects of the files the statement deleted.
      if (gone.length > 0) objectsGone?.(gone);
      return row;
    },

    async recordAudit(pushId: string, kind: AuditKind, by: AuditActor, now: Date, deadline: Date): Promise<void> {
      checkInTime(await db.query(S.insertAudit, { pushId, kind, ...auditParams(by, now), deadline }));
    },

    async recordFailedView(pushId: string, by: AuditActor, now: Date, dedupeMs: number, deadline: Date): Promise<void> {
      const since = new Date(now.getTime() - dedupeMs);
      checkInTime(await db.query(S.insertFailedView, { pushId, since, ...auditParams(by, now), deadline }));
    },

    ...fileOperations(db),

    async auditPage(pushId: string, limit: number, offset: number): Promise<PageOf<AuditRow>> {
      const [total, rows] = await Promise.all([
        count(db.query(S.auditCount, { pushId })),
        db.query(S.auditPage, { pushId, limit, offset }),
      ]);
      return { items: rows.map((r) => A.fromRow(r)), total };
    },

    async ownerPage(
      state: 'active' | 'expired',
      ownerId: string,
      now: Date,
      limit: number,
      offset: number,
    ): Promise<PageOf<PushRow>> {
      const [countOf, pageOf] = state === 'active' ? [S.activeCount, S.activePage] : [S.expiredCount, S.expiredPage];
      const [total, items] = await Promise.all([
        count(db.query(countOf, { ownerId, now })),
        pushes(db.query(pageOf, { ownerId, now, limit, offset })),
      ]);
      return { items, total };
    },

    ...attemptOperations(db),

    ...keyOperations(db),

    ...storageOperations(db),

    ...sweepOperations(db, objectsGone),
  };
}

/** A push's files: without their bytes (links), or one with them (a download). */
function fileOperations(db: Db) {
  return {
    filesOf: async (pushId: string): Promise<FileMeta[]> =>
      (await db.query(S.filesOf, { pushId })).map((r) => ({
        id: F.columns.id.parse(r.id),
        filenameCiphertext: F.columns.filenameCiphertext.parse(r.filename_ciphertext),
        contentType: F.columns.contentType.parse(r.content_type),
        size: F.columns.size.parse(r.size),
        objectKey: F.columns.objectKey.parse(r.object_key),
      })),

    async fileOf(pushId: string, fileId: string): Promise<PushFileRow | null> {
      const [row] = await db.query(S.fileOf, { pushId, fileId });
      return row ? F.fromRow(row) : null;
    },
  };
}

/** The sweeper's statements (sweeper.ts runs them). */
function sweepOperations(db: Db, objectsGone?: (keys: string[]) => void) {
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

/** The plain create (storage quotas aside: storageOperations). */
function insertOperations(db: Db) {
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

/** The passphrase attempts of a push (passphrase-gate.ts decides with them). */
function attemptOperations(db: Db) {
  return {
    /**
     * A place to check one passphrase attempt. Failures within `windowMs` count against the push; attempts being
     * checked (younger than `inFlightMs`) hold a place too, so that parallel guesses cannot all slip under the limit,
     * but they never count once decided right.
     */
    async reserveAttempt(
      pushId: string,
      now: Date,
      limit: number,
      windowMs: number,
      inFlightMs: number,
    ): Promise<AttemptReservation> {
      return db.transaction(async (tx) => {
        await tx.query(S.lockPush, { id: pushId });
        const recent = (
          await tx.query(S.attemptsSince, {
            pushId,
            failuresSince: new Date(now.getTime() - windowMs),
            inFlightSince: new Date(now.getTime() - inFlightMs),
          })
        ).map((r) => PASSPHRASE_ATTEMPTS.fromRow(r));
        const failures = recent.filter((r) => r.failed).map((r) => r.attemptedAt);
        if (failures.length >= limit) return { state: 'blocked', failures };
        if (recent.length >= limit) return { state: 'busy' };
        const [reserved] = await tx.query(S.reserveAttempt, { pushId, now });
        return { state: 'reserved', id: String(reserved!.id) };
      });
    },

    async releaseAttempt(id: string): Promise<void> {
      await db.query(S.releaseAttempt, { id });
    },

    /** `within` (given the push as read): in the failure's transaction. */
    async failAttempt(
      id: string,
      push: PushRow,
      by: AuditActor,
      now: Date,
      deadline: Date,
      within?: WithinChange,
    ): Promise<void> {
      const params = { id, pushId: push.id, ...auditParams(by, now), deadline };
      if (!within) return checkInTime(await db.query(S.failAttempt, params));
      await db.transaction(async (tx) => {
        checkInTime(await tx.query(S.failAttempt, params));
        await within(tx, push);
      });
    },
  };
}

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

/** Creates counted against the storage quotas (storage-quota.ts decides with them), and their windows. */
function storageOperations(db: Db) {
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
      const statement = insertFor(files.length, key, 'user', inStatement);
      const params = {
        ...insertParams(push, files, by, deadline, key),
        ...inStatement?.params,
        quotaUser: ownerId,
        quotaNow: now,
        quotaLimit: limit,
      };
      const counted = async (q: Db): Promise<{ row: PushRow; usedBytes: number }> => {
        const rows = await q.query(statement, params);
        const row = insertedPush(rows, push);
        // The user's lock came after the deadline: nothing was written.
        if (rows[0]!.used_bytes === null) throw tooLate();
        const used = Number(rows[0]!.used_bytes);
        if (row) {
          inStatement?.written(q, rows[0]!.writes_result);
          return { row, usedBytes: used + push.storedBytes };
        }
        const [free] = await q.query(S.userBytesFreeAt, { ownerId, now, need: used + push.storedBytes - limit });
        throw new RefusedCreate({ refused: true, usedBytes: used, freeAt: free ? new Date(free.expires_at) : null });
      };
      try {
        if (inStatement || (!writes.ahead && !writes.after)) return await counted(db);
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
          const [counted] = await tx.query(S.userStorageUsed, { ownerId, now, deadline });
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

  /** The first instant at which enough of the user's pushes and open requests expire by time to free `need` bytes. */
  async freeAt(tx: Db, ownerId: string, now: Date, need: number): Promise<Date | null> {
    const [free] = await tx.query(S.userBytesFreeAt, { ownerId, now, need });
    return free ? new Date(free.expires_at) : null;
  },
};

/** Idempotency keys (idempotency.ts decides with them). */
function keyOperations(db: Db) {
  return {
    /**
     * Presents an idempotency key: claimed (no live row had it, or its row had expired or was abandoned in flight
     * before `staleBefore`), or the live row that has it.
     */
    async claimKey(
      ref: KeyRef,
      fingerprint: string,
      now: Date,
      lifetimeMs: number,
      staleBefore: Date,
    ): Promise<KeyClaim> {
      const params = { ...ref, fingerprint, now, expiresAt: new Date(now.getTime() + lifetimeMs), staleBefore };
      // No row: another request inserted the key after this statement's snapshot was taken (the insert waited for
      // it, then yielded), so the statement cannot see it. A new statement can.
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = (await db.query(S.claimKey, params))[0];
        if (row?.outcome === 'claimed') return { outcome: 'claimed' };
        if (row) return { outcome: 'existing', key: K.fromRow(row) };
      }
      throw new ApiError(
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        {
          retryAfterSeconds: 1,
        },
      );
    },

    /** Lets a key go again after a create that failed (a corrected request may use it). */
    async releaseKey(ref: KeyRef): Promise<void> {
      await db.query(S.releaseKey, ref);
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
