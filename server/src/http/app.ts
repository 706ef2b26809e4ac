/**
 * The HTTP application, assembled from named parts: headers and logs for every answer, the probes, the per-client
 * limit, the web pages, the API edge (./api.ts) and the one error responder. Builds the app without listening, so
 * tests mount it on port 0.
 *
 * API requests take a shorter way through the same parts (`apiFront`): express's router would try each of them in
 * turn, matching paths for routes the API never reaches (the probes, the pages), which cost more than the parts do.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import helmet from 'helmet';
import { pino, type Logger } from 'pino';
import { ApiError } from '@secret-push/rules';
import type { Core } from '../core.js';
import { createWebRouter } from '../web/router.js';
import { createApiEdge } from './api.js';
import { corsLayer } from './cors.js';
import { describeFailure, sendError, toApiError } from './errors.js';
import {
  accessLog,
  answerWithHeaders,
  baseHeaders,
  everyAnswerHeaders,
  rateLimit,
  requestIdentity,
  singleHost,
  state,
  stripJsonSuffix,
} from './middleware.js';
import { probes } from './probes.js';
import { createV1Edge, isV1Path } from './v1/edge.js';
import type { HitCounter } from '../runtime/window-counter.js';

export interface AppOptions {
  /** Where request logs go; defaults to pino on stdout at settings.logLevel. */
  logger?: Logger;
  /** Check every JSON answer of the API against the contract and log (never expose) mismatches. */
  validateResponses?: boolean;
  /** A request still unanswered after this long answers 503 (a safety net under the database timeouts). */
  requestTimeoutMs?: number;
  /** The instant services decide expiry with (tests move it); default: the system clock. */
  clock?: () => Date;
  /** The server process's own middleware (runtime/serve.ts: request metrics, /metrics, draining), before the probes. */
  runtime?: RequestHandler;
  /** Keeps the per-client limit's windows; default: in this process (a cluster worker's asks the primary). */
  rateLimitCounter?: HitCounter;
}

interface AppLocals {
  /** Resolves once the contract is validated and compiled; rejects (and every API request answers 500) otherwise. */
  ready: Promise<void>;
  logger: Logger;
}

/** The app: a `node:http` request listener (API requests on the short way, the rest through express). */
export interface App {
  (req: IncomingMessage, res: ServerResponse): void;
  locals: AppLocals;
  /** A server for the app, listening (as express's `app.listen`). */
  listen(port: number, host: string, callback?: () => void): Server;
}

export function createApp(core: Core, opts: AppOptions = {}): App {
  const { settings } = core;
  const logger = opts.logger ?? pino({ level: settings.logLevel, base: { service: 'secret-push' } });
  const api = createApiEdge(core, { ...opts, logger });
  // The legacy v1 API: its own document on the same parts (./v1/edge.ts).
  const v1 = createV1Edge(core, { ...opts, logger });
  const ready = Promise.all([api.ready, v1.ready]).then(() => undefined);
  ready.catch((error: unknown) => logger.fatal({ err: describeFailure(error) }, 'the API contract failed to load'));

  const app = express();
  const locals: AppLocals = Object.assign(app.locals, { ready, logger });
  // One hop: the client address is the one the proxy in front appended to X-Forwarded-For, never an entry the
  // client wrote itself (trusting every hop would let a client pick its address per request).
  app.set('trust proxy', settings.trustProxy ? 1 : false);
  app.set('etag', false);
  app.set('x-powered-by', false);

  const headers = everyAnswerHeaders(helmet());
  const log = accessLog(logger);
  const runtime: RequestHandler[] = opts.runtime ? [opts.runtime] : [];
  const limit = rateLimit(settings.rateLimitPerMinute, Date.now, opts.rateLimitCounter);
  const jsonSuffix = stripJsonSuffix();
  const responder = errorResponder();
  const oneHost = singleHost();
  // Browser apps on the listed origins (API paths only; preflights answered here, before the limit counts them).
  const crossOrigin = corsLayer(settings);
  app.use(baseHeaders(headers), log, oneHost, ...runtime);
  app.use(probes(core));
  app.use(crossOrigin);
  app.use(limit);
  // The web pages: HTML, assets, /help/api and the bundled contract at /api/v2/openapi.json. Mounted before the
  // `.json` suffix rewrite (which would turn openapi.json into `openapi`) and before the API's no_route fallback.
  // API requests skip the pages' routes altogether (they would only fall through them).
  const web = createWebRouter(core, { clock: opts.clock });
  app.use((req, res, next) => (isApiRequest(req.path) ? next() : web(req, res, next)));
  app.use(v1.handle);
  app.use(jsonSuffix);
  app.use(api.handle);
  app.use(responder);

  // The same parts, in the same order, for a request the API answers (the probes and the pages never match one); its
  // response writes the headers every answer carries with its status line (answerWithHeaders).
  const apiResponse = answerWithHeaders((app as unknown as { response: object }).response, headers);
  const apiFront = steps(
    app,
    apiResponse,
    [requestIdentity(), log, oneHost, ...runtime, crossOrigin, limit, v1.handle, jsonSuffix, api.handle],
    responder,
  );
  const front = ((req: IncomingMessage, res: ServerResponse) => {
    const path = plainPath(req.url ?? '');
    if (path !== null && isApiRequest(path)) apiFront(req, res);
    else app(req, res);
  }) as App;
  front.locals = locals;
  front.listen = (port, host, callback) => createServer(front).listen(port, host, callback);
  return front;
}

