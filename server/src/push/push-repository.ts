/**
 * Every statement about pushes, their files, their audit entries and their passphrase attempts (push-tables.ts). The
 * service above keeps the rules; this module keeps the SQL, its rows and their mapping. Whatever SQL can guarantee
 * lives here: a counting view is claimed by one conditional UPDATE (never read-then-write), the expiry that follows
 * it happens in the same statement (in the same transaction for file pushes), and the passphrase limit is counted
 * in a table every instance shares. The hot paths are one statement each (create; the claim of a view), audit entry
 * included, prepared once per connection.
 *
 * Statements list their columns rather than `*`: a prepared `*` whose expansion changes (another instance migrating
 * a column in during a rolling deploy) fails with "cached plan must not change result type".
 */
import { sql, type Db } from '../db/sql.js';
import {
  AUDIT_ENTRIES,
  type AuditKind,
  type AuditRow,
  PASSPHRASE_ATTEMPTS,
  PUSH_FILES,
  type PushFileRow,
  PUSHES,
  type PushRow,
} from './push-tables.js';

/** Who did something to a push, for its audit entry. */
export interface AuditActor {
  userId: string | null;
  ip: string;
  userAgent: string;
  referrer: string;
}

/** A file without its bytes. */
export type FileMeta = Pick<PushFileRow, 'id' | 'filenameCiphertext' | 'contentType' | 'size'>;

export interface PageOf<T> {
  items: T[];
  total: number;
}

const P = PUSHES;
const F = PUSH_FILES;
const A = AUDIT_ENTRIES;
const BATCH = 500;
const FIELD_MAX = 255;

/** The audit columns are varchar(255). */
function cut(value: string | null | undefined): string {
  if (!value) return '';
  return value.length > FIELD_MAX ? value.slice(0, FIELD_MAX) : value;
}

type AuditParams = { ip: string; userAgent: string; referrer: string; userId: string | null; now: Date };

function auditParams(actor: AuditActor, now: Date): AuditParams {
  return { ip: cut(actor.ip), userAgent: cut(actor.userAgent), referrer: cut(actor.referrer), userId: actor.userId, now };
}

type Total = { total: string | number };

const ERASE_SECRETS = 'payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null';
const AUDIT_COLUMNS = 'push_id, kind, ip, user_agent, referrer, user_id, created_at';

