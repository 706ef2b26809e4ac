/**
 * The admin console's operations (issue 41, docs/admin.md): who is an administrator, the users (found by email,
 * paged; locked, unlocked, their second factor reset, deleted), the instance's storage, queues, settings and security
 * events, and the audit of every admin action (`admin_audit`). The pages (web/routes/admin-pages.ts) check the
 * session, the CSRF token and the second factor; this service checks that the caller is an administrator, again, on
 * every call, and writes the audit entry of each action.
 *
 * No secret's payload is reachable from here: the service holds no keyring, and reads pushes only through `list` and
 * `expire` (the owner's records, to expire a deleted user's pushes), whose results it never returns.
 */
import { ApiError } from '@secret-push/rules';
import type { AccountService } from '../account/account-service.js';
import { securityEvents, type SecurityEvent } from '../account/security-events.js';
import type { TwoFactorService } from '../account/two-factor.js';
import type { Settings } from '../config/settings.js';
import type { Db } from '../db/sql.js';
import type { PushService } from '../push/push-service.js';
import type { UserService } from '../user/user-service.js';
import {
  createAdminRepository,
  type AdminAuditEntry,
  type AdminRepository,
  type AdminUserRow,
} from './admin-repository.js';
import { createAdminWorkspaces, type AdminWorkspaces } from './admin-workspaces.js';
import { settingsInForce, type SettingInForce } from './settings-in-force.js';
import { deleteWorkspacesAlone, requireDeletableUser } from './user-workspaces.js';
import type { WorkspaceDeletion } from '../workspace/workspace-deletion.js';

/** Who acts in the console, and from where (the audit's "who" and "from where"). */
export interface AdminActor {
  userId: string;
  ip: string;
  userAgent: string;
}

export type AdminAction = 'lock' | 'unlock' | 'reset_two_factor' | 'delete';

export interface AdminUser extends Omit<AdminUserRow, 'adminFlag'> {
  /** Flagged, or listed in PWPUSH_ADMIN_EMAILS. */
  admin: boolean;
  adminBy: 'flag' | 'setting' | null;
}

/** Users a page of the console lists. */
export const USERS_PER_PAGE = 50;
/** Rows of a page of events or audit entries. */
export const ROWS_PER_PAGE = 100;
/** The longest search the console takes (an email is at most 320 characters). */
const MAX_SEARCH = 320;
/** The last page the console pages to (offsets past it cost the database for nothing). */
export const MAX_PAGE = 10_000;

export interface AdminService {
  /** Whether the user is an administrator: flagged, or listed in PWPUSH_ADMIN_EMAILS, and not locked. */
  isAdmin(userId: string): Promise<boolean>;
  users(by: AdminActor, search: string, page: number): Promise<{ users: AdminUser[]; total: number }>;
  user(by: AdminActor, userId: string): Promise<AdminUser>;
  /** One action on one user, with its audit entry; the target's email. */
  act(by: AdminActor, action: AdminAction, userId: string, now?: Date): Promise<string>;
  storage(by: AdminActor, now?: Date): Promise<Awaited<ReturnType<AdminRepository['storage']>>>;
  queues(by: AdminActor): Promise<Awaited<ReturnType<AdminRepository['queues']>>>;
  settings(by: AdminActor): Promise<SettingInForce[]>;
  securityEvents(
    by: AdminActor,
    page: number,
  ): Promise<{ events: SecurityEvent[]; total: number; locked: { email: string; lockedAt: Date }[] }>;
  audit(by: AdminActor, page: number): Promise<{ entries: AdminAuditEntry[]; total: number }>;
  /** `npm run users -- grant-admin / revoke-admin`; not_found for an unknown email. */
  setAdminFlag(email: string, admin: boolean): Promise<void>;
  /**
   * Deletes a user as `npm run users -- delete` always did: no new call or session, its active pushes expired (as
   * their owner, so webhooks and files follow), then every push and the user erased.
   */
  deleteUser(userId: string, userAgent: string): Promise<{ expired: number; pushes: number; workspaces: number }>;
  /** The workspaces: found, shown, and acted on (./admin-workspaces.ts). */
  workspaces: AdminWorkspaces;
}

export interface AdminDeps {
  db: Db;
  settings: Settings;
  users: UserService;
  accounts: AccountService;
  twoFactor: TwoFactorService;
  pushes: Pick<PushService, 'list' | 'expire'>;
  /** Deletes the workspaces a deleted user was alone in (../workspace/workspace-deletion.ts). */
  deletion: WorkspaceDeletion;
}

/** A LIKE pattern matching emails that contain `search` (its `%`, `_` and `\` taken literally). */
function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const pageOffset = (page: number, size: number) => (Math.min(Math.max(page, 1), MAX_PAGE) - 1) * size;

