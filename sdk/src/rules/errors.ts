/**
 * Every failure the API answers, as one code → status table, and the one error type that carries it. The server's
 * API and pages, and the stateful mock, all throw `ApiError` and build the spec's ErrorResponse with `errorBody`, so
 * a code answers the same status everywhere.
 */
import { PushInputSchema } from '../generated/schemas.gen.js';
import type { ErrorResponse } from '../generated/types.gen.js';

export const ERROR_STATUS = {
  bad_request: 400,
  invalid_json: 400,
  invalid_form: 400,
  invalid_encoding: 400,
  missing_push: 400,
  invalid_page: 400,
  invalid_parameter: 400,
  unsupported_media_type: 400,
  authentication_required: 401,
  invalid_token: 401,
  passphrase_required: 401,
  passphrase_incorrect: 401,
  forbidden: 403,
  invalid_link: 403,
  link_expired: 403,
  csrf_rejected: 403,
  not_found: 404,
  no_route: 404,
  method_not_allowed: 405,
  /** Answered by the HTTP server itself when a request's headers (or body) do not arrive in time (http/client-error.ts). */
  request_timeout: 408,
  idempotency_key_in_use: 409,
  /** The v1 API only: an end-to-end encrypted push, which its records cannot mark as such (nothing is counted). */
  end_to_end_encrypted: 409,
  payload_too_large: 413,
  /** The web pages' JSON steps only (never the API, whose decisions allow no 415: it answers unsupported_media_type). */
  body_not_json: 415,
  validation_failed: 422,
  idempotency_key_reused: 422,
  too_many_attempts: 429,
  rate_limited: 429,
  /** A storage quota (anonymous bytes per address per hour, or a user's active bytes); the message names which. */
  storage_quota_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type FieldErrors = Record<string, string[]>;

export interface ApiErrorDetails {
  /** Messages per field (422 `errors`). */
  fields?: FieldErrors;
  /** Seconds before a retry makes sense (429, 503): `Retry-After` and `retry_after`. */
  retryAfterSeconds?: number;
  /** Extra response headers (`Allow` on 405). */
  headers?: Record<string, string>;
  /** A finer reason than the code, for metrics only (which storage quota refused); never sent. */
  reason?: string;
}

/** A failure with a stable code; its status comes from ERROR_STATUS. Messages never carry submitted values. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ApiErrorDetails = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

/** Seconds a client should wait after a 503 before trying again. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

/** The spec's ErrorResponse for an ApiError. */
export function errorBody(error: ApiError, requestId?: string): ErrorResponse {
  const body: ErrorResponse = { error: error.message, code: error.code };
  if (error.details.fields) body.errors = error.details.fields;
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) body.retry_after = retryAfter;
  if (requestId) body.request_id = requestId;
  return body;
}

/** The Retry-After a 429 or 503 carries (a default when the thrower gave none); undefined for other statuses. */
export function retryAfterOf(error: ApiError): number | undefined {
  if (error.status === 503) return error.details.retryAfterSeconds ?? UNAVAILABLE_RETRY_SECONDS;
  if (error.status === 429) return error.details.retryAfterSeconds ?? 60;
  return undefined;
}

/**
 * The challenge of a passphrase 401: HTTP requires one on every 401 (RFC 9110 §15.5.2), and a Bearer challenge would
 * tell the client to sign in, which does not help. The scheme is ours; its parameter names the header to send.
 */
export const PASSPHRASE_CHALLENGE = 'Passphrase header="X-Passphrase"';

/** The challenge each 401 sends: Bearer for the token codes, the passphrase challenge for the passphrase codes. */
const CHALLENGES: Partial<Record<ErrorCode, string>> = {
  invalid_token: 'Bearer',
  authentication_required: 'Bearer',
  passphrase_required: PASSPHRASE_CHALLENGE,
  passphrase_incorrect: PASSPHRASE_CHALLENGE,
};

/** The response headers an ApiError answers with: its own, Retry-After on 429/503, WWW-Authenticate on every 401. */
export function errorHeaders(error: ApiError): Record<string, string> {
  const headers: Record<string, string> = { ...error.details.headers };
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  const challenge = CHALLENGES[error.code];
  if (challenge) headers['WWW-Authenticate'] = challenge;
  return headers;
}

export function notFound(): ApiError {
  return new ApiError('not_found', 'No push has this token.');
}

/** The order of `PushInput`'s properties: a 422 lists fields (and names the first) in this order. */
const FIELD_ORDER = Object.keys(PushInputSchema.properties);

function fieldRank(field: string): number {
  const i = FIELD_ORDER.indexOf(field);
  return i === -1 ? FIELD_ORDER.length : i;
}

/**
 * Most messages a 422 lists for one field (ErrorResponse `errors`, `maxItems`): past it, the last one says how many
 * more there were. `error` counts them all.
 */
export const MAX_FIELD_MESSAGES = 10;

/**
 * 422 validation_failed with messages per field, in `PushInput`'s order. Many clients print only `error`, so it says
 * what to fix: the first failing field and its first message (`expire_after_views: must be at most 100`), and how many
 * more there are. A field lists its first messages only (MAX_FIELD_MESSAGES, the last saying how many more).
 */
export function validationFailed(fields: FieldErrors): ApiError {
  const ordered: FieldErrors = {};
  for (const field of Object.keys(fields).sort((a, b) => fieldRank(a) - fieldRank(b))) {
    const messages = fields[field]!;
    ordered[field] =
      messages.length <= MAX_FIELD_MESSAGES
        ? messages
        : [...messages.slice(0, MAX_FIELD_MESSAGES - 1), `and ${messages.length - (MAX_FIELD_MESSAGES - 1)} more`];
  }
  const [first] = Object.entries(ordered);
  const total = Object.values(fields).reduce((n, messages) => n + messages.length, 0);
  const message = first ? `${first[0]}: ${first[1][0] ?? 'is invalid'}${total > 1 ? ` (and ${total - 1} more)` : ''}` : 'The push is invalid.';
  return new ApiError('validation_failed', message, { fields: ordered });
}
