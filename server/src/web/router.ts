/**
 * The pages people open: server-rendered HTML, one stylesheet, a little script, no framework.
 *
 * `createWebRouter(core, opts)` is mounted by app.ts in front of the API's fallback. Every page sends the headers of
 * security.ts (strict CSP, no-store, no-referrer, noindex); every form post is checked for its CSRF token and its
 * origin. Each route names its template for the access log (`state(res).route`), so a push's token never reaches a
 * log line. Page GETs never call `core.pushes.retrieve`: recipient pages are rendered from the push's state and the
 * secret is fetched by the page script when the person acts, through the API (anonymous visitors of an open
 * instance) or through the recipient page's JSON steps `POST /p/{token}/reveal` and `POST /p/{token}/delete`
 * (signed-in visitors; on a closed instance the only way). Those steps are same-origin only (Sec-Fetch-Site, Origin),
 * carry the CSRF token in `X-CSRF-Token` with an `application/json` body, act as the session's user through the
 * same domain calls as the API's getPush and expirePush, and answer exactly what those answer (errors included).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import { maxBodyBytes, repoRoot } from '../config/settings.js';
import { DomainError, type AccountUser, type Core, type PushInput, type RequestContext, type WebServices } from '../domain/contract.js';
import { actorOf, baseUrlOf } from '../http/auth.js';
import { errorBody, HttpError, toHttpError } from '../http/errors.js';
import { state } from '../http/middleware.js';
import { asset } from './assets.js';
import { field, FormError, readForm, readJson } from './forms.js';
import { html } from './html.js';
import { comesFromOurPages, DOCS_CSP, pageHeaders, safeNext } from './security.js';
import { createSessions, CSRF_FIELD } from './session.js';
import { signInPage, signUpPage, tokenPage } from './views/accounts.js';
import { messagePage, page, type Viewer } from './views/layout.js';
import { auditPage, createdPage, createPage, listPage, type CreateFormState } from './views/pushes.js';
import { recipientPage, signInRequiredPage } from './views/recipient.js';
import { PASSWORD_MIN } from '../domain/account-service.js';

export interface WebRouterOptions {
  /** The instant services decide expiry with (tests move it); default: the system clock. */
  clock?: () => Date;
  /** The bundled contract served at /api/v2/openapi.json and rendered at /help/api. */
  specPath?: string;
}

/** Forms without files: sign-in, sign-up, token, expire. */
const SMALL_FORM_BYTES = 64 * 1024;
/**
 * The create form of a visitor who may not send files: the largest text push (1,048,576 characters of up to 4 bytes
 * in UTF-8) plus name, passphrase and multipart framing. Only visitors allowed to upload get the file-sized limit, so
 * an anonymous request cannot make the server buffer the full file allowance before it is refused.
 */
const TEXT_FORM_BYTES = 6 * 1024 * 1024;
/** The recipient page's JSON steps: a passphrase (at most 1,024 characters) and nothing else. */
const STEP_BODY_BYTES = 16 * 1024;
/** The header the recipient page's script sends its CSRF token in (a custom header: cross-site pages cannot set it). */
const CSRF_HEADER = 'x-csrf-token';

interface Visit {
  user: AccountUser | null;
  viewer: Viewer;
}

class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

function statusOf(error: DomainError): number {
  switch (error.code) {
    case 'not_found':
      return 404;
    case 'authentication_required':
      return 401;
    case 'forbidden':
      return 403;
    case 'validation_failed':
      return 422;
    case 'too_many_attempts':
      return 429;
    case 'service_unavailable':
      return 503;
    default:
      return 400;
  }
}

