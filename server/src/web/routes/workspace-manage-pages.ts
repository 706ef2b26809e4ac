/**
 * A workspace's settings and audit trail pages (issue 41; docs/workspaces.md, "Pages"), through the services the
 * API's handlers call: the settings form is checked by the contract's own schema of `updateWorkspace` and mapped to
 * the API's 422 field messages (`workspaceSettingsValidationError`), then `WorkspaceService.update` applies the rules;
 * the trail is `WorkspaceService.audit`'s page. An outsider gets the 404 page, a role the API refuses its 403, said in
 * the page's language.
 */
import type { Request, Router } from 'express';
import type { ErrorObject } from 'ajv';
import { contract } from '@secret-push/contract';
import { ApiError, PAGE_SIZE, parsePage } from '@secret-push/rules';
import type { Workspace } from '@secret-push/sdk/generated';
import { workspaceSettingsValidationError } from '../../http/handlers/workspace-handlers.js';
import type { WorkspaceSettingsChange } from '../../workspace/workspace-rules.js';
import { exactly, fieldText, type FieldForms } from '../field-text.js';
import { field } from '../forms.js';
import { PageError, type PageKit, type Visit } from '../page-kit.js';
import type { Viewer } from '../views/layout.js';
import { auditPage, settingsPage, type SettingsPageState } from '../views/workspace-manage.js';
import { noSuchWorkspace, workspaceIdOf, workspaceServices } from './workspace-pages.js';
import { refusalText } from './workspace-refusals.js';

/** The workspace as the signed-in visitor sees it (with their role); the 404 page when they are not in it. */
export async function visitedWorkspace(kit: PageKit, req: Request, v: Visit): Promise<Workspace> {
  const id = workspaceIdOf(req);
  const found = (await workspaceServices(kit).workspaces.list(kit.ctxOf(req, v.user!.userId))).find((w) => w.id === id);
  if (!found) throw noSuchWorkspace();
  return found;
}

/** A refusal of the API's services as a page in the visitor's language (404: the page every outsider gets). */
export function refusalPage(viewer: Viewer, error: unknown): unknown {
  if (!(error instanceof ApiError) || error.status >= 500) return error;
  if (error.status === 404) return noSuchWorkspace();
  return new PageError(error.status, { key: 'error.generic.title' }, refusalText(viewer, error));
}

/** The API's field messages of `updateWorkspace` (workspace-service.ts, workspace-handlers.ts), by catalogue key. */
const SETTINGS_FORMS: FieldForms = (
  [
    ['must be 1 to 100 characters, not only spaces', 'workspaces.settings.error.name'],
    ['must not be empty', 'workspaces.settings.error.name'],
    [
      'turn on two-factor sign-in for your own account first (nobody locks themselves out)',
      'workspaces.settings.error.ownTwoFactor',
    ],
    [
      'must be a domain name such as example.com (at most 253 characters), or null',
      'workspaces.settings.error.domainFormat',
    ],
    ['must be the domain of your own email address', 'workspaces.settings.error.domainNotOwn'],
    ['another workspace is tied to this domain', 'workspaces.settings.error.domainTaken'],
    ['this instance has no single sign-on', 'workspaces.settings.error.noSingleSignOn'],
    ["this instance's single sign-on does not allow this domain", 'workspaces.settings.error.domainNotAllowed'],
  ] as const
).map(([text, key]) => [exactly(text), key] as const);

/**
 * The API's 422 field messages in the page's language (English pages show the API's own words; a message of no
 * known form is said inside the workspace pages' "not accepted" sentence).
 */
function fieldSentences(viewer: Viewer, fields: Record<string, string[]>): Record<string, string[]> {
  const { t, locale } = viewer.i18n;
  const said: Record<string, string[]> = {};
  for (const [name, messages] of Object.entries(fields)) {
    said[name] = messages.map((m) => {
      if (locale === 'en') return m;
      const text = fieldText(viewer.i18n, m, SETTINGS_FORMS);
      return text !== m ? text : t('workspaces.refused.invalid', { reason: m });
    });
  }
  return said;
}

let settingsValidator: ReturnType<ReturnType<typeof contract>['validator']> | undefined;

