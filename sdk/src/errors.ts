/**
 * Every error the SDK throws is a `SecretPushError`, and each failure has its own subclass, so callers branch with
 * `instanceof` (or on the stable `code`), never on a message.
 */
import type { ErrorResponse } from './generated/types.gen.js';

export interface SecretPushErrorInit {
  status?: number | undefined;
  code?: string | undefined;
  body?: unknown;
  requestId?: string | undefined;
  headers?: Headers | undefined;
  cause?: unknown;
}

export class SecretPushError extends Error {
  /** HTTP status; undefined when no response arrived (network error, timeout, abort). */
  readonly status: number | undefined;
  /** The stable machine-readable code of the error body (`not_found`, `passphrase_required`, …). */
  readonly code: string | undefined;
  /** The parsed error body (an `ErrorResponse` when the server followed the spec), or its text. */
  readonly body: unknown;
  /** `X-Request-Id` header or `request_id` of the body, to quote in a bug report. */
  readonly requestId: string | undefined;
  /** Response headers, when a response arrived. */
  readonly headers: Headers | undefined;

  constructor(message: string, init: SecretPushErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.body = init.body;
    this.requestId = init.requestId;
    this.headers = init.headers;
  }
}

/** 400: a malformed request (`invalid_json`, `missing_push`, `invalid_page`, `invalid_parameter`, …). */
export class BadRequestError extends SecretPushError {}
/** 401 that is not about a passphrase: no token where one is needed, or an invalid token. */
export class AuthenticationError extends SecretPushError {}
/** 401 about a push's passphrase; see the two subclasses. */
export class PassphraseError extends SecretPushError {}
/** 401 `passphrase_required`: the push is passphrase-protected and none was sent. */
export class PassphraseRequiredError extends PassphraseError {}
/** 401 `passphrase_incorrect`: the passphrase sent is wrong. */
export class PassphraseIncorrectError extends PassphraseError {}
/** 403: authenticated but not allowed (`forbidden`), or a bad / lapsed download link (`invalid_link`, `link_expired`). */
export class ForbiddenError extends SecretPushError {}
/** 404: no push with this token (`not_found`), or no such route (`no_route`). */
export class NotFoundError extends SecretPushError {}
/** 413: the request body is larger than the instance accepts. */
export class PayloadTooLargeError extends SecretPushError {}
/** 422: a field of the push breaks a rule; `errors` holds the messages per field. */
export class ValidationError extends SecretPushError {
  readonly errors: Record<string, string[]>;
  constructor(message: string, init: SecretPushErrorInit & { errors?: Record<string, string[]> }) {
    super(message, init);
    this.errors = init.errors ?? {};
  }
}
/**
 * 429: too many requests (`rate_limited`), too many wrong passphrases on one push (`too_many_attempts`), or as many
 * open requests as an account may have (`too_many_open_requests`).
 */
