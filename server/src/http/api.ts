/**
 * The API edge: the steps of the pipeline (./pipeline.ts) that are the contract's, for one document (v2, or the legacy
 * v1 on the same parts: ./v1/edge.ts). In order, each a method of `Edge`, listed once in `Edge.steps`:
 *
 * 1. `route`: the one match of the request (the contract's route table, compiled at start-up from openapi-backend's
 *    dereferenced operations: ./operation-table.ts), carried on it: the operation and its path parameters, or 404
 *    no_route, or 405 method_not_allowed with Allow;
 * 2. `authenticate`: the credential, resolved to a user (./auth.ts);
 * 3. `readBody`: the body, in a media type the operation declares, within the limits chosen for this caller and the
 *    bounds the contract sets (./body.ts, ./body-bounds.ts);
 * 4. `authorize`: the operation's security requirements (401), and the request's context (caller, `{base}`, clock,
 *    deadline);
 * 5. `validate`: the request against the validators openapi-backend compiled (400/422);
 * 6. `handle`: the operation's typed handler (./handlers; an Idempotency-Key is honoured inside the create's own
 *    transaction, ../push/idempotency.ts, so that the key and the push commit together);
 * 7. `serialize`: its reply, written by the one writer (./answer.ts).
 *
 * A failure at any step is answered by ./errors.ts `answerFailure`, in the document's error shape (`EdgeSpec.errorShape`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Document } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { Logger } from 'pino';
import { bundledDocument, contract, type Contract } from '@secret-push/contract';
import {
  ApiError,
  filesNeedToken,
  isJsonMediaType,
  mediaTypeOf,
  requireCallerAllowed,
  requireWorkspaceKeyOperation,
  type ApiKeyScope,
} from '@secret-push/rules';
import type { Core, RequestContext } from '../core.js';
import type { RequestUploads } from '../files/file-objects.js';
import { envelopeContexts } from '../push/push-service.js';
import { maxBodyBytes } from '../config/settings.js';
import { deadlineFrom, SAFETY_NET_MS } from '../db/deadlines.js';
import { writeAnswer, writeJson, writeStream } from './answer.js';
import { actorOf, ANONYMOUS, authenticate, baseUrlOf, credentialOf, type AuthResult } from './auth.js';
import { hasBody, isBoundsError, readBody, type BodyLimits, type ParsedBody } from './body.js';
import { formBounds, jsonBounds } from './body-bounds.js';
import { boundsRefusal, type PushFrame } from './body-refusal.js';
import { formToInput } from './form-input.js';
import { answerFailure, validationError, type ErrorShape } from './errors.js';
import { apiKeyHandlers } from './handlers/api-key-handlers.js';
import { fileHandlers } from './handlers/file-handlers.js';
import { notifyHandler } from './handlers/notify-handler.js';
import { webhookHandlers } from './handlers/webhook-handlers.js';
import { workspaceHandlers } from './handlers/workspace-handlers.js';
import { workspaceBrandHandlers } from './handlers/workspace-brand-handlers.js';
import { OWN_VALIDATION_ERRORS, PUSH_FRAMES } from './handlers/validation-errors.js';
import { invitationHandlers } from './handlers/invitation-handlers.js';
import { declaredQueries } from './declared-queries.js';
import { answerChecker, type AnswerCheck } from './answer-check.js';
import { pushHandlers } from './handlers/push-handlers.js';
import { requestHandlers } from './handlers/request-handlers.js';
import { versionHandler } from './handlers/version-handler.js';
import { fieldValue, state, type RequestState } from './middleware.js';
import { createSpecBackend } from './openapi-backend.js';
import { OperationTable, requestPath, type CompiledOperation, type Routed } from './operation-table.js';
import { servedOperations } from './retrieve-only.js';
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

/** One API request on its way through an edge's steps: what each step leaves for the next. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  state: RequestState;
  /** The path the route table matches (a `.json` suffix the document allows already taken off). */
  path: string;
  /** The query parameters, as sent (the ones the operation does not declare are dropped by `route`). */
  query: Record<string, unknown>;
  /** Writes on behalf of this request change nothing after it (db/deadlines.ts). */
  deadline: Date;
  /** Set by `route`: the request's one routing answer. */
  routed?: Extract<Routed, { kind: 'ok' }>;
  /** Set by `authenticate`. */
  auth: AuthResult;
  /** Set by `readBody`: the value validated next, and the SHA-256 of the body as read (idempotency compares it). */
  body?: unknown;
  bodyDigest?: string;
  /** Set by `authorize`. */
  ctx?: RequestContext;
  /** Set by `handle`. */
  reply?: EdgeReply;
  /** Set by `readBody` when file parts stream to the object store: what no committed row adopted goes at the end. */
  uploads?: RequestUploads;
  /**
   * Stops the deadline's clock and the safety net while a body streams to the object store (`reading`: its time is
   * bounded by the server's requestTimeout), then starts both afresh once it is read; set by `answer`.
   */
  restartClock?: (reading: boolean) => void;
}

