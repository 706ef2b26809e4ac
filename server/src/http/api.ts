/**
 * The API edge: every /api/v2 request is routed and validated by openapi-backend from the bundled contract (one
 * route match per request, in `handleRequest`), authenticated, then dispatched to its typed handler
 * (./operations.ts), whose reply is written here. Errors go to the app's one error mapper.
 *
 * In order: routing (404 no_route / 405 method_not_allowed with Allow), the body's media type, the credential,
 * the operation's security (401), request validation (400/422), the handler.
 *
 * The edge is built from an `EdgeSpec` (a contract, its handlers and the few things that differ between documents),
 * so the legacy v1 API (./v1) runs on these same parts: body reader, authentication, validation, error mapping.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Context, Document, OpenAPIBackend } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { Logger } from 'pino';
import { bundledDocument, contract, type Contract } from '@secret-push/contract';
import { ApiError, UNAVAILABLE_RETRY_SECONDS } from '@secret-push/sdk/rules';
import type { Core, RequestContext } from '../core.js';
import { maxBodyBytes } from '../config/settings.js';
import { deadlineFrom, SAFETY_NET_MS } from '../db/deadlines.js';
import { actorOf, ANONYMOUS, authenticate, baseUrlOf, credentialOf, type AuthResult } from './auth.js';
import { hasBody, readBody, type BodyLimits, type ParsedBody } from './body.js';
import { formToInput } from './form-input.js';
import { validationError } from './errors.js';
import { fileHandlers } from './handlers/file-handlers.js';
import { pushHandlers } from './handlers/push-handlers.js';
import { versionHandler } from './handlers/version-handler.js';
import { state, type RequestState } from './middleware.js';
import { createSpecBackend } from './openapi-backend.js';
import type { Handlers, OperationId, Reply } from './operations.js';
import { closeAfterReply } from './close-after-reply.js';

export interface ApiEdgeOptions {
  logger: Logger;
  /** Check every JSON answer against the contract and log (never expose) mismatches. */
  validateResponses?: boolean;
  /** A request still unanswered after this long answers 503 (a safety net under the database timeouts). */
  requestTimeoutMs?: number;
  /** The instant services decide expiry with (tests move it); default: the system clock. */
  clock?: () => Date;
}

/** The request object handed to openapi-backend (its query is narrowed to the operation's parameters). */
interface BackendRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  query: Record<string, unknown>;
  body: unknown;
}

/** What the routing and security steps leave for a handler. */
interface ApiState extends RequestState {
  apiRequest: BackendRequest;
  auth: AuthResult;
  ctx: RequestContext;
  /** SHA-256 of the body as read (idempotency keys compare it). */
  bodyDigest?: string;
  /** Writes on behalf of this request change nothing after it (db/deadlines.ts). */
  deadline: Date;
}

const apiState = (res: Response) => res.locals as ApiState;

/** The request a handler of an `EdgeSpec` gets, as openapi-backend parsed and validated it (the v2 handlers narrow it per operation, see ./operations.ts). */
export interface EdgeRequest {
  params: Record<string, string>;
  /** The declared query parameters, as sent. */
  query: Record<string, string | undefined>;
  body: unknown;
  /** Request headers, lower-cased. */
  headers: Record<string, string | undefined>;
  ctx: RequestContext;
  /** SHA-256 of the body as read (idempotency keys compare it). */
  bodyDigest?: string;
}
/** A handler's answer: a documented status, its body, extra headers. */
export interface EdgeReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What makes an edge serve one document: the contract, its handlers and what differs between documents. */
export interface EdgeSpec {
  contract: Contract;
  /** The bundled document for openapi-backend (a copy: it is changed in place). */
  document: Document;
  handlers: Record<string, (request: EdgeRequest) => Promise<EdgeReply>>;
  /** Operations that ignore the caller's token. */
  tokenIgnored: ReadonlySet<string>;
  /** A parsed body → the value openapi-backend validates (a form read into the shape a JSON body has). */
  bodyValue(body: ParsedBody, operationId: string): unknown;
  /** openapi-backend's validation errors → the error to answer (`requestBody` is the value it validated). */
  validationError(errors: ErrorObject[], operationId: string, requestBody: unknown): ApiError;
  /** Answers an error in this document's shape; without it, errors go to the app's one error responder. */
  sendError?(res: Response, error: unknown): void;
}

