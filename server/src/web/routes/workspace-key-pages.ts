/**
 * A workspace's API keys page (issue 41): listed, made and revoked by the workspace's owner and admins, through the
 * checks the API's handlers make (`WorkspaceService.membership(…, 'manage')`, then the API keys' service with the
 * workspace's id); the form is the token page's (`keyFromForm`). A revocation is asked first on a page of its own.
 */
import type { Request, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { Workspace } from '@secret-push/sdk/generated';
import { apiKeyRecord } from '../../http/handlers/api-key-handlers.js';
import { fieldsLine } from '../field-text.js';
import { PageError, type PageKit, type Visit } from '../page-kit.js';
import { revokeKeyPage, workspaceKeysPage, type WorkspaceKeysState } from '../views/workspace-keys.js';
import { keyFromForm } from './api-key-pages.js';
import { workspaceServices } from './workspace-pages.js';
import { refusalPage, visitedWorkspace } from './workspace-manage-pages.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const noSuchKey = () => new PageError(404, { key: 'error.notFound.title' }, { key: 'workspaces.refused.gone' });

export function workspaceKeyPages(router: Router, kit: PageKit): void {
  const keys = kit.core.users.keys;

  /** The workspace, once the visitor manages it (owner, admin): the API's own check, its refusal as a page. */
  const managed = async (req: Request, v: Visit): Promise<Workspace> => {
    const workspace = await visitedWorkspace(kit, req, v);
    try {
      await workspaceServices(kit).workspaces.membership(workspace.id, kit.ctxOf(req, v.user!.userId), 'manage');
    } catch (error) {
      throw refusalPage(v.viewer, error);
    }
    return workspace;
  };
  const stateOf = async (workspace: Workspace, extra: Partial<WorkspaceKeysState> = {}) => ({
    workspace,
    keys: (await keys.listOfWorkspace(workspace.id)).map(apiKeyRecord),
    ...extra,
  });
  /** The key `:key` of this workspace (a key of another workspace, or personal, is as unknown as none). */
  const keyOf = async (req: Request, workspace: Workspace) => {
    const id = String(req.params.key);
    if (!UUID.test(id)) throw noSuchKey();
    const found = (await keys.listOfWorkspace(workspace.id)).find((k) => k.id === id);
    if (!found) throw noSuchKey();
    return apiKeyRecord(found);
  };

  router.get(
    '/workspaces/:id/keys',
    kit.pageRoute('/workspaces/:id/keys', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      kit.send(res, 200, workspaceKeysPage(v.viewer, await stateOf(await managed(req, v))));
    }),
  );

  router.post(
    '/workspaces/:id/keys',
    kit.pageRoute('/workspaces/:id/keys', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const workspace = await managed(req, v);
      const now = kit.clock?.() ?? new Date();
      const input = keyFromForm(form, now, v.viewer.i18n.t);
      if (typeof input === 'string')
        return kit.send(res, 422, workspaceKeysPage(v.viewer, await stateOf(workspace, { error: input })));
      try {
        // The session holds every scope (it is the account's own), as on the token page.
        const { key, token } = await keys.create(v.user.userId, { ...input, workspaceId: workspace.id }, null, now);
        const fresh = { ...apiKeyRecord(key), token };
        kit.send(res, 201, workspaceKeysPage(v.viewer, await stateOf(workspace, { fresh })));
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw refusalPage(v.viewer, error);
        kit.send(
          res,
          422,
          workspaceKeysPage(v.viewer, await stateOf(workspace, { error: fieldsLine(v.viewer.i18n, error) })),
        );
      }
    }),
  );

  router.get(
    '/workspaces/:id/keys/:key/revoke',
    kit.pageRoute('/workspaces/:id/keys/:key/revoke', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const workspace = await managed(req, v);
      kit.send(res, 200, revokeKeyPage(v.viewer, workspace, await keyOf(req, workspace)));
    }),
  );

  router.post(
    '/workspaces/:id/keys/:key/revoke',
    kit.pageRoute('/workspaces/:id/keys/:key/revoke', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await kit.postedForm(req, v);
      const workspace = await managed(req, v);
      const key = await keyOf(req, workspace);
      try {
        await keys.revoke(v.user.userId, key.id, workspace.id);
      } catch (error) {
        // Revoked meanwhile (by another admin): as unknown as any key not there.
        if (error instanceof ApiError && error.code === 'not_found') throw noSuchKey();
        throw error;
      }
      const notice = v.viewer.i18n.t('workspaces.keys.revoked', { name: key.name });
      kit.send(res, 200, workspaceKeysPage(v.viewer, await stateOf(workspace, { notice })));
    }),
  );
}
