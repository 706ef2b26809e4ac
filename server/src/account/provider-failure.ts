/**
 * Why a call to the OpenID Connect provider failed, for the operator's log (issue 39: an unreachable provider logged
 * only `request failed`). Read from what openid-client and Node's fetch throw: the stage (discovery, the code exchange
 * and the userinfo call), the cause (DNS, connection, TLS, timeout, an HTTP status, the provider's own OAuth error, an
 * issuer that does not match), Node's error code and the provider's error code. Codes only: never a message, a URL's
 * query, a token, a code or the client secret, whatever the provider or the network said.
 */

export type ProviderStage = 'discovery' | 'token_exchange' | 'userinfo';

export interface ProviderFailure {
  stage: ProviderStage;
  cause:
    | 'dns'
    | 'connection'
    | 'tls'
    | 'timeout'
    | 'http_status'
    | 'provider_error'
    | 'issuer_mismatch'
    | 'invalid_response'
    | 'other';
  /** Node's or openid-client's error code (`ENOTFOUND`, `CERT_HAS_EXPIRED`, `OAUTH_RESPONSE_IS_NOT_CONFORM`, …). */
  code?: string;
  /** The provider's HTTP status, when it answered one that was not expected. */
  status?: number;
  /** The provider's OAuth error code (`invalid_client`, `invalid_grant`, `access_denied`, …). */
  provider_error?: string;
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  status?: unknown;
  error?: unknown;
  cause?: unknown;
}

/** A code as logged: short and plain (a provider's text is not trusted to be either). */
const CODE = /^[A-Za-z0-9_.:-]{1,64}$/;
const codeOf = (value: unknown): string | undefined =>
  typeof value === 'string' && CODE.test(value) ? value : undefined;

/** The error and its causes, outermost first (at most 5 deep). */
function chain(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  for (let e = error; e && typeof e === 'object' && out.length < 5; e = (e as ErrorLike).cause)
    out.push(e as ErrorLike);
  return out;
}

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);
const CONNECTION = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET']);
const TIMEOUT = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const TLS = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** What a failed call to the provider at `stage` was, in codes. */
export function providerFailure(stage: ProviderStage, error: unknown): ProviderFailure {
  const errors = chain(error);
  const codes = errors.map((e) => codeOf(e.code)).filter((c): c is string => c !== undefined);
  const innermost = codes[codes.length - 1];
  const status = errors.map((e) => e.status).find((s): s is number => typeof s === 'number');
  const providerError = errors.map((e) => codeOf(e.error)).find((c) => c !== undefined);
  const base = {
    stage,
    ...(innermost ? { code: innermost } : {}),
    ...(status !== undefined ? { status } : {}),
  };
  if (providerError) return { ...base, cause: 'provider_error', provider_error: providerError };
  if (codes.some((c) => DNS.has(c))) return { ...base, cause: 'dns' };
  if (codes.some((c) => TLS.test(c))) return { ...base, cause: 'tls' };
  if (codes.some((c) => CONNECTION.has(c))) return { ...base, cause: 'connection' };
  if (codes.some((c) => TIMEOUT.has(c)) || errors.some((e) => e.name === 'TimeoutError' || e.name === 'AbortError'))
    return { ...base, cause: 'timeout' };
  if (codes.includes('OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED')) return { ...base, cause: 'issuer_mismatch' };
  if (status !== undefined) return { ...base, cause: 'http_status' };
  if (codes.some((c) => c.startsWith('OAUTH_'))) return { ...base, cause: 'invalid_response' };
  return { ...base, cause: 'other' };
}
