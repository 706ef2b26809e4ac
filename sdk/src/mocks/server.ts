/**
 * The stateful mock as msw handlers: a small router over one catch-all handler (so `.json` suffixes, `active` /
 * `expired` before `{url_token}`, 404 `no_route` and 405 `method_not_allowed` work as on the real server).
 * Every body it answers is checked against the generated zod schemas first (a mock bug fails loudly).
 */
import { http, type HttpHandler, HttpResponse } from 'msw';
import type { z } from 'zod';
import type { PushInput, PushOwner } from '../generated/types.gen.js';
import {
  zAuditLog,
  zErrorResponse,
  zPreviewResponse,
  zPush,
  zPushList,
  zPushOwner,
  zPushRetrieval,
  zVersionReport,
} from '../generated/zod.gen.js';
import {
  defaultMockSettings,
  defaultMockUsers,
  type MockActor,
  MockFailure,
  type MockSettings,
  MockStore,
  type MockUser,
  PAGE_SIZE,
} from './store.js';

export interface MockServerOptions {
  /** Answer only requests to this origin (e.g. `http://localhost:5100`); default: any origin. */
  baseUrl?: string;
  /** The clock's start (fixed), or a function read on every request; default: real time. */
  now?: Date | (() => Date);
  /** Users and their API tokens; default: alice@example.com and bob@example.com (see `defaultMockUsers`). */
  users?: readonly MockUser[];
  /** Instance settings (anonymous access, enabled kinds, bounds, …); default: the server's defaults. */
  settings?: Partial<MockSettings>;
  /** Check every answer against the spec's zod schemas (default true). */
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
  /** Forgets every push. */
  reset(): void;
}

