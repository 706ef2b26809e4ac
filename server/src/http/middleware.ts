/** Cross-cutting middleware: request ids, response headers every answer carries, access logs, per-client limits. */
import { randomUUID } from 'node:crypto';
import { ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, rateLimitFields, type LimitState } from '@secret-push/rules';
import { closeAfterReply } from './close-after-reply.js';
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
  /** Its finer reason, when it has one (which storage quota refused). */
  errorReason?: string;
  /** A failure worth a log line (500s), without message text that could carry data. */
  failure?: { name: string; code?: string; stack?: string };
}

export function state(res: Response): RequestState {
  return res.locals as RequestState;
}

/** Echoes a safe client `X-Request-Id`, else makes one; the request's state starts here. */
export function requestIdentity(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    Object.assign(res.locals, { requestId, startedAt: process.hrtime.bigint() } satisfies RequestState);
    next();
  };
}

/** A host name, an IPv4 or an IPv6 literal, and a port (RFC 3986 `host [ ":" port ]`, at most 255 + 6 characters). */
const HOST = /^(?:[A-Za-z0-9._~!$&'()*+,;=%-]{1,255}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/**
 * A request with more than one `Host` header, or one that names no host, answers 400. Without PWPUSH_PUBLIC_BASE_URL
 * the links an answer carries are built from `Host`; two of them name no one origin (Node keeps the first, a proxy in
 * front may have read the other: the classic request-smuggling and cache-poisoning split), and a value that is no
 * host would be copied into every link.
 */
export function singleHost(): RequestHandler {
  return (req, res, next) => {
    const raw = req.rawHeaders;
    let hosts = 0;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) {
        closeAfterReply(req, res);
        return next(new ApiError('bad_request', 'The request has more than one Host header.'));
      }
    }
    const host = req.headers.host;
    if (host !== undefined && !HOST.test(host)) {
      closeAfterReply(req, res);
      return next(new ApiError('bad_request', 'The Host header names no host (a host name or address, and a port).'));
    }
    next();
  };
}

/** A header name and its value. */
export type HeaderLine = readonly [name: string, value: string];

/**
 * The headers every answer carries besides its `X-Request-Id`: no caching, no indexing, and helmet's, worked out once
 * (helmet decides them from its options, never from the request).
 */
export function everyAnswerHeaders(
  helmetMiddleware: (req: never, res: never, next: (err?: unknown) => void) => void,
): HeaderLine[] {
  const headers: HeaderLine[] = [
    ['Cache-Control', 'no-store'],
    ['X-Robots-Tag', 'noindex, nofollow'],
  ];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let failure: unknown;
  helmetMiddleware({ headers: {}, method: 'GET', url: '/' } as never, recorder as never, (err) => void (failure = err));
  if (failure) throw failure as Error;
  return headers;
}

/** Sets the request's identity and the headers every answer carries on the response, one by one (pages may change them). */
export function baseHeaders(headers: readonly HeaderLine[]): RequestHandler {
  const identity = requestIdentity();
  return (req, res, next) =>
    identity(req, res, () => {
      res.setHeader('X-Request-Id', state(res).requestId);
      for (const [name, value] of headers) res.setHeader(name, value);
      next();
    });
}

/**
 * A response prototype (on top of `base`, express's) whose `writeHead` writes the headers every answer carries with
 * the status line, in one list, instead of each being set on every response as it starts: fifteen `setHeader` calls,
 * each validating and storing its header, were a tenth of what the API spent per request in the bench. A header set
 * on the response before it is written (`Connection`, `Allow`, `Retry-After`) or given to `writeHead` keeps its value,
 * as it did when it was set after these. For the API's answers, which no page handler touches.
 */
