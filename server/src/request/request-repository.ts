/**
 * Every statement about requests, the files of their asks and their audit entries (request-tables.ts). As in the
 * push area (../push/push-repository.ts): a create is one statement with its files and its `creation` entry, every
 * move of a state is one conditional UPDATE with its audit entry (never read-then-write), and every write made on
 * behalf of a request carries its deadline and changes nothing once the database's clock has passed it.
 *
 * A pending request's attachments count against its requester's storage quota (triggers keep `user_storage`), and a create
 * is counted under the user's storage lock, with the user's open requests (issue 45). Every move out of `pending`
 * (answered, revoked, expired by a read or by the sweeper) erases the ask and its files in its own statement: what a
 * request stores once it is no longer open is what it no longer counts, nothing more.
 */
import { ApiError } from '@secret-push/rules';
import { sql, type Db, type Statement } from '../db/sql.js';
import { userStorage, type AuditActor, type PageOf } from '../push/push-repository.js';
import {
  REQUEST_AUDIT_ENTRIES,
  REQUEST_FILES,
  REQUESTS,
  type RequestAuditKind,
  type RequestAuditRow,
  type RequestFileRow,
  type RequestRow,
} from './request-tables.js';

const R = REQUESTS;
const F = REQUEST_FILES;
const A = REQUEST_AUDIT_ENTRIES;
/** Requests a sweep expires per statement (and per transaction). */
export const SWEEP_BATCH = 500;
const FIELD_MAX = 255;

type InTime = { in_time: boolean };
type Total = { total: string | number };
type AuditParams = { ip: string; userAgent: string; referrer: string; userId: string | null; now: Date };

const GUARD = 'guard as (select clock_timestamp() < :deadline as in_time)';
const IN_TIME = '(select in_time from guard)';
const AUDIT_COLUMNS = 'request_id, kind, ip, user_agent, referrer, user_id, created_at';
/** Still open: pending and within its time. */
const OPEN = `state = 'pending' and expires_at > :now`;
/** What a move out of `pending` sets besides its own columns: the ask is erased (its files by ERASE_FILES). */
const ERASE_ASK = 'ask_ciphertext = null';
/** The files of the requests a move's `moved` CTE returns, deleted in the move's statement. */
const ERASE_FILES =
  'erased as (delete from request_files where request_id in (select id from moved) returning request_id, object_key)';
/** The object-store keys of a moved request's erased files (their objects are deleted after the move commits). */
const ERASED_OBJECTS = `(select array_agg(e.object_key) from erased e
  where e.request_id = moved.id and e.object_key is not null) as erased_objects`;
/** The quota a limit that is off is checked against (user_storage_used then only takes the lock). */
const NO_QUOTA = Number.MAX_SAFE_INTEGER;
/** The states a list of active requests shows (a pending request past its time is expired). */
const ACTIVE = `(state = 'fulfilled' or (${OPEN}))`;

/** A workspace's requests, or one member's of them (`ownerId` null: every one). */
const IN_WORKSPACE = 'workspace_id = :workspaceId::int and (:ownerId::uuid is null or user_id = :ownerId::uuid)';
type WorkspaceScope = { workspaceId: number; ownerId: string | null; now: Date };

const cut = (value: string | null | undefined): string =>
  !value ? '' : value.length > FIELD_MAX ? value.slice(0, FIELD_MAX) : value;

function auditParams(actor: AuditActor, now: Date): AuditParams {
  return {
    ip: cut(actor.ip),
    userAgent: cut(actor.userAgent),
    referrer: cut(actor.referrer),
    userId: actor.userId,
    now,
  };
}

const tooLate = () => new ApiError('service_unavailable');

/**
 * A guarded move: the state changes (with its audit entry) only when `where` holds; the row after, or null. A move out
 * of `pending` (`closes`) erases the ask and its files in the same statement.
 */
function move(
  set: string,
  where: string,
  kind: RequestAuditKind,
  closes: boolean,
): Statement<Record<string, unknown>, InTime & Record<string, unknown>> {
  return sql(
    `with ${GUARD}, moved as (
       update requests set ${set}${closes ? `, ${ERASE_ASK}` : ''}, updated_at = :now
       where ${where} and ${IN_TIME} returning ${R.list}
     ), logged as (
       insert into request_audit_entries (${AUDIT_COLUMNS})
       select id, '${kind}', :ip, :userAgent, :referrer, :userId, :now from moved
     )${closes ? `, ${ERASE_FILES}` : ''}
     select guard.in_time, moved.*${closes ? `, ${ERASED_OBJECTS}` : ''} from guard left join moved on true`,
  );
}

