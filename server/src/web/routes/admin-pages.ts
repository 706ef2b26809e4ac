/**
 * The admin console (issue 41, docs/admin.md): pages under /admin for the instance's administrators (flagged by
 * `npm run users -- grant-admin`, or listed in PWPUSH_ADMIN_EMAILS). A visitor without a session is sent to sign in;
 * a signed-in user who is not an administrator gets 403. Every action is a form post with the CSRF token and the
 * same-origin check of every form, from a session that used the account's second factor when it has one and began
 * within the last hour; the admin service writes its audit entry.
 *
 * Pages only, no admin API: a bearer token cannot show that its holder passed a second factor or signed in recently,
 * and an API key able to lock and delete accounts would be the most valuable credential of the instance; scripts
 * have `npm run users` on the server itself.
 */
import type { Request, Response, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { AdminAction, AdminActor, AdminService } from '../../admin/admin-service.js';
import { MAX_PAGE, ROWS_PER_PAGE, USERS_PER_PAGE } from '../../admin/admin-service.js';
import { actorOf } from '../../http/auth.js';
import { field } from '../forms.js';
import { PageError, type PageKit } from '../page-kit.js';
import {
  adminAuditPage,
  adminHomePage,
  adminQueuesPage,
  adminSecurityPage,
  adminSettingsPage,
  adminSignInAgainPage,
  adminStoragePage,
  adminUserPage,
  adminUsersPage,
} from '../views/admin.js';
import { workspaceStorage } from '../views/admin-workspaces.js';

/** How recent a sign-in an admin action needs. */
const FRESH_SIGN_IN_MS = 60 * 60_000;

const ACTIONS: readonly AdminAction[] = ['lock', 'unlock', 'reset_two_factor', 'delete'];

/** What the page says after an action (a fixed sentence per action: nothing of the request is echoed). */
const DONE: Record<AdminAction, string> = {
  lock: 'The account is locked: it cannot sign in, and its token, keys and sessions are refused.',
  unlock: 'The account is unlocked.',
  reset_two_factor: 'Two-factor sign-in is off for this account, and its sessions ended.',
  delete: 'The user and every push they made are deleted.',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Visit = Parameters<Parameters<PageKit['pageRoute']>[1]>[2];
type AdminHandler = (req: Request, res: Response, v: Visit, by: AdminActor, admin: AdminService) => Promise<void>;

/** `?page=`: absent is 1; anything but 1..MAX_PAGE is a 400. */
export function pageOf(req: Request): number {
  const raw = req.query.page;
  if (raw === undefined) return 1;
  const n = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : 0;
  if (n < 1 || n > MAX_PAGE) throw new ApiError('invalid_page', `The page must be a number from 1 to ${MAX_PAGE}.`);
  return n;
}

function doneOf(req: Request): string | undefined {
  const done = req.query.done;
  return typeof done === 'string' && (ACTIONS as readonly string[]).includes(done)
    ? DONE[done as AdminAction]
    : undefined;
}

/** A page of the console: sign-in first, then the administrator check (403 for anyone else). */
export function adminRoute(kit: PageKit, route: string, handler: AdminHandler) {
  return kit.pageRoute(route, async (req, res, v) => {
    if (!v.user) return kit.redirectToSignIn(req, res);
    const admin = kit.core.admin;
    if (!admin) throw new PageError(503, 'Unavailable', 'The admin console is not available on this server.');
    if (!(await admin.isAdmin(v.user.userId)))
      throw new PageError(403, 'Administrators only', 'This page is for the administrators of this instance.');
    const actor = actorOf(req, v.user.userId, kit.settings.trustProxy);
    await handler(req, res, v, { userId: v.user.userId, ip: actor.ip, userAgent: actor.userAgent }, admin);
  });
}

/** Why this session may not act (no second factor used, or signed in too long ago), or null. */
export async function sessionRefusal(kit: PageKit, v: Visit): Promise<string | null> {
  const session = v.session;
  if (!session || !v.user) return 'Sign in again to act.';
  if ((await kit.web().twoFactor.status(v.user.userId)).enabled && !session.factors.endsWith('+totp'))
    return 'Your account has two-factor sign-in, and this session did not use it. Sign in again with your code to act.';
  const now = (kit.clock?.() ?? new Date()).getTime();
  if (now - session.issuedAt > FRESH_SIGN_IN_MS)
    return 'You signed in more than an hour ago. Sign in again to act: reading the console needs no new sign-in.';
  return null;
}

function readPages(router: Router, kit: PageKit): void {
  router.get(
    '/admin',
    adminRoute(kit, '/admin', async (_req, res, v) => kit.send(res, 200, adminHomePage(v.viewer))),
  );
  router.get(
    '/admin/users',
    adminRoute(kit, '/admin/users', async (req, res, v, by, admin) => {
      const q = req.query.q ?? '';
      if (typeof q !== 'string') throw new ApiError('invalid_parameter', 'Search with one text.');
      const page = pageOf(req);
      const found = await admin.users(by, q, page);
      const search = q.replace(/[\u0000-\u001f\u007f]/g, '').trim();
      kit.send(
        res,
        200,
        adminUsersPage(v.viewer, { search, page, ...found, size: USERS_PER_PAGE, notice: doneOf(req) }),
      );
    }),
  );
  router.get(
    '/admin/users/:id',
    adminRoute(kit, '/admin/users/:id', async (req, res, v, by, admin) => {
      const id = String(req.params.id);
      if (!UUID.test(id)) throw new ApiError('not_found', 'No user has this id.');
      const user = await admin.user(by, id);
      const workspaces = await admin.workspaces.ofUser(by, id);
      kit.send(res, 200, adminUserPage(v.viewer, user, id === by.userId, doneOf(req), workspaces));
    }),
  );
  router.get(
    '/admin/storage',
    adminRoute(kit, '/admin/storage', async (_req, res, v, by, admin) => {
      const quotas = {
        userBytes: kit.settings.userStorageBytes,
        anonymousBytesPerHour: kit.settings.anonymousStoragePerHour,
      };
      const workspaces = workspaceStorage(await admin.workspaces.storage(by), quotas.userBytes);
      kit.send(res, 200, adminStoragePage(v.viewer, await admin.storage(by, kit.clock?.()), quotas, workspaces));
    }),
  );
  router.get(
    '/admin/queues',
    adminRoute(kit, '/admin/queues', async (_req, res, v, by, admin) =>
      kit.send(res, 200, adminQueuesPage(v.viewer, await admin.queues(by))),
    ),
  );
  router.get(
    '/admin/settings',
    adminRoute(kit, '/admin/settings', async (_req, res, v, by, admin) =>
      kit.send(res, 200, adminSettingsPage(v.viewer, await admin.settings(by))),
    ),
  );
  router.get(
    '/admin/security',
    adminRoute(kit, '/admin/security', async (req, res, v, by, admin) => {
      const page = pageOf(req);
      const events = await admin.securityEvents(by, page);
      kit.send(res, 200, adminSecurityPage(v.viewer, { ...events, page, size: ROWS_PER_PAGE }));
    }),
  );
  router.get(
    '/admin/audit',
    adminRoute(kit, '/admin/audit', async (req, res, v, by, admin) => {
      const page = pageOf(req);
      const audit = await admin.audit(by, page);
      kit.send(res, 200, adminAuditPage(v.viewer, { ...audit, page, size: ROWS_PER_PAGE }));
    }),
  );
}

export function adminPages(router: Router, kit: PageKit): void {
  readPages(router, kit);
  router.post(
    '/admin/users/:id/:action',
    adminRoute(kit, '/admin/users/:id/:action', async (req, res, v, by, admin) => {
      const form = await kit.postedForm(req, v);
      const id = String(req.params.id);
      const action = String(req.params.action) as AdminAction;
      if (!UUID.test(id) || !ACTIONS.includes(action)) throw new ApiError('not_found', 'No such admin action.');
      const refusal = await sessionRefusal(kit, v);
      if (refusal) return kit.send(res, 403, adminSignInAgainPage(v.viewer, refusal));
      if (action === 'delete') {
        const user = await admin.user(by, id);
        if (field(form, 'confirm').trim().toLowerCase() !== user.email) {
          const notice = 'Nothing was deleted: type the user’s email exactly to confirm.';
          const workspaces = await admin.workspaces.ofUser(by, id);
          return kit.send(res, 422, adminUserPage(v.viewer, user, id === by.userId, notice, workspaces));
        }
      }
      try {
        await admin.act(by, action, id, kit.clock?.());
      } catch (error) {
        // The user is the only owner of a workspace with other members: the page names them, nothing was deleted.
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
        const user = await admin.user(by, id);
        const workspaces = await admin.workspaces.ofUser(by, id);
        const notice = `Nothing was deleted: ${error.message}`;
        return kit.send(res, 422, adminUserPage(v.viewer, user, id === by.userId, notice, workspaces));
      }
      res.redirect(303, action === 'delete' ? '/admin/users?done=delete' : `/admin/users/${id}?done=${action}`);
    }),
  );
}
