/**
 * The stateful mock as msw handlers: one catch-all handler routed by the project's one route table (`RouteTable` of
 * `@secret-push/rules`, what the server, the contract toolkit and the conformance grader route with), so `.json` suffixes,
 * trailing slashes, `active` / `expired` before `{url_token}` for every method, 404 `no_route` and 405
 * `method_not_allowed` with `Allow` work as on the real server.
 * Credentials, pages, paging headers and error bodies follow the server's own rules (`@secret-push/rules`), and every body it
 * answers is checked against the contract's schemas first (a mock bug fails loudly).
 */
import { http, type HttpHandler, HttpResponse } from 'msw';
import type { PushInput, PushOwner } from '../generated/types.gen.js';
import {
  ApiError,
  componentChecker,
  errorBody,
  errorHeaders,
  pagingHeaders,
  parsePage as parsePageParameter,
  API_KEY_PREFIX,
  readCredential,
  requireAuditCaller,
  requireCallerAllowed,
  RouteTable,
  requireListCaller,
  requireWorkspaceKeyOperation,
  type ApiKeyScope,
  validationFailed,
  type ComponentCheck,
} from '@secret-push/rules';
import { MockApiKeys, type MockGrantor } from './api-keys.js';
import { apiKeyRoutes } from './api-key-routes.js';
import { readCreateBody, readWrappedBody } from './bodies.js';
import { MockRequests } from './requests.js';
import { webhookRoutes } from './webhook-routes.js';
import { MockWebhooks } from './webhooks.js';
import { MockWorkspaces, workspaceRoutes } from './workspaces.js';
import {
  defaultMockSettings,
  defaultMockUsers,
  type MockActor,
  type MockEmail,
  type MockSettings,
  MockStore,
  type MockUser,
} from './store.js';

let schemas: ComponentCheck | undefined;

export interface MockServerOptions {
  /** Answer only requests to this origin (e.g. `http://localhost:5100`); default: any origin. */
  baseUrl?: string;
  /** The clock's start (fixed), or a function read on every request; default: real time. */
  now?: Date | (() => Date);
  /** Users and their API tokens; default: alice@example.com and bob@example.com (see `defaultMockUsers`). */
  users?: readonly MockUser[];
  /** Instance settings (anonymous access, enabled kinds, bounds, …); default: the server's defaults. */
  settings?: Partial<MockSettings>;
  /** Check every answer against the contract's schemas (default true). */
  validateResponses?: boolean;
}

export interface SeedOptions {
  /** The owner's email (one of `users`), or null for an anonymous push (default). */
  owner?: string | null;
  /** When the push was made (default: the mock's clock). */
  createdAt?: Date | string;
}

export interface MockServer {
  /** Pass to `setupServer(...handlers)` (msw/node) or `setupWorker(...handlers)` (msw/browser). */
  readonly handlers: HttpHandler[];
  readonly users: readonly MockUser[];
  readonly settings: MockSettings;
  /** Creates a push directly (same rules as POST, without HTTP); returns the owner's view of it. */
  seedPush(input: PushInput, options?: SeedOptions): PushOwner;
  /** Fixes the clock at this instant. */
  setClock(date: Date | string | number): void;
  /** Moves the clock forward. */
  advanceClock(ms: number): void;
  now(): Date;
  /** Forgets every push (and every email "sent"). */
  reset(): void;
  /** The emails "sent" so far (with `settings.emailAutoDispatch`): one per recipient, with the link it carried. */
  sentEmails(): MockEmail[];
}

/** An operation of the contract the mock answers: its operationId, method and path template, and its handler. */
type Route = {
  operationId: string;
  method: string;
  path: string;
  /** The scope an API key needs (the contract's, per operation: sdk/test/mocks checks them); none: no credential. */
  scope?: ApiKeyScope;
  handle: (ctx: RouteContext, params: Record<string, string>) => Response | Promise<Response>;
};