type Step = (x: Exchange) => void | Promise<void>;

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
  /** The path the route table matches for a request's path (v2: a `.json` suffix taken off; v1: one added). */
  routingPath(path: string): string;
  /** This document's error shape (v1's); without it, errors are answered as the spec's ErrorResponse. */
  errorShape?: ErrorShape;
}

/** Operations that ignore the caller's token: the version report is public and a download link is its own credential. */
const TOKEN_IGNORED = new Set<string>(['getVersion', 'downloadPushFile']);

function allHandlers(core: Core): Handlers {
  return {
    ...versionHandler(core),
    ...pushHandlers(core),
    ...fileHandlers(core),
    ...requestHandlers(core),
    ...apiKeyHandlers(core),
    ...workspaceHandlers(core),
    ...workspaceBrandHandlers(core),
    ...invitationHandlers(core),
    ...notifyHandler(core),
    ...webhookHandlers(core),
  };
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
    bodyValue: (body, operationId) =>
      body.type === 'json'
        ? body.value
        : body.type === 'form'
          ? operationId === 'createRequest'
            ? formToInput(body, 'request', 'RequestInput')
            : formToInput(body, 'push')
          : undefined,
    validationError: (errors, operationId) =>
      OWN_VALIDATION_ERRORS[operationId]?.(errors) ??
      validationError(errors, operationId === 'createRequest' ? 'request' : 'push'),
    pushFrame: (operationId) => PUSH_FRAMES[operationId],
    routingPath: stripJsonSuffix,
  };
}

/**
 * One document's edge: its operation table (compiled when the contract has loaded: `ready`), and the steps every
 * request of it takes, listed once in `steps`.
 */
export class Edge {
  /** Resolves once the contract is validated and compiled; rejects (and every request of it answers 500) otherwise. */
  readonly ready: Promise<void>;
  /** The steps, in order. */
  readonly steps: readonly Step[] = [
    (x) => this.route(x),
    (x) => this.authenticate(x),
    (x) => this.readBody(x),
    (x) => this.authorize(x),
    (x) => this.validate(x),
    (x) => this.handle(x),
    (x) => this.serialize(x),
  ];
  private table: OperationTable | undefined;
  private readonly tableReady: Promise<OperationTable>;
  private bounds = new Map<string, BodyBounds>();
  private readonly queries: Map<string, Set<string>>;
  private readonly check: AnswerCheck | undefined;
  private readonly settings: Core['settings'];
  private readonly requestTimeoutMs: number;

  constructor(
    private readonly core: Core,
    private readonly opts: ApiEdgeOptions,
    readonly spec: EdgeSpec = v2Spec(core),
  ) {
    this.settings = core.settings;
    this.queries = declaredQueries(spec.contract);
    this.check = opts.validateResponses ? answerChecker(opts.logger, spec.contract) : undefined;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? SAFETY_NET_MS;
    // openapi-backend validates the contract and compiles its request validators at start-up; requests are then
    // routed, authorised and validated against the table made from it (./operation-table.ts), with the library's
    // rules. Its handler map is checked against the contract's operations (strict: an unknown operationId fails).
    this.tableReady = createSpecBackend({ definition: spec.document, handlers: spec.handlers as never }).then(
      (backend) => new OperationTable(backend, spec.contract.routes, servedOperations(core.settings)),
    );
    this.tableReady.then(
      (t) => {
        this.bounds = bodyBounds(t, spec);
        this.table = t;
      },
      () => undefined,
    );
    this.ready = this.tableReady.then(() => undefined);
  }

