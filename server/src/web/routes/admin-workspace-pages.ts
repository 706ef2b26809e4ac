/**
 * The admin console's workspaces (issue 41, docs/admin.md): `/admin/workspaces` (found by name or id, 50 a page) and
 * `/admin/workspaces/<id>`, and the administrator's actions on a workspace, behind the console's guard (`adminRoute`:
 * no session → sign in, not an administrator → 403) and, for an action, the CSRF token and the fresh, second-factor
 * session every console action needs (`sessionRefusal`). The admin service checks the administrator again and writes
 * the audit entries.
 */
import type { Router } from 'express';
import { ApiError } from '@secret-push/rules';
import { WORKSPACES_PER_PAGE, workspaceIdOf, type AdminWorkspaceAction } from '../../admin/admin-workspaces.js';
import { field } from '../forms.js';
import type { PageKit } from '../page-kit.js';
import { adminSignInAgainPage } from '../views/admin.js';
import { adminWorkspacePage, adminWorkspacesPage } from '../views/admin-workspaces.js';
import { adminRoute, pageOf, sessionRefusal } from './admin-pages.js';

const ACTIONS: readonly AdminWorkspaceAction[] = ['transfer', 'remove_member', 'revoke_key', 'delete'];

/** What the page says after an action (a fixed sentence: nothing of the request is echoed). */
const DONE: Record<AdminWorkspaceAction, string> = {
  transfer: 'The workspace has its new owner; the former owner, if any, is an admin of it now.',
  remove_member: 'The member is removed from the workspace.',
  revoke_key: 'The key is revoked, with every key it made: the next request with it answers 401.',
  delete: 'The workspace is deleted, with its pushes, requests, keys, webhooks, invitations, members and trail.',
};

/** The form field naming what the action acts on. */
const SUBJECT: Record<AdminWorkspaceAction, string> = {
  transfer: 'user_id',
  remove_member: 'user_id',
  revoke_key: 'key_id',
  delete: 'confirm',
};

const idOf = (raw: unknown) => {
  const id = workspaceIdOf(String(raw));
  if (id === null) throw new ApiError('not_found', 'No workspace has this id.');
  return id;
};

export function adminWorkspacePages(router: Router, kit: PageKit): void {
  const quota = () => kit.settings.userStorageBytes;
  router.get(
    '/admin/workspaces',
    adminRoute(kit, '/admin/workspaces', async (req, res, v, by, admin) => {
      const q = req.query.q ?? '';
      if (typeof q !== 'string') throw new ApiError('invalid_parameter', 'Search with one text.');
      const page = pageOf(req);
      const found = await admin.workspaces.search(by, q, page);
      const search = q.replace(/[\u0000-\u001f\u007f]/g, '').trim();
      kit.send(
        res,
        200,
        adminWorkspacesPage(v.viewer, {
          search,
          page,
          ...found,
          size: WORKSPACES_PER_PAGE,
          quota: quota(),
          ...(req.query.done === 'delete' ? { notice: DONE.delete } : {}),
        }),
      );
    }),
  );
  router.get(
    '/admin/workspaces/:id',
    adminRoute(kit, '/admin/workspaces/:id', async (req, res, v, by, admin) => {
      const details = await admin.workspaces.workspace(by, idOf(req.params.id), kit.clock?.());
      const done = req.query.done;
      const notice =
        typeof done === 'string' && (ACTIONS as readonly string[]).includes(done)
          ? DONE[done as AdminWorkspaceAction]
          : undefined;
      kit.send(res, 200, adminWorkspacePage(v.viewer, details, quota(), notice));
    }),
  );
  router.post(
    '/admin/workspaces/:id/:action',
    adminRoute(kit, '/admin/workspaces/:id/:action', async (req, res, v, by, admin) => {
      const form = await kit.postedForm(req, v);
      const id = idOf(req.params.id);
      const action = String(req.params.action) as AdminWorkspaceAction;
      if (!ACTIONS.includes(action)) throw new ApiError('not_found', 'No such admin action.');
      const refusal = await sessionRefusal(kit, v);
      if (refusal) return kit.send(res, 403, adminSignInAgainPage(v.viewer, refusal));
      try {
        const subject = field(form, SUBJECT[action]);
        // A name is confirmed exactly as typed; the ids are trimmed.
        await admin.workspaces.act(by, action, id, action === 'delete' ? subject : subject.trim(), kit.clock?.());
      } catch (error) {
        // A rule of the workspace refused (the owner removed, a hand-over to the owner): the page says which.
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
        const details = await admin.workspaces.workspace(by, id, kit.clock?.());
        return kit.send(res, 422, adminWorkspacePage(v.viewer, details, quota(), `Nothing changed: ${error.message}`));
      }
      res.redirect(
        303,
        action === 'delete' ? '/admin/workspaces?done=delete' : `/admin/workspaces/${id}?done=${action}`,
      );
    }),
  );
}
