/**
 * The API-key operations (createApiKey, listApiKeys, revokeApiKey): the caller's own keys, or a workspace's keys for
 * its owner and admins (issue 41), never a token but once.
 */
import type { ErrorObject } from 'ajv';
import type { ApiKey } from '@secret-push/sdk/generated';
import {
  API_KEY_SCOPES,
  ApiError,
  listedWorkspace,
  requestedWorkspace,
  validationFailed,
  type FieldErrors,
} from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
import { keyWorkspace } from '../../request-context.js';
import type { ApiKeyRecord } from '../../user/api-keys.js';
import type { Handlers } from '../operations.js';

type ApiKeyHandlers = Pick<Handlers, 'createApiKey' | 'listApiKeys' | 'revokeApiKey'>;

/** A key as the contract shows it. */
export function apiKeyRecord(key: ApiKeyRecord): ApiKey {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    workspace_id: key.workspaceId,
  };
}

/** The caller's user id: these operations require a credential (the security step answered 401 otherwise). */
function userOf(ctx: RequestContext): string {
  if (!ctx.actor.userId) throw new ApiError('authentication_required');
  return ctx.actor.userId;
}

export function apiKeyHandlers(core: Core): ApiKeyHandlers {
  const keys = core.users.keys;
  /**
   * The workspace the request acts on, once the caller manages it (its owner or an admin, or its own key): the one
   * named, else the key's own; null for the personal space. 403 `forbidden` otherwise (as createPush answers).
   */
  const managed = async (named: number | null, ctx: RequestContext): Promise<number | null> => {
    const workspaceId = named ?? keyWorkspace(ctx);
    if (workspaceId === null) return null;
    if (!core.workspaces) throw new ApiError('forbidden', 'This instance has no workspaces.');
    return (await core.workspaces.membership(workspaceId, ctx, 'manage')).workspaceId;
  };
  /** The workspace of the key `id` when the caller may revoke it (null: a personal key); 404 for any other. */
  const revocable = async (id: string, ctx: RequestContext): Promise<number | null> => {
    const owner = await keys.ownerOf(id);
    const notYours = new ApiError('not_found', 'No API key of yours has this id.');
    if (!owner) throw notYours;
    if (owner.workspaceId === null) {
      if (keyWorkspace(ctx) !== null) throw notYours;
      return null;
    }
    try {
      return await managed(owner.workspaceId, ctx);
    } catch (error) {
      // A workspace the caller does not manage: the key is as unknown to them as another account's.
      if (error instanceof ApiError && error.code === 'forbidden') throw notYours;
      throw error;
    }
  };
  return {
    createApiKey: async ({ body, ctx }) => {
      const input = body.api_key;
      const workspaceId = await managed(requestedWorkspace(input as Record<string, unknown>), ctx);
      const { key, token } = await keys.create(
        userOf(ctx),
        { name: input.name, scopes: input.scopes, expiresAt: input.expires_at ?? null, workspaceId },
        ctx.scopes && ctx.key ? { ...ctx.key, scopes: ctx.scopes } : null,
        ctx.now,
      );
      return { status: 201, body: { ...apiKeyRecord(key), token } };
    },
    listApiKeys: async ({ query, ctx }) => {
      const userId = userOf(ctx);
      const workspaceId = await managed(listedWorkspace(query), ctx);
      const list = workspaceId === null ? await keys.list(userId) : await keys.listOfWorkspace(workspaceId);
      return { status: 200, body: { api_keys: list.map(apiKeyRecord) } };
    },
    revokeApiKey: async ({ params, ctx }) => {
      const userId = userOf(ctx);
      const workspaceId = await revocable(params.id, ctx);
      return { status: 200, body: apiKeyRecord(await keys.revoke(userId, params.id, workspaceId)) };
    },
  };
}

const WRAPPER = '/requestBody/api_key';

/** One validator error on a field of `api_key`, said for people (never echoing the value sent). */
function fieldMessage(field: string, rest: string[], error: ErrorObject): string {
  if (field === 'expires_at') return 'must be an ISO-8601 instant in UTC with milliseconds, or null';
  if (field === 'workspace_id') return 'must be a workspace id: a positive integer, or its digits';
  if (field === 'scopes' && rest.length > 0)
    return `item ${Number(rest[0]) + 1} must be one of ${API_KEY_SCOPES.join(', ')}`;
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not a field of api_key';
  return error.message ?? 'is invalid';
}

/**
 * createApiKey's validation errors: 400 when the body has no `api_key` object, else 422 with messages per field of
 * `api_key` (an unknown scope names its position and the list).
 */
export function apiKeyValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  if (
    errors.some(
      (e) =>
        e.instancePath === '' ||
        e.instancePath === '/requestBody' ||
        (e.instancePath === WRAPPER && e.keyword === 'type'),
    )
  ) {
    return new ApiError('bad_request', 'The request body must be a JSON object with an "api_key" object.');
  }
  const fields: FieldErrors = {};
  for (const error of errors) {
    if (error.keyword === 'oneOf' || error.keyword === 'if') continue;
    let field: string;
    let rest: string[] = [];
    if (error.instancePath === WRAPPER) {
      if (error.keyword === 'required') field = String((error.params as { missingProperty?: unknown }).missingProperty);
      else if (error.keyword === 'additionalProperties')
        field = String((error.params as { additionalProperty?: unknown }).additionalProperty);
      else continue;
    } else if (error.instancePath.startsWith(`${WRAPPER}/`)) {
      [field = 'api_key', ...rest] = error.instancePath.slice(WRAPPER.length + 1).split('/');
    } else continue;
    const list = (fields[field] ??= []);
    const message = fieldMessage(field, rest, error);
    if (!list.includes(message)) list.push(message);
  }
  if (Object.keys(fields).length === 0) return new ApiError('bad_request', 'The request is not valid.');
  return validationFailed(fields);
}
