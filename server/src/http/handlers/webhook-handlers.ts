/**
 * The webhook operations (createWebhook … retryWebhookDelivery): the caller's own webhooks, or a workspace's for its
 * owner and admins (./webhook-scope.ts; server/src/webhooks/webhook-service.ts). With webhooks off
 * (PWPUSH_WEBHOOKS=false) the routes do not exist (404).
 */
import type { ErrorObject } from 'ajv';
import {
  ApiError,
  listedWorkspace,
  pagingHeaders,
  parsePage,
  requestedWorkspace,
  turnOn,
  validationFailed,
  type FieldErrors,
} from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
import type { WebhookService } from '../../webhooks/webhook-service.js';
import type { Handlers } from '../operations.js';
import { webhookScopes } from './webhook-scope.js';

type WebhookHandlers = Pick<
  Handlers,
  | 'createWebhook'
  | 'listWebhooks'
  | 'getWebhook'
  | 'deleteWebhook'
  | 'rotateWebhookSecret'
  | 'testWebhook'
  | 'listWebhookDeliveries'
  | 'retryWebhookDelivery'
>;

export function webhookHandlers(core: Core): WebhookHandlers {
  const scopes = webhookScopes(core);
  /** The service (these operations require a credential: the security step answered 401 otherwise). */
  const on = (ctx: RequestContext): WebhookService => {
    if (!core.webhooks)
      throw new ApiError('no_route', `Webhooks are off on this instance. ${turnOn('webhooks', core.settings.env)}`);
    if (!ctx.actor.userId) throw new ApiError('authentication_required');
    return core.webhooks;
  };
  /** The service and the scope of the webhook `id` (404 when the caller may not act on it). */
  const onHook = async (id: string, ctx: RequestContext) => {
    const hooks = on(ctx);
    return [hooks, await scopes.ofHook(hooks, id, ctx)] as const;
  };
  return {
    createWebhook: async ({ body, ctx }) => {
      const hooks = on(ctx);
      const scope = await scopes.named(requestedWorkspace(body.webhook as Record<string, unknown>), ctx);
      return { status: 201, body: await hooks.create(scope, body.webhook, ctx.now) };
    },
    listWebhooks: async ({ query, ctx }) => {
      const hooks = on(ctx);
      const scope = await scopes.named(listedWorkspace(query), ctx);
      return { status: 200, body: { webhooks: await hooks.list(scope) } };
    },
    getWebhook: async ({ params, ctx }) => {
      const [hooks, scope] = await onHook(params.id, ctx);
      return { status: 200, body: await hooks.get(scope, params.id) };
    },
    deleteWebhook: async ({ params, ctx }) => {
      const [hooks, scope] = await onHook(params.id, ctx);
      return { status: 200, body: await hooks.remove(scope, params.id) };
    },
    rotateWebhookSecret: async ({ params, ctx }) => {
      const [hooks, scope] = await onHook(params.id, ctx);
      return { status: 200, body: await hooks.rotate(scope, params.id, ctx.now) };
    },
    testWebhook: async ({ params, ctx }) => {
      const [hooks, scope] = await onHook(params.id, ctx);
      return { status: 202, body: await hooks.test(scope, params.id, ctx.now) };
    },
    listWebhookDeliveries: async ({ params, query, ctx }) => {
      const [hooks, scope] = await onHook(params.id, ctx);
      const page = parsePage(query.page);
      const result = await hooks.deliveries(scope, params.id, page);
      const url = `${ctx.baseUrl}/api/v2/webhooks/${encodeURIComponent(params.id)}/deliveries`;
      return { status: 200, body: { deliveries: result.items }, headers: pagingHeaders(url, page, result.total) };
    },
    retryWebhookDelivery: async ({ params, ctx }) => {
      const [hooks, scope] = await onHook(params.id, ctx);
      return { status: 202, body: await hooks.retry(scope, params.id, params.delivery_id, ctx.now) };
    },
  };
}

const WRAPPER = '/requestBody/webhook';

function fieldMessage(field: string, error: ErrorObject): string {
  if (field === 'url') return 'must be an absolute http(s) URL of at most 2048 characters';
  if (field === 'events')
    return 'must list 1 to 11 different events of push.created, push.viewed, push.failed_passphrase, push.expired, push.deleted, request.created, request.fulfilled, request.collected, request.expired, request.revoked, webhook.test';
  if (field === 'description') return 'must be a text of at most 200 characters';
  if (field === 'workspace_id') return 'must be a workspace id: a positive integer, or its digits';
  if (error.keyword === 'additionalProperties') return 'is not a field of webhook';
  return error.message ?? 'is invalid';
}

/** createWebhook's validation errors: 400 without a `webhook` object, else 422 per field (never echoing a value). */
export function webhookValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  const noWrapper = errors.some(
    (e) =>
      e.instancePath === '' ||
      e.instancePath === '/requestBody' ||
      (e.instancePath === WRAPPER && e.keyword === 'type'),
  );
  if (noWrapper) {
    return new ApiError('bad_request', 'The request body must be a JSON object with a "webhook" object.');
  }
  const fields: FieldErrors = {};
  for (const error of errors) {
    let field: string;
    if (error.instancePath === WRAPPER && error.keyword === 'required') {
      field = String((error.params as { missingProperty?: unknown }).missingProperty);
    } else if (error.instancePath.startsWith(`${WRAPPER}/`)) {
      field = error.instancePath.slice(WRAPPER.length + 1).split('/')[0]!;
    } else continue;
    const message = error.keyword === 'required' ? 'is required' : fieldMessage(field, error);
    const list = (fields[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  if (Object.keys(fields).length === 0) return new ApiError('bad_request', 'The request is not valid.');
  return validationFailed(fields);
}
