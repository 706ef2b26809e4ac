/**
 * The HTTP application: express 5 + openapi-backend. Every /api/v2 request is routed and validated from the bundled
 * contract; handlers are keyed by operationId. Builds the app without listening, so tests mount it on port 0.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Context, OpenAPIBackend } from 'openapi-backend';
import { pino, type Logger } from 'pino';
import type { ErrorObject } from 'ajv';
import { maxBodyBytes } from './config/settings.js';
import { DomainError, type Core } from './domain/contract.js';
import { actorOf, authenticate, baseUrlOf, readCredential } from './http/auth.js';
import { errorBody, HttpError, toHttpError, UNAVAILABLE_RETRY_SECONDS, validationError } from './http/errors.js';
import { fileHandlers } from './http/handlers/files.js';
import { pushHandlers } from './http/handlers/pushes.js';
import { routed, type OperationHandler } from './http/handlers/types.js';
import { versionHandlers } from './http/handlers/version.js';
import { accessLog, baseHeaders, rateLimit, state, stripJsonSuffix } from './http/middleware.js';
import { createSpecBackend, declaredQueryNames } from './http/openapi.js';
import { resolveRoute } from './http/routes.js';
import { createWebRouter } from './web/router.js';

export interface AppOptions {
  /** Where request logs go; defaults to pino on stdout at settings.logLevel. */
  logger?: Logger;
  /** Check every JSON response against the contract and log (never expose) mismatches. */
  validateResponses?: boolean;
  /** A request still unanswered after this long answers 503 (a safety net under the database timeouts). */
  requestTimeoutMs?: number;
  /** The instant services decide expiry with (tests move it); default: the system clock. */
  clock?: () => Date;
}

export interface AppLocals {
  /** Resolves once the contract is validated and compiled; rejects (and every request answers 500) otherwise. */
  ready: Promise<void>;
  logger: Logger;
}

/** Operations that ignore the caller's token: the version report is public and a download link is its own credential. */
const TOKEN_IGNORED = new Set(['getVersion', 'downloadPushFile']);