export function createWebRouter(core: Core, opts: WebRouterOptions = {}): Router {
  const { settings } = core;
  const sessions = createSessions(settings);
  const router = express.Router();
  const specPath = opts.specPath ?? path.join(repoRoot, 'openapi', 'bundled', 'openapi.json');
  let spec: Buffer | null = null;
  const specBytes = () => (spec ??= readFileSync(specPath));

  const web = (): WebServices => {
    if (!core.web) throw new PageError(503, 'Unavailable', 'Accounts are not available on this server.');
    return core.web;
  };

  const ctxOf = (req: Request, userId: string | null): RequestContext => ({
    actor: actorOf(req, userId),
    baseUrl: baseUrlOf(req, settings.publicBaseUrl),
    ...(opts.clock ? { now: opts.clock() } : {}),
  });

  async function visit(req: Request, res: Response): Promise<Visit> {
    const claims = sessions.read(req);
    let user: AccountUser | null = null;
    if (claims && core.web) {
      user = await core.web.accounts.sessionUser(claims.userId, claims.sessionVersion);
    }
    const cookie = sessions.csrfCookie(req, res);
    return {
      user,
      viewer: {
        user: user ? { email: user.email } : null,
        csrf: sessions.csrfToken(cookie, user?.userId ?? null),
        signupsEnabled: settings.enableSignups,
      },
    };
  }

  /** Reads a posted form and checks that it comes from our own page (CSRF token + origin); 403 otherwise. */
  async function postedForm(req: Request, v: Visit, limit = SMALL_FORM_BYTES): Promise<FormData> {
    const form = await readForm(req, limit);
    if (!comesFromOurPages(req, settings.publicBaseUrl) || !sessions.csrfValid(req, form.get(CSRF_FIELD), v.user?.userId ?? null)) {
      throw new PageError(403, 'Form rejected', 'This form has expired or did not come from this site. Go back, reload the page and try again.');
    }
    return form;
  }

  function redirectToSignIn(req: Request, res: Response): void {
    res.redirect(302, `/users/sign_in?next=${encodeURIComponent(safeNext(req.originalUrl))}`);
  }

  function send(res: Response, status: number, body: string): void {
    res.status(status).type('html').send(body);
  }

  type Handler = (req: Request, res: Response, v: Visit) => Promise<void>;

  /** Wraps a page handler: route template for the log, page headers, the visitor, HTML error pages. */
  const pageRoute =
    (route: string, handler: Handler, csp?: string) =>
    async (req: Request, res: Response): Promise<void> => {
      state(res).route = route;
      pageHeaders(res, csp);
      let v: Visit = { user: null, viewer: { user: null, csrf: '', signupsEnabled: settings.enableSignups } };
      try {
        v = await visit(req, res);
        await handler(req, res, v);
      } catch (error) {
        if (res.headersSent) {
          if (!res.writableEnded) res.destroy();
          return;
        }
        let pe: PageError;
        if (error instanceof PageError) pe = error;
        else if (error instanceof FormError) pe = new PageError(error.status, 'Form rejected', error.message);
        else if (error instanceof DomainError) {
          pe = new PageError(statusOf(error), error.code === 'service_unavailable' ? 'Unavailable' : 'Something went wrong', error.message, error.details.retryAfterSeconds);
        } else {
          const e = error as { name?: string; code?: string };
          state(res).failure = { name: e?.name ?? typeof error, ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
          pe = new PageError(500, 'Something went wrong', 'The server could not answer. Try again in a moment.');
        }
        if (pe.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(pe.retryAfterSeconds));
        send(res, pe.status, messagePage(v.viewer, pe.title, pe.message));
      }
    };

  // ---- assets and the contract -------------------------------------------------------------------------------
  router.get('/assets/*name', async (req, res) => {
    state(res).route = '/assets/*';
    const name = ([] as string[]).concat((req.params as { name?: string | string[] }).name ?? []).join('/');
    const found = asset(name);
    if (!found) {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    try {
      const a = await found;
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.type(a.type).send(a.body);
    } catch {
      state(res).failure = { name: 'AssetError' };
      res.status(500).type('text/plain').send('The asset could not be loaded.');
    }
  });

  router.get('/api/v2/openapi.json', (_req, res) => {
    state(res).route = '/api/v2/openapi.json';
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(specBytes());
  });

  router.get(
    '/help/api',
    pageRoute(
      '/help/api',
      async (_req, res, v) => {
        // Scalar renders into #api-docs (not #api-reference nor [data-spec-url]: its bundle would mount those on its own, with its default web fonts); its bundle and our init script come from /assets.
        const body = page({
          title: 'API documentation',
          viewer: v.viewer,
          scripts: ['vendor/scalar-api-reference.js', 'api-docs.js'],
          noStylesheet: true,
          bare: true,
          body: html`<h1 class="visually-hidden">API documentation</h1>
<p>The JSON API (v2). The contract itself: <a href="/api/v2/openapi.json">/api/v2/openapi.json</a>.
Get a token at <a href="/users/token">/users/token</a>.</p>
<div id="api-docs" data-openapi-url="/api/v2/openapi.json"></div>
<noscript><p>The interactive reference needs JavaScript; the contract above is plain JSON.</p></noscript>`,
        });
        send(res, 200, body);
      },
      DOCS_CSP,
    ),
  );

  // ---- accounts ---------------------------------------------------------------------------------------------
  router.get('/api_tokens', (_req, res) => {
    state(res).route = '/api_tokens';
    res.redirect(301, '/users/token');
  });

  router.get(
    '/users/sign_in',
    pageRoute('/users/sign_in', async (req, res, v) => {
      const next = safeNext(req.query.next, '/');
      if (v.user) return res.redirect(303, next);
      send(res, 200, signInPage(v.viewer, { next }));
    }),
  );

  router.post(
    '/users/sign_in',
    pageRoute('/users/sign_in', async (req, res, v) => {
      const form = await postedForm(req, v);
      const email = field(form, 'email');
      const next = safeNext(field(form, 'next'), '/');
      try {
        const user = await web().accounts.signIn(email, field(form, 'password'), actorOf(req, null).ip, opts.clock?.());
        sessions.start(req, res, user);
        res.redirect(303, next);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        const status = statusOf(error);
        if (error.details.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.details.retryAfterSeconds));
        const message =
          error.code === 'too_many_attempts'
            ? `Too many failed sign-ins. Wait ${Math.ceil((error.details.retryAfterSeconds ?? 60) / 60)} minute(s) and try again.`
            : error.code === 'authentication_required'
              ? 'That email and password do not match an account.'
              : error.message;
        if (error.code === 'service_unavailable') throw error;
        send(res, status, signInPage(v.viewer, { email, next, error: message }));
      }
    }),
  );

  router.get(
    '/users/sign_up',
    pageRoute('/users/sign_up', async (req, res, v) => {
      if (!settings.enableSignups) throw new PageError(403, 'Sign-up is closed', 'This instance does not take new sign-ups. Ask its administrator for an account.');
      if (v.user) return res.redirect(303, '/');
      send(res, 200, signUpPage(v.viewer, { next: safeNext(req.query.next, '/') }, PASSWORD_MIN));
    }),
  );

  router.post(
    '/users/sign_up',
    pageRoute('/users/sign_up', async (req, res, v) => {
      if (!settings.enableSignups) throw new PageError(403, 'Sign-up is closed', 'This instance does not take new sign-ups. Ask its administrator for an account.');
      const form = await postedForm(req, v);
      const email = field(form, 'email');
      const next = safeNext(field(form, 'next'), '/');
      try {
        const user = await web().accounts.signUp(email, field(form, 'password'));
        sessions.start(req, res, user);
        res.redirect(303, next);
      } catch (error) {
        if (!(error instanceof DomainError) || error.code !== 'validation_failed') throw error;
        send(res, 422, signUpPage(v.viewer, { email, next, error: error.message, fields: error.details.fields }, PASSWORD_MIN));
      }
    }),
  );

  router.post(
    '/users/sign_out',
    pageRoute('/users/sign_out', async (req, res, v) => {
      await postedForm(req, v);
      if (v.user) await web().accounts.endSessions(v.user.userId);
      sessions.end(req, res);
      res.redirect(303, '/');
    }),
  );

  router.get(
    '/users/token',
    pageRoute('/users/token', async (req, res, v) => {
      if (!v.user) return redirectToSignIn(req, res);
      const status = await web().accounts.tokenStatus(v.user.userId);
      send(res, 200, tokenPage(v.viewer, status));
    }),
  );

  router.post(
    '/users/token',
    pageRoute('/users/token', async (req, res, v) => {
      if (!v.user) return redirectToSignIn(req, res);
      await postedForm(req, v);
      // One statement replaces the digest: the old token stops working the moment the new one exists.
      const fresh = await core.users.rotateToken(v.user.email);
      const status = await web().accounts.tokenStatus(v.user.userId);
      send(res, 200, tokenPage(v.viewer, { ...status, fresh }));
    }),
  );

  // ---- making a push -----------------------------------------------------------------------------------------
  router.get(
    '/',
    pageRoute('/', async (req, res, v) => {
      if (!v.user && !settings.allowAnonymous) return redirectToSignIn(req, res);
      send(res, 200, createPage(v.viewer, settings));
    }),
  );

  router.post(
    '/',
    pageRoute('/', async (req, res, v) => {
      if (!v.user && !settings.allowAnonymous) return redirectToSignIn(req, res);
      const mayUpload = settings.enableFilePushes && (v.user !== null || !settings.filesRequireAuth);
      const form = await postedForm(req, v, mayUpload ? maxBodyBytes(settings) : TEXT_FORM_BYTES);
      const kind = field(form, 'kind') || 'text';
      const intOrNaN = (name: string) => {
        const raw = field(form, name).trim();
        return /^-?\d{1,9}$/.test(raw) ? Number(raw) : raw === '' ? undefined : Number.NaN;
      };
      const payload = field(form, 'payload');
      const passphrase = field(form, 'passphrase');
      const name = field(form, 'name');
      const optionsPresent = form.has('options_present');
      const input: PushInput = { kind: kind as PushInput['kind'] };
      if (payload !== '' || kind !== 'file') input.payload = payload;
      const days = intOrNaN('expire_after_days');
      const views = intOrNaN('expire_after_views');
      if (days !== undefined) input.expire_after_days = days;
      if (views !== undefined) input.expire_after_views = views;
      if (passphrase !== '') input.passphrase = passphrase;
      if (v.user && name !== '') input.name = name;
      if (optionsPresent) {
        input.retrieval_step = form.has('retrieval_step');
        input.deletable_by_viewer = form.has('deletable_by_viewer');
      }
      const uploads = form.getAll('files').filter((f): f is File => typeof f !== 'string' && (f.size > 0 || f.name !== ''));
      if (kind === 'file' || uploads.length > 0) {
        input.files = await Promise.all(
          uploads.map(async (f) => ({
            filename: f.name,
            content_type: f.type || 'application/octet-stream',
            content: Buffer.from(await f.arrayBuffer()).toString('base64'),
          })),
        );
      }
      try {
        const push = await core.pushes.create(input, ctxOf(req, v.user?.userId ?? null));
        send(res, 201, createdPage(v.viewer, push));
      } catch (error) {
        if (!(error instanceof DomainError) || (error.code !== 'validation_failed' && error.code !== 'authentication_required')) throw error;
        const state: CreateFormState = {
          kind,
          payload,
          name,
          expireAfterDays: Number.isFinite(days) ? days : undefined,
          expireAfterViews: Number.isFinite(views) ? views : undefined,
          retrievalStep: input.retrieval_step,
          deletableByViewer: input.deletable_by_viewer,
          error: error.code === 'authentication_required' ? 'Sign in to send files.' : 'The secret was not stored: check the fields marked below.',
          fields: error.details.fields,
        };
        send(res, statusOf(error), createPage(v.viewer, settings, state));
      }
    }),
  );

  // ---- the recipient's page ----------------------------------------------------------------------------------
  const recipient = (retrievalPage: boolean) =>
    pageRoute(retrievalPage ? '/p/:url_token/r' : '/p/:url_token', async (req, res, v) => {
      const urlToken = String(req.params.url_token ?? '');
      if (!v.user && !settings.allowAnonymous) {
        // A closed instance: only its users open secrets. Nothing is looked up, so the prompt says nothing about the
        // push (not even whether it exists) and consumes nothing; after sign-in the visitor comes back to this link.
        send(res, 200, signInRequiredPage(v.viewer, `/p/${encodeURIComponent(urlToken)}${retrievalPage ? '/r' : ''}`));
        return;
      }
      // State only (a SELECT): no view is counted and nothing is written, whoever fetches the page.
      const push = await web().pushState(urlToken, ctxOf(req, v.user?.userId ?? null));
      if (!push) throw new PageError(404, 'Not found', 'There is no secret at this link. Check that you copied the whole link.');
      // Signed-in visitors open the secret as themselves (the owner's look is an owner_view, limits and audit as in
      // the API) through the page's own step; anonymous visitors of an open instance through the API, as any client.
      send(res, 200, recipientPage(v.viewer, push, { retrievalPage, reveal: v.user ? 'web' : 'api' }));
    });
  router.get('/p/:url_token', recipient(false));
  router.get('/p/:url_token/r', recipient(true));

  /**
   * A JSON step of the recipient page. In order: the visitor (a closed instance refuses anonymous visitors with the
   * API's 401 authentication_required), the same-origin check and the CSRF token from `X-CSRF-Token` (403), the body
   * (application/json only, 16 KiB), then the domain call as the session's user. Failures answer the API's error body
   * and status (Retry-After on 429 and 503), so the page handles both paths alike. Nothing is consumed before every
   * check has passed.
   */
  const recipientStep =
    (route: string, act: (req: Request, ctx: RequestContext, body: Record<string, unknown>) => Promise<unknown>) =>
    async (req: Request, res: Response): Promise<void> => {
      state(res).route = route;
      pageHeaders(res);
      try {
        const v = await visit(req, res);
        const userId = v.user?.userId ?? null;
        if (!userId && !settings.allowAnonymous) {
          throw new HttpError(401, 'authentication_required', 'This instance requires sign-in. Sign in and open the link again.');
        }
        if (!comesFromOurPages(req, settings.publicBaseUrl) || !sessions.csrfValid(req, req.get(CSRF_HEADER), userId)) {
          throw new HttpError(403, 'csrf_rejected', 'This request did not come from this site, or the page has expired. Reload the page and try again.');
        }
        let body: unknown;
        try {
          body = await readJson(req, STEP_BODY_BYTES);
        } catch (error) {
          if (!(error instanceof FormError)) throw error;
          const code = error.status === 413 ? 'payload_too_large' : error.status === 415 ? 'unsupported_media_type' : 'invalid_json';
          throw new HttpError(error.status, code, error.message);
        }
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          throw new HttpError(400, 'bad_request', 'The request body must be a JSON object.');
        }
        const result = await act(req, ctxOf(req, userId), body as Record<string, unknown>);
        res.status(200).json(result);
      } catch (error) {
        const httpError = toHttpError(error);
        if (httpError.status >= 500 && !(error instanceof HttpError) && !(error instanceof DomainError)) {
          const e = error as { name?: string; code?: string };
          state(res).failure = { name: e?.name ?? typeof error, ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
        }
        if (res.headersSent) {
          if (!res.writableEnded) res.destroy();
          return;
        }
        if (httpError.extra.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(httpError.extra.retryAfterSeconds));
        res.status(httpError.status).json(errorBody(httpError, state(res).requestId));
      }
    };

  // Reveal: the API's getPush for the session's user; the passphrase comes in the body, never in a URL.
  router.post(
    '/p/:url_token/reveal',
    recipientStep('/p/:url_token/reveal', async (req, ctx, body) => {
      const passphrase = body.passphrase;
      if (passphrase !== undefined && passphrase !== null && typeof passphrase !== 'string') {
        throw new HttpError(400, 'bad_request', 'The passphrase must be a string.');
      }
      return core.pushes.retrieve(String(req.params.url_token ?? ''), passphrase ?? undefined, ctx);
    }),
  );

  // Delete now: the API's expirePush for the session's user (the owner, or anyone when the push is deletable by viewers).
  router.post(
    '/p/:url_token/delete',
    recipientStep('/p/:url_token/delete', async (req, ctx) => core.pushes.expire(String(req.params.url_token ?? ''), ctx)),
  );

  // ---- the owner's pages -------------------------------------------------------------------------------------
  const pageNumber = (req: Request): number => {
    const raw = req.query.page;
    if (raw === undefined) return 1;
    if (typeof raw !== 'string' || !/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 200) {
      throw new PageError(400, 'No such page', 'The page number must be from 1 to 200.');
    }
    return Number(raw);
  };

  for (const which of ['active', 'expired'] as const) {
    router.get(
      `/pushes/${which}`,
      pageRoute(`/pushes/${which}`, async (req, res, v) => {
        if (!v.user) return redirectToSignIn(req, res);
        const result = await core.pushes.list(which, pageNumber(req), ctxOf(req, v.user.userId));
        send(res, 200, listPage(v.viewer, which, result));
      }),
    );
  }

  router.get(
    '/pushes/:url_token/audit',
    pageRoute('/pushes/:url_token/audit', async (req, res, v) => {
      if (!v.user) return redirectToSignIn(req, res);
      const urlToken = String(req.params.url_token ?? '');
      const result = await core.pushes.audit(urlToken, pageNumber(req), ctxOf(req, v.user.userId));
      send(res, 200, auditPage(v.viewer, urlToken, result));
    }),
  );

  router.post(
    '/pushes/:url_token/expire',
    pageRoute('/pushes/:url_token/expire', async (req, res, v) => {
      if (!v.user) return redirectToSignIn(req, res);
      await postedForm(req, v);
      const urlToken = String(req.params.url_token ?? '');
      const push = await core.pushes.expire(urlToken, ctxOf(req, v.user.userId));
      res.redirect(303, push.expired ? '/pushes/expired' : '/pushes/active');
    }),
  );

  // A path whose percent-escapes do not decode (`/p/%ZZ`) fails while the router matches a route with a parameter:
  // a client error, not a server failure. API paths go on to the API unchanged (it answers from the raw path); page
  // paths get a 400 page.
  router.use((error: unknown, req: Request, res: Response, next: (err?: unknown) => void) => {
    if (!(error instanceof URIError)) return next(error);
    if (req.path.startsWith('/api/')) return next();
    state(res).route = 'malformed_path';
    if (req.path.startsWith('/assets/')) {
      res.status(400).type('text/plain').send('Bad request');
      return;
    }
    pageHeaders(res);
    send(res, 400, messagePage({ user: null, csrf: '', signupsEnabled: settings.enableSignups }, 'Bad link', 'This link is malformed. Check that you copied the whole link.'));
  });

  return router;
}
