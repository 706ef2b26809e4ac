/**
 * The API edge: every /api/v2 request is routed and validated from the bundled contract (openapi-backend compiles the
 * validators at start-up; ./operation-table.ts runs its `handleRequest` steps against what it compiled), authenticated,
 * then dispatched to its typed handler (./operations.ts), whose reply is written here. Errors go to the app's one error
 * mapper.
 *
 * In order: routing (404 no_route / 405 method_not_allowed with Allow), the body's media type, the credential,
 * the operation's security (401), request validation (400/422), the handler.
 *
 * The edge is built from an `EdgeSpec` (a contract, its handlers and the few things that differ between documents),
 * so the legacy v1 API (./v1) runs on these same parts: body reader, authentication, validation, error mapping.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Document } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { Logger } from 'pino';
import { bundledDocument, contract, type Contract } from '@secret-push/contract';
import { ApiError, isJsonMediaType, mediaTypeOf } from '@secret-push/sdk/rules';
import type { Core, RequestContext } from '../core.js';
import { maxBodyBytes } from '../config/settings.js';
import { deadlineFrom, SAFETY_NET_MS } from '../db/deadlines.js';
import { actorOf, ANONYMOUS, authenticate, baseUrlOf, credentialOf, type AuthResult } from './auth.js';
import { hasBody, isBoundsError, readBody, type BodyLimits, type ParsedBody } from './body.js';
import { formBounds, jsonBounds } from './body-bounds.js';
import { boundsRefusal, type PushFrame } from './body-refusal.js';
import { formToInput } from './form-input.js';
import { topLevelValidationError, validationError } from './errors.js';
import { fileHandlers } from './handlers/file-handlers.js';
import { notifyHandler } from './handlers/notify-handler.js';
import { pushHandlers } from './handlers/push-handlers.js';
import { versionHandler } from './handlers/version-handler.js';
import { fieldValue, state, type RequestState } from './middleware.js';
import { createSpecBackend } from './openapi-backend.js';
import { OperationTable, requestPath, type CompiledOperation, type Routed } from './operation-table.js';
import type { Handlers } from './operations.js';
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

/** What the routing and security steps leave for a handler. */
interface ApiState extends RequestState {
  auth: AuthResult;
  ctx: RequestContext;
  /** SHA-256 of the body as read (idempotency keys compare it). */
  bodyDigest?: string;
  /** Writes on behalf of this request change nothing after it (db/deadlines.ts). */
  deadline: Date;
  /** The request's one routing answer (the route table is asked once per request). */
  routed?: Routed;
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
  /**
   * Where an operation's body holds the push: the wrapper (`push`, `password`, …) of its JSON and form bodies, and
   * whether the push fields may also stand at the top level of a JSON body (v1). A bound passed inside the push
   * is refused with the validator's 422 on that field; undefined: the operation takes no push.
   */
  pushFrame(operationId: string): PushFrame | undefined;
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
      new Set(
        c
          .parameters(op.operationId)
          .filter((p) => p.in === 'query')
          .map((p) => String(p.name)),
      ),
    ]),
  );
}

function allHandlers(core: Core): Handlers {
  return { ...versionHandler(core), ...pushHandlers(core), ...fileHandlers(core), ...notifyHandler(core) };
}