interface RouteContext {
  request: Request;
  url: URL;
  actor: MockActor;
  base: string;
  requestId: string;
  /** Throws 401 invalid_token when a credential was sent that matches no user. */
  invalidCredential: boolean;
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** What the routes share: the store, the settings, and how an answer is checked and shaped. */
function mockKit(store: MockStore, settings: MockSettings, validate: boolean, keys: MockApiKeys, hooks: MockWebhooks) {
  const workspaces = new MockWorkspaces();
  const requests = new MockRequests(store, workspaces);
  // A deleted workspace takes its pushes, requests, keys and webhooks (deleteWorkspace).
  workspaces.onDelete.push(
    (id) => store.dropWorkspace(id),
    (id) => requests.dropWorkspace(id),
    (id) => keys.dropWorkspace(id),
    (id) => hooks.dropWorkspace(id),
  );
  function check(schema: string, body: unknown): void {
    if (!validate) return;
    schemas ??= componentChecker();
    const problems = schemas(schema, body);
    if (problems.length > 0) {
      throw new Error(`secret-push mock answered a body the spec does not allow (${schema}): ${problems.join('; ')}`);
    }
  }

  function headersFor(ctx: RouteContext, extra: Record<string, string> = {}): Headers {
    const headers = new Headers({ 'Cache-Control': 'no-store', 'X-Request-Id': ctx.requestId });
    for (const [k, v] of Object.entries(extra)) headers.set(k, v);
    return headers;
  }

  function json(ctx: RouteContext, schema: string, body: unknown, status = 200, extra?: Record<string, string>) {
    check(schema, body);
    return HttpResponse.json(body as never, { status, headers: headersFor(ctx, extra) });
  }

  function failure(ctx: RouteContext, f: ApiError): Response {
    return json(ctx, 'ErrorResponse', errorBody(f, ctx.requestId), f.status, errorHeaders(f));
  }

  function requireKnownCredential(ctx: RouteContext): void {
    if (ctx.invalidCredential) throw new ApiError('invalid_token');
    requireCallerAllowed(settings, ctx.actor.user?.email ?? null);
  }

  const parsePage = (url: URL): number => parsePageParameter(url.searchParams.get('page'));
  const paging = (ctx: RouteContext, path: string, page: number, total: number) =>
    pagingHeaders(`${ctx.base}${path}`, page, total);

  /** The caller of an operation that needs a credential (API keys, webhooks), as on the server. */
  const owner = (ctx: RouteContext): string => {
    requireKnownCredential(ctx);
    if (!ctx.actor.user) throw new ApiError('authentication_required', 'This operation needs an API token.');
    return ctx.actor.user.email;
  };

  return {
    store,
    keys,
    hooks,
    requests,
    workspaces,
    settings,
    json,
    failure,
    headersFor,
    requireKnownCredential,
    parsePage,
    paging,
    owner,
  };
}

type MockKit = ReturnType<typeof mockKit>;

/** The request operations (issue 24), over ./requests.ts. */
function requestRoutes(kit: MockKit): Route[] {
  const { requests, json, requireKnownCredential, parsePage, paging } = kit;
  const token = (params: Record<string, string>) => params.url_token!;
  const route = (
    operationId: string,
    scope: ApiKeyScope,
    method: string,
    path: string,
    handle: Route['handle'],
  ): Route => ({
    operationId,
    scope,
    method,
    path,
    handle: (ctx, params) => {
      requireKnownCredential(ctx);
      return handle(ctx, params);
    },
  });
  return [
    route('createRequest', 'requests:write', 'POST', '/api/v2/requests', async (ctx) => {
      if (!ctx.actor.user) throw new ApiError('authentication_required', 'This operation needs an API token.');
      const body = await readWrappedBody(ctx.request, 'request');
      return json(
        ctx,
        'RequestOwner',
        requests.create(body.request as Record<string, unknown>, ctx.actor, ctx.base),
        201,
      );
    }),
    ...(['active', 'expired'] as const).map((state) =>
      route(
        state === 'active' ? 'listActiveRequests' : 'listExpiredRequests',
        'requests:read',
        'GET',
        `/api/v2/requests/${state}`,
        (ctx) => {
          if (!ctx.actor.user) throw new ApiError('authentication_required', 'This operation needs an API token.');
          const page = parsePage(ctx.url);
          const result = requests.list(state, page, ctx.actor, ctx.base, ctx.url);
          return json(
            ctx,
            'RequestList',
            result.items,
            200,
            paging(ctx, `/api/v2/requests/${state}`, page, result.total),
          );
        },
      ),
    ),
    route('getRequest', 'requests:read', 'GET', '/api/v2/requests/{url_token}', (ctx, p) =>
      json(ctx, 'RequestRecord', requests.get(token(p), ctx.actor, ctx.base)),
    ),
    route('revokeRequest', 'requests:write', 'DELETE', '/api/v2/requests/{url_token}', (ctx, p) =>
      json(ctx, 'RequestOwner', requests.revoke(token(p), ctx.actor, ctx.base)),
    ),
    route('previewRequest', 'requests:read', 'GET', '/api/v2/requests/{url_token}/preview', (ctx, p) =>
      json(ctx, 'RequestPreview', requests.preview(token(p), ctx.actor, ctx.base)),
    ),
    route('respondToRequest', 'pushes:create', 'POST', '/api/v2/requests/{url_token}/response', async (ctx, p) => {
      const body = await readWrappedBody(ctx.request, 'push');
      return json(ctx, 'RequestReceipt', requests.respond(token(p), body, ctx.actor), 201);
    }),
    route('getRequestAudit', 'requests:read', 'GET', '/api/v2/requests/{url_token}/audit', (ctx, p) => {
      if (!ctx.actor.user) throw new ApiError('authentication_required', 'This operation needs an API token.');
      const page = parsePage(ctx.url);
      const result = requests.audit(token(p), page, ctx.actor);
      return json(
        ctx,
        'RequestAuditLog',
        { logs: result.items },
        200,
        paging(ctx, `/api/v2/requests/${token(p)}/audit`, page, result.total),
      );
    }),
  ];
}

/** `notifyEmails`: the mock's outbox takes the link at once (its own function: mockRoutes stays readable). */
function notifyRoute(kit: MockKit): Route {
  const { store, json, requireKnownCredential } = kit;
  return {
    operationId: 'notifyEmails',
    scope: 'pushes:notify',
    method: 'POST',
    path: '/api/v2/pushes/{url_token}/notify_emails',
    handle: async (ctx, { url_token: token }) => {
      requireKnownCredential(ctx);
      const body = (await ctx.request.json().catch(() => null)) as Record<string, unknown> | null;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new ApiError('bad_request', 'The request body must be a JSON object.');
      }
      const to = body.notify_emails_to;
      const locale = body.notify_emails_to_locale;
      if (typeof to !== 'string' || (locale !== undefined && locale !== null && typeof locale !== 'string')) {
        throw validationFailed({
          [typeof to !== 'string' ? 'notify_emails_to' : 'notify_emails_to_locale']: ['must be a string'],
        });
      }
      const answer = store.notifyEmails(token!, { notify_emails_to: to, notify_emails_to_locale: locale }, ctx.actor);
      return json(ctx, 'NotifyEmailsResponse', answer, 201);
    },
  };
}

