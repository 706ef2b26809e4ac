/**
 * The HTTP application, assembled from named parts: headers and logs for every answer, the probes, the per-client
 * limit, the web pages, the API edge (./api.ts) and the one error responder. Builds the app without listening, so
 * tests mount it on port 0.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { pino, type Logger } from 'pino';
import { ApiError } from '@secret-push/sdk/rules';
import type { Core } from '../core.js';
import { createWebRouter } from '../web/router.js';
import { createApiEdge } from './api.js';
import { describeFailure, sendError, toApiError } from './errors.js';
import { accessLog, baseHeaders, rateLimit, securityHeaders, state, stripJsonSuffix } from './middleware.js';
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

export interface AppLocals {
  /** Resolves once the contract is validated and compiled; rejects (and every API request answers 500) otherwise. */
  ready: Promise<void>;
  logger: Logger;
}

export type App = express.Application & { locals: AppLocals };

export function createApp(core: Core, opts: AppOptions = {}): App {
  const { settings } = core;
  const logger = opts.logger ?? pino({ level: settings.logLevel, base: { service: 'secret-push' } });
  const api = createApiEdge(core, { ...opts, logger });
  // The legacy v1 API: its own document on the same parts (./v1/edge.ts).
  const v1 = createV1Edge(core, { ...opts, logger });
  const ready = Promise.all([api.ready, v1.ready]).then(() => undefined);
  ready.catch((error: unknown) => logger.fatal({ err: describeFailure(error) }, 'the API contract failed to load'));

  const app = express() as unknown as App;
  app.locals.ready = ready;
  app.locals.logger = logger;
  // One hop: the client address is the one the proxy in front appended to X-Forwarded-For, never an entry the
  // client wrote itself (trusting every hop would let a client pick its address per request).
  app.set('trust proxy', settings.trustProxy ? 1 : false);
  app.set('etag', false);
  app.set('x-powered-by', false);

  app.use(baseHeaders(), securityHeaders(helmet()), accessLog(logger));
  if (opts.runtime) app.use(opts.runtime);
  app.use(probes(core));
  app.use(rateLimit(settings.rateLimitPerMinute, Date.now, opts.rateLimitCounter));
  // The web pages: HTML, assets, /help/api and the bundled contract at /api/v2/openapi.json. Mounted before the
  // `.json` suffix rewrite (which would turn openapi.json into `openapi`) and before the API's no_route fallback.
  // API requests skip the pages' routes altogether (they would only fall through them).
  const web = createWebRouter(core, { clock: opts.clock });
  app.use((req, res, next) => (isApiRequest(req.path) ? next() : web(req, res, next)));
  app.use(v1.handle);
  app.use(stripJsonSuffix());
  app.use(api.handle);
  app.use(errorResponder());
  return app;
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