export function createApp(core: Core, opts: AppOptions = {}): express.Application & { locals: AppLocals } {
  const { settings } = core;
  const logger = opts.logger ?? pino({ level: settings.logLevel, base: { service: 'secret-push' } });
  const requestTimeoutMs = opts.requestTimeoutMs ?? 20_000;

  const handlers: Record<string, OperationHandler> = {
    ...versionHandlers(core),
    ...pushHandlers(core),
    ...fileHandlers(core),
  };

  const backendReady: Promise<OpenAPIBackend> = createSpecBackend({
    handlers: {
      ...handlers,
      postRoutingHandler: async (c: Context, req: Request, res: Response) => {
        if (!c.operation) return;
        const s = routed(res);
        s.route = c.operation.path;
        s.operationId = c.operation.operationId;
        if (c.operation.requestBody && hasBody(req) && !isJson(req)) {
          throw new HttpError(400, 'unsupported_media_type', 'Send the body as application/json.');
        }
        s.auth = TOKEN_IGNORED.has(c.operation.operationId ?? '')
          ? { credential: 'none', user: null, invalid: false }
          : await authenticate(core, readCredential(req));
      },
      postSecurityHandler: async (c: Context, req: Request, res: Response) => {
        const s = routed(res);
        if (!TOKEN_IGNORED.has(c.operation.operationId ?? '')) {
          if (s.auth.invalid) throw new HttpError(401, 'invalid_token', 'The API token is not valid.');
          if (!s.auth.user && !settings.allowAnonymous) {
            throw new HttpError(401, 'authentication_required', 'This instance needs an API token.');
          }
        }
        s.ctx = {
          actor: actorOf(req, s.auth.user?.userId ?? null),
          baseUrl: baseUrlOf(req, settings.publicBaseUrl),
          ...(opts.clock ? { now: opts.clock() } : {}),
        };
      },
      unauthorizedHandler: async () => {
        throw new HttpError(401, 'authentication_required', 'This operation needs an API token.');
      },
      validationFail: async (c: Context) => {
        throw validationError((c.validation.errors ?? []) as ErrorObject[]);
      },
      notFound: async () => {
        throw new HttpError(404, 'no_route', 'No such API route.');
      },
      methodNotAllowed: async () => {
        throw new HttpError(405, 'method_not_allowed', 'This path does not answer this method.');
      },
      notImplemented: async (c: Context) => {
        throw new Error(`No handler for ${c.operation.operationId}`);
      },
    },
    securityHandlers: {
      bearerAuth: (_c: Context, _req: Request, res: Response) =>
        routed(res).auth.credential === 'bearer' && routed(res).auth.user !== null,
      legacyEmail: (_c: Context, _req: Request, res: Response) =>
        routed(res).auth.credential === 'legacy' && routed(res).auth.user !== null,
      legacyToken: (_c: Context, _req: Request, res: Response) =>
        routed(res).auth.credential === 'legacy' && routed(res).auth.user !== null,
    },
  });
  const ready = backendReady.then(() => undefined);
  ready.catch((error: unknown) => logger.fatal({ err: describeFailure(error) }, 'the API contract failed to load'));

  const app = express() as unknown as express.Application & { locals: AppLocals };
  app.locals.ready = ready;
  app.locals.logger = logger;
  // One hop: the client address is the one the proxy in front appended to X-Forwarded-For, never an entry the
  // client wrote itself (trusting every hop would let a client pick its address per request).
  app.set('trust proxy', settings.trustProxy ? 1 : false);
  app.set('etag', false);
  app.set('x-powered-by', false);

  app.use(baseHeaders());
  app.use(helmet());
  app.use(accessLog(logger));

  // Probes, outside the contract: the process is alive; the database answers.
  app.get('/healthz', (_req, res) => {
    state(res).route = '/healthz';
    res.status(200).json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    state(res).route = '/readyz';
    try {
      await withTimeout(core.ping(), 3_000);
      res.status(200).json({ status: 'ok' });
    } catch {
      res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_SECONDS));
      res.status(503).json(
        errorBody(
          new HttpError(503, 'service_unavailable', 'The database is not reachable.', {
            retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
          }),
          state(res).requestId,
        ),
      );
    }
  });

  app.use(rateLimit(settings.rateLimitPerMinute));
  // The web pages (server/src/web): HTML, assets, /help/api and the bundled contract at /api/v2/openapi.json. Mounted
  // before the `.json` suffix rewrite (which would turn openapi.json into `openapi`) and before the API's no_route
  // fallback; paths it does not serve fall through to the API unchanged.
  app.use(createWebRouter(core, { clock: opts.clock }));
  app.use(stripJsonSuffix());
  app.use(
    express.json({
      limit: maxBodyBytes(settings),
      // Any JSON value is accepted here so that a non-object body answers missing_push, not invalid_json.
      strict: false,
      type: isJson,
    }),
  );

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const backend = await backendReady;
      try {
        decodeURIComponent(req.path);
      } catch {
        // A malformed percent-escape (`/api/v2/pushes/%ZZ`) can name no push: answer as for an unknown token.
        state(res).route = 'malformed_path';
        throw new HttpError(404, 'not_found', 'No push has this token.');
      }
      const route = resolveRoute(backend, req.method, req.path);
      if (route.kind === 'no_route') {
        state(res).route = 'no_route';
        throw new HttpError(404, 'no_route', 'No such API route.');
      }
      if (route.kind === 'method_not_allowed') {
        state(res).route = route.path;
        throw new HttpError(405, 'method_not_allowed', `This path answers ${route.allow.join(', ')}.`, {
          headers: { Allow: route.allow.join(', ') },
        });
      }
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new HttpError(503, 'service_unavailable', 'The service did not answer in time. Try again shortly.', {
                retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
              }),
            ),
          requestTimeoutMs,
        );
      });
      if (opts.validateResponses) checkResponses(backend, res, logger);
      await Promise.race([
        backend.handleRequest(
          {
            method: req.method,
            path: req.path,
            headers: req.headers as Record<string, string | string[]>,
            query: declaredQuery(backend, req.method, req.path, req.query as Record<string, unknown>),
            body: req.body as unknown,
          },
          req,
          res,
        ),
        timeout,
      ]);
    } catch (error) {
      next(error);
    } finally {
      clearTimeout(timer);
    }
  });

  // The one error mapper.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const httpError = toHttpError(error);
    const s = state(res);
    if (httpError.status >= 500 && !(error instanceof HttpError) && !(error instanceof DomainError)) {
      s.failure = describeFailure(error);
    }
    if (res.headersSent) {
      // A late failure (e.g. the safety-net timeout already answered): nothing more can be sent.
      if (!res.writableEnded) res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(httpError.extra.headers ?? {})) res.setHeader(name, value);
    if (httpError.extra.retryAfterSeconds !== undefined) {
      res.setHeader('Retry-After', String(httpError.extra.retryAfterSeconds));
    }
    if (httpError.status === 401 && (httpError.code === 'invalid_token' || httpError.code === 'authentication_required')) {
      res.setHeader('WWW-Authenticate', 'Bearer');
    }
    res.status(httpError.status).json(errorBody(httpError, s.requestId));
  });

  return app;
}

const queryNamesCache = new WeakMap<OpenAPIBackend, Map<string, Set<string>>>();

/**
 * Only the query parameters the operation declares: like unknown properties inside `push`, extra parameters that
 * clients of other dialects send (`locale`, cache busters) are ignored rather than refused.
 */
function declaredQuery(
  backend: OpenAPIBackend,
  method: string,
  path: string,
  query: Record<string, unknown>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let keys: string[] | undefined;
  for (const name in query) (keys ??= []).push(name);
  if (!keys) return out; // most requests carry no query string at all
  let byOperation = queryNamesCache.get(backend);
  if (!byOperation) queryNamesCache.set(backend, (byOperation = declaredQueryNames(backend)));
  const operation = backend.router.matchOperation({ method, path, headers: {} });
  const names = byOperation.get(operation?.operationId ?? '');
  if (names) for (const name of keys) if (names.has(name)) out[name] = query[name] as string | string[];
  return out;
}

function isJson(req: { headers: Request['headers'] }): boolean {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** What a log line may say about an unexpected failure: its class, code and stack frames, never its message. */
function describeFailure(error: unknown): { name: string; code?: string; stack?: string } {
  if (!(error instanceof Error)) return { name: typeof error };
  const code = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .slice(0, 12)
    .join('\n');
  return { name: error.name, ...(typeof code === 'string' ? { code } : {}), stack: frames };
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Wraps res.json so that each JSON answer is checked against the contract (status and body). */
function checkResponses(backend: OpenAPIBackend, res: Response, logger: Logger): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const operationId = state(res).operationId;
    if (operationId) {
      const result = backend.validator.validateResponse(body, operationId, res.statusCode);
      if (result.errors && result.errors.length > 0) {
        logger.error(
          {
            request_id: state(res).requestId,
            operation: operationId,
            status: res.statusCode,
            violations: result.errors.map((e) => `${e.instancePath} ${e.keyword}`),
          },
          'response does not match the contract',
        );
      }
    }
    return json(body);
  };
}