/** Operations that ignore the caller's token: the version report is public and a download link is its own credential. */
const TOKEN_IGNORED = new Set<string>(['getVersion', 'downloadPushFile']);

/** The query parameter names each operation declares (its own and its path's). */
function declaredQueries(c: Contract): Map<string, Set<string>> {
  return new Map(
    c.operations().map((op) => [
      op.operationId,
      new Set(c.parameters(op.operationId).filter((p) => p.in === 'query').map((p) => String(p.name))),
    ]),
  );
}

function allHandlers(core: Core): Handlers {
  return { ...versionHandler(core), ...pushHandlers(core), ...fileHandlers(core) };
}

/** The v2 document: the typed handlers of ./handlers, forms read into `{ push }`, 400/422 as errors.ts maps them. */
export function v2Spec(core: Core): EdgeSpec {
  const handlers = allHandlers(core);
  return {
    contract: contract(),
    document: bundledDocument() as unknown as Document,
    // Each typed handler takes the request of its own operation (openapi-backend routed it there).
    handlers: handlers as unknown as EdgeSpec['handlers'],
    tokenIgnored: TOKEN_IGNORED,
    bodyValue: (body) => (body.type === 'json' ? body.value : body.type === 'form' ? formToInput(body, 'push') : undefined),
    validationError: (errors) => validationError(errors),
  };
}

export interface ApiEdge {
  /** Resolves once the contract is validated and compiled; rejects (and every API request answers 500) otherwise. */
  ready: Promise<void>;
  handle: RequestHandler;
}

