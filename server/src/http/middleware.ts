/** Cross-cutting middleware: request ids, response headers every answer carries, access logs, per-client limits. */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '@secret-push/sdk/rules';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Per-request state shared by the middleware, the handlers and the error mapper. */
export interface RequestState {
  requestId: string;
  startedAt: bigint;
  /** The route template (never the raw URL, which can carry a passphrase or a download token). */
  route?: string;
  operationId?: string;
  /** A failure worth a log line (500s), without message text that could carry data. */
  failure?: { name: string; code?: string; stack?: string };
}

export function state(res: Response): RequestState {
  return res.locals as RequestState;
}

/** Echoes a safe client `X-Request-Id`, else makes one; sets the headers every response carries. */
export function baseHeaders(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    Object.assign(res.locals, { requestId, startedAt: process.hrtime.bigint() } satisfies RequestState);
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
    next();
  };
}

/** One log line per request: method, route template, status, duration, request id. Nothing from the payload. */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const s = state(res);
      const durationMs = Number(process.hrtime.bigint() - s.startedAt) / 1e6;
      const line = {
        request_id: s.requestId,
        method: req.method,
        route: s.route ?? 'unmatched',
        operation: s.operationId,
        status: res.statusCode,
        duration_ms: Math.round(durationMs * 10) / 10,
        ...(s.failure ? { failure: s.failure } : {}),
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    });
    next();
  };
}

/**
 * Fixed one-minute window per client address, in process memory: each server process counts on its own, so
 * behind N processes a client gets up to N × the limit. (The passphrase limit that must hold everywhere lives in
 * PostgreSQL, in the domain layer.)
 */
export function rateLimit(perMinute: number, now: () => number = Date.now): RequestHandler {
  const windows = new Map<string, { start: number; count: number }>();
  let lastPrune = now();
  return (req: Request, _res: Response, next: NextFunction) => {
    if (perMinute <= 0) return next();
    // Probes and static assets are not requests a client can abuse for work (as the reference's throttle).
    if (req.path === '/healthz' || req.path === '/readyz' || req.path.startsWith('/assets/')) return next();
    const t = now();
    if (t - lastPrune > 60_000) {
      for (const [key, w] of windows) if (t - w.start >= 60_000) windows.delete(key);
      lastPrune = t;
    }
    const key = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    let w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      w = { start: t, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    if (w.count > perMinute) {
      const retryAfterSeconds = Math.max(1, Math.ceil((w.start + 60_000 - t) / 1000));
      return next(new ApiError('rate_limited', 'Too many requests from this address. Try again later.', { retryAfterSeconds }));
    }
    next();
  };
}

/** Accept the `.json` suffix clients send on any v2 path: `/api/v2/pushes/abc.json` is `/api/v2/pushes/abc`. */
export function stripJsonSuffix(): RequestHandler {
  return (req, _res, next) => {
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    if (path.startsWith('/api/v2/') && path.endsWith('.json') && path.length > '/api/v2/.json'.length) {
      req.url = path.slice(0, -'.json'.length) + (q === -1 ? '' : req.url.slice(q));
    }
    next();
  };
}

/** Whether a request's body is JSON (`application/json` or `application/*+json`). */
export function isJsonRequest(req: { headers: Record<string, string | string[] | undefined> }): boolean {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * helmet's headers, worked out once: helmet decides them (they depend on its options, never on the request), and one
 * middleware sets the list, instead of helmet's thirteen middlewares doing it on every request.
 */
export function securityHeaders(middleware: (req: never, res: never, next: (err?: unknown) => void) => void): RequestHandler {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let failure: unknown;
  middleware({ headers: {}, method: 'GET', url: '/' } as never, recorder as never, (err) => void (failure = err));
  if (failure) throw failure as Error;
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