/** A create: the request, its `creation` entry and its files, as one statement (one text per file count). */
function insertStatement(files: number): Statement<Record<string, unknown>, InTime & Record<string, unknown>> {
  const fileCtes = Array.from(
    { length: files },
    (_, i) =>
      `, file${i} as (insert into request_files (${F.list}) select ${F.placeholders.replace(/:(\w+)/g, `:f${i}_$1`)} from request)`,
  ).join('');
  return sql(
    `with ${GUARD}, request as (
       insert into requests (${R.list}) select ${R.placeholders} where ${IN_TIME} returning id
     ), creation as (
       insert into request_audit_entries (${AUDIT_COLUMNS}) select id, 'creation', :ip, :userAgent, :referrer, :userId, :now from request
     )${fileCtes}
     select guard.in_time, request.id from guard left join request on true`,
  );
}
const inserts = new Map<number, ReturnType<typeof insertStatement>>();
function insertFor(files: number) {
  let statement = inserts.get(files);
  if (!statement) inserts.set(files, (statement = insertStatement(files)));
  return statement;
}

const S = {
  findByToken: sql<{ urlToken: string }>(`select ${R.list} from requests where url_token = :urlToken`),
  lockById: sql<{ id: string }>(`select ${R.list} from requests where id = :id for update`),
  filesOf: sql<{ requestId: string }>(
    `select ${F.list} from request_files where request_id = :requestId order by position`,
  ),
  fulfil: move(
    `state = 'fulfilled', answer_push_id = :pushId, answer_url_token = :pushToken, sealed_key = :sealedKey,
     fulfilled_at = :now`,
    `id = :id and ${OPEN}`,
    'fulfilled',
    true,
  ),
  collect: move(
    `state = 'collected', collected_at = :now`,
    `answer_push_id = :pushId and state = 'fulfilled'`,
    'collected',
    false,
  ),
  revoke: move(`state = 'revoked', closed_at = :now`, `id = :id and ${OPEN}`, 'revoked', true),
  /** A pending request past its time: expired as of its expires_at (idempotent, any time; the sweeper does the same). */
  expireByTime: sql<{ id: string; now: Date }>(
    `with moved as (
       update requests set state = 'expired', closed_at = expires_at, ${ERASE_ASK}, updated_at = :now
       where id = :id and state = 'pending' and expires_at <= :now returning ${R.list}
     ), logged as (
       insert into request_audit_entries (${AUDIT_COLUMNS}) select id, 'expired', '', '', '', null, expires_at from moved
     ), ${ERASE_FILES}
     select moved.*, ${ERASED_OBJECTS} from moved`,
  ),
  sweepPastTime: sql<{ now: Date }>(
    `with moved as (
       update requests set state = 'expired', closed_at = expires_at, ${ERASE_ASK}, updated_at = :now
       where id in (
         select id from requests where state = 'pending' and expires_at <= :now
         order by expires_at limit ${SWEEP_BATCH} for update skip locked)
       returning ${R.list}
     ), logged as (
       insert into request_audit_entries (${AUDIT_COLUMNS}) select id, 'expired', '', '', '', null, expires_at from moved
     ), ${ERASE_FILES}
     select moved.*, ${ERASED_OBJECTS} from moved`,
  ),
  /** A user's open requests and the instant the first of them expires (requests_owner_open_idx). */
  openOf: sql<{ ownerId: string; now: Date }, { total: string | number; first: Date | string | null }>(
    `select count(*) as total, min(expires_at) as first from requests
     where user_id = :ownerId and state = 'pending' and expires_at > :now`,
  ),
  activeCount: sql<{ ownerId: string; now: Date }, Total>(
    `select count(*) as total from requests where user_id = :ownerId and workspace_id is null and ${ACTIVE}`,
  ),
  activePage: sql<{ ownerId: string; now: Date; limit: number; offset: number }>(
    `select ${R.list} from requests where user_id = :ownerId and workspace_id is null and ${ACTIVE}
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  expiredCount: sql<{ ownerId: string; now: Date }, Total>(
    `select count(*) as total from requests where user_id = :ownerId and workspace_id is null and not ${ACTIVE}`,
  ),
  expiredPage: sql<{ ownerId: string; now: Date; limit: number; offset: number }>(
    `select ${R.list} from requests where user_id = :ownerId and workspace_id is null and not ${ACTIVE}
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  /** A workspace's requests (every one, or one member's when `ownerId` is set), as the personal lists above. */
  workspaceActiveCount: sql<WorkspaceScope, Total>(
    `select count(*) as total from requests where ${IN_WORKSPACE} and ${ACTIVE}`,
  ),
  workspaceActivePage: sql<WorkspaceScope & { limit: number; offset: number }>(
    `select ${R.list} from requests where ${IN_WORKSPACE} and ${ACTIVE}
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  workspaceExpiredCount: sql<WorkspaceScope, Total>(
    `select count(*) as total from requests where ${IN_WORKSPACE} and not ${ACTIVE}`,
  ),
  workspaceExpiredPage: sql<WorkspaceScope & { limit: number; offset: number }>(
    `select ${R.list} from requests where ${IN_WORKSPACE} and not ${ACTIVE}
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  auditCount: sql<{ requestId: string }, Total>(
    'select count(*) as total from request_audit_entries where request_id = :requestId',
  ),
  auditPage: sql<{ requestId: string; limit: number; offset: number }>(
    `select ${A.list} from request_audit_entries where request_id = :requestId
     order by created_at, id limit :limit offset :offset`,
  ),
};

function fileParams(files: RequestFileRow[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  files.forEach((file, i) => {
    for (const [key, value] of Object.entries(file)) out[`f${i}_${key}`] = value;
  });
  return out;
}

/** The row of a guarded move, null when nothing moved; throws when the statement came after the deadline. */
function moved(rows: (InTime & Record<string, unknown>)[]): RequestRow | null {
  const row = rows[0];
  if (!row?.in_time) throw tooLate();
  return row.id === null || row.id === undefined ? null : R.fromRow(row);
}

/**
 * A move out of `pending`: the row after it, and the object-store keys of the files it erased (none when the bytes
 * were in PostgreSQL), which the caller deletes from the store once the move has committed.
 */
export interface ClosedRequest {
  row: RequestRow;
  erasedObjects: string[];
}

function closed(row: Record<string, unknown>): ClosedRequest {
  const keys = row.erased_objects;
  return { row: R.fromRow(row), erasedObjects: Array.isArray(keys) ? keys.map(String) : [] };
}

/** The move of a guarded closing statement, null when nothing moved; throws when it came after the deadline. */
function closedBy(rows: (InTime & Record<string, unknown>)[]): ClosedRequest | null {
  return moved(rows) ? closed(rows[0]!) : null;
}

async function count(rows: Promise<Total[]>): Promise<number> {
  return Number((await rows)[0]?.total ?? 0);
}

/** The limits a create is counted against: the requester's storage quota and open requests (null: off). */
export interface CreateLimits {
  bytes: number | null;
  open: number | null;
}

/** A create counted against its limits: stored, with where it left them; or refused by one, with what it found. */
export type CountedCreate =
  | { stored: true; usedBytes: number; open: number }
  | { stored: false; refusedBy: 'bytes'; usedBytes: number; freeAt: Date | null }
  | { stored: false; refusedBy: 'open'; open: number; freeAt: Date | null };

/** How a request moves when its answer is stored (in the answer's transaction). */
export interface Fulfilment {
  id: string;
  pushId: string;
  pushToken: string;
  sealedKey: string | null;
}

export type RequestRepository = ReturnType<typeof createRequestRepository>;

export function createRequestRepository(db: Db) {
  const rows = async (q: Promise<Record<string, unknown>[]>): Promise<RequestRow[]> =>
    (await q).map((r) => R.fromRow(r));
  return {
    /** Runs `fn` in one transaction: a move and the work that follows it (../request/request-service.ts). */
    transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
      return db.transaction(fn);
    },

    /**
     * A create in `tx`, counted against `limits` when either is on: the user's storage lock (held until `tx` ends, so a
     * user's creates of pushes and requests are counted one after the other on any instance) and what the user holds,
     * then the user's open requests (read after the lock, so every create that held it before is seen), then the
     * request, its files and its `creation` entry. A refused create writes nothing.
     */
    async insertCounted(
      tx: Db,
      request: RequestRow,
      files: RequestFileRow[],
      by: AuditActor,
      deadline: Date,
      limits: CreateLimits,
    ): Promise<CountedCreate> {
      const { ownerId, createdAt: now, storedBytes, workspaceId } = request;
      let usedBytes = 0;
      let open = 0;
      if (limits.bytes !== null || limits.open !== null) {
        // A workspace's request counts against the workspace's storage (its lock), a personal one its requester's.
        const quota = limits.bytes ?? NO_QUOTA;
        const used =
          workspaceId === null
            ? await userStorage.lock(tx, ownerId, now, deadline, storedBytes, quota)
            : await userStorage.lockWorkspace(tx, workspaceId, now, deadline, storedBytes, quota);
        if (used === null) throw tooLate();
        usedBytes = used;
        if (limits.bytes !== null && used + storedBytes > limits.bytes) {
          const freeAt =
            workspaceId === null ? await userStorage.freeAt(tx, ownerId, now, used + storedBytes - limits.bytes) : null;
          return { stored: false, refusedBy: 'bytes', usedBytes: used, freeAt };
        }
      }
      if (limits.open !== null) {
        const [row] = await tx.query(S.openOf, { ownerId, now });
        open = Number(row?.total ?? 0);
        if (open >= limits.open) {
          const freeAt = row?.first ? new Date(row.first) : null;
          return { stored: false, refusedBy: 'open', open, freeAt };
        }
      }
      const [row] = await tx.query(insertFor(files.length), {
        ...request,
        ...auditParams(by, now),
        deadline,
        ...fileParams(files),
      });
      if (!row?.in_time) throw tooLate();
      return { stored: true, usedBytes: usedBytes + storedBytes, open: open + 1 };
    },

    async findByToken(urlToken: string): Promise<RequestRow | null> {
      return (await rows(db.query(S.findByToken, { urlToken })))[0] ?? null;
    },

    async filesOf(requestId: string): Promise<RequestFileRow[]> {
      return (await db.query(S.filesOf, { requestId })).map((r) => F.fromRow(r));
    },

    /** The request's row, locked until the transaction `tx` ends (an answer's claim). */
    async lock(tx: Db, id: string): Promise<RequestRow | null> {
      return (await rows(tx.query(S.lockById, { id })))[0] ?? null;
    },

    /** pending → fulfilled with its `fulfilled` entry, inside the answer's transaction; null when it was not open. */
    async fulfil(tx: Db, f: Fulfilment, by: AuditActor, now: Date, deadline: Date): Promise<ClosedRequest | null> {
      return closedBy(await tx.query(S.fulfil, { ...f, ...auditParams(by, now), deadline }));
    },

    /** fulfilled → collected when the answer's push is retrieved the first time; null when it was not the first. */
    async collect(tx: Db, pushId: string, by: AuditActor, now: Date, deadline: Date): Promise<RequestRow | null> {
      return moved(await tx.query(S.collect, { pushId, ...auditParams(by, now), deadline }));
    },

    async revoke(tx: Db, id: string, by: AuditActor, now: Date, deadline: Date): Promise<ClosedRequest | null> {
      return closedBy(await tx.query(S.revoke, { id, ...auditParams(by, now), deadline }));
    },

    /** Settles a pending request past its time (its `expired` entry dated at its expires_at); the move, if any. */
    async expireByTime(tx: Db, id: string, now: Date): Promise<ClosedRequest | null> {
      const [row] = await tx.query(S.expireByTime, { id, now });
      return row ? closed(row) : null;
    },

    /** One sweep batch (at most SWEEP_BATCH): pending requests past their time, expired; the moves. */
    async sweepPastTime(tx: Db, now: Date): Promise<ClosedRequest[]> {
      return (await tx.query(S.sweepPastTime, { now })).map(closed);
    },

    async ownerPage(
      state: 'active' | 'expired',
      ownerId: string,
      now: Date,
      limit: number,
      offset: number,
    ): Promise<PageOf<RequestRow>> {
      const [countOf, pageOf] = state === 'active' ? [S.activeCount, S.activePage] : [S.expiredCount, S.expiredPage];
      const [total, items] = await Promise.all([
        count(db.query(countOf, { ownerId, now })),
        rows(db.query(pageOf, { ownerId, now, limit, offset })),
      ]);
      return { items, total };
    },

    /** One page of a workspace's requests: every one, or those of `ownerId` (a member sees their own). */
    async workspacePage(
      state: 'active' | 'expired',
      workspaceId: number,
      ownerId: string | null,
      now: Date,
      limit: number,
      offset: number,
    ): Promise<PageOf<RequestRow>> {
      const [countOf, pageOf] =
        state === 'active'
          ? [S.workspaceActiveCount, S.workspaceActivePage]
          : [S.workspaceExpiredCount, S.workspaceExpiredPage];
      const scope = { workspaceId, ownerId, now };
      const [total, items] = await Promise.all([
        count(db.query(countOf, scope)),
        rows(db.query(pageOf, { ...scope, limit, offset })),
      ]);
      return { items, total };
    },

    async auditPage(requestId: string, limit: number, offset: number): Promise<PageOf<RequestAuditRow>> {
      const [total, items] = await Promise.all([
        count(db.query(S.auditCount, { requestId })),
        db.query(S.auditPage, { requestId, limit, offset }),
      ]);
      return { items: items.map((r) => A.fromRow(r)), total };
    },
  };
}