/** The v2 document: the typed handlers of ./handlers, forms read into `{ push }`, 400/422 as errors.ts maps them. */
function v2Spec(core: Core): EdgeSpec {
  const handlers = allHandlers(core);
  return {
    contract: contract(),
    document: bundledDocument() as unknown as Document,
    // Each typed handler takes the request of its own operation (openapi-backend routed it there).
    handlers: handlers as unknown as EdgeSpec['handlers'],
    tokenIgnored: TOKEN_IGNORED,
    bodyValue: (body) =>
      body.type === 'json' ? body.value : body.type === 'form' ? formToInput(body, 'push') : undefined,
    validationError: (errors, operationId) =>
      operationId === 'notifyEmails' ? topLevelValidationError(errors) : validationError(errors),
    pushFrame: (operationId) =>
      operationId === 'createPush'
        ? { wrapper: 'push', topLevel: false }
        : operationId === 'notifyEmails'
          ? { wrapper: '', topLevel: true } // its fields stand at the top level: a bound passed there is a 422 on the field
          : undefined,
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
  const tokenIgnored = spec.tokenIgnored;
  const check = opts.validateResponses ? answerChecker(opts.logger, spec.contract) : undefined;

  // openapi-backend validates the contract and compiles its request validators at start-up; requests are then routed,
  // authorised and validated against the table made from it (./operation-table.ts), with the library's rules. Its
  // handler map is checked against the contract's operations (strict: an unknown operationId fails to load).
  const tableReady: Promise<OperationTable> = createSpecBackend({
    definition: spec.document,
    handlers: spec.handlers as never,
  }).then((backend) => new OperationTable(backend, spec.contract.routes));
  let table: OperationTable | undefined;
  let bounds = new Map<string, BodyBounds>();
  tableReady.then(
    (t) => {
      bounds = bodyBounds(t, spec);
      table = t;
    },
    () => undefined,
  );
  const ready = tableReady.then(() => undefined);

  /** Routing, the caller, the body, security, validation, the handler, its reply: the order openapi-backend runs them in. */
  const answer = async (
    t: OperationTable,
    req: Request,
    res: Response,
    path: string,
    query: Record<string, unknown>,
  ): Promise<void> => {
    const s = apiState(res);
    // The one match of this request (./operation-table.ts: the contract's route table), carried on it: the operation
    // and its path parameters, or 404 / 405. A more literal path (`/pushes/active`, `/p/active.json`) wins over
    // `{url_token}` for every method, so DELETE /pushes/active is a 405, never an expiry of a push called "active".
    const routed = t.route(req.method, path);
    s.routed = routed;
    if (routed.kind !== 'ok') refuseRoute(routed, req, res);
    const op = routed.operation;
    const params = routed.params;
    s.route = routed.path;
    s.operationId = op.operationId;
    // Like unknown properties inside `push`, query parameters the operation does not declare (`locale`, cache
    // busters) are ignored rather than refused.
    const declared = queries.get(op.operationId);
    for (const name of Object.keys(query)) if (!declared?.has(name)) delete query[name];
    const ignoresToken = tokenIgnored.has(op.operationId);
    s.auth = ignoresToken ? ANONYMOUS : await authenticate(core, credentialOf(req));
    let body: unknown = undefined;
    if (op.hasRequestBody) {
      body = await readRequestBody(
        op,
        req,
        res,
        { ...bodyLimits(settings, s.auth), ...bounds.get(op.operationId) },
        spec,
      );
    } else if (hasBody(req)) closeAfterReply(req, res); // a body nobody reads: do not keep the connection for it
    const authorized = t.authorized(op, (scheme) => schemeHolds(scheme, s.auth));
    if (!ignoresToken) {
      if (s.auth.invalid) throw new ApiError('invalid_token');
      if (!s.auth.user && !settings.allowAnonymous)
        throw new ApiError('authentication_required', 'This instance needs an API token.');
    }
    s.ctx = {
      actor: actorOf(req, s.auth.user?.userId ?? null),
      baseUrl: baseUrlOf(req, settings.publicBaseUrl),
      deadline: s.deadline,
      ...(opts.clock ? { now: opts.clock() } : {}),
    };
    if (!authorized) throw new ApiError('authentication_required', 'This operation needs an API token.');
    const errors = t.validate(op, { params: { ...params }, query: { ...query }, headers: req.headers, body });
    if (errors) throw spec.validationError(errors, op.operationId, body);
    const handler = spec.handlers[op.operationId];
    if (!handler) throw new Error(`No handler for ${op.operationId}`);
    const reply = await handler({
      params,
      query: query as EdgeRequest['query'],
      body,
      headers: req.headers as EdgeRequest['headers'],
      ctx: s.ctx,
      bodyDigest: s.bodyDigest,
    });
    writeReply(res, reply, check);
  };

  const requestTimeoutMs = opts.requestTimeoutMs ?? SAFETY_NET_MS;
  const handle: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const t = table ?? (await tableReady);
      const path = req.path;
      try {
        decodeURIComponent(path);
      } catch {
        // A malformed percent-escape (`/api/v2/pushes/%ZZ`) can name no push: answer as for an unknown token.
        state(res).route = 'malformed_path';
        throw new ApiError('not_found');
      }
      const query = { ...(req.query as Record<string, unknown>) };
      apiState(res).deadline = deadlineFrom(started);
      if (check) checkErrorAnswers(res, check);
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(
          () =>
            reject(
              // Every write of this request is past its deadline by now, so nothing it sent can still commit.
              new ApiError('service_unavailable'),
            ),
          requestTimeoutMs,
        );
        answer(t, req, res, requestPath(path), query).then(resolve, reject);
      });
    } catch (error) {
      if (spec.sendError) spec.sendError(res, error);
      else next(error);
    } finally {
      clearTimeout(timer);
    }
  };
  return { ready, handle };
}