  /**
   * Answers one request whose path is `path` (what the route table matches): its steps in order, under the
   * safety-net timeout; any failure is answered by the document's error responder.
   */
  async answer(req: IncomingMessage, res: ServerResponse, path: string, query: Record<string, unknown>): Promise<void> {
    const started = Date.now();
    const s = state(res);
    const x: Exchange = {
      req,
      res,
      state: s,
      path: this.spec.routingPath(path),
      query,
      deadline: deadlineFrom(started),
      auth: ANONYMOUS,
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!this.table) await this.tableReady;
      const check = this.check;
      if (check) s.checkAnswer = (status, body) => check(s, status, body);
      await new Promise<void>((resolve, reject) => {
        // Every write of this request is past its deadline by then, so nothing it sent can still commit.
        const arm = () => {
          timer = setTimeout(() => reject(new ApiError('service_unavailable')), this.requestTimeoutMs);
        };
        x.restartClock = (reading) => {
          clearTimeout(timer);
          if (reading) return;
          x.deadline = deadlineFrom();
          if (x.ctx) x.ctx.deadline = x.deadline;
          arm();
        };
        arm();
        this.run(x).then(resolve, reject);
      });
    } catch (error) {
      this.fail(res, error);
    } finally {
      clearTimeout(timer);
      x.uploads?.discardUnadopted();
    }
  }

  /** Answers a failure in this document's shape (a failure to answer it ends the connection). */
  fail(res: ServerResponse, error: unknown): void {
    try {
      answerFailure(res, error, this.spec.errorShape);
    } catch {
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end();
      } else res.destroy();
    }
  }

  private async run(x: Exchange): Promise<void> {
    for (const step of this.steps) {
      const pending = step(x);
      if (pending) await pending;
    }
  }

  /**
   * The one match of this request (the contract's route table), carried on it: the operation and its path
   * parameters, or 404 / 405. A more literal path (`/pushes/active`, `/p/active.json`) wins over `{url_token}` for
   * every method, so DELETE /pushes/active is a 405, never an expiry of a push called "active".
   */
  route(x: Exchange): void {
    try {
      decodeURIComponent(x.path);
    } catch {
      // A malformed percent-escape (`/api/v2/pushes/%ZZ`) can name no push: answer as for an unknown token.
      x.state.route = 'malformed_path';
      throw new ApiError('not_found');
    }
    const routed = this.table!.route(x.req.method ?? 'GET', requestPath(x.path));
    if (routed.kind !== 'ok') refuseRoute(routed, x);
    x.routed = routed;
    x.state.route = routed.path;
    const operationId = routed.operation.operationId;
    x.state.operationId = operationId;
    // Like unknown properties inside `push`, query parameters the operation does not declare (`locale`, cache
    // busters) are ignored rather than refused.
    const declared = this.queries.get(operationId);
    for (const name of Object.keys(x.query)) if (!declared?.has(name)) delete x.query[name];
  }

  /** The caller (operations that ignore the token stay anonymous: the version report, a download link). */
  async authenticate(x: Exchange): Promise<void> {
    if (this.spec.tokenIgnored.has(x.routed!.operation.operationId)) return;
    x.auth = await authenticate(this.core, credentialOf(x.req));
  }

  /**
   * Reads the body into the value validated next (JSON as sent; a form into the `{ push }` object a JSON body gives:
   * `spec.bodyValue`), within the limits of this caller. On a failure the rest of the body may be unread: the
   * connection is not kept for it. An operation without a body leaves one sent unread, and the connection closes.
   */
  async readBody(x: Exchange): Promise<void> {
    const op = x.routed!.operation;
    if (!op.hasRequestBody) {
      if (hasBody(x.req)) closeAfterReply(x.req, x.res);
      return;
    }
    const limits: BodyLimits = {
      ...bodyLimits(this.settings, x.auth, op.operationId),
      ...this.bounds.get(op.operationId),
    };
    // File parts of a push go straight to the object store as they stream (never whole in memory).
    if (this.core.files && STREAMED_FILES.has(op.operationId) && !limits.filesRefused) {
      const uploads = this.core.files.uploads('push', envelopeContexts.content);
      x.uploads = uploads;
      limits.fileSink = { take: (part) => uploads.take(part) };
      // A body of up to 100 MiB that streams to the store may take longer than the database's deadline: the
      // request's deadline and safety net start once it is read (no write on its behalf happens before).
      x.restartClock?.(true);
    }
    try {
      requireDeclaredMediaType(op, x.req);
      const { body, digest } = await readBody(x.req, limits);
      if (limits.fileSink) x.restartClock?.(false);
      x.bodyDigest = digest;
      x.body = this.spec.bodyValue(body, op.operationId);
    } catch (error) {
      closeAfterReply(x.req, x.res);
      throw isBoundsError(error) ? boundsRefusal(error, this.spec.pushFrame(op.operationId)) : error;
    }
  }

  /**
   * The token's validity, the instance's anonymous rule and the operation's security requirements: 401 without a
   * credential they accept, 403 insufficient_scope for an API key without the scope they list, 403 forbidden for a
   * workspace's key outside its workspace's operations (`requireWorkspaceKeyOperation`, rules/src/workspaces.ts).
   */
  authorize(x: Exchange): void {
    const op = x.routed!.operation;
    const { auth } = x;
    const authorized = this.table!.authorized(op, {
      anonymous: auth.credential === 'none',
      scheme: (scheme) => schemeHolds(scheme, auth),
      scopes: auth.scopes,
    });
    if (!this.spec.tokenIgnored.has(op.operationId)) {
      if (auth.invalid) throw new ApiError('invalid_token');
      requireCallerAllowed(this.settings, auth.user?.userId ?? null);
    }
    x.ctx = {
      actor: actorOf(x.req, auth.user?.userId ?? null, this.settings.trustProxy),
      baseUrl: baseUrlOf(x.req, this.settings.publicBaseUrl, this.settings.trustProxy),
      deadline: x.deadline,
      ...(this.opts.clock ? { now: this.opts.clock() } : {}),
      ...(auth.scopes ? { scopes: [...auth.scopes] } : {}),
      ...(auth.key ? { key: auth.key } : {}),
    };
    if (!authorized) {
      if (auth.user) throw insufficientScope(op, auth);
      throw new ApiError('authentication_required', 'This operation needs an API token.');
    }
    requireWorkspaceKeyOperation(op.operationId, auth.key?.workspaceId);
  }

  /** The request against the operation's compiled validators (400 for parameters and envelopes, 422 per field). */
  validate(x: Exchange): void {
    const { operation: op, params } = x.routed!;
    const errors = this.table!.validate(op, {
      params: { ...params },
      query: { ...x.query },
      headers: x.req.headers,
      body: x.body,
    });
    if (errors) throw this.spec.validationError(errors, op.operationId, x.body);
  }

  /** The operation's handler, with the request as validated. */
  async handle(x: Exchange): Promise<void> {
    const { operation: op, params } = x.routed!;
    const handler = this.spec.handlers[op.operationId];
    if (!handler) throw new Error(`No handler for ${op.operationId}`);
    x.reply = await handler({
      params,
      query: x.query as EdgeRequest['query'],
      body: x.body,
      headers: x.req.headers as EdgeRequest['headers'],
      ctx: x.ctx!,
      bodyDigest: x.bodyDigest,
    });
  }

  /** The handler's reply: bytes as they are (or as they stream), anything else as JSON (./answer.ts). */
  serialize(x: Exchange): void {
    const { status, body, headers } = x.reply!;
    const list: string[] = [];
    if (headers) for (const name of Object.keys(headers)) list.push(name, fieldValue(x.res, name, headers[name]!));
    if (body instanceof Readable) return writeStream(x.res, status, list, body);
    if (!(body instanceof Uint8Array)) return writeJson(x.res, status, body, list);
    list.push('Content-Length', String(body.byteLength));
    writeAnswer(x.res, status, list, body);
  }
}

