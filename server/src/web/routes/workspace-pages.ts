/**
 * The workspace pages (issue 41; docs/workspaces.md, "Pages"): the person's workspaces and a new one, a workspace's
 * page and its forms (role, removal, hand-over, invitations, leaving). Every change goes through the services the
 * API's handlers call (../../workspace/*), so the roles' rules and refusals are the API's: a refusal is shown on the
 * workspace's page with the API's status; an outsider (or an id no workspace has) gets the 404 page.
 */
import type { Request, Response, Router } from 'express';
import { ApiError, type MemberChange, validationFailed } from '@secret-push/rules';
import type { AssignableRole } from '@secret-push/sdk/generated';
import type { WorkspaceService } from '../../workspace/workspace-service.js';
import type { InvitationService } from '../../workspace/invitation-service.js';
import { field } from '../forms.js';
import { PageError, type PageKit, type Visit } from '../page-kit.js';
import { ASSIGNABLE_ROLES, INVITATION_DAYS, shutOutPage, workspacePage, workspacesPage } from '../views/workspaces.js';
import { refusalText } from './workspace-refusals.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A workspace id as the contract takes it: a positive integer (identity column), at most 15 digits. */
const WORKSPACE_ID = /^[1-9][0-9]{0,14}$/;
/** The contract's `sso_domain` pattern (UpdateWorkspaceRequest). */

/** The 404 page of a workspace the visitor is not in (or that does not exist): the same page, so ids cannot be probed. */
export const noSuchWorkspace = () =>
  new PageError(404, { key: 'error.notFound.title' }, { key: 'workspaces.notFound' });

/** The workspace services, or a 404 page on an instance (or a test double) without workspaces. */
export function workspaceServices(kit: PageKit): { workspaces: WorkspaceService; invitations: InvitationService } {
  const { workspaces, invitations } = kit.core;
  if (!workspaces || !invitations) throw new ApiError('not_found', 'Workspaces are not served by this instance.');
  return { workspaces, invitations };
}

export function workspaceIdOf(req: Request): number {
  const raw = String(req.params.id);
  if (!WORKSPACE_ID.test(raw)) throw noSuchWorkspace();
  return Number(raw);
}

type Extra = { freshLink?: string; error?: string; notice?: string };

/** The refusals of a member the workspace's sign-in rules shut out (they see why, and how to get in). */
const SHUT_OUT: ReadonlySet<string> = new Set(['two_factor_required', 'single_sign_on_required']);

/**
 * The workspace's page as the visitor may see it; the 404 page for an outsider; for a member its sign-in rules shut
 * out, why (403) and, for single sign-on, the provider's button.
 */
function workspaceShower(kit: PageKit) {
  const mail = kit.settings.mail.smtpUrl !== null;
  const provider = kit.settings.oidc?.providerName;
  return async (req: Request, res: Response, v: Visit, id: number, status: number, extra: Extra = {}) => {
    const { workspaces, invitations } = workspaceServices(kit);
    const user = v.user!;
    const ctx = kit.ctxOf(req, user.userId);
    const workspace = (await workspaces.list(ctx)).find((w) => w.id === id);
    if (!workspace) throw noSuchWorkspace();
    let members;
    try {
      members = await workspaces.members(id, ctx);
    } catch (error) {
      if (!(error instanceof ApiError) || !SHUT_OUT.has(error.code)) throw error;
      const sso = error.code === 'single_sign_on_required' ? provider : undefined;
      return kit.send(
        res,
        403,
        shutOutPage(v.viewer, { workspace, error: refusalText(v.viewer, error), provider: sso }),
      );
    }
    const manages = workspace.role === 'owner' || workspace.role === 'admin';
    const pending = manages ? await invitations.list(id, ctx) : null;
    const state = { workspace, me: user.userId, members, invitations: pending, mail, provider, ...extra };
    kit.send(res, status, workspacePage(v.viewer, state));
  };
}

