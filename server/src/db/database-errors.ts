/**
 * Turns "the database did not answer" into ApiError('service_unavailable') so the HTTP layer answers 503 instead of
 * 500 (or a hang): it could not be reached, it refused connections, it gave up on a statement at its timeout, or it
 * did not answer before the client's. Every other error passes through untouched (a statement the database refused,
 * for example a value it cannot store, is no outage), but one: a row written into a workspace that a deletion took
 * away while the write waited for it (its foreign key, `<table>_workspace_id_fkey`, fails once the deletion commits)
 * is the 403 a caller outside any such workspace gets. This is the one detector of an outage. A 503 means nothing
 * happened: writes carry the request's deadline (push-repository.ts, deadlines.ts).
 */
import { ApiError } from '@secret-push/rules';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
// SQLSTATE: the connection exceptions of class 08 (not 08P01, a protocol violation a value can cause), 57P01..57P03
// (shutdown, crash, cannot connect now), 57014 (statement cancelled at its timeout), 55P03 (lock wait over its timeout),
// 53300 (too many connections).
const SQLSTATE = /^(08000|08001|08003|08004|08006|08007|57P0[123]|57014|55P03|53300)$/;
const MESSAGES = [
  /connection terminated/i,
  /connection refused/i,
  /timeout exceeded when trying to connect/i,
  /terminating connection/i,
  /connection (is )?closed/i,
  /cannot use a pool after calling end/i,
  /Client has encountered a connection error/i,
  /not queryable/i,
  /query read timeout/i,
  /canceling statement due to statement timeout/i,
  /the database system is (starting up|shutting down)/i,
];

export function isConnectionError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as {
    code?: unknown;
    sqlState?: unknown;
    message?: unknown;
    cause?: unknown;
    name?: unknown;
    errors?: unknown;
  };
  if (e.name === 'ConnectionException') return true;
  for (const code of [e.code, e.sqlState]) {
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATE.test(code))) return true;
  }
  if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isConnectionError(inner, depth + 1))) return true;
  return isConnectionError(e.cause, depth + 1);
}

/** A write that named a workspace a deletion removed meanwhile (SQLSTATE 23503 on a `workspace_id` foreign key). */
function isGoneWorkspace(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23503' && typeof e.constraint === 'string' && /_workspace_id_fkey$/.test(e.constraint);
}

function unavailable(): ApiError {
  return new ApiError('service_unavailable');
}

/** Runs `fn`, mapping connection failures to ApiError('service_unavailable'). */
export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (isConnectionError(err)) throw unavailable();
    if (isGoneWorkspace(err)) throw new ApiError('forbidden', 'This workspace no longer exists.');
    throw err;
  }
}

/** Wraps every method of a service object with `guard`. */
export function guarded<T extends object>(service: T): T {
  const out = {} as Record<string, unknown>;
  // Its own members (a service made of closures), then its class's methods (a service made as a class).
  const names = new Set(Object.keys(service));
  for (
    let proto = Object.getPrototypeOf(service) as object | null;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor') names.add(name);
  }
  for (const name of names) {
    const value = (service as Record<string, unknown>)[name];
    out[name] =
      typeof value === 'function'
        ? (...args: unknown[]) => guard(async () => (value as (...a: unknown[]) => unknown).apply(service, args))
        : value;
  }
  return out as T;
}

/** A unique constraint refused the write (SQLSTATE 23505), as pg or MikroORM reports it. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  return e?.name === 'UniqueConstraintViolationException' || e?.code === '23505' || e?.cause?.code === '23505';
}