/** The v2 edge. */
export function createApiEdge(core: Core, opts: ApiEdgeOptions): Edge {
  return new Edge(core, opts);
}

/** Whether a security scheme of the contract is satisfied by the caller the credential step found. */
function schemeHolds(scheme: string, auth: AuthResult): boolean {
  if (scheme === 'bearerAuth') return auth.credential === 'bearer' && auth.user !== null;
  if (scheme === 'legacyEmail' || scheme === 'legacyToken') return auth.credential === 'legacy' && auth.user !== null;
  return false;
}

/** 403 for a key that lacks the operation's scope: the error and the challenge name what it lacks (RFC 6750 §3.1). */
function insufficientScope(op: CompiledOperation, auth: AuthResult): ApiError {
  const lacking = op.scopes.filter((scope) => !auth.scopes?.has(scope as ApiKeyScope));
  const scopes = lacking.length > 0 ? lacking : op.scopes;
  const named = scopes.length > 0 ? `the scope ${scopes.join(' ')}` : 'a scope this operation does not declare';
  return new ApiError('insufficient_scope', `This API key lacks ${named}.`, { scopes });
}

/** A request no operation takes: 404 no_route, or 405 with the methods the route table gives the path. */
function refuseRoute(routed: Exclude<Routed, { kind: 'ok' }>, x: Exchange): never {
  if (hasBody(x.req)) closeAfterReply(x.req, x.res); // a body nobody reads: do not keep the connection for it
  if (routed.kind === 'no_route') {
    x.state.route = 'no_route';
    throw new ApiError('no_route');
  }
  x.state.route = routed.path;
  const allow = routed.allow.join(', ');
  throw new ApiError('method_not_allowed', `This path answers ${allow}.`, { headers: { Allow: allow } });
}

