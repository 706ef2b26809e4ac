/**
 * The error catalogue: every failure the API answers, by code, with its status and the message it gives when the
 * thrower has nothing more specific to say, and the one error type that carries a code. The server's API and pages,
 * and the stateful mock, all throw `ApiError` and answer with `errorBody` and `errorHeaders`, so a code answers the
 * same status everywhere; openapi/errors.test.ts walks this catalogue against both contracts (every code documented
 * with its status, every example's code in the catalogue with the status it is shown under).
 */
import { PushInputSchema } from './generated/schemas.gen.js';
import type { ErrorResponse } from './generated/types.gen.js';
import { insufficientScopeChallenge } from './scopes.js';

interface CatalogueEntry {
  readonly status: number;
  readonly message: string;
}

export const ERRORS = {
  bad_request: { status: 400, message: 'The request is not valid.' },
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_form: { status: 400, message: 'The request body is not a valid form.' },
  invalid_encoding: { status: 400, message: 'The request body does not decode as its Content-Encoding says.' },
  missing_push: {
    status: 400,
    message: 'The request body must be a JSON object with a "push" object: {"push":{"payload":"…"}}.',
  },
  invalid_page: { status: 400, message: 'The page parameter must be an integer from 1 to 200.' },
  invalid_parameter: { status: 400, message: 'Invalid or missing parameter.' },
  unsupported_media_type: { status: 400, message: 'The request body has a media type this operation does not take.' },
  authentication_required: { status: 401, message: 'This needs an API token.' },
  invalid_token: { status: 401, message: 'The API token is not valid.' },
  passphrase_required: { status: 401, message: 'This push needs its passphrase.' },
  passphrase_incorrect: { status: 401, message: 'That passphrase is not correct.' },
  access_code_required: {
    status: 401,
    message: 'Only the people the sender named may open this push: ask for a code (requestAccessCode).',
  },
  access_code_incorrect: { status: 401, message: 'That access code is not correct, or it has expired or been used.' },
  forbidden: { status: 403, message: 'You may not do this.' },
  /** An API key without the scope the operation declares; `details.scopes` names it (message and challenge). */
  insufficient_scope: { status: 403, message: 'This API key lacks the scope this operation needs.' },
  /** A member without two-factor sign-in, in a workspace that requires it (`require_two_factor`). */
  two_factor_required: {
    status: 403,
    message: 'This workspace requires two-factor sign-in: turn it on for your account, then try again.',
  },
  /**
   * A member whose credential did not come through single sign-on, in a workspace that requires it
   * (`require_single_sign_on`).
   */
  single_sign_on_required: {
    status: 403,
    message: 'This workspace requires single sign-on: sign in with your single sign-on, then try again.',
  },
  invalid_link: { status: 403, message: 'This download link is not valid for this file.' },
  link_expired: { status: 403, message: 'This download link has expired; retrieve the push again for a new one.' },
  network_not_allowed: { status: 403, message: 'This push cannot be opened from your network.' },
  csrf_rejected: { status: 403, message: 'The form was not sent from this site; reload the page and try again.' },
  not_found: { status: 404, message: 'No push has this token.' },
  no_route: { status: 404, message: 'No such API route.' },
  method_not_allowed: { status: 405, message: 'This path does not answer this method.' },
  /** Answered by the HTTP server itself when a request's headers (or body) do not arrive in time (http/client-error.ts). */
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  idempotency_key_in_use: { status: 409, message: 'A request with this Idempotency-Key is still being processed.' },
  /** The v1 API only: an end-to-end encrypted push, which its records cannot mark as such (nothing is counted). */
  end_to_end_encrypted: {
    status: 409,
    message: 'This push is end-to-end encrypted: open its link (with the key after #) in a browser.',
  },
  /** A second answer to a request (nothing stored). */
  request_answered: { status: 409, message: 'This request has already been answered; nothing was stored.' },
  /** An answer to a revoked or expired request (nothing stored). */
  request_closed: { status: 410, message: 'This request is closed; nothing was stored.' },
  payload_too_large: { status: 413, message: 'The request body is larger than this instance accepts.' },
  /** The web pages' JSON steps only (never the API, whose decisions allow no 415: it answers unsupported_media_type). */
  body_not_json: { status: 415, message: 'This step takes a JSON body.' },
  validation_failed: { status: 422, message: 'The push is invalid.' },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was used with another request body; use a new key for a new push.',
  },
  too_many_attempts: { status: 429, message: 'Too many wrong passphrases for this push; wait before trying again.' },
  rate_limited: { status: 429, message: 'Too many requests from this address. Try again later.' },
  /** A storage quota (anonymous bytes per address per hour, or a user's active bytes); the message names which. */
  storage_quota_exceeded: { status: 429, message: 'This push would go over a storage quota; nothing was stored.' },
  /** A requester's open requests are at their limit (PWPUSH_USER_OPEN_REQUESTS); nothing was stored. */
  too_many_open_requests: {
    status: 429,
    message: 'You have as many open requests as an account may; nothing was stored.',
  },
  /** Answered by the HTTP server itself when a request's headers are over its limit (http/client-error.ts). */
  header_fields_too_large: { status: 431, message: 'The request headers are too large.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  /** Nothing was changed: every write carries its request's deadline (server/src/db/deadlines.ts). */
  service_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable; nothing was changed. Try again shortly.',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERRORS;

/** The status of each code (the catalogue's statuses). */
export const ERROR_STATUS = Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [code, e.status])) as {
  readonly [C in ErrorCode]: (typeof ERRORS)[C]['status'];
};