/** `requestAccessCode`: a one-time code into the mock's outbox for a listed address (issue 42). */
function accessCodeRoute(kit: MockKit): Route {
  const { store, json, requireKnownCredential } = kit;
  return {
    operationId: 'requestAccessCode',
    scope: 'pushes:read',
    method: 'POST',
    path: '/api/v2/pushes/{url_token}/access_code',
    handle: async (ctx, { url_token: token }) => {
      requireKnownCredential(ctx);
      const body = await jsonBody(ctx);
      const email = (body as { email?: unknown } | null)?.email;
      if (typeof email !== 'string' || email.length > 254) throw validationFailed({ email: ['is invalid'] });
      return json(ctx, 'AccessCodeSent', store.requestAccessCode(token!, email, ctx.actor), 202);
    },
  };
}

/** A JSON body, or 400 invalid_json. */
async function jsonBody(ctx: RouteContext): Promise<unknown> {
  try {
    return await ctx.request.json();
  } catch {
    throw new ApiError('invalid_json');
  }
}

/** The operations of the API, as the contract names them (sdk/test checks them against it), each with its handler. */
function mockRoutes(kit: MockKit): Route[] {
  const { store, workspaces, json, headersFor, requireKnownCredential, parsePage, paging } = kit;
  return [
    {
      operationId: 'getVersion',
      method: 'GET',
      path: '/api/v2/version',
      handle: (ctx) => json(ctx, 'VersionReport', store.version()),
    },
    {
      operationId: 'createPush',
      scope: 'pushes:create',
      method: 'POST',
      path: '/api/v2/pushes',
      handle: async (ctx) => {
        requireKnownCredential(ctx);
        // JSON, multipart (files as parts, as the SDK uploads them) or form-urlencoded, as the server reads them.
        const created = workspaces.createIn(store, await readCreateBody(ctx.request), ctx.actor);
        return json(ctx, 'PushOwner', { ...store.ownerRecord(created, ctx.base), ...created.notifyEcho }, 201);
      },
    },
    ...(['active', 'expired'] as const).map((state): Route => ({
      operationId: state === 'active' ? 'listActivePushes' : 'listExpiredPushes',
      scope: 'pushes:read',
      method: 'GET',
      path: `/api/v2/pushes/${state}`,
      handle: (ctx) => {
        requireKnownCredential(ctx);
        // As on the server: the operation's security (a token) before its parameters.
        requireListCaller(ctx.actor.user?.email ?? null);
        const page = parsePage(ctx.url);
        const result = store.list(state, page, ctx.actor, ctx.base, workspaces.forList(ctx.url, ctx.actor));
        return json(ctx, 'PushList', result.items, 200, paging(ctx, `/api/v2/pushes/${state}`, page, result.total));
      },
    })),
    {
      operationId: 'previewPush',
      scope: 'pushes:read',
      method: 'GET',
      path: '/api/v2/pushes/{url_token}/preview',
      handle: (ctx, { url_token: token }) => {
        requireKnownCredential(ctx);
        return json(ctx, 'PreviewResponse', store.preview(token!, ctx.base));
      },
    },
    {
      operationId: 'getPushAudit',
      scope: 'pushes:read',
      method: 'GET',
      path: '/api/v2/pushes/{url_token}/audit',
      handle: (ctx, { url_token: token }) => {
        requireKnownCredential(ctx);
        requireAuditCaller(ctx.actor.user?.email ?? null);
        const page = parsePage(ctx.url);
        const result = store.audit(token!, page, ctx.actor);
        return json(
          ctx,
          'AuditLog',
          { logs: result.items },
          200,
          paging(ctx, `/api/v2/pushes/${token}/audit`, page, result.total),
        );
      },
    },
    {
      operationId: 'downloadPushFile',
      method: 'GET',
      path: '/api/v2/pushes/{url_token}/files/{file_id}',
      handle: (ctx, { url_token: token, file_id: fileId }) => {
        const linkToken = ctx.url.searchParams.get('token');
        if (!linkToken) throw new ApiError('invalid_parameter', 'The token query parameter is required.');
        const file = store.download(token!, fileId!, linkToken);
        const safeName = file.filename.replace(/["\\]/g, '_');
        return new HttpResponse(file.bytes.slice(), {
          status: 200,
          headers: headersFor(ctx, {
            'Content-Type': file.contentType,
            'Content-Disposition': `attachment; filename="${safeName}"`,
          }),
        });
      },
    },
    notifyRoute(kit),
    accessCodeRoute(kit),
    ...webhookRoutes(kit),
    {
      operationId: 'getPush',
      scope: 'pushes:read',
      method: 'GET',
      path: '/api/v2/pushes/{url_token}',
      handle: (ctx, { url_token: token }) => {
        requireKnownCredential(ctx);
        // The header wins over the (deprecated) query parameter.
        const passphrase =
          ctx.request.headers.get('X-Passphrase') ?? ctx.url.searchParams.get('passphrase') ?? undefined;
        const accessCode = ctx.request.headers.get('X-Access-Code') ?? undefined;
        return json(ctx, 'PushRetrieval', store.retrieve(token!, passphrase, ctx.actor, ctx.base, accessCode));
      },
    },
    {
      operationId: 'expirePush',
      scope: 'pushes:delete',
      method: 'DELETE',
      path: '/api/v2/pushes/{url_token}',
      handle: (ctx, { url_token: token }) => {
        requireKnownCredential(ctx);
        return json(ctx, 'Push', store.expireByRequest(token!, ctx.actor, ctx.base));
      },
    },
    ...apiKeyRoutes(kit),
    ...requestRoutes(kit),
    ...workspaceRoutes(kit),
  ];
}

/** The operations of the mock and the scope each needs (the contract's: sdk/test/mocks checks them). */
export function mockOperationScopes(): Record<string, ApiKeyScope | undefined> {
  const routes = mockRoutes(
    mockKit(new MockStore(defaultMockSettings, []), defaultMockSettings, false, new MockApiKeys(), new MockWebhooks()),
  );
  return Object.fromEntries(routes.map((r) => [r.operationId, r.scope]));
}

export function createMockServerHandlers(options: MockServerOptions = {}): MockServer {
  const settings: MockSettings = { ...defaultMockSettings, ...options.settings };
  const users = options.users ?? defaultMockUsers;
  const store = new MockStore(settings, users, options.now);
  const validate = options.validateResponses ?? true;
  const origin = options.baseUrl?.replace(/\/+$/, '');
  let requestCounter = 0;

  const keys = new MockApiKeys();
  const webhooks = new MockWebhooks();
  const kit = mockKit(store, settings, validate, keys, webhooks);
  const { failure } = kit;
  const routes = new RouteTable(mockRoutes(kit));

  function resolveActor(request: Request): { actor: MockActor; invalidCredential: boolean } {
    const credential = readCredential((name) => request.headers.get(name));
    let user: MockUser | null = null;
    let scopes: ApiKeyScope[] | undefined;
    let grantor: MockGrantor | undefined;
    if (credential.kind === 'bearer' && credential.token.startsWith(API_KEY_PREFIX)) {
      const key = keys.authenticate(credential.token, store.now());
      user = key ? (users.find((u) => u.email === key.email) ?? null) : null;
      scopes = key?.scopes;
      grantor = key?.grantor;
    } else if (credential.kind === 'bearer') user = store.userByToken(credential.token);
    if (credential.kind === 'legacy') user = store.userByToken(credential.token, credential.email);
    const invalidCredential = credential.kind !== 'none' && user === null;
    return {
      actor: {
        user,
        ...(scopes ? { scopes } : {}),
        ...(grantor ? { grantor } : {}),
        ip: '127.0.0.1',
        userAgent: request.headers.get('User-Agent') ?? '',
        referrer: request.headers.get('Referer') ?? '',
      },
      invalidCredential,
    };
  }

  const handler = http.all(`${origin ?? '*'}/api/v2/*`, async ({ request }) => {
    const url = new URL(request.url);
    const clientId = request.headers.get('X-Request-Id');
    const requestId = clientId !== null && SAFE_REQUEST_ID.test(clientId) ? clientId : `mock-${++requestCounter}`;
    const { actor, invalidCredential } = resolveActor(request);
    const base = settings.publicBaseUrl?.replace(/\/+$/, '') ?? url.origin;
    const ctx: RouteContext = { request, url, actor, base, requestId, invalidCredential };
    // As the server: trailing slashes, then a `.json` suffix, dropped before routing.
    const path = url.pathname.replace(/\/+$/, '').replace(/\.json$/, '');
    try {
      const match = routes.match(request.method, path);
      if (match.kind === 'ok') {
        const { scope } = match.operation;
        // As the server's authorize step: an API key without the operation's scope gets 403 with the challenge.
        if (scope && !invalidCredential && actor.scopes && !actor.scopes.includes(scope)) {
          throw new ApiError('insufficient_scope', `This API key lacks the scope ${scope}.`, { scopes: [scope] });
        }
        // As the server: a workspace's key acts only in its workspace.
        if (!invalidCredential) requireWorkspaceKeyOperation(match.operation.operationId, actor.grantor?.workspaceId);
        return await match.operation.handle(ctx, match.params);
      }
      if (match.kind === 'method_not_allowed') {
        const allow = match.allow.join(', ');
        throw new ApiError('method_not_allowed', `This path answers ${allow}.`, { headers: { Allow: allow } });
      }
      throw new ApiError('no_route', 'No operation lives at this path.');
    } catch (error) {
      if (error instanceof ApiError) return failure(ctx, error);
      throw error;
    }
  });

  return {
    handlers: [handler],
    users,
    settings,
    seedPush(input, seed = {}) {
      const owner = seed.owner ?? null;
      const user = owner === null ? null : (users.find((u) => u.email === owner) ?? null);
      if (owner !== null && !user) throw new TypeError(`seedPush: unknown owner ${owner}`);
      const actor: MockActor = { user, ip: '127.0.0.1', userAgent: 'seed', referrer: '' };
      const createdAt = seed.createdAt === undefined ? undefined : new Date(seed.createdAt).getTime();
      try {
        return store.ownerRecord(
          store.create(input, actor, createdAt),
          settings.publicBaseUrl ?? origin ?? 'http://localhost',
        );
      } catch (error) {
        if (error instanceof ApiError) {
          throw new TypeError(`seedPush: ${error.code}: ${JSON.stringify(error.details.fields ?? error.message)}`, {
            cause: error,
          });
        }
        throw error;
      }
    },
    setClock: (date) => store.setClock(date),
    advanceClock: (ms) => store.advanceClock(ms),
    now: () => new Date(store.now()),
    reset: () => {
      for (const part of [store, kit.requests, kit.workspaces, keys, webhooks]) part.reset();
    },
    sentEmails: () => store.sentEmails(),
  };
}