export function createApiEdge(core: Core, opts: ApiEdgeOptions, spec: EdgeSpec = v2Spec(core)): ApiEdge {
  const { settings } = core;
  const queries = declaredQueries(spec.contract);
  const routes = spec.contract.routes;
  const tokenIgnored = spec.tokenIgnored;

  /** openapi-backend's handler for one operation: the handler, then its reply written out. */
  const dispatch = (handler: (request: EdgeRequest) => Promise<EdgeReply>) => async (c: Context, _req: Request, res: Response) => {
    const request: EdgeRequest = {
      params: c.request.params as EdgeRequest['params'],
      query: c.request.query as EdgeRequest['query'],
      body: c.request.requestBody as unknown,
      headers: c.request.headers as Record<string, string | undefined>,
      ctx: apiState(res).ctx,
      bodyDigest: apiState(res).bodyDigest,
    };
    writeReply(res, (await handler(request)) as Reply<OperationId>);
  };

  const operationHandlers = Object.fromEntries(Object.entries(spec.handlers).map(([id, handler]) => [id, dispatch(handler)]));

  const backendReady: Promise<OpenAPIBackend> = createSpecBackend({
    definition: spec.document,
    handlers: {
      ...operationHandlers,
      postRoutingHandler: async (c: Context, req: Request, res: Response) => {
        if (!c.operation) return; // routing failed: notFound / methodNotAllowed answer
        const s = apiState(res);
        s.route = c.operation.path;
        // The contract's route table decides: a more literal path (`/pushes/active`, `/p/active.json`) wins over
        // `{url_token}` for every method, so DELETE /pushes/active is a 405, never an expiry of a push called "active".
        const match = routes.match(c.request.method, c.request.path);
        if (match.kind === 'method_not_allowed') {
          s.route = match.path;
          throw new ApiError('method_not_allowed', `This path answers ${match.allow.join(', ')}.`, { headers: { Allow: match.allow.join(', ') } });
        }
        s.operationId = c.operation.operationId;
        // Like unknown properties inside `push`, query parameters the operation does not declare (`locale`, cache
        // busters) are ignored rather than refused.
        const declared = queries.get(c.operation.operationId ?? '');
        const query = s.apiRequest.query;
        for (const name of Object.keys(query)) if (!declared?.has(name)) delete query[name];
        s.auth = tokenIgnored.has(c.operation.operationId ?? '') ? ANONYMOUS : await authenticate(core, credentialOf(req));
        if (c.operation.requestBody) await readRequestBody(c, req, res, bodyLimits(settings, s.auth), spec);
        else if (hasBody(req)) closeAfterReply(req, res); // a body nobody reads: do not keep the connection for it
      },
      postSecurityHandler: async (c: Context, req: Request, res: Response) => {
        const s = apiState(res);
        if (!tokenIgnored.has(c.operation.operationId ?? '')) {
          if (s.auth.invalid) throw new ApiError('invalid_token', 'The API token is not valid.');
          if (!s.auth.user && !settings.allowAnonymous) throw new ApiError('authentication_required', 'This instance needs an API token.');
        }
        s.ctx = {
          actor: actorOf(req, s.auth.user?.userId ?? null),
          baseUrl: baseUrlOf(req, settings.publicBaseUrl),
          deadline: s.deadline,
          ...(opts.clock ? { now: opts.clock() } : {}),
        };
      },
      unauthorizedHandler: async () => {
        throw new ApiError('authentication_required', 'This operation needs an API token.');
      },
      validationFail: async (c: Context) => {
        throw spec.validationError((c.validation.errors ?? []) as ErrorObject[], c.operation.operationId ?? '', c.request.requestBody);
      },
      notFound: async (_c: Context, req: Request, res: Response) => {
        state(res).route = 'no_route';
        if (hasBody(req)) closeAfterReply(req, res);
        throw new ApiError('no_route', 'No such API route.');
      },
      methodNotAllowed: async (c: Context, req: Request, res: Response) => {
        if (hasBody(req)) closeAfterReply(req, res);
        const match = routes.match(req.method, c.request.path);
        const allow = match.kind === 'method_not_allowed' ? match.allow : [];
        state(res).route = match.kind === 'method_not_allowed' ? match.path : 'no_route';
        throw new ApiError('method_not_allowed', `This path answers ${allow.join(', ')}.`, { headers: { Allow: allow.join(', ') } });
      },
      notImplemented: async (c: Context) => {
        throw new Error(`No handler for ${c.operation.operationId}`);
      },
    },
    securityHandlers: {
      bearerAuth: (_c: Context, _req: Request, res: Response) => apiState(res).auth.credential === 'bearer' && apiState(res).auth.user !== null,
      legacyEmail: (_c: Context, _req: Request, res: Response) => apiState(res).auth.credential === 'legacy' && apiState(res).auth.user !== null,
      legacyToken: (_c: Context, _req: Request, res: Response) => apiState(res).auth.credential === 'legacy' && apiState(res).auth.user !== null,
    },
  });
  const ready = backendReady.then(() => undefined);

  const requestTimeoutMs = opts.requestTimeoutMs ?? SAFETY_NET_MS;
  const handle: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const backend = await backendReady;
      try {
        decodeURIComponent(req.path);
      } catch {
        // A malformed percent-escape (`/api/v2/pushes/%ZZ`) can name no push: answer as for an unknown token.
        state(res).route = 'malformed_path';
        throw new ApiError('not_found', 'No push has this token.');
      }
      const apiRequest: BackendRequest = {
        method: req.method,
        path: req.path,
        headers: req.headers as Record<string, string | string[]>,
        query: { ...(req.query as Record<string, unknown>) },
        body: req.body as unknown,
      };
      apiState(res).apiRequest = apiRequest;
      apiState(res).deadline = deadlineFrom(started);
      if (opts.validateResponses) checkAnswers(res, opts.logger, spec.contract);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              // Every write of this request is past its deadline by now, so nothing it sent can still commit.
              new ApiError('service_unavailable', 'The service did not answer in time; nothing was changed. Try again shortly.', {
                retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
              }),
            ),
          requestTimeoutMs,
        );
      });
      await Promise.race([backend.handleRequest(apiRequest as Parameters<OpenAPIBackend['handleRequest']>[0], req, res), timeout]);
    } catch (error) {
      if (spec.sendError) spec.sendError(res, error);
      else next(error);
    } finally {
      clearTimeout(timer);
    }
  };
  return { ready, handle };
}