/** Whether a security scheme of the contract is satisfied by the caller the credential step found. */
function schemeHolds(scheme: string, auth: AuthResult): boolean {
  if (scheme === 'bearerAuth') return auth.credential === 'bearer' && auth.user !== null;
  if (scheme === 'legacyEmail' || scheme === 'legacyToken') return auth.credential === 'legacy' && auth.user !== null;
  return false;
}

/** A request no operation takes: 404 no_route, or 405 with the methods the route table gives the path. */
function refuseRoute(routed: Exclude<Routed, { kind: 'ok' }>, req: Request, res: Response): never {
  if (hasBody(req)) closeAfterReply(req, res); // a body nobody reads: do not keep the connection for it
  if (routed.kind === 'no_route') {
    state(res).route = 'no_route';
    throw new ApiError('no_route');
  }
  state(res).route = routed.path;
  const allow = routed.allow.join(', ');
  throw new ApiError('method_not_allowed', `This path answers ${allow}.`, { headers: { Allow: allow } });
}

/** The refusal of a file part from a caller who may not send files (made when one arrives, not for every request). */
const filesNeedToken = () => new ApiError('authentication_required', 'File pushes need an API token on this instance.');

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
    ...(auth.user === null && settings.filesRequireAuth ? { filesRefused: filesNeedToken } : {}),
  };
}

const KNOWN_MEDIA_TYPES = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'];

/**
 * The media types an operation's request body declares. A body in one the reader knows but the operation does not
 * declare (v1's `/f.json` takes no form-urlencoded body: it cannot carry a file) answers 400 before it is read.
 */
function requireDeclaredMediaType(op: CompiledOperation, req: Request): void {
  const declared = op.mediaTypes;
  const type = mediaTypeOf(req.headers['content-type']);
  const asDeclared = isJsonMediaType(type) ? 'application/json' : type;
  if (!hasBody(req) || !KNOWN_MEDIA_TYPES.includes(asDeclared) || declared.includes(asDeclared)) return;
  throw new ApiError('unsupported_media_type', `Send the body as ${declared.join(' or ')}.`);
}

/**
 * Reads the body into the value validated next (JSON as sent; a form into the `{ push }` object a JSON body gives:
 * `spec.bodyValue`). On a failure the rest of the body may be unread: the connection is not kept for it.
 */
