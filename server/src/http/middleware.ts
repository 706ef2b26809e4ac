/** Cross-cutting middleware: request ids, response headers every answer carries, access logs, per-client limits. */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '@secret-push/sdk/rules';
import { RATE_WINDOW_MS, windowCounter, type HitCounter, type WindowHit } from '../runtime/window-counter.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Per-request state shared by the middleware, the handlers and the error mapper. */
export interface RequestState {
  requestId: string;
  startedAt: bigint;
  /** The route template (never the raw URL, which can carry a passphrase or a download token). */
  route?: string;
  operationId?: string;
  /** The error code of an error answer (metrics count refusals by it). */
  errorCode?: string;
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

/**
 * One log line per request: method, route template, status, duration, request id. Nothing from the payload. A client
 * that went away before its answer was sent is logged too, with `client_gone: true`.
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const write = (clientGone: boolean) => {
      const s = state(res);
      const durationMs = Number(process.hrtime.bigint() - s.startedAt) / 1e6;
      const line = {
        request_id: s.requestId,
        method: req.method,
        route: s.route ?? 'unmatched',
        operation: s.operationId,
        status: res.statusCode,
        duration_ms: Math.round(durationMs * 10) / 10,
        ...(clientGone ? { client_gone: true } : {}),
        ...(s.failure ? { failure: s.failure } : {}),
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    };
    res.on('finish', () => write(false));
    res.on('close', () => {
      if (!res.writableFinished) write(true);
    });
    next();
  };
}

/**
 * Fixed one-minute window per client address. `counter` keeps the windows: by default in this process; a cluster
 * worker passes one that asks the primary process, so the limit holds across the workers of a host (each host counts
 * on its own: behind N hosts a client gets up to N × the limit). The passphrase and sign-in limits that must hold
 * everywhere live in PostgreSQL, in the domain layer.
 */
export function rateLimit(perMinute: number, now: () => number = Date.now, counter: HitCounter = windowCounter()): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (perMinute <= 0) return next();
    // Probes and static assets are not requests a client can abuse for work (as the reference's throttle). (/metrics,
    // when it is on, is answered before this limit.)
    if (req.path === '/healthz' || req.path === '/readyz' || req.path.startsWith('/assets/')) return next();
    const t = now();
    const key = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const decide = (w: WindowHit) => {
      if (w.count <= perMinute) return next();
      const retryAfterSeconds = Math.max(1, Math.ceil((w.start + RATE_WINDOW_MS - t) / 1000));
      next(new ApiError('rate_limited', 'Too many requests from this address. Try again later.', { retryAfterSeconds }));
    };
    const hit = counter(key, t);
    if (hit instanceof Promise) hit.then(decide, next);
    else decide(hit);
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
