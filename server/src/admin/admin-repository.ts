/**
 * The admin console's SQL (issue 41): users found by email and paged, locking, the audit of admin actions
 * (`admin_audit`), and the instance's counts (storage, queues). Nothing here reads a secret's ciphertext: the columns
 * it selects are counts, sizes, emails and times.
 */
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';

export interface AdminUserRow {
  id: string;
  email: string;
  createdAt: Date;
  /** Flagged by `npm run users -- grant-admin` (PWPUSH_ADMIN_EMAILS is applied by the service). */
  adminFlag: boolean;
  lockedAt: Date | null;
  hasPassword: boolean;
  twoFactor: boolean;
  storedBytes: number;
  apiKeys: number;
}

const USER_ROW = defineTable<AdminUserRow>('users', {
  id: column.text('id'),
  email: column.text('email'),
  createdAt: column.date('created_at'),
  adminFlag: column.bool('admin'),
  lockedAt: column.dateOrNull('locked_at'),
  hasPassword: column.bool('has_password'),
  twoFactor: column.bool('two_factor'),
  storedBytes: column.int('stored_bytes'),
  apiKeys: column.int('api_keys'),
});

export interface AdminAuditEntry {
  id: string;
  adminEmail: string;
  action: string;
  targetEmail: string | null;
  /** The workspace acted on (its id and name then), or null: an action on a user. */
  workspaceId: number | null;
  workspaceName: string | null;
  ip: string;
  userAgent: string;
  at: Date;
}

export const ADMIN_AUDIT = defineTable<AdminAuditEntry & { adminId: string | null }>('admin_audit', {
  id: column.bigint('id'),
  adminId: column.uuidOrNull('admin_id'),
  adminEmail: column.text('admin_email'),
  action: column.text('action'),
  targetEmail: column.textOrNull('target_email'),
  workspaceId: column.intOrNull('workspace_id'),
  workspaceName: column.textOrNull('workspace_name'),
  ip: column.text('ip'),
  userAgent: column.text('user_agent'),
  at: column.date('at'),
});

const USER_COLUMNS = `u.id, u.email, u.created_at, u.admin, u.locked_at, u.password_hash is not null as has_password,
  u.totp_enabled_at is not null as two_factor, coalesce(s.bytes, 0) as stored_bytes,
  (select count(*) from api_keys k where k.user_id = u.id) as api_keys`;

const A = {
  /** `pattern`: a LIKE pattern with `\` escaping (the service escapes what the admin typed). */
  search: sql<{ pattern: string; limit: number; offset: number }>(
    `select ${USER_COLUMNS} from users u left join user_storage s on s.user_id = u.id
     where u.email like :pattern escape '\\' order by u.email limit :limit offset :offset`,
  ),
  searchCount: sql<{ pattern: string }, { n: string }>(
    `select count(*) as n from users u where u.email like :pattern escape '\\'`,
  ),
  byId: sql<{ id: string }>(
    `select ${USER_COLUMNS} from users u left join user_storage s on s.user_id = u.id where u.id = cast(:id as uuid)`,
  ),
  adminFacts: sql<{ id: string }, { email: string; admin: boolean; locked: boolean }>(
    'select email, admin, locked_at is not null as locked from users where id = cast(:id as uuid)',
  ),
  lock: sql<{ id: string; now: Date }, { email: string }>(
    `update users set locked_at = :now, session_version = session_version + 1, updated_at = :now
     where id = cast(:id as uuid) and locked_at is null returning email`,
  ),
  unlock: sql<{ id: string; now: Date }, { email: string }>(
    `update users set locked_at = null, updated_at = :now where id = cast(:id as uuid) and locked_at is not null
     returning email`,
  ),
  setAdmin: sql<{ email: string; admin: boolean; now: Date }, { id: string }>(
    'update users set admin = :admin, updated_at = :now where email = :email returning id',
  ),
  locked: sql<{ limit: number }, { email: string; locked_at: unknown }>(
    'select email, locked_at from users where locked_at is not null order by locked_at desc limit :limit',
  ),
  audit: sql<{
    adminId: string;
    adminEmail: string;
    action: string;
    targetEmail: string | null;
    workspaceId: number | null;
    workspaceName: string | null;
    ip: string;
    userAgent: string;
    now: Date;
  }>(
    `insert into admin_audit (admin_id, admin_email, action, target_email, workspace_id, workspace_name, ip,
       user_agent, at)
     values ((select id from users where id = cast(:adminId as uuid)), :adminEmail, :action, :targetEmail,
       cast(:workspaceId as integer), :workspaceName, :ip, :userAgent, :now)`,
  ),
  auditPage: sql<{ limit: number; offset: number }>(
    `select ${ADMIN_AUDIT.list} from admin_audit order by at desc, id desc limit :limit offset :offset`,
  ),
  auditCount: sql<Record<string, never>, { n: string }>('select count(*) as n from admin_audit'),
  storage: sql<
    Record<string, never>,
    { users: string; locked: string; active_pushes: string; active_bytes: string; counted_bytes: string }
  >(
    `select (select count(*) from users) as users,
       (select count(*) from users where locked_at is not null) as locked,
       (select count(*) from pushes where not expired) as active_pushes,
       (select coalesce(sum(stored_bytes), 0) from pushes where not expired) as active_bytes,
       (select coalesce(sum(bytes), 0) from user_storage) as counted_bytes`,
  ),
  anonymousHour: sql<{ since: Date }, { bytes: string; addresses: string }>(
    `select coalesce(sum(bytes), 0) as bytes, count(distinct scope) as addresses from storage_windows
     where window_start >= :since`,
  ),
  topUsers: sql<{ limit: number }, { email: string; bytes: string }>(
    `select u.email, s.bytes from user_storage s join users u on u.id = s.user_id where s.bytes > 0
     order by s.bytes desc, u.email limit :limit`,
  ),
  deliveries: sql<Record<string, never>, { status: string; n: string }>(
    'select status, count(*) as n from webhook_deliveries group by status order by status',
  ),
  jobTable: sql<Record<string, never>, { present: boolean }>("select to_regclass('pgboss.job') is not null as present"),
  jobs: sql<Record<string, never>, { name: string; state: string; n: string }>(
    'select name, state::text as state, count(*) as n from pgboss.job group by name, state order by name, state',
  ),
};

