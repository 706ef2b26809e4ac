/**
 * The parts every request goes through, before the pages or the API answer it: request ids, the headers every answer
 * carries, access logs, one Host, the per-client limit. Each part is written against Node's own request and response
 * with connect's calling convention (`next()` goes on, `next(error)` goes to the error responder): the API's pipeline
 * (./pipeline.ts) runs them as they are, and so does express for the pages.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, rateLimitFields, type LimitState } from '@secret-push/rules';
import { closeAfterReply } from './close-after-reply.js';
import { clientIp, targetPath } from './request-target.js';
import { RATE_WINDOW_MS, windowCounter, type HitCounter, type WindowHit } from '../runtime/window-counter.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Goes on to the next part; with an error, to the error responder. */
export type Next = (error?: unknown) => void;
/** A part of a pipeline, on Node's request and response (express runs these as its own middleware). */
export type Part = (req: IncomingMessage, res: ServerResponse, next: Next) => void | Promise<void>;

/** Per-request state shared by the parts, the handlers and the error mapper. */
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
  /** Checks a JSON answer against the contract before it is written (PWPUSH_VALIDATE_RESPONSES; ./api.ts). */
  checkAnswer?: (status: number, body: unknown) => void;
}

const STATE = Symbol('request state');
type WithState = ServerResponse & { [STATE]?: RequestState };

/** The state of the request `res` answers (made on first use; requestIdentity gives it its id). */
export function state(res: ServerResponse): RequestState {
  const r = res as WithState;
  return (r[STATE] ??= { requestId: '', startedAt: process.hrtime.bigint() });
}

/** Echoes a safe client `X-Request-Id`, else makes one; the request's state starts here. */
export function requestIdentity(): Part {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const s = state(res);
    s.requestId = requestId;
    s.startedAt = process.hrtime.bigint();
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
export function singleHost(): Part {
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
export function baseHeaders(headers: readonly HeaderLine[]): Part {
  const identity = requestIdentity();
  return (req, res, next) =>
    identity(req, res, () => {
      res.setHeader('X-Request-Id', state(res).requestId);
      for (const [name, value] of headers) res.setHeader(name, value);
      next();
    });
}

/**
 * One log line per request: method, route template, status, duration, request id. Nothing from the payload. A client
 * that went away before its answer was sent is logged too, with `client_gone: true`.
 */
export function accessLog(logger: Logger): Part {
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
  trustProxy: boolean,
  now: () => number = Date.now,
  counter: HitCounter = windowCounter(),
): Part {
  return (req, res, next) => {
    if (perMinute <= 0) return next();
    // Probes and static assets are not requests a client can abuse for work (as the reference's throttle). (/metrics,
    // when it is on, is answered before this limit.)
    const path = targetPath(req.url ?? '');
    if (path === '/healthz' || path === '/readyz' || path.startsWith('/assets/')) return next();
    const t = now();
    const key = clientIp(req, trustProxy) || 'unknown';
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
