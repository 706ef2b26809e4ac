/**
 * Whose webhooks a webhook operation acts on (issue 41; docs/workspaces.md, "A workspace's webhooks"): the caller's
 * personal ones, or a workspace's, for its owner and admins and its own API keys. A create or a list names the
 * workspace (`workspace_id`; a workspace's key without naming it means its own): anyone else gets 403 `forbidden`,
 * as createApiKey and listApiKeys answer. An operation on one webhook finds whose it is first: a workspace's webhook
 * is as unknown to anyone who does not manage the workspace as another account's (404), and a personal webhook is
 * unknown to a workspace's key.
 */
import { ApiError } from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
import { keyWorkspace } from '../../request-context.js';
import type { HookScope } from '../../webhooks/webhook-repository.js';
import type { WebhookService } from '../../webhooks/webhook-service.js';

/** The caller's user id: these operations require a credential (the security step answered 401 otherwise). */
function userOf(ctx: RequestContext): string {
  if (!ctx.actor.userId) throw new ApiError('authentication_required');
  return ctx.actor.userId;
}

export interface WebhookScopes {
  /** The scope a create or a list acts in: the workspace named (or the key's own) once the caller manages it. */
  named(workspaceId: number | null, ctx: RequestContext): Promise<HookScope>;
  /** The scope of the webhook `id` when the caller may act on it; 404 `not_found` for anyone else. */
  ofHook(hooks: WebhookService, id: string, ctx: RequestContext): Promise<HookScope>;
}

export function webhookScopes(core: Core): WebhookScopes {
  const named = async (workspace: number | null, ctx: RequestContext): Promise<HookScope> => {
    const userId = userOf(ctx);
    const workspaceId = workspace ?? keyWorkspace(ctx);
    if (workspaceId === null) return { userId, workspaceId: null };
    if (!core.workspaces) throw new ApiError('forbidden', 'This instance has no workspaces.');
    return { userId, workspaceId: (await core.workspaces.membership(workspaceId, ctx, 'manage')).workspaceId };
  };
  return {
    named,
    async ofHook(hooks, id, ctx) {
      const userId = userOf(ctx);
      const owner = await hooks.ownerOf(id);
      const notYours = new ApiError('not_found', 'No webhook of yours has this id.');
      if (!owner) throw notYours;
      if (owner.workspaceId === null) {
        if (owner.userId !== userId || keyWorkspace(ctx) !== null) throw notYours;
        return { userId, workspaceId: null };
      }
      try {
        return await named(owner.workspaceId, ctx);
      } catch (error) {
        // A workspace the caller does not manage: its webhook is as unknown to them as another account's.
        if (error instanceof ApiError && error.code === 'forbidden') throw notYours;
        throw error;
      }
    },
  };
}