export interface AuditFacts {
  admin: { userId: string; email: string };
  action: string;
  targetEmail: string | null;
  /** The workspace acted on, for an action on a workspace. */
  workspace?: { id: number; name: string };
  ip: string;
  userAgent: string;
}

export function createAdminRepository(db: Db) {
  const n = (value: unknown) => Number(value ?? 0);
  return {
    async search(pattern: string, limit: number, offset: number) {
      const [rows, [count]] = await Promise.all([
        db.query(A.search, { pattern, limit, offset }),
        db.query(A.searchCount, { pattern }),
      ]);
      return { users: rows.map((r) => USER_ROW.fromRow(r)), total: n(count?.n) };
    },
    async user(id: string): Promise<AdminUserRow | null> {
      const [row] = await db.query(A.byId, { id });
      return row ? USER_ROW.fromRow(row) : null;
    },
    async adminFacts(id: string) {
      return (await db.query(A.adminFacts, { id }))[0] ?? null;
    },
    /** The email of the account locked now, or null when it was already locked (or is gone). */
    async lock(tx: Db, id: string, now: Date) {
      return (await tx.query(A.lock, { id, now }))[0]?.email ?? null;
    },
    async unlock(tx: Db, id: string, now: Date) {
      return (await tx.query(A.unlock, { id, now }))[0]?.email ?? null;
    },
    /** Whether an account has the email. */
    async setAdmin(email: string, admin: boolean, now: Date) {
      return (await db.query(A.setAdmin, { email, admin, now })).length > 0;
    },
    async locked(limit: number) {
      const rows = await db.query(A.locked, { limit });
      return rows.map((r) => ({ email: r.email, lockedAt: column.date('locked_at').parse(r.locked_at) }));
    },
    async audit(tx: Db, facts: AuditFacts, now: Date) {
      await tx.query(A.audit, {
        adminId: facts.admin.userId,
        adminEmail: facts.admin.email,
        action: facts.action,
        targetEmail: facts.targetEmail,
        workspaceId: facts.workspace?.id ?? null,
        workspaceName: facts.workspace?.name ?? null,
        ip: facts.ip.slice(0, 255),
        userAgent: facts.userAgent.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255),
        now,
      });
    },
    async auditPage(limit: number, offset: number) {
      const [rows, [count]] = await Promise.all([db.query(A.auditPage, { limit, offset }), db.query(A.auditCount, {})]);
      return { entries: rows.map((r) => ADMIN_AUDIT.fromRow(r)), total: n(count?.n) };
    },
    async storage(now: Date) {
      const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
      const [[totals], [anonymous], top] = await Promise.all([
        db.query(A.storage, {}),
        db.query(A.anonymousHour, { since: hour }),
        db.query(A.topUsers, { limit: 20 }),
      ]);
      return {
        users: n(totals?.users),
        lockedUsers: n(totals?.locked),
        activePushes: n(totals?.active_pushes),
        activeBytes: n(totals?.active_bytes),
        countedUserBytes: n(totals?.counted_bytes),
        anonymousBytesThisHour: n(anonymous?.bytes),
        anonymousAddressesThisHour: n(anonymous?.addresses),
        topUsers: top.map((r) => ({ email: r.email, bytes: n(r.bytes) })),
      };
    },
    async queues() {
      const deliveries = (await db.query(A.deliveries, {})).map((r) => ({ status: r.status, count: n(r.n) }));
      const present = (await db.query(A.jobTable, {}))[0]?.present === true;
      const jobs = present
        ? (await db.query(A.jobs, {})).map((r) => ({ queue: r.name, state: r.state, count: n(r.n) }))
        : null;
      return { deliveries, jobs };
    },
  };
}

export type AdminRepository = ReturnType<typeof createAdminRepository>;
