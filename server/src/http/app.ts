/**
 * The HTTP application, assembled from named parts: the parts every request goes through (listed once, in `front`),
 * then the API's pipeline for API paths (./pipeline.ts, on Node's own request and response) or express for the
 * probes and the web pages. Builds the app without listening, so tests mount it on port 0.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { pino, type Logger } from 'pino';
import { ApiError } from '@secret-push/rules';
import type { Core } from '../core.js';
import { createWebRouter } from '../web/router.js';
import { EVERY_ANSWER } from './answer.js';
import { createApiEdge } from './api.js';
import { closeAfterReply } from './close-after-reply.js';
import { corsLayer } from './cors.js';
import { answerFailure, describeFailure, sendError } from './errors.js';
import { accessLog, baseHeaders, rateLimit, requestIdentity, singleHost, state, type Part } from './middleware.js';
import { apiPathOf, apiPipeline } from './pipeline.js';
import { probes } from './probes.js';
import { hasBody } from './body.js';
import { createV1Edge } from './v1/edge.js';
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
  /** The server process's own part (runtime/serve.ts: request metrics, /metrics, draining), after the Host check. */
  runtime?: Part;
  /** Keeps the per-client limit's windows; default: in this process (a cluster worker's asks the primary). */
  rateLimitCounter?: HitCounter;
}

interface AppLocals {
  /** Resolves once the contract is validated and compiled; rejects (and every API request answers 500) otherwise. */
  ready: Promise<void>;
  logger: Logger;
}

/** The app: a `node:http` request listener (API paths through the API's pipeline, the rest through express). */
export interface App {
  (req: IncomingMessage, res: ServerResponse): void;
  locals: AppLocals;
  /** A server for the app, listening (as express's `app.listen`). */
  listen(port: number, host: string, callback?: () => void): Server;
}

export function createApp(core: Core, opts: AppOptions = {}): App {
  const { settings } = core;
  const logger = opts.logger ?? pino({ level: settings.logLevel, base: { service: 'secret-push' } });
  const v2 = createApiEdge(core, { ...opts, logger });
  // The legacy v1 API: its own document on the same steps (./v1/edge.ts).
  const v1 = createV1Edge(core, { ...opts, logger });
  const ready = Promise.all([v2.ready, v1.ready]).then(() => undefined);
  ready.catch((error: unknown) => logger.fatal({ err: describeFailure(error) }, 'the API contract failed to load'));

  // The parts every request goes through, pages and API alike, in this order (each on Node's request and response).
  const front: Part[] = [
    accessLog(logger),
    singleHost(),
    ...(opts.runtime ? [opts.runtime] : []),
    // Browser apps on the listed origins (API paths only; preflights answered here, before the limit counts them).
    corsLayer(settings),
    rateLimit(settings.rateLimitPerMinute, settings.trustProxy, Date.now, opts.rateLimitCounter),
  ];
  // API answers get the headers every answer carries from the one writer (./answer.ts), with their status line.
  const api = apiPipeline([requestIdentity(), ...front], { v2, v1 });

  const app = express();
  const locals: AppLocals = Object.assign(app.locals, { ready, logger });
  // One hop, as the API's rule (./request-target.ts), for what express itself reads (`req.secure` for cookies).
  app.set('trust proxy', settings.trustProxy ? 1 : false);
  app.set('etag', false);
  app.set('x-powered-by', false);
  // Pages may change the every-answer headers (their own caching of assets): they are set one by one here.
  app.use(baseHeaders(EVERY_ANSWER), ...front);
  app.use(probes(core));
  // The web pages: HTML, assets, /help/api and the bundled contract at /api/v2/openapi.json.
  app.use(createWebRouter(core, { clock: opts.clock }));
  app.use(noRoute);
  app.use(errorResponder);

  const listener = ((req: IncomingMessage, res: ServerResponse) => {
    const path = apiPathOf(req);
    if (path !== null) api(req, res, path);
    else app(req, res);
  }) as App;
  listener.locals = locals;
  listener.listen = (port, host, callback) => createServer(listener).listen(port, host, callback);
  return listener;
}

/** A path no page or probe answers: the API's JSON 404 (a body nobody reads does not keep the connection). */
function noRoute(req: Request, res: Response): void {
  if (hasBody(req)) closeAfterReply(req, res);
  state(res).route = 'no_route';
  sendError(res, new ApiError('no_route'), state(res).requestId);
}

/** The pages' one error responder: every failure becomes the spec's ErrorResponse; unexpected ones are logged. */
function errorResponder(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
  answerFailure(res, error);
}
