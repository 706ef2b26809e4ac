/**
 * Turns "the database is unreachable" into DomainError('service_unavailable') so the HTTP layer answers 503 instead
 * of 500 (or a hang). Every other error passes through untouched.
 */
import { DomainError } from './contract.js';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);
// SQLSTATE class 08 (connection exception), 57P01..57P03 (shutdown, crash, cannot connect now), 53300 (too many
// connections).
const SQLSTATE = /^(08...|57P0[123]|53300)$/;
const MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection (is )?closed/i,
  /cannot use a pool after calling end/i,
  /Client has encountered a connection error/i,
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

export function unavailable(): DomainError {
  return new DomainError('service_unavailable', 'The database is unavailable; try again shortly.', { retryAfterSeconds: 5 });
}

/** Runs `fn`, mapping connection failures to DomainError('service_unavailable'). */
export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) throw err;
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
