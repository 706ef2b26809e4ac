/**
 * Turns "the database is unreachable" into ApiError('service_unavailable') so the HTTP layer answers 503 instead
 * of 500 (or a hang). Every other error passes through untouched. This is the one detector of an outage.
 */
import { ApiError, UNAVAILABLE_RETRY_SECONDS } from '@secret-push/sdk/rules';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);
// SQLSTATE class 08 (connection exception), 57P01..57P03 (shutdown, crash, cannot connect now), 53300 (too many
// connections).
const SQLSTATE = /^(08...|57P0[123]|53300)$/;
const MESSAGES = [
  /connection terminated/i,
  /connection refused/i,
  /timeout exceeded when trying to connect/i,
  /terminating connection/i,
  /connection (is )?closed/i,
  /cannot use a pool after calling end/i,
  /Client has encountered a connection error/i,
  /not queryable/i,
  /canceling statement due to statement timeout|statement timeout/i,
  /the database system is (starting up|shutting down)/i,
];

export function isConnectionError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as { code?: unknown; sqlState?: unknown; message?: unknown; cause?: unknown; name?: unknown; errors?: unknown };
  if (e.name === 'ConnectionException') return true;
  for (const code of [e.code, e.sqlState]) {
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATE.test(code))) return true;
  }
  if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isConnectionError(inner, depth + 1))) return true;
  return isConnectionError(e.cause, depth + 1);
}

export function unavailable(): ApiError {
  return new ApiError('service_unavailable', 'The database is unavailable; try again shortly.', {
    retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
  });
}

/** Runs `fn`, mapping connection failures to ApiError('service_unavailable'). */
export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (isConnectionError(err)) throw unavailable();
    throw err;
  }
}

/** Wraps every method of a service object with `guard`. */
export function guarded<T extends object>(service: T): T {
  const out = {} as Record<string, unknown>;
  for (const [name, value] of Object.entries(service)) {
    out[name] = typeof value === 'function' ? (...args: unknown[]) => guard(() => value.apply(service, args)) : value;
  }
  return out as T;
}
