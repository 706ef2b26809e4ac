/** The API-key operations (createApiKey, listApiKeys, revokeApiKey): the caller's own keys, never a token but once. */
import type { ErrorObject } from 'ajv';
import type { ApiKey } from '@secret-push/sdk/generated';
import { API_KEY_SCOPES, ApiError, validationFailed, type FieldErrors } from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
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
  };
}

/** The caller's user id: these operations require a credential (the security step answered 401 otherwise). */
function userOf(ctx: RequestContext): string {
  if (!ctx.actor.userId) throw new ApiError('authentication_required');
  return ctx.actor.userId;
}

export function apiKeyHandlers(core: Core): ApiKeyHandlers {
  const keys = core.users.keys;
  return {
    createApiKey: async ({ body, ctx }) => {
      const input = body.api_key;
      const { key, token } = await keys.create(
        userOf(ctx),
        { name: input.name, scopes: input.scopes, expiresAt: input.expires_at ?? null },
        ctx.scopes && ctx.key ? { ...ctx.key, scopes: ctx.scopes } : null,
        ctx.now,
      );
      return { status: 201, body: { ...apiKeyRecord(key), token } };
    },
    listApiKeys: async ({ ctx }) => ({
      status: 200,
      body: { api_keys: (await keys.list(userOf(ctx))).map(apiKeyRecord) },
    }),
    revokeApiKey: async ({ params, ctx }) => ({
      status: 200,
      body: apiKeyRecord(await keys.revoke(userOf(ctx), params.id)),
    }),
  };
}

const WRAPPER = '/requestBody/api_key';

/** One validator error on a field of `api_key`, said for people (never echoing the value sent). */
function fieldMessage(field: string, rest: string[], error: ErrorObject): string {
  if (field === 'expires_at') return 'must be an ISO-8601 instant in UTC with milliseconds, or null';
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