export function answerWithHeaders(base: object, headers: readonly HeaderLine[]): object {
  const writeHead = ServerResponse.prototype.writeHead as (
    this: ServerResponse,
    statusCode: number,
    ...rest: unknown[]
  ) => ServerResponse;
  const lower = headers.map(([name]) => name.toLowerCase());
  function writeHeadWithEveryHeader(
    this: ServerResponse,
    statusCode: number,
    reason?: unknown,
    given?: unknown,
  ): ServerResponse {
    const list = typeof reason === 'string' ? given : reason;
    const out: unknown[] = [];
    const givenNames = new Set<string>();
    if (Array.isArray(list)) for (let i = 0; i < list.length; i += 2) givenNames.add(String(list[i]).toLowerCase());
    else if (list && typeof list === 'object') for (const name of Object.keys(list)) givenNames.add(name.toLowerCase());
    const requestId = ((this as unknown as { locals?: RequestState }).locals ?? ({} as RequestState)).requestId;
    if (requestId && !givenNames.has('x-request-id') && !this.hasHeader('x-request-id'))
      out.push('X-Request-Id', requestId);
    for (let i = 0; i < headers.length; i++) {
      if (!givenNames.has(lower[i]!) && !this.hasHeader(lower[i]!)) out.push(headers[i]![0], headers[i]![1]);
    }
    if (Array.isArray(list)) for (const item of list as unknown[]) out.push(item);
    else if (list && typeof list === 'object') for (const [name, value] of Object.entries(list)) out.push(name, value);
    return typeof reason === 'string'
      ? writeHead.call(this, statusCode, reason, out)
      : writeHead.call(this, statusCode, out);
  }
  return Object.create(base, {
    writeHead: { value: writeHeadWithEveryHeader, writable: true, configurable: true },
  }) as object;
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
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` lists the policies that govern
 * an answer, `RateLimit` where the client stands in each. Both are lists: the per-client request limit writes its item
 * first, a create adds its storage quota's (../push/storage-quota.ts). A list field is added to, never replaced.
 */
const RATE_LIMIT_FIELDS: ReadonlySet<string> = new Set(['ratelimit', 'ratelimit-policy']);

/** The value to set for `name`: for a RateLimit field, what the response already has followed by `value`. */
export function fieldValue(res: { getHeader(name: string): unknown }, name: string, value: string): string {
  if (!RATE_LIMIT_FIELDS.has(name.toLowerCase())) return value;
  const existing = res.getHeader(name);
  return existing === undefined || existing === '' ? value : `${String(existing)}, ${value}`;
}

/**
 * Fixed one-minute window per client address. `counter` keeps the windows: by default in this process; a cluster
 * worker passes one that asks the primary process, so the limit holds across the workers of a host (each host counts
 * on its own: behind N hosts a client gets up to N × the limit). The passphrase and sign-in limits that must hold
 * everywhere live in PostgreSQL, in the domain layer.
 */
export function rateLimit(
  perMinute: number,
  now: () => number = Date.now,
  counter: HitCounter = windowCounter(),
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (perMinute <= 0) return next();
    // Probes and static assets are not requests a client can abuse for work (as the reference's throttle). (/metrics,
    // when it is on, is answered before this limit.)
    if (req.path === '/healthz' || req.path === '/readyz' || req.path.startsWith('/assets/')) return next();
    const t = now();
    const key = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const decide = (w: WindowHit) => {
      // Every answer this limit governs says so: the policy, the requests left in the window and when it starts again.
      const resetSeconds = Math.max(1, Math.ceil((w.start + RATE_WINDOW_MS - t) / 1000));
      const limit: LimitState = {
        policy: 'requests',
        quota: perMinute,
        windowSeconds: RATE_WINDOW_MS / 1000,
        remaining: perMinute - w.count,
        resetSeconds,
      };
      for (const [name, value] of Object.entries(rateLimitFields(limit))) res.setHeader(name, value);
      if (w.count <= perMinute) return next();
      // The fields are on the response already; the error carries the Retry-After.
      next(new ApiError('rate_limited', undefined, { retryAfterSeconds: resetSeconds }));
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
