/**
 * A workspace's webhooks page (issue 41): listed, added (the signing secret shown once) and deleted by the
 * workspace's owner and admins, with each one's recent deliveries (a test event, a delivery sent again), through the
 * checks the API's handlers make (`webhookScopes`: the workspace named once the caller manages it, a webhook found
 * with its workspace) and the webhooks' service. The form is the account's webhooks page's (`hookFromForm`).
 */
import type { Request, Response, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { Workspace } from '@secret-push/sdk/generated';
import { webhookScopes } from '../../http/handlers/webhook-scope.js';
import type { HookScope } from '../../webhooks/webhook-repository.js';
import { fieldsLine } from '../field-text.js';
import { PageError, type PageKit, type Visit } from '../page-kit.js';
import { deliveriesPage, webhooksPage, type HookPageScope, type WebhooksState } from '../views/webhooks.js';
import { sectionsNav } from '../views/workspace-manage.js';
import { hookFromForm, serviceOf } from './webhook-pages.js';
import { refusalPage, visitedWorkspace } from './workspace-manage-pages.js';

const noSuchHook = () => new PageError(404, { key: 'error.notFound.title' }, { key: 'workspaces.refused.gone' });

export function workspaceWebhookPages(router: Router, kit: PageKit): void {
  const scopes = webhookScopes(kit.core);

  const pageScope = (v: Visit, w: Workspace): HookPageScope => {
    const { t } = v.viewer.i18n;
    return {
      base: `/workspaces/${w.id}/webhooks`,
      title: t('workspaces.webhooks.title', { name: w.name }),
      heading: t('webhooks.title'),
      hint: t('workspaces.webhooks.hint'),
      none: t('workspaces.webhooks.none'),
      nav: sectionsNav(v.viewer, w, 'webhooks'),
    };
  };
  /** The workspace and the webhooks' scope in it, once the visitor manages it; the API's refusal as a page. */
  const managed = async (req: Request, v: Visit): Promise<[Workspace, HookScope]> => {
    serviceOf(kit); // webhooks off: the 404 page that says how to turn them on
    const workspace = await visitedWorkspace(kit, req, v);
    try {
      return [workspace, await scopes.named(workspace.id, kit.ctxOf(req, v.user!.userId))];
    } catch (error) {
      throw refusalPage(v.viewer, error);
    }
  };
  /** The webhook `:hook` of this workspace: one of another workspace, or personal, is as unknown as none. */
  const hookOf = async (req: Request, v: Visit, workspace: Workspace): Promise<[HookScope, string]> => {
    const id = String(req.params.hook);
    try {
      const scope = await scopes.ofHook(serviceOf(kit), id, kit.ctxOf(req, v.user!.userId));
      if (scope.workspaceId !== workspace.id) throw noSuchHook();
      return [scope, id];
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') throw noSuchHook();
      throw refusalPage(v.viewer, error);
    }
  };
  const show = async (res: Response, v: Visit, status: number, w: Workspace, scope: HookScope, extra = {}) => {
    const state: WebhooksState = {
      webhooks: await serviceOf(kit).list(scope),
      receipts: null,
      scope: pageScope(v, w),
      ...extra,
    };
    kit.send(res, status, webhooksPage(v.viewer, state));
  };

  router.get(
    '/workspaces/:id/webhooks',
    kit.pageRoute('/workspaces/:id/webhooks', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const [workspace, scope] = await managed(req, v);
      await show(res, v, 200, workspace, scope);
    }),
  );

  router.post(
    '/workspaces/:id/webhooks',
    kit.pageRoute('/workspaces/:id/webhooks', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const [workspace, scope] = await managed(req, v);
      const input = hookFromForm(form, v.viewer.i18n.t);
      if (typeof input === 'string') return show(res, v, 422, workspace, scope, { error: input });
      try {
        const fresh = await serviceOf(kit).create(scope, input, kit.clock?.());
        await show(res, v, 201, workspace, scope, { fresh });
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw refusalPage(v.viewer, error);
        await show(res, v, 422, workspace, scope, { error: fieldsLine(v.viewer.i18n, error) });
      }
    }),
  );

  router.get(
    '/workspaces/:id/webhooks/:hook',
    kit.pageRoute('/workspaces/:id/webhooks/:hook', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const [workspace] = await managed(req, v);
      const [scope, id] = await hookOf(req, v, workspace);
      const hooks = serviceOf(kit);
      const hook = await hooks.get(scope, id);
      const { items } = await hooks.deliveries(scope, id, 1);
      kit.send(res, 200, deliveriesPage(v.viewer, hook, items, pageScope(v, workspace)));
    }),
  );

  const action = (path: string, run: (scope: HookScope, id: string, req: Request) => Promise<unknown>, back: string) =>
    router.post(
      path,
      kit.pageRoute(path, async (req, res, v) => {
        if (!v.user) return kit.redirectToSignIn(req, res);
        await kit.postedForm(req, v);
        const [workspace] = await managed(req, v);
        const [scope, id] = await hookOf(req, v, workspace);
        try {
          await run(scope, id, req);
        } catch (error) {
          if (error instanceof ApiError && error.code === 'not_found') throw noSuchHook();
          throw refusalPage(v.viewer, error);
        }
        res.redirect(303, `/workspaces/${workspace.id}/webhooks${back === 'hook' ? `/${id}` : ''}`);
      }),
    );
  action('/workspaces/:id/webhooks/:hook/delete', (scope, id) => serviceOf(kit).remove(scope, id), 'list');
  action('/workspaces/:id/webhooks/:hook/test', (scope, id) => serviceOf(kit).test(scope, id, kit.clock?.()), 'hook');
  action(
    '/workspaces/:id/webhooks/:hook/deliveries/:delivery/retry',
    (scope, id, req) => serviceOf(kit).retry(scope, id, String(req.params.delivery), kit.clock?.()),
    'hook',
  );
}