export function createAdminService(deps: AdminDeps): AdminService {
  const { db, settings } = deps;
  const repo = createAdminRepository(db);
  const listed = (email: string) => settings.adminEmails.includes(email.toLowerCase());
  const shown = (row: AdminUserRow): AdminUser => {
    const { adminFlag, ...rest } = row;
    const adminBy = adminFlag ? 'flag' : listed(row.email) ? 'setting' : null;
    return { ...rest, admin: adminBy !== null, adminBy };
  };
  const isAdmin = async (userId: string) => {
    const facts = await repo.adminFacts(userId);
    return facts !== null && !facts.locked && (facts.admin || listed(facts.email));
  };
  /** The caller, checked again: an administrator whose flag was just revoked can do nothing more. */
  const requireAdmin = async (userId: string) => {
    const facts = await repo.adminFacts(userId);
    if (!facts || facts.locked || !(facts.admin || listed(facts.email)))
      throw new ApiError('forbidden', 'Only an administrator of this instance may do this.');
    return { userId, email: facts.email };
  };
  const admin = (by: AdminActor) => requireAdmin(by.userId);
  const target = async (userId: string) => {
    const row = /^[0-9a-f-]{36}$/i.test(userId) ? await repo.user(userId) : null;
    if (!row) throw new ApiError('not_found', 'No user has this id.');
    return row;
  };
  const audit = (tx: Db, by: AdminActor, who: { userId: string; email: string }, action: string, email: string) =>
    repo.audit(tx, { admin: who, action, targetEmail: email, ip: by.ip, userAgent: by.userAgent }, new Date());

  const deleteUser: AdminService['deleteUser'] = async (userId, userAgent) => {
    const row = await target(userId);
    // Refused before anything changes while the user is the only owner of a workspace with other members.
    await requireDeletableUser(db, userId);
    await db.transaction(async (tx) => {
      // First nothing new: no call with its token or keys, no page session (locking ends them all).
      await repo.lock(tx, userId, new Date());
    });
    await deps.users.revokeToken(row.email);
    const ctx = { actor: { userId, ip: '', userAgent, referrer: '' }, baseUrl: 'http://localhost' };
    let expired = 0;
    for (let round = 0; round < 10_000; round++) {
      const page = await deps.pushes.list('active', 1, ctx);
      if (page.items.length === 0) break;
      for (const push of page.items) {
        await deps.pushes.expire(push.url_token, ctx);
        expired++;
      }
    }
    let workspaces = 0;
    const { pushes } = await deps.users.deleteUserRecords(userId, async (tx) => {
      // Read again in the deletion's transaction: a workspace the user is now alone in (or sole owner of) since.
      const alone = await requireDeletableUser(tx, userId);
      workspaces = await deleteWorkspacesAlone(tx, deps.deletion, userId, alone, `user-deletion:${userId}`, new Date());
    });
    return { expired, pushes, workspaces };
  };

  return {
    isAdmin,
    async users(by, search, page) {
      await admin(by);
      const text = search
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .trim()
        .toLowerCase();
      if (text.length > MAX_SEARCH)
        throw new ApiError('invalid_parameter', `Search for at most ${MAX_SEARCH} characters.`);
      const found = await repo.search(containsPattern(text), USERS_PER_PAGE, pageOffset(page, USERS_PER_PAGE));
      return { users: found.users.map(shown), total: found.total };
    },
    async user(by, userId) {
      await admin(by);
      return shown(await target(userId));
    },
    async act(by, action, userId, now = new Date()) {
      const who = await admin(by);
      const row = await target(userId);
      if (userId === by.userId && action !== 'unlock')
        throw new ApiError('bad_request', 'An administrator cannot lock, reset or delete their own account here.');
      if (action === 'lock' || action === 'unlock') {
        await db.transaction(async (tx) => {
          const changed = action === 'lock' ? await repo.lock(tx, userId, now) : await repo.unlock(tx, userId, now);
          if (changed === null) return;
          await securityEvents.record(
            tx,
            action === 'lock' ? 'account_locked' : 'account_unlocked',
            { email: row.email, userId, ip: by.ip },
            now,
          );
          await audit(tx, by, who, action, row.email);
        });
      } else if (action === 'reset_two_factor') {
        await deps.twoFactor.reset(userId, now);
        await deps.accounts.endSessions(userId, now);
        await audit(db, by, who, action, row.email);
      } else {
        await deleteUser(userId, 'admin console');
        await audit(db, by, who, action, row.email);
      }
      return row.email;
    },
    async storage(by, now = new Date()) {
      await admin(by);
      return repo.storage(now);
    },
    async queues(by) {
      await admin(by);
      return repo.queues();
    },
    async settings(by) {
      await admin(by);
      return settingsInForce(settings);
    },
    async securityEvents(by, page) {
      await admin(by);
      const [recent, locked] = await Promise.all([
        securityEvents.recent(db, { limit: ROWS_PER_PAGE, offset: pageOffset(page, ROWS_PER_PAGE) }),
        repo.locked(ROWS_PER_PAGE),
      ]);
      return { ...recent, locked };
    },
    async audit(by, page) {
      await admin(by);
      return repo.auditPage(ROWS_PER_PAGE, pageOffset(page, ROWS_PER_PAGE));
    },
    async setAdminFlag(email, flag) {
      if (!(await repo.setAdmin(email.trim().toLowerCase(), flag, new Date())))
        throw new ApiError('not_found', 'No user has this email.');
    },
    deleteUser,
    workspaces: createAdminWorkspaces({
      db,
      keys: deps.users.keys,
      deletion: deps.deletion,
      requireAdmin,
      audit: repo.audit,
    }),
  };
}