/** The operations whose multipart file parts become a push's files (streamed to the object store when there is one). */
const STREAMED_FILES = new Set(['createPush', 'respondToRequest']);

/**
 * The body limit of a request, chosen before it is read: room for every file only for a caller who may send files
 * (file pushes on, and a token or files open to anonymous callers); everyone else gets the small limit.
 */
function bodyLimits(settings: Core['settings'], auth: AuthResult, operationId: string): BodyLimits {
  // A request's responder may send files whoever they are (the requester's token made the request, and the answer's
  // bytes count against the requester's storage quota), but an anonymous one within the small limit: the body is read
  // before the request's token is looked up, so the large limit would be open to anyone.
  const answer = operationId === 'respondToRequest';
  const mayUpload = settings.enableFilePushes && (auth.user !== null || !settings.filesRequireAuth);
  return {
    maxBytes: mayUpload ? Math.max(maxBodyBytes(settings), settings.bodyLimitBytes) : settings.bodyLimitBytes,
    maxFileBytes: settings.fileMaxBytes,
    maxFiles: settings.fileMaxCount,
    // The refusal of a file part from a caller who may not send files (made when one arrives, not for every request).
    ...(!answer && auth.user === null && settings.filesRequireAuth
      ? { filesRefused: () => filesNeedToken(settings) }
      : {}),
  };
}

const KNOWN_MEDIA_TYPES = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'];

/**
 * The media types an operation's request body declares. A body in one the reader knows but the operation does not
 * declare (v1's `/f.json` takes no form-urlencoded body: it cannot carry a file) answers 400 before it is read.
 */
function requireDeclaredMediaType(op: CompiledOperation, req: IncomingMessage): void {
  const declared = op.mediaTypes;
  const type = mediaTypeOf(req.headers['content-type']);
  const asDeclared = isJsonMediaType(type) ? 'application/json' : type;
  if (!hasBody(req) || !KNOWN_MEDIA_TYPES.includes(asDeclared) || declared.includes(asDeclared)) return;
  throw new ApiError('unsupported_media_type', `Send the body as ${declared.join(' or ')}.`);
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

/** Clients send `.json` on any v2 path: `/api/v2/pushes/abc.json` is `/api/v2/pushes/abc`. */
export function stripJsonSuffix(path: string): string {
  return path.startsWith('/api/v2/') && path.endsWith('.json') && path.length > '/api/v2/.json'.length
    ? path.slice(0, -'.json'.length)
    : path;
}