export function workspacePages(router: Router, kit: PageKit): void {
  const show = workspaceShower(kit);

  router.get(
    '/workspaces',
    kit.pageRoute('/workspaces', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const list = await workspaceServices(kit).workspaces.list(kit.ctxOf(req, v.user.userId));
      kit.send(res, 200, workspacesPage(v.viewer, list));
    }),
  );

  router.post(
    '/workspaces',
    kit.pageRoute('/workspaces', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const { workspaces } = workspaceServices(kit);
      const ctx = kit.ctxOf(req, v.user.userId);
      const name = field(form, 'name');
      const refuse = async (status: number, error: string) =>
        kit.send(res, status, workspacesPage(v.viewer, await workspaces.list(ctx), error));
      if (name.trim().length === 0 || name.length > 100 || /[\u0000-\u001f\u007f]/.test(name))
        return refuse(422, v.viewer.i18n.t('workspaces.create.badName'));
      try {
        const made = await workspaces.create(name, ctx);
        res.redirect(303, `/workspaces/${made.id}`);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        await refuse(error.status, refusalText(v.viewer, error));
      }
    }),
  );

  router.get(
    '/workspaces/:id',
    kit.pageRoute('/workspaces/:id', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await show(req, res, v, workspaceIdOf(req), 200);
    }),
  );

  /**
   * A form of a workspace's page: `run` calls the service; its refusal (403, 422, a member gone: 404) is shown on the
   * page with the API's status, an outsider's is the 404 page (the page itself is refused them).
   */
  const action = (path: string, run: (req: Request, form: FormData, id: number, v: Visit) => Promise<string | Extra>) =>
    router.post(
      path,
      kit.pageRoute(path, async (req, res, v) => {
        if (!v.user) return kit.redirectToSignIn(req, res);
        const form = await kit.postedForm(req, v);
        const id = workspaceIdOf(req);
        let done: string | Extra;
        try {
          done = await run(req, form, id, v);
        } catch (error) {
          if (!(error instanceof ApiError) || error.status >= 500) throw error;
          const leaving = path.endsWith('/leave');
          return show(req, res, v, id, error.status, { error: refusalText(v.viewer, error, leaving) });
        }
        if (typeof done === 'string') return res.redirect(303, done);
        await show(req, res, v, id, 201, done);
      }),
    );

  const subjectOf = (req: Request): string => {
    const subject = String(req.params.user);
    if (!UUID.test(subject)) throw new ApiError('not_found', 'This workspace has no member with this id.');
    return subject;
  };
  const roleOf = (form: FormData): AssignableRole => {
    const role = field(form, 'role');
    if (!(ASSIGNABLE_ROLES as readonly string[]).includes(role))
      throw validationFailed({ role: ['must be admin, member or auditor'] });
    return role as AssignableRole;
  };
  const change = (req: Request, id: number, subject: string, what: MemberChange, userId: string) =>
    workspaceServices(kit).workspaces.changeMember(id, subject, what, kit.ctxOf(req, userId));

  action('/workspaces/:id/members/:user/role', async (req, form, id, v) => {
    await change(req, id, subjectOf(req), { kind: 'role', role: roleOf(form) }, v.user!.userId);
    return `/workspaces/${id}`;
  });
  action('/workspaces/:id/members/:user/remove', async (req, _form, id, v) => {
    await change(req, id, subjectOf(req), { kind: 'remove' }, v.user!.userId);
    return `/workspaces/${id}`;
  });
  action('/workspaces/:id/members/:user/ownership', async (req, _form, id, v) => {
    await change(req, id, subjectOf(req), { kind: 'transfer' }, v.user!.userId);
    return `/workspaces/${id}`;
  });
  action('/workspaces/:id/leave', async (req, _form, id, v) => {
    await change(req, id, '', { kind: 'leave' }, v.user!.userId);
    return '/workspaces';
  });
  action('/workspaces/:id/delete', async (req, form, id, v) => {
    // The name exactly as typed: the service's rule (`confirmsDeletion`) trims nothing.
    await workspaceServices(kit).workspaces.remove(id, field(form, 'confirm'), kit.ctxOf(req, v.user!.userId));
    return '/workspaces';
  });
  action('/workspaces/:id/invitations', async (req, form, id, v) => {
    const email = field(form, 'email').trim();
    const days = Number(field(form, 'expires_in_days'));
    if (!(INVITATION_DAYS as readonly number[]).includes(days))
      throw validationFailed({ expires_in_days: ['must be one of the listed lifetimes'] });
    const made = await workspaceServices(kit).invitations.create(
      id,
      { role: roleOf(form), expires_in_days: days, ...(email === '' ? {} : { email }) },
      kit.ctxOf(req, v.user!.userId),
    );
    if (made.url) return { freshLink: made.url };
    return { notice: v.viewer.i18n.t('workspaces.invite.sent', { email: made.email ?? '' }) };
  });
  action('/workspaces/:id/invitations/:invitation/revoke', async (req, _form, id, v) => {
    const invitation = String(req.params.invitation);
    if (!UUID.test(invitation))
      throw new ApiError('not_found', 'This workspace has no pending invitation with this id.');
    await workspaceServices(kit).invitations.revoke(id, invitation, kit.ctxOf(req, v.user!.userId));
    return `/workspaces/${id}`;
  });
}