async function readRequestBody(
  op: CompiledOperation,
  req: Request,
  res: Response,
  limits: BodyLimits,
  spec: EdgeSpec,
): Promise<unknown> {
  try {
    requireDeclaredMediaType(op, req);
    const { body, digest } = await readBody(req, limits);
    apiState(res).bodyDigest = digest;
    return spec.bodyValue(body, op.operationId);
  } catch (error) {
    closeAfterReply(req, res);
    throw isBoundsError(error) ? boundsRefusal(error, spec.pushFrame(op.operationId)) : error;
  }
}

/** The bounds of an operation's body, by media type (from its dereferenced request body schemas). */
type BodyBounds = Pick<BodyLimits, 'json' | 'urlencoded' | 'multipart'>;

function bodyBounds(t: OperationTable, spec: EdgeSpec): Map<string, BodyBounds> {
  const out = new Map<string, BodyBounds>();
  for (const op of t.operations()) {
    const content = (
      op.operation.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined
    )?.content;
    if (!content) continue;
    const frame = spec.pushFrame(op.operationId);
    const json = content['application/json']?.schema;
    const properties = (json?.properties ?? {}) as Record<string, unknown>;
    const entry: BodyBounds = {};
    if (json) entry.json = jsonBounds(json, frame?.topLevel ? properties[frame.wrapper] : undefined);
    const urlencoded = content['application/x-www-form-urlencoded']?.schema;
    if (urlencoded) entry.urlencoded = formBounds(urlencoded);
    const multipart = content['multipart/form-data']?.schema;
    if (multipart) entry.multipart = formBounds(multipart);
    out.set(op.operationId, entry);
  }
  return out;
}

/** Checks one JSON answer of a routed operation against the contract (`status`, the body as sent). */
type AnswerCheck = (res: Response, body: unknown) => void;

/**
 * Writes a handler's reply: bytes for a binary answer; JSON as express's `res.json` writes it (`application/json;
 * charset=utf-8`, its length), without the steps that do nothing here (ETag generation is off, the settings lookups),
 * its headers given to `writeHead` at once.
 */
function writeReply(res: Response, reply: EdgeReply, check: AnswerCheck | undefined): void {
  const { status, body, headers } = reply;
  const names = headers ? Object.keys(headers) : [];
  if (body instanceof Uint8Array || names.some((name) => name.toLowerCase() === 'content-type')) {
    // Bytes, or a handler's own media type (express's charset handling, and the check res.json is wrapped with).
    for (const name of names) res.setHeader(name, fieldValue(res, name, headers![name]!));
    res.status(status);
    if (!(body instanceof Uint8Array)) {
      res.json(body);
      return;
    }
    res.setHeader('Content-Length', String(body.byteLength));
    res.end(body);
    return;
  }
  res.statusCode = status;
  check?.(res, body);
  const text = JSON.stringify(body) as string | undefined;
  const list = ['Content-Type', 'application/json; charset=utf-8'];
  if (text !== undefined) list.push('Content-Length', String(Buffer.byteLength(text)));
  for (const name of names) list.push(name, fieldValue(res, name, headers![name]!));
  res.writeHead(status, list);
  res.end(text);
}

/** The check of answers against the contract; mismatches are logged (never exposed). */
function answerChecker(logger: Logger, against: Contract): AnswerCheck {
  return (res, body) => {
    const operationId = state(res).operationId;
    if (!operationId) return;
    const violations = against.checkResponse(
      operationId,
      { status: res.statusCode, headers: { 'content-type': 'application/json' }, body },
      { requiredHeaders: false },
    );
    if (violations.length > 0) {
      logger.error(
        {
          request_id: state(res).requestId,
          operation: operationId,
          status: res.statusCode,
          violations: violations.map((v) => `${v.path} ${v.message}`),
        },
        'response does not match the contract',
      );
    }
  };
}

/** Wraps res.json so that the error answers of a routed operation (written by the error responders) are checked too. */
function checkErrorAnswers(res: Response, check: AnswerCheck): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    check(res, body);
    return json(body);
  };
}