type Route = {
  method: string;
  pattern: RegExp;
  handle: (ctx: RouteContext, params: string[]) => Response | Promise<Response>;
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

export function createMockServerHandlers(options: MockServerOptions = {}): MockServer {
  const settings: MockSettings = { ...defaultMockSettings, ...options.settings };
  const users = options.users ?? defaultMockUsers;
  const store = new MockStore(settings, users, options.now);
  const validate = options.validateResponses ?? true;
  const origin = options.baseUrl?.replace(/\/+$/, '');
  let requestCounter = 0;

  function check<S extends z.ZodType>(schema: S, body: unknown): void {
    if (!validate) return;
    const result = schema.safeParse(body);
    if (!result.success) {
      throw new Error(`secret-push mock answered a body the spec does not allow: ${result.error.message}`);
    }
  }

  function headersFor(ctx: RouteContext, extra: Record<string, string> = {}): Headers {
    const headers = new Headers({ 'Cache-Control': 'no-store', 'X-Request-Id': ctx.requestId });
    for (const [k, v] of Object.entries(extra)) headers.set(k, v);
    return headers;
  }

  function json<S extends z.ZodType>(ctx: RouteContext, schema: S, body: unknown, status = 200, extra?: Record<string, string>) {
    check(schema, body);
    return HttpResponse.json(body as never, { status, headers: headersFor(ctx, extra) });
  }

  function failure(ctx: RouteContext, f: MockFailure): Response {
    const body: Record<string, unknown> = { error: f.message, code: f.code, request_id: ctx.requestId };
    if (f.extra.errors) body['errors'] = f.extra.errors;
    const extra: Record<string, string> = { ...f.extra.headers };
    if (f.extra.retryAfter !== undefined) {
      body['retry_after'] = f.extra.retryAfter;
      extra['Retry-After'] = String(f.extra.retryAfter);
    }
    return json(ctx, zErrorResponse, body, f.status, extra);
  }

  function requireKnownCredential(ctx: RouteContext): void {
    if (ctx.invalidCredential) throw new MockFailure(401, 'invalid_token', 'The API token is not valid.');
    if (!settings.allowAnonymous && !ctx.actor.user) {
      throw new MockFailure(401, 'authentication_required', 'This instance needs an API token.');
    }
  }

  function parsePage(url: URL): number {
    const raw = url.searchParams.get('page');
    if (raw === null) return 1;
    const page = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(page) || page < 1 || page > 200) {
      throw new MockFailure(400, 'invalid_page', 'page must be an integer from 1 to 200.');
    }
    return page;
  }

  function pagingHeaders(ctx: RouteContext, path: string, page: number, total: number): Record<string, string> {
    const links: string[] = [];
    if (page * PAGE_SIZE < total && page < 200) links.push(`<${ctx.base}${path}?page=${page + 1}>; rel="next"`);
    if (page > 1) links.push(`<${ctx.base}${path}?page=${page - 1}>; rel="prev"`);
    const headers: Record<string, string> = { 'X-Total-Count': String(total) };
    if (links.length > 0) headers['Link'] = links.join(', ');
    return headers;
  }

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/api\/v2\/version$/,
      handle: (ctx) => json(ctx, zVersionReport, store.version()),
    },
    {
      method: 'POST',
      pattern: /^\/api\/v2\/pushes$/,
      handle: async (ctx) => {
        requireKnownCredential(ctx);
        const type = ctx.request.headers.get('Content-Type') ?? '';
        if (!/^application\/([a-z.+-]*\+)?json\b/i.test(type)) {
          throw new MockFailure(400, 'unsupported_media_type', 'Send the body as application/json.');
        }
        let body: unknown;
        try {
          body = JSON.parse(await ctx.request.text());
        } catch {
          throw new MockFailure(400, 'invalid_json', 'The body is not valid JSON.');
        }
        const push = (body as { push?: unknown } | null)?.push;
        if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof push !== 'object' || push === null || Array.isArray(push)) {
          throw new MockFailure(400, 'missing_push', 'The body needs a "push" object.');
        }
        const created = store.create(push, ctx.actor);
        return json(ctx, zPushOwner, store.ownerRecord(created, ctx.base), 201);
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v2\/pushes\/(active|expired)$/,
      handle: (ctx, [state]) => {
        requireKnownCredential(ctx);
        if (!ctx.actor.user) throw new MockFailure(401, 'authentication_required', 'This needs an API token.');
        const page = parsePage(ctx.url);
        const result = store.list(state as 'active' | 'expired', page, ctx.actor, ctx.base);
        return json(ctx, zPushList, result.items, 200, pagingHeaders(ctx, `/api/v2/pushes/${state}`, page, result.total));
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v2\/pushes\/([^/]+)\/preview$/,
      handle: (ctx, [token]) => {
        requireKnownCredential(ctx);
        return json(ctx, zPreviewResponse, store.preview(token!, ctx.base));
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v2\/pushes\/([^/]+)\/audit$/,
      handle: (ctx, [token]) => {
        requireKnownCredential(ctx);
        const page = parsePage(ctx.url);
        const result = store.audit(token!, page, ctx.actor);
        return json(ctx, zAuditLog, { logs: result.items }, 200, pagingHeaders(ctx, `/api/v2/pushes/${token}/audit`, page, result.total));
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v2\/pushes\/([^/]+)\/files\/([^/]+)$/,
      handle: (ctx, [token, fileId]) => {
        const linkToken = ctx.url.searchParams.get('token');
        if (!linkToken) throw new MockFailure(400, 'invalid_parameter', 'The token query parameter is required.');
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
    {
      method: 'GET',
      pattern: /^\/api\/v2\/pushes\/([^/]+)$/,
      handle: (ctx, [token]) => {
        requireKnownCredential(ctx);
        // The header wins over the (deprecated) query parameter.
        const passphrase = ctx.request.headers.get('X-Passphrase') ?? ctx.url.searchParams.get('passphrase') ?? undefined;
        return json(ctx, zPushRetrieval, store.retrieve(token!, passphrase, ctx.actor, ctx.base));
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/api\/v2\/pushes\/([^/]+)$/,
      handle: (ctx, [token]) => {
        requireKnownCredential(ctx);
        return json(ctx, zPush, store.expireByRequest(token!, ctx.actor, ctx.base));
      },
    },
  ];

  function resolveActor(request: Request): { actor: MockActor; invalidCredential: boolean } {
    const authorization = request.headers.get('Authorization');
    const legacyToken = request.headers.get('X-User-Token');
    const legacyEmail = request.headers.get('X-User-Email');
    let user: MockUser | null = null;
    let invalidCredential = false;
    if (authorization !== null) {
      const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
      user = match ? store.userByToken(match[1]!) : null;
      invalidCredential = user === null;
    } else if (legacyToken !== null || legacyEmail !== null) {
      user = legacyToken !== null && legacyEmail !== null ? store.userByToken(legacyToken, legacyEmail) : null;
      invalidCredential = user === null;
    }
    return {
      actor: {
        user,
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
    const path = url.pathname.replace(/\/+$/, '').replace(/\.json$/, '');
    try {
      let allowed: string[] = [];
      for (const route of routes) {
        const match = route.pattern.exec(path);
        if (!match) continue;
        if (route.method !== request.method) {
          allowed.push(route.method);
          continue;
        }
        // A matched route wins; decode path segments once.
        return await route.handle(ctx, match.slice(1).map((s) => decodeURIComponent(s)));
      }
      allowed = [...new Set(allowed)];
      if (allowed.length > 0) {
        throw new MockFailure(405, 'method_not_allowed', `${request.method} is not allowed here.`, {
          headers: { Allow: allowed.join(', ') },
        });
      }
      throw new MockFailure(404, 'no_route', 'No operation lives at this path.');
    } catch (error) {
      if (error instanceof MockFailure) return failure(ctx, error);
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
        return store.ownerRecord(store.create(input, actor, createdAt), settings.publicBaseUrl ?? origin ?? 'http://localhost');
      } catch (error) {
        if (error instanceof MockFailure) {
          throw new TypeError(`seedPush: ${error.code}: ${JSON.stringify(error.extra.errors ?? error.message)}`);
        }
        throw error;
      }
    },
    setClock: (date) => store.setClock(date),
    advanceClock: (ms) => store.advanceClock(ms),
    now: () => new Date(store.now()),
    reset: () => store.reset(),
  };
}
