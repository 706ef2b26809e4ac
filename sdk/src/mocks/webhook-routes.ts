/**
 * The webhook operations of the stateful mock, over ./webhooks.ts: personal webhooks, and a workspace's for its owner
 * and admins and its own API keys (issue 41), by the server's rules (server/src/http/handlers/webhook-scope.ts): a
 * create or a list naming a workspace the caller does not manage → 403; a workspace's webhook is unknown (404) to
 * anyone who does not manage it, and a personal webhook to a workspace's key. The mock sends nothing.
 */
import { ApiError, listedWorkspace, requestedWorkspace, type ApiKeyScope } from '@secret-push/rules';
import type { MockActor } from './store.js';
import type { MockHookScope, MockWebhooks } from './webhooks.js';
import type { MockWorkspaces } from './workspaces.js';

/** What the webhook routes need of the mock's kit (server.ts). */
interface WebhookKit<Ctx extends { request: Request; url: URL; actor: MockActor }> {
  hooks: MockWebhooks;
  workspaces: MockWorkspaces;
  store: { now(): number };
  json(ctx: Ctx, schema: string, body: unknown, status?: number, extra?: Record<string, string>): Response;
  owner(ctx: Ctx): string;
  parsePage(url: URL): number;
  paging(ctx: Ctx, path: string, page: number, total: number): Record<string, string>;
}

interface WebhookRoute<Ctx> {
  operationId: string;
  scope: ApiKeyScope;
  method: string;
  path: string;
  handle: (ctx: Ctx, params: Record<string, string>) => Response | Promise<Response>;
}

/** A JSON body, or 400 invalid_json. */
async function jsonBody(request: Request): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw new ApiError('invalid_json');
  }
}

/** The workspace a createWebhook body names (`webhook.workspace_id`), or null. */
function requestedWorkspaceOfHook(body: unknown): number | null {
  const input = (body as { webhook?: unknown } | null)?.webhook;
  return input && typeof input === 'object' ? requestedWorkspace(input as Record<string, unknown>) : null;
}

export function webhookRoutes<Ctx extends { request: Request; url: URL; actor: MockActor }>(
  kit: WebhookKit<Ctx>,
): WebhookRoute<Ctx>[] {
  const { store, hooks, workspaces, json, owner, parsePage, paging } = kit;
  const at = (path: string) => `/api/v2/webhooks${path}`;
  const route = (operationId: string, method: string, path: string, handle: WebhookRoute<Ctx>['handle']) => ({
    operationId,
    scope: 'webhooks:manage' as const,
    method,
    path: at(path),
    handle,
  });
  /** The scope a create or a list acts in: the workspace named (or the key's own) once the caller manages it. */
  const named = (ctx: Ctx, workspace: number | null): MockHookScope => {
    const email = owner(ctx);
    return { email, workspaceId: workspaces.managed(workspace, email, ctx.actor) };
  };
  /** The scope of the webhook `id` for the caller; 404 when they may not act on it. */
  const ofHook = (ctx: Ctx, id: string): MockHookScope => {
    owner(ctx); // 401 before anything is looked up
    const found = hooks.ownerOf(id);
    const notYours = new ApiError('not_found', 'No webhook of yours has this id.');
    if (!found) throw notYours;
    try {
      const scope = named(ctx, found.workspaceId);
      if (scope.workspaceId !== found.workspaceId) throw notYours;
      return scope;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'forbidden') throw notYours;
      throw error;
    }
  };
  return [
    route('createWebhook', 'POST', '', async (ctx) => {
      const body = await jsonBody(ctx.request);
      const scope = named(ctx, requestedWorkspaceOfHook(body));
      return json(ctx, 'WebhookCreated', hooks.create(scope, body, store.now()), 201);
    }),
    route('listWebhooks', 'GET', '', (ctx) => {
      const scope = named(ctx, listedWorkspace(Object.fromEntries(ctx.url.searchParams)));
      return json(ctx, 'WebhookList', { webhooks: hooks.list(scope) });
    }),
    route('getWebhook', 'GET', '/{id}', (ctx, { id }) => json(ctx, 'Webhook', hooks.get(ofHook(ctx, id!), id!))),
    route('deleteWebhook', 'DELETE', '/{id}', (ctx, { id }) =>
      json(ctx, 'Webhook', hooks.remove(ofHook(ctx, id!), id!)),
    ),
    route('rotateWebhookSecret', 'POST', '/{id}/rotate_secret', (ctx, { id }) =>
      json(ctx, 'WebhookRotated', hooks.rotate(ofHook(ctx, id!), id!, store.now())),
    ),
    route('testWebhook', 'POST', '/{id}/test', (ctx, { id }) =>
      json(ctx, 'WebhookDelivery', hooks.test(ofHook(ctx, id!), id!, store.now()), 202),
    ),
    route('listWebhookDeliveries', 'GET', '/{id}/deliveries', (ctx, { id }) => {
      const page = parsePage(ctx.url);
      const all = hooks.deliveries(ofHook(ctx, id!), id!);
      const items = all.slice((page - 1) * 50, page * 50);
      return json(
        ctx,
        'WebhookDeliveryList',
        { deliveries: items },
        200,
        paging(ctx, at(`/${id}/deliveries`), page, all.length),
      );
    }),
    route('retryWebhookDelivery', 'POST', '/{id}/deliveries/{delivery_id}/retry', (ctx, { id, delivery_id: d }) =>
      json(ctx, 'WebhookDelivery', hooks.retry(ofHook(ctx, id!), id!, d!, store.now()), 202),
    ),
  ];
}