export type FieldErrors = Record<string, string[]>;

/**
 * Where a caller stands in a limit, as data (the IETF RateLimit fields are written from it: `rateLimitFields`):
 * the policy's name, its quota (in requests, or bytes of content) and window, what is left and when it renews.
 */
export interface LimitState {
  policy: string;
  quota: number;
  unit?: 'content-bytes';
  windowSeconds?: number;
  remaining: number;
  resetSeconds?: number;
}

/** `RateLimit-Policy` and `RateLimit` items of a limit (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitFields(limit: LimitState): { 'RateLimit-Policy': string; RateLimit: string } {
  const policy = `"${limit.policy}";q=${limit.quota}${limit.unit ? `;qu="${limit.unit}"` : ''}${limit.windowSeconds !== undefined ? `;w=${limit.windowSeconds}` : ''}`;
  const state = `"${limit.policy}";r=${Math.max(0, limit.remaining)}${limit.resetSeconds !== undefined ? `;t=${limit.resetSeconds}` : ''}`;
  return { 'RateLimit-Policy': policy, RateLimit: state };
}

export interface ApiErrorDetails {
  /** Messages per field (422 `errors`). */
  fields?: FieldErrors;
  /** Seconds before a retry makes sense (429 and 503 have a default; a 409 of a busy key says it): `Retry-After` and `retry_after`. */
  retryAfterSeconds?: number;
  /** The limit that refused (429): answered as its RateLimit fields. */
  limit?: LimitState;
  /** Extra response headers the HTTP layer decides (`Allow` on 405); the domain describes, it never sets headers. */
  headers?: Record<string, string>;
  /** The scopes an operation needs (403 insufficient_scope): answered in `WWW-Authenticate` (RFC 6750). */
  scopes?: readonly string[];
  /** A finer reason than the code, for metrics only (which storage quota refused); never sent. */
  reason?: string;
  /**
   * zxcvbn's feedback on a refused password as its keys (`warnings.common`, `suggestions.anotherWord`), beside the
   * English text the field's message carries: the pages say them in the visitor's language; never sent.
   */
  advice?: readonly string[];
}

/**
 * A failure with a stable code; its status (and, when the thrower gives none, its message) comes from the catalogue.
 * Messages never carry submitted values.
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string = ERRORS[code].message,
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

/** The Retry-After an error carries: the thrower's, else a default for 429 and 503; undefined otherwise. */
export function retryAfterOf(error: ApiError): number | undefined {
  if (error.details.retryAfterSeconds !== undefined) return error.details.retryAfterSeconds;
  if (error.status === 503) return UNAVAILABLE_RETRY_SECONDS;
  if (error.status === 429) return 60;
  return undefined;
}

/**
 * The challenge of a passphrase 401: HTTP requires one on every 401 (RFC 9110 §15.5.2), and a Bearer challenge would
 * tell the client to sign in, which does not help. The scheme is ours; its parameter names the header to send.
 */
export const PASSPHRASE_CHALLENGE = 'Passphrase header="X-Passphrase"';

/** The challenge of an access-code 401 (a push for specific people): send the emailed code in the named header. */
const ACCESS_CODE_CHALLENGE = 'AccessCode header="X-Access-Code"';

/** The challenge each 401 sends: Bearer for the token codes, the passphrase challenge for the passphrase codes. */
const CHALLENGES: Partial<Record<ErrorCode, string>> = {
  invalid_token: 'Bearer error="invalid_token"',
  authentication_required: 'Bearer',
  passphrase_required: PASSPHRASE_CHALLENGE,
  passphrase_incorrect: PASSPHRASE_CHALLENGE,
  access_code_required: ACCESS_CODE_CHALLENGE,
  access_code_incorrect: ACCESS_CODE_CHALLENGE,
};

/**
 * The response headers an ApiError answers with: its own, Retry-After on 429/503, WWW-Authenticate on every 401 and
 * on a 403 insufficient_scope (RFC 6750 §3).
 */
export function errorHeaders(error: ApiError): Record<string, string> {
  const headers: Record<string, string> = {
    ...error.details.headers,
    ...(error.details.limit ? rateLimitFields(error.details.limit) : {}),
  };
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  const challenge =
    error.code === 'insufficient_scope'
      ? insufficientScopeChallenge(error.details.scopes ?? [])
      : CHALLENGES[error.code];
  if (challenge) headers['WWW-Authenticate'] = challenge;
  return headers;
}

export function notFound(): ApiError {
  return new ApiError('not_found');
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
  const message = first
    ? `${first[0]}: ${first[1][0] ?? 'is invalid'}${total > 1 ? ` (and ${total - 1} more)` : ''}`
    : 'The push is invalid.';
  return new ApiError('validation_failed', message, { fields: ordered });
}