const S = {
  findByToken: sql<{ urlToken: string }>(`select ${P.list} from pushes where url_token = :urlToken`, { prepare: true }),
  findById: sql<{ id: string }>(`select ${P.list} from pushes where id = :id`),
  /** The push and its `creation` audit entry in one statement (a data-modifying CTE is atomic on its own). */
  insertWithCreation: sql<PushRow & AuditParams>(
    `with push as (
       insert into pushes (${P.list}) values (${P.placeholders}) returning ${P.list}
     ), creation as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select id, 'creation', :ip, :userAgent, :referrer, :userId, :now from push
     )
     select * from push`,
    { prepare: true },
  ),
  insertFile: sql<PushFileRow>(`insert into push_files (${F.list}) values (${F.placeholders})`),
  /**
   * The claim of a push without files: succeeds for at most `expire_after_views` callers, on any instance, writes
   * the `view` audit entry and, on the last view, expires the push and erases its secrets, as one statement.
   */
  claimView: sql<{ id: string } & AuditParams>(
    `with won as (
       update pushes set views_used = views_used + 1, updated_at = :now,
         expired = views_used + 1 >= expire_after_views,
         expired_on = case when views_used + 1 >= expire_after_views then :now else expired_on end,
         payload_ciphertext = case when views_used + 1 >= expire_after_views then null else payload_ciphertext end,
         note_ciphertext = case when views_used + 1 >= expire_after_views then null else note_ciphertext end,
         passphrase_hash = case when views_used + 1 >= expire_after_views then null else passphrase_hash end
       where id = :id and not expired and views_used < expire_after_views and expires_at > :now
       returning ${P.list}
     ), viewed as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select id, 'view', :ip, :userAgent, :referrer, :userId, :now from won
     )
     select * from won`,
    { prepare: true },
  ),
  /** The claim of a file push (its transaction also writes the audit entry and reads the files). */
  claimFileView: sql<{ id: string; now: Date }>(
    `update pushes set views_used = views_used + 1, updated_at = :now
     where id = :id and not expired and views_used < expire_after_views and expires_at > :now
     returning ${P.list}`,
  ),
  expireAfterLastView: sql<{ id: string; now: Date }>(
    `update pushes set expired = true, expired_on = :now, updated_at = :now, ${ERASE_SECRETS} where id = :id`,
  ),
  /** Marks a push past its time as expired (as of its expires_at) and erases its secrets; idempotent. */
  expireByTime: sql<{ id: string; now: Date }>(
    `update pushes set expired = true, expired_on = expires_at, updated_at = :now, ${ERASE_SECRETS}
     where id = :id and not expired and expires_at <= :now returning ${P.list}`,
  ),
  expireByRequest: sql<{ id: string; now: Date }>(
    `update pushes set expired = true, deleted = true, expired_on = :now, updated_at = :now, ${ERASE_SECRETS}
     where id = :id and not expired and expires_at > :now returning ${P.list}`,
  ),
  deleteFilesOf: sql<{ pushId: string }>('delete from push_files where push_id = :pushId'),
  insertAudit: sql<{ pushId: string; kind: AuditKind } & AuditParams>(
    `insert into audit_entries (${AUDIT_COLUMNS}) values (:pushId, :kind, :ip, :userAgent, :referrer, :userId, :now)`,
  ),
  /** At most one `failed_view` per push, client address and window. */
  insertFailedView: sql<{ pushId: string; since: Date } & AuditParams>(
    `insert into audit_entries (${AUDIT_COLUMNS})
     select :pushId, 'failed_view', :ip, :userAgent, :referrer, :userId, :now
     where not exists (
       select 1 from audit_entries where push_id = :pushId and kind = 'failed_view' and ip = :ip and created_at > :since)`,
  ),
  filesOf: sql<{ pushId: string }>(
    'select id, filename_ciphertext, content_type, size from push_files where push_id = :pushId order by position',
  ),
  fileOf: sql<{ pushId: string; fileId: string }>(`select ${F.list} from push_files where id = :fileId and push_id = :pushId`),
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
  reserveAttempt: sql<{ pushId: string; now: Date }, { id: string }>(
    'insert into passphrase_attempts (push_id, attempted_at) values (:pushId, :now) returning id',
  ),
  releaseAttempt: sql<{ id: string }>('delete from passphrase_attempts where id = :id'),
  attemptsSince: sql<{ pushId: string; since: Date }>(
    `select ${PASSPHRASE_ATTEMPTS.list} from passphrase_attempts
     where push_id = :pushId and attempted_at > :since order by attempted_at, id`,
  ),
  // The sweeper: batches of rows picked with FOR UPDATE SKIP LOCKED, so any number of instances may sweep at once.
  sweepPastTime: sql<{ now: Date }>(
    `update pushes set expired = true, expired_on = expires_at, updated_at = :now, ${ERASE_SECRETS}
     where id in (
       select id from pushes where not expired and expires_at <= :now
       order by expires_at limit ${BATCH} for update skip locked)
     returning id`,
  ),
  sweepLapsedFiles: sql<{ cutoff: Date }>(
    `delete from push_files where id in (
       select f.id from push_files f join pushes p on p.id = f.push_id
       where p.expired and p.expired_on <= :cutoff
       limit ${BATCH} for update of f skip locked)
     returning id`,
  ),
  forgetAttempts: sql<{ before: Date }>('delete from passphrase_attempts where attempted_at < :before'),
  purgeExpired: sql<{ cutoff: Date }>(
    `delete from pushes where id in (
       select id from pushes where expired and expired_on <= :cutoff
       limit ${BATCH} for update skip locked)
     returning id`,
  ),
};

async function count(rows: Promise<{ total: string | number }[]>): Promise<number> {
  return Number((await rows)[0]?.total ?? 0);
}

export type PushRepository = ReturnType<typeof createPushRepository>;