/**
 * The body limit of a request, chosen before it is read: room for every file only for a caller who may send files
 * (file pushes on, and a token or files open to anonymous callers); everyone else gets the small limit.
 */
function bodyLimits(settings: Core['settings'], auth: AuthResult): BodyLimits {
  const mayUpload = settings.enableFilePushes && (auth.user !== null || !settings.filesRequireAuth);
  return {
    maxBytes: mayUpload ? Math.max(maxBodyBytes(settings), settings.bodyLimitBytes) : settings.bodyLimitBytes,
    maxFileBytes: settings.fileMaxBytes,
    maxFiles: settings.fileMaxCount,
    ...(auth.user === null && settings.filesRequireAuth
      ? { filesRefused: new ApiError('authentication_required', 'File pushes need an API token on this instance.') }
      : {}),
  };
}

/**
 * The media types an operation's request body declares. A body in one the reader knows but the operation does not
 * declare (v1's `/f.json` takes no form-urlencoded body: it cannot carry a file) answers 400 before it is read.
 */
function requireDeclaredMediaType(c: Context, req: Request): void {
  const declared = Object.keys((c.operation.requestBody as { content?: object } | undefined)?.content ?? {});
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const known = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'];
  const asDeclared = /^application\/[a-z0-9.+-]+\+json$/.test(type) ? 'application/json' : type;
  if (!hasBody(req) || !known.includes(asDeclared) || declared.includes(asDeclared)) return;
  throw new ApiError('unsupported_media_type', `Send the body as ${declared.join(' or ')}.`);
}

/**
 * Reads the body into the request openapi-backend validates next (JSON as sent; a form into the `{ push }` object a
 * JSON body gives: `spec.bodyValue`). On a failure the rest of the body may be unread: the connection is not kept for it.
 */
async function readRequestBody(c: Context, req: Request, res: Response, limits: BodyLimits, spec: EdgeSpec): Promise<void> {
  const s = apiState(res);
  try {
    requireDeclaredMediaType(c, req);
    const { body, digest } = await readBody(req, limits);
    const value = spec.bodyValue(body, c.operation.operationId ?? '');
    s.apiRequest.body = value;
    c.request.requestBody = value;
    s.bodyDigest = digest;
  } catch (error) {
    closeAfterReply(req, res);
    throw error;
  }
}

/** Writes a handler's reply: JSON, or bytes for a binary answer. */
function writeReply<Op extends OperationId>(res: Response, reply: Reply<Op>): void {
  const { status, body, headers } = reply as { status: number; body: unknown; headers?: Record<string, string> };
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  res.status(status);
  if (body instanceof Uint8Array) {
    res.setHeader('Content-Length', String(body.byteLength));
    res.end(body);
    return;
  }
  res.json(body);
}

/** Wraps res.json so that each JSON answer of a routed operation (errors too) is checked against the contract. */
function checkAnswers(res: Response, logger: Logger, against: Contract): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const operationId = state(res).operationId;
    if (operationId) {
      const violations = against.checkResponse(
        operationId,
        { status: res.statusCode, headers: { 'content-type': 'application/json' }, body },
        { requiredHeaders: false },
      );
      if (violations.length > 0) {
        logger.error(
          { request_id: state(res).requestId, operation: operationId, status: res.statusCode, violations: violations.map((v) => `${v.path} ${v.message}`) },
          'response does not match the contract',
        );
      }
    }
    return json(body);
  };
}
