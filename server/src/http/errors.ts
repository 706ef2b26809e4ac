/**
 * The one place that turns every failure into the spec's ErrorResponse: request validation, authentication,
 * domain errors, body parsing, database outages and anything unexpected.
 */
import type { ErrorObject } from 'ajv';
import { DomainError, type DomainErrorCode } from '../domain/contract.js';
import { pushFieldErrors } from '../domain/schema-errors.js';
import type { ErrorResponse } from '../../../sdk/src/generated/types.gen.js';

/** An error the HTTP layer raises itself; carries everything the body and headers need. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: {
      fields?: Record<string, string[]>;
      retryAfterSeconds?: number;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

const DOMAIN_STATUS: Record<DomainErrorCode, number> = {
  not_found: 404,
  authentication_required: 401,
  forbidden: 403,
  passphrase_required: 401,
  passphrase_incorrect: 401,
  too_many_attempts: 429,
  validation_failed: 422,
  invalid_link: 403,
  link_expired: 403,
  service_unavailable: 503,
};

/** Seconds a client should wait after a 503 before trying again. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

// Error codes of node's net layer, pg and PostgreSQL (class 08 connection exceptions, 57P0x shutdown/starting up,
// 53300 too many connections) that mean "the database is not reachable right now".
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);
const CONNECTION_MESSAGES =
  /connection terminated|connection refused|timeout exceeded when trying to connect|terminating connection|client has encountered a connection error|connection (?:is )?closed|cannot use a pool after calling end|not queryable|econnrefused|statement timeout|canceling statement due to statement timeout|the database system is (?:starting up|shutting down)/i;

/** Whether an error (or one of its causes) means the database is unreachable. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) return true;
    if (e.name === 'ConnectionException') return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
    // AggregateError (a dual-stack connect that failed on every address).
    if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = e.cause;
  }
  return false;
}

/** Maps anything thrown to an HttpError. Unknown failures become a bare 500. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) {
    const status = DOMAIN_STATUS[error.code] ?? 500;
    const retryAfterSeconds =
      error.details.retryAfterSeconds ?? (error.code === 'service_unavailable' ? UNAVAILABLE_RETRY_SECONDS : undefined);
    return new HttpError(status, error.code, error.message, {
      fields: error.code === 'validation_failed' ? (error.details.fields ?? {}) : undefined,
      retryAfterSeconds: status === 429 || status === 503 ? (retryAfterSeconds ?? 60) : undefined,
    });
  }
  const bodyParserType = (error as { type?: unknown } | null)?.type;
  if (bodyParserType === 'entity.too.large') {
    return new HttpError(413, 'payload_too_large', 'The request body is larger than this instance accepts.');
  }
  if (bodyParserType === 'entity.parse.failed') {
    return new HttpError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (bodyParserType === 'encoding.unsupported' || bodyParserType === 'charset.unsupported') {
    return new HttpError(400, 'unsupported_media_type', 'The request body encoding is not supported.');
  }
  if (isDatabaseUnavailable(error)) {
    return new HttpError(503, 'service_unavailable', 'The service is temporarily unavailable. Try again shortly.', {
      retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
    });
  }
  return new HttpError(500, 'internal_error', 'Something went wrong on our side.');
}

/** The ErrorResponse body (and headers) for an HttpError. */
export function errorBody(error: HttpError, requestId: string | undefined): ErrorResponse {
  const body: ErrorResponse = { error: error.message, code: error.code };
  if (error.extra.fields) body.errors = error.extra.fields;
  if (error.extra.retryAfterSeconds !== undefined) body.retry_after = error.extra.retryAfterSeconds;
  if (requestId) body.request_id = requestId;
  return body;
}

// ---------------------------------------------------------------------------------------------------------------
// Request validation (openapi-backend + Ajv) → 400 / 422

/** Where openapi-backend's request object holds the push (`{ requestBody: { push } }`). */
const PUSH_PATH = '/requestBody/push';

/**
 * Turns openapi-backend's validation errors into the right HttpError: 400 for the body's envelope, the `page`
 * parameter and other parameters; 422 with messages per field for anything inside `push`.
 */
export function validationError(errors: ErrorObject[]): HttpError {
  if (errors.some((e) => e.keyword === 'parse')) {
    return new HttpError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  const envelope = errors.some(
    (e) =>
      e.instancePath === '' ||
      e.instancePath === '/requestBody' ||
      (e.instancePath === '/requestBody/push' && e.keyword === 'type'),
  );
  if (envelope) {
    return new HttpError(400, 'missing_push', 'The request body must be a JSON object with a "push" object.');
  }
  const parameterErrors = errors.filter((e) => /^\/(path|query|header|cookie)(\/|$)/.test(e.instancePath));
  if (parameterErrors.some((e) => e.instancePath === '/query/page')) {
    return new HttpError(400, 'invalid_page', 'The page parameter must be an integer from 1 to 200.');
  }
  if (parameterErrors.length > 0 && parameterErrors.every((e) => e.instancePath === '/path/url_token')) {
    // No push can have a token outside the parameter's bounds: the contract says any unknown value answers 404.
    return new HttpError(404, 'not_found', 'No push has this token.');
  }
  if (parameterErrors.length > 0) {
    const names = [
      ...new Set(
        parameterErrors.map((e) => {
          const [, where, name] = e.instancePath.split('/');
          if (name) return name;
          if (e.keyword === 'required') return String((e.params as { missingProperty?: unknown }).missingProperty);
          if (e.keyword === 'additionalProperties') {
            return String((e.params as { additionalProperty?: unknown }).additionalProperty);
          }
          return where ?? 'parameter';
        }),
      ),
    ];
    return new HttpError(400, 'invalid_parameter', `Invalid or missing parameter: ${names.join(', ')}.`);
  }
  const fields = pushFieldErrors(errors, PUSH_PATH);
  if (Object.keys(fields).length === 0) {
    return new HttpError(400, 'bad_request', 'The request is not valid.');
  }
  return new HttpError(422, 'validation_failed', 'The push is not valid.', { fields });
}