export function createPushRepository(db: Db) {
  const pushes = async (rows: Promise<Record<string, unknown>[]>): Promise<PushRow[]> => (await rows).map((r) => P.fromRow(r));
  const first = async (rows: Promise<Record<string, unknown>[]>): Promise<PushRow | null> => (await pushes(rows))[0] ?? null;

  async function findById(id: string, on: Db = db): Promise<PushRow | null> {
    return first(on.query(S.findById, { id }));
  }

  return {
    async findByToken(urlToken: string): Promise<PushRow | null> {
      return first(db.query(S.findByToken, { urlToken }));
    },

    findById,

    /**
     * A new push with its `creation` audit entry: one statement when it has no files, else one transaction that also
     * stores the files (each already encrypted).
     */
    async insert(push: PushRow, files: PushFileRow[], by: AuditActor): Promise<PushRow> {
      const params = { ...push, ...auditParams(by, push.createdAt) };
      if (files.length === 0) return (await first(db.query(S.insertWithCreation, params)))!;
      return db.transaction(async (tx) => {
        const row = (await first(tx.query(S.insertWithCreation, params)))!;
        for (const file of files) await tx.query(S.insertFile, file);
        return row;
      });
    },

    /** Claims a view of a push without files; null when none is left (or the time ran out). */
    async claimView(id: string, by: AuditActor, now: Date): Promise<PushRow | null> {
      return first(db.query(S.claimView, { id, ...auditParams(by, now) }));
    },

    /**
     * Claims a view of a file push in one transaction: the claim, its audit entry, then `inspect` with the claimed row
     * and the file list (the caller decrypts there, so a missing key rolls the claim back instead of burning a view),
     * then, on the last view, the expiry. File bytes stay until the links issued lapse.
     */
    async claimFileView<T>(id: string, by: AuditActor, now: Date, inspect: (won: PushRow, files: FileMeta[]) => T): Promise<{ won: PushRow; result: T } | null> {
      return db.transaction(async (tx) => {
        const won = await first(tx.query(S.claimFileView, { id, now }));
        if (!won) return null;
        await tx.query(S.insertAudit, { pushId: id, kind: 'view', ...auditParams(by, now) });
        const result = inspect(won, await filesOf(tx, id));
        if (won.viewsUsed >= won.expireAfterViews) await tx.query(S.expireAfterLastView, { id, now });
        return { won, result };
      });
    },

    /** Expires a push past its time (idempotent; the sweeper does the same); returns its current row. */
    async expireByTime(row: PushRow, now: Date): Promise<PushRow> {
      return (await first(db.query(S.expireByTime, { id: row.id, now }))) ?? (await findById(row.id)) ?? row;
    },

    /** Expire by request: flag, erase, drop the files and audit `expire`, together; null when it was already expired. */
    async expireByRequest(id: string, by: AuditActor, now: Date): Promise<PushRow | null> {
      return db.transaction(async (tx) => {
        const updated = await first(tx.query(S.expireByRequest, { id, now }));
        if (!updated) return null;
        await tx.query(S.deleteFilesOf, { pushId: id });
        await tx.query(S.insertAudit, { pushId: id, kind: 'expire', ...auditParams(by, now) });
        return updated;
      });
    },

    async recordAudit(pushId: string, kind: AuditKind, by: AuditActor, now: Date): Promise<void> {
      await db.query(S.insertAudit, { pushId, kind, ...auditParams(by, now) });
    },

    async recordFailedView(pushId: string, by: AuditActor, now: Date, dedupeMs: number): Promise<void> {
      await db.query(S.insertFailedView, { pushId, since: new Date(now.getTime() - dedupeMs), ...auditParams(by, now) });
    },

    filesOf: (pushId: string) => filesOf(db, pushId),

    async fileOf(pushId: string, fileId: string): Promise<PushFileRow | null> {
      const [row] = await db.query(S.fileOf, { pushId, fileId });
      return row ? F.fromRow(row) : null;
    },

    async auditPage(pushId: string, limit: number, offset: number): Promise<PageOf<AuditRow>> {
      const [total, rows] = await Promise.all([
        count(db.query(S.auditCount, { pushId })),
        db.query(S.auditPage, { pushId, limit, offset }),
      ]);
      return { items: rows.map((r) => A.fromRow(r)), total };
    },

    async ownerPage(state: 'active' | 'expired', ownerId: string, now: Date, limit: number, offset: number): Promise<PageOf<PushRow>> {
      const [countOf, pageOf] = state === 'active' ? [S.activeCount, S.activePage] : [S.expiredCount, S.expiredPage];
      const [total, items] = await Promise.all([
        count(db.query(countOf, { ownerId, now })),
        pushes(db.query(pageOf, { ownerId, now, limit, offset })),
      ]);
      return { items, total };
    },

    /** Reserves an attempt row (released again by `releaseAttempt`) and returns it with the other recent attempts. */
    async reserveAttempt(pushId: string, now: Date, windowMs: number): Promise<{ id: string; others: Date[] }> {
      const [reserved] = await db.query(S.reserveAttempt, { pushId, now });
      const recent = (await db.query(S.attemptsSince, { pushId, since: new Date(now.getTime() - windowMs) })).map((r) =>
        PASSPHRASE_ATTEMPTS.fromRow(r),
      );
      const id = String(reserved!.id);
      return { id, others: recent.filter((r) => r.id !== id).map((r) => r.attemptedAt) };
    },

    async releaseAttempt(id: string): Promise<void> {
      await db.query(S.releaseAttempt, { id });
    },

    /** One sweep step: pushes past their time expired and erased (in batches); how many. */
    async sweepPastTime(now: Date): Promise<number> {
      return drain(() => db.query(S.sweepPastTime, { now }));
    },

    /** File bytes of pushes expired before `cutoff`; how many files. */
    async sweepLapsedFiles(cutoff: Date): Promise<number> {
      return drain(() => db.query(S.sweepLapsedFiles, { cutoff }));
    },

    async forgetAttempts(before: Date): Promise<void> {
      await db.query(S.forgetAttempts, { before });
    },

    /** Deletes expired pushes (with their audit and files) expired before `cutoff`; how many. */
    async purgeExpired(cutoff: Date): Promise<number> {
      return drain(() => db.query(S.purgeExpired, { cutoff }));
    },
  };
}

async function filesOf(on: Db, pushId: string): Promise<FileMeta[]> {
  return (await on.query(S.filesOf, { pushId })).map((r) => ({
    id: F.columns.id.parse(r.id),
    filenameCiphertext: F.columns.filenameCiphertext.parse(r.filename_ciphertext),
    contentType: F.columns.contentType.parse(r.content_type),
    size: F.columns.size.parse(r.size),
  }));
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