/**
 * The path of a request target as express reads it (parseurl's fast case: a path with no character that makes it
 * fall back to a full URL parse), or null for any other target (those take express's own way).
 */
function plainPath(url: string): string | null {
  if (url.charCodeAt(0) !== 0x2f || /[\t\n\f\r #\u00a0\ufeff]/.test(url)) return null;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Runs middlewares in order, as express's router runs ones mounted at `/`: `next()` goes on, `next(error)` (or a
 * throw, or a rejected promise) goes to the error handler. The request and response get express's methods first, as
 * express's `app.handle` gives them (the parts use `req.ip`, `res.json`, …): `response` is express's response or one
 * on top of it.
 */
function steps(app: express.Express, response: object, middlewares: RequestHandler[], onError: ErrorRequestHandler) {
  const { request } = app as unknown as { request: object };
  const fail = (error: unknown, req: Request, res: Response) => {
    try {
      onError(error, req, res, () => undefined);
    } catch {
      if (!res.headersSent) res.status(500).end();
      else res.destroy();
    }
  };
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const req = Object.setPrototypeOf(incoming, request) as Request;
    const res = Object.setPrototypeOf(outgoing, response) as Response;
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Response['locals'];
    req.originalUrl = req.url;
    req.baseUrl = '';
    let i = 0;
    const next: NextFunction = (error?: unknown) => {
      if (error) return fail(error, req, res);
      const middleware = middlewares[i++];
      // Past the last part (the API edge answers every request it gets): nothing answered.
      if (!middleware) return fail(new ApiError('no_route'), req, res);
      try {
        const result = middleware(req, res, next) as unknown;
        if (result instanceof Promise) result.then(undefined, (e: unknown) => next(e ?? new Error('Rejected promise')));
      } catch (e) {
        next(e);
      }
    };
    next();
  };
}

/**
 * Paths the API answers: all of /api/ but the contract document the pages serve, and v1's `.json` paths under `/p/`,
 * `/f/` and `/r/` (never the recipient page's HTML: `/p/{url_token}.json` is v1's retrieval).
 */
function isApiRequest(path: string): boolean {
  return (path.startsWith('/api/') && path !== '/api/v2/openapi.json') || isV1Path(path);
}

/** The one error responder: every failure becomes the spec's ErrorResponse; unexpected ones are logged (no message). */
function errorResponder() {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500 && !(error instanceof ApiError)) state(res).failure = describeFailure(error);
    sendError(res, apiError, state(res).requestId);
  };
}