/** The change the form asks for, the fields that differ from the workspace's, checked with the contract's schema. */
function changeOf(form: FormData, w: Workspace, provider: string | undefined): WorkspaceSettingsChange {
  const name = field(form, 'name');
  const requireTwoFactor = field(form, 'require_two_factor') === 'on';
  const requireSingleSignOn = field(form, 'require_single_sign_on') === 'on';
  const domain = field(form, 'sso_domain').trim();
  const body: Record<string, unknown> = {};
  if (name !== w.name) body.name = name;
  if (requireTwoFactor !== w.require_two_factor) body.require_two_factor = requireTwoFactor;
  // Offered only with the instance's single sign-on (without it, the rule stays as it is).
  if (provider && requireSingleSignOn !== w.require_single_sign_on) body.require_single_sign_on = requireSingleSignOn;
  if ((domain === '' ? null : domain) !== w.sso_domain) body.sso_domain = domain === '' ? null : domain;
  if (Object.keys(body).length === 0) return {};
  const spec = contract();
  settingsValidator ??= spec.validator(spec.schema('UpdateWorkspaceRequest'), 'page:UpdateWorkspaceRequest');
  if (!settingsValidator({ workspace: body })) {
    const errors = (settingsValidator.errors ?? []).map((e): ErrorObject => ({
      ...e,
      instancePath: `/requestBody${e.instancePath}`,
    }));
    throw workspaceSettingsValidationError(errors);
  }
  return {
    ...('name' in body ? { name } : {}),
    ...('require_two_factor' in body ? { requireTwoFactor } : {}),
    ...('require_single_sign_on' in body ? { requireSingleSignOn } : {}),
    ...('sso_domain' in body ? { ssoDomain: domain === '' ? null : domain } : {}),
  };
}

export function workspaceManagePages(router: Router, kit: PageKit): void {
  const provider = kit.settings.oidc?.providerName;
  router.get(
    '/workspaces/:id/settings',
    kit.pageRoute('/workspaces/:id/settings', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const workspace = await visitedWorkspace(kit, req, v);
      if (workspace.role !== 'owner' && workspace.role !== 'admin')
        throw new PageError(403, { key: 'error.generic.title' }, { key: 'workspaces.refused.forbidden' });
      kit.send(res, 200, settingsPage(v.viewer, { workspace, provider }));
    }),
  );

  router.post(
    '/workspaces/:id/settings',
    kit.pageRoute('/workspaces/:id/settings', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const workspace = await visitedWorkspace(kit, req, v);
      const values = {
        name: field(form, 'name'),
        requireTwoFactor: field(form, 'require_two_factor') === 'on',
        requireSingleSignOn: field(form, 'require_single_sign_on') === 'on',
        ssoDomain: field(form, 'sso_domain'),
      };
      const show = (status: number, state: Omit<SettingsPageState, 'workspace'>, w = workspace) =>
        kit.send(res, status, settingsPage(v.viewer, { workspace: w, provider, ...state }));
      try {
        const change = changeOf(form, workspace, provider);
        const changed =
          Object.keys(change).length === 0
            ? workspace
            : await workspaceServices(kit).workspaces.update(workspace.id, change, kit.ctxOf(req, v.user.userId));
        show(200, { notice: v.viewer.i18n.t('workspaces.settings.saved') }, changed);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'validation_failed')
          return show(422, { values, fields: fieldSentences(v.viewer, error.details.fields ?? {}) });
        throw refusalPage(v.viewer, error);
      }
    }),
  );

  router.get(
    '/workspaces/:id/audit',
    kit.pageRoute('/workspaces/:id/audit', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const workspace = await visitedWorkspace(kit, req, v);
      const raw = req.query.page;
      const { workspaces } = workspaceServices(kit);
      const ctx = kit.ctxOf(req, v.user.userId);
      let pageNumber, trail;
      try {
        pageNumber = parsePage(typeof raw === 'string' ? raw : raw === undefined ? undefined : '');
        trail = await workspaces.audit(workspace.id, ctx, pageNumber);
      } catch (error) {
        throw refusalPage(v.viewer, error);
      }
      const emails = new Map((await workspaces.members(workspace.id, ctx)).map((m) => [m.user_id, m.email]));
      const pages = Math.max(1, Math.ceil(trail.total / PAGE_SIZE));
      kit.send(res, 200, auditPage(v.viewer, { workspace, entries: trail.items, emails, page: pageNumber, pages }));
    }),
  );
}
