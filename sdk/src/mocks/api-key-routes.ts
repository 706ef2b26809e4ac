/**
 * The API-key operations of the stateful mock, over ./api-keys.ts: personal keys, and a workspace's keys for its owner
 * and admins and its own keys (issue 41), by the server's rules (server/src/http/handlers/api-key-handlers.ts).
 */
import { ApiError, listedWorkspace, requestedWorkspace, type ApiKeyScope } from '@secret-push/rules';
import type { MockApiKeys } from './api-keys.js';
import type { MockActor } from './store.js';
import type { MockWorkspaces } from './workspaces.js';

/** `MockWorkspaces.managed`, with a workspace the caller does not manage as -1 (no workspace's id) instead of 403. */
function mayManage(workspaces: MockWorkspaces, named: number | null, email: string, actor: MockActor): number | null {
  try {
    return workspaces.managed(named, email, actor);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'forbidden') return -1;
    throw error;
  }
}

/** The workspace a createApiKey body names (`api_key.workspace_id`), or null. */
function requestedWorkspaceOfKey(body: unknown): number | null {
  const input = (body as { api_key?: unknown } | null)?.api_key;
  return input && typeof input === 'object' ? requestedWorkspace(input as Record<string, unknown>) : null;
}

/** What the API-key routes need of the mock's kit (server.ts). */
interface ApiKeyKit<Ctx extends { request: Request; url: URL; actor: MockActor }> {
  keys: MockApiKeys;
  workspaces: MockWorkspaces;
  store: { now(): number };
  json(ctx: Ctx, schema: string, body: unknown, status?: number): Response;
  owner(ctx: Ctx): string;
}

interface ApiKeyRoute<Ctx> {
  operationId: string;
  scope: ApiKeyScope;
  method: string;
  path: string;
  handle: (ctx: Ctx, params: Record<string, string>) => Response | Promise<Response>;
}

/** The API-key operations, over MockApiKeys: personal keys, and a workspace's for its owner and admins (issue 41). */
export function apiKeyRoutes<Ctx extends { request: Request; url: URL; actor: MockActor }>(
  kit: ApiKeyKit<Ctx>,
): ApiKeyRoute<Ctx>[] {
  const { keys, workspaces, store, json, owner } = kit;
  return [
    {
      operationId: 'createApiKey',
      scope: 'api_keys:manage',
      method: 'POST',
      path: '/api/v2/api_keys',
      handle: async (ctx) => {
        const email = owner(ctx);
        let body: unknown;
        try {
          body = await ctx.request.json();
        } catch {
          throw new ApiError('invalid_json');
        }
        const workspaceId = workspaces.managed(requestedWorkspaceOfKey(body), email, ctx.actor);
        return json(
          ctx,
          'ApiKeyCreated',
          keys.create(email, body, ctx.actor.grantor ?? null, store.now(), workspaceId),
          201,
        );
      },
    },
    {
      operationId: 'listApiKeys',
      scope: 'api_keys:manage',
      method: 'GET',
      path: '/api/v2/api_keys',
      handle: (ctx) => {
        const email = owner(ctx);
        const named = listedWorkspace(Object.fromEntries(ctx.url.searchParams));
        const workspaceId = workspaces.managed(named, email, ctx.actor);
        return json(ctx, 'ApiKeyList', { api_keys: keys.list(email, workspaceId) });
      },
    },
    {
      operationId: 'revokeApiKey',
      scope: 'api_keys:manage',
      method: 'DELETE',
      path: '/api/v2/api_keys/{id}',
      handle: (ctx, { id }) => {
        const email = owner(ctx);
        const workspaceId = keys.workspaceOf(id!);
        // A personal key asked with a workspace's key, or a workspace's the caller does not manage: unknown to them.
        if (mayManage(workspaces, workspaceId, email, ctx.actor) !== workspaceId)
          throw new ApiError('not_found', 'No API key of yours has this id.');
        return json(ctx, 'ApiKey', keys.revoke(email, id!, workspaceId));
      },
    },
  ];
}
