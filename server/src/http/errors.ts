/**
 * The one place that turns every failure into the spec's ErrorResponse, for the API and the pages' JSON steps alike:
 * request validation, authentication, rule failures (ApiError, with its status from the one table in
 * `@secret-push/rules`), body parsing, database outages and anything unexpected.
 */
import type { ErrorObject } from 'ajv';
import type { ServerResponse } from 'node:http';
import { ApiError, errorBody, errorHeaders, pushFieldErrors, validationFailed } from '@secret-push/rules';
import { isConnectionError } from '../db/database-errors.js';
import { UnstorableTextError } from '../db/sql.js';
import { writeJson } from './answer.js';
import { fieldValue, state } from './middleware.js';

export { ApiError };

/** Maps anything thrown to an ApiError. Unknown failures become a bare 500. */
function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const bodyParserType = (error as { type?: unknown } | null)?.type;
  if (bodyParserType === 'entity.too.large') {
    return new ApiError('payload_too_large');
  }
  if (bodyParserType === 'entity.parse.failed') {
    return new ApiError('invalid_json');
  }
  if (bodyParserType === 'encoding.unsupported' || bodyParserType === 'charset.unsupported') {
    return new ApiError('unsupported_media_type', 'The request body encoding is not supported.');
  }
  if (error instanceof UnstorableTextError) {
    return new ApiError('bad_request', 'The request holds a character that cannot be stored (NUL).');
  }
  if (isConnectionError(error)) {
    return new ApiError('service_unavailable');
  }
  return new ApiError('internal_error');
}

/** What a log line may say about an unexpected failure: its class, code and stack frames, never its message. */
export function describeFailure(error: unknown): { name: string; code?: string; stack?: string } {
  if (!(error instanceof Error)) return { name: typeof error };
  const code = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .slice(0, 12)
    .join('\n');
  return { name: error.name, ...(typeof code === 'string' ? { code } : {}), stack: frames };
}

/**
 * Answers an error as JSON (status, headers and body), unless the response has already started. `extra` adds keys a
 * document defines beyond ErrorResponse's (v1's passphrase 401 carries the reference's `message` and `status`).
 */
export function sendError(
  res: ServerResponse,
  error: ApiError,
  requestId: string | undefined,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) {
    // A late failure (e.g. the safety-net timeout already answered): nothing more can be sent.
    if (!res.writableEnded) res.destroy();
    return;
  }
  const headers: string[] = [];
  for (const [name, value] of Object.entries(errorHeaders(error))) headers.push(name, fieldValue(res, name, value));
  const s = state(res);
  s.errorCode = error.code;
  if (error.details.reason) s.errorReason = error.details.reason;
  writeJson(res, error.status, { ...errorBody(error, requestId), ...extra }, headers);
}

/** A document's own error shape (v1's): the error it answers with, and the keys it adds to the body. */
export type ErrorShape = (error: ApiError, res: ServerResponse) => { error: ApiError; extra?: Record<string, string> };

/**
 * Answers any failure: as the ApiError it maps to (toApiError), in the document's shape when it has one; an
 * unexpected failure (a 5xx that is not an ApiError) is described for the request's log line. The pages, the v2
 * edge and the v1 edge all answer failures here.
 */
export function answerFailure(res: ServerResponse, error: unknown, shape?: ErrorShape): void {
  const apiError = toApiError(error);
  if (apiError.status >= 500 && !(error instanceof ApiError)) state(res).failure = describeFailure(error);
  const shaped = shape ? shape(apiError, res) : { error: apiError };
  sendError(res, shaped.error, state(res).requestId, shaped.extra);
}

// ---------------------------------------------------------------------------------------------------------------
// Request validation (openapi-backend + Ajv) → 400 / 422

/** Where openapi-backend's request object holds the push (`{ requestBody: { push } }`). */
const PUSH_PATH = '/requestBody/push';

/**
 * Turns openapi-backend's validation errors into the right ApiError: 400 for the body's envelope, the `page`
 * parameter and other parameters; 422 with messages per field for anything inside `push`.
 */
export function validationError(errors: ErrorObject[], wrapper: 'push' | 'request' = 'push'): ApiError {
  const path = wrapper === 'push' ? PUSH_PATH : `/requestBody/${wrapper}`;
  if (errors.some((e) => e.keyword === 'parse')) {
    return new ApiError('invalid_json');
  }
  // A workspace named beside the wrapper (Raycast's `workspace_id`, pwpush-cli's `account_id`) or inside it that is no
  // id: the same 422 on `workspace_id` a form field gets (rules/src/workspaces.ts). Before the envelope's check: beside
  // `password`, the body's oneOf fails as a whole too, and "needs a push object" would be wrong.
  const workspace = errors.find((e) =>
    /^\/requestBody(\/push|\/request)?\/(workspace_id|account_id)$/.test(e.instancePath),
  );
  if (workspace)
    return validationFailed({ workspace_id: [`${workspace.instancePath.split('/').pop()} must be a workspace id`] });
  const envelope = errors.some(
    (e) =>
      e.instancePath === '' || e.instancePath === '/requestBody' || (e.instancePath === path && e.keyword === 'type'),
  );
  if (envelope) {
    // The first guess of a newcomer is often the bare fields: say the shape that works.
    const example = wrapper === 'push' ? '{"push":{"payload":"…"}}' : '{"request":{"request":"…"}}';
    return new ApiError(
      'missing_push',
      `The request body must be a JSON object with a "${wrapper}" object: ${example}.`,
    );
  }
  const parameterErrors = errors.filter((e) => /^\/(path|query|header|cookie)(\/|$)/.test(e.instancePath));
  if (parameterErrors.some((e) => e.instancePath === '/query/page')) {
    return new ApiError('invalid_page', 'The page parameter must be an integer from 1 to 200.');
  }
  if (parameterErrors.length > 0 && parameterErrors.every((e) => e.instancePath === '/path/url_token')) {
    // No push can have a token outside the parameter's bounds: the contract says any unknown value answers 404.
    return new ApiError('not_found');
  }
  if (parameterErrors.length > 0) {
    return new ApiError(
      'invalid_parameter',
      `Invalid or missing parameter: ${parameterNames(parameterErrors).join(', ')}.`,
    );
  }
  const fields = pushFieldErrors(errors, path);
  if (Object.keys(fields).length === 0) return new ApiError('bad_request', 'The request is not valid.');
  return validationFailed(fields);
}

/**
 * The same for an operation whose body holds its fields at the top level (`notifyEmails`): a body that is not an
 * object is 400; a field that breaks the schema is 422 with messages per field (a missing field is required).
 */
export function topLevelValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  if (errors.some((e) => (e.instancePath === '' || e.instancePath === '/requestBody') && e.keyword === 'type')) {
    return new ApiError('bad_request', 'The request body must be a JSON object.');
  }
  const fields = pushFieldErrors(errors, '/requestBody');
  return Object.keys(fields).length > 0 ? validationFailed(fields) : validationError(errors);
}

function parameterNames(errors: ErrorObject[]): string[] {
  const names = errors.map((e) => {
    const [, where, name] = e.instancePath.split('/');
    if (name) return name;
    if (e.keyword === 'required') return String((e.params as { missingProperty?: unknown }).missingProperty);
    if (e.keyword === 'additionalProperties')
      return String((e.params as { additionalProperty?: unknown }).additionalProperty);
    return where ?? 'parameter';
  });
  return [...new Set(names)];
}