export class RateLimitError extends SecretPushError {
  /** Seconds to wait, from `Retry-After` or the body's `retry_after`; undefined when the server said neither. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, init: SecretPushErrorInit & { retryAfterSeconds?: number | undefined }) {
    super(message, init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}
/**
 * 429 `storage_quota_exceeded`: the create would go over a storage quota (anonymous bytes per address per hour, or
 * the user's active bytes); nothing was stored. `retryAfterSeconds` says when the same push fits (often far beyond
 * `maxRetryWaitMs`, so the client does not wait for it); `message` names the quota.
 */
export class StorageQuotaError extends RateLimitError {}
/** 5xx: the server failed. */
export class ServerError extends SecretPushError {}
/** 503: the service (its database) is unavailable; `retryAfterSeconds` says when to try again. */
export class ServiceUnavailableError extends ServerError {
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, init: SecretPushErrorInit & { retryAfterSeconds?: number | undefined }) {
    super(message, init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}
/** Any other non-2xx status (405, …), or a 2xx whose body could not be read. */
export class UnexpectedResponseError extends SecretPushError {}
/** No response arrived: DNS, connection refused or reset, CORS, TLS. `cause` holds the underlying error. */
export class NetworkError extends SecretPushError {}
/** The request took longer than `timeoutMs` (the SDK's own timer fired). */
export class TimeoutError extends NetworkError {}
/** The caller's `AbortSignal` aborted the request. */
export class RequestAbortedError extends SecretPushError {}

/**
 * A failure of end-to-end encryption on this side (no HTTP status). Messages never contain a key, a link, a
 * plaintext or a ciphertext. `body` holds the push record when one arrived (its payload and names are envelopes),
 * so the view it cost is not lost: open it later with `openPush(body, key)`.
 */
export class EndToEndError extends SecretPushError {}
/**
 * The push is end-to-end encrypted and no usable key was given: the link has no `#k=…` (`missing_key`), or its key
 * is not 32 bytes of base64url, e.g. a link cut short when copied (`invalid_key`).
 */
export class MissingKeyError extends EndToEndError {}
/**
 * The key does not open the push, or its data was altered, moved or swapped (`decryption_failed`); an envelope is
 * malformed (`malformed_envelope`); or the link carries a key but the push is not marked as encrypted, so its text
 * cannot be trusted as the sender's (`not_encrypted`). Nothing of the plaintext is returned.
 */
export class DecryptionError extends EndToEndError {}
/**
 * A scheme or envelope version this SDK does not know (`unsupported_scheme`); no WebCrypto in this runtime
 * (`no_webcrypto`: browsers need a secure context, https or localhost); an instance whose version report does not
 * offer the scheme (`not_supported_by_server`) or turned it off (`disabled_on_instance`), both before anything is
 * created; or a server that did not keep the `client_encryption` marker of a push just created
 * (`not_supported_by_server` with `body` the created record, which holds only ciphertext: expire it with
 * `expirePush(body.url_token)`).
 */
export class UnsupportedEncryptionError extends EndToEndError {}

/** Parses `Retry-After` (delta-seconds or an HTTP date) or falls back to the body's `retry_after`. */
export function parseRetryAfter(headers: Headers | undefined, body: unknown, now = Date.now()): number | undefined {
  const header = headers?.get('Retry-After');
  if (header != null && header.trim() !== '') {
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed);
    const date = Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  if (isErrorBody(body) && typeof body.retry_after === 'number' && body.retry_after >= 0) return body.retry_after;
  return undefined;
}

function isErrorBody(body: unknown): body is ErrorResponse {
  return typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string';
}

/** Builds the error for an HTTP response that is not a success. */
export function errorFromResponse(response: Response, body: unknown): SecretPushError {
  const status = response.status;
  const errorBody = isErrorBody(body) ? body : undefined;
  const code = errorBody?.code;
  const requestId = response.headers.get('X-Request-Id') ?? errorBody?.request_id ?? undefined;
  const detail =
    errorBody?.error ?? (typeof body === 'string' && body.length > 0 ? body.slice(0, 200) : response.statusText);
  const message = `${status}${code ? ` ${code}` : ''}: ${detail || 'request failed'}`;
  const init: SecretPushErrorInit = { status, code, body, requestId, headers: response.headers };
  const retryAfterSeconds = parseRetryAfter(response.headers, body);

  if (status === 400) return new BadRequestError(message, init);
  if (status === 401) {
    if (code === 'passphrase_required') return new PassphraseRequiredError(message, init);
    if (code === 'passphrase_incorrect') return new PassphraseIncorrectError(message, init);
    return new AuthenticationError(message, init);
  }
  if (status === 403) return new ForbiddenError(message, init);
  if (status === 404) return new NotFoundError(message, init);
  if (status === 413) return new PayloadTooLargeError(message, init);
  if (status === 422) return new ValidationError(message, { ...init, errors: errorBody?.errors ?? {} });
  if (status === 429 && code === 'storage_quota_exceeded')
    return new StorageQuotaError(message, { ...init, retryAfterSeconds });
  if (status === 429) return new RateLimitError(message, { ...init, retryAfterSeconds });
  if (status === 503) return new ServiceUnavailableError(message, { ...init, retryAfterSeconds });
  if (status >= 500) return new ServerError(message, init);
  return new UnexpectedResponseError(message, init);
}
