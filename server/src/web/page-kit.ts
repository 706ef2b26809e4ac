/**
 * What every page route shares: the visitor (session user, CSRF token), posted forms checked for CSRF and origin,
 * the request context for the core's services, and `pageRoute`, which wraps a page handler with its route template
 * for the log, the page headers and HTML error pages. Rule failures keep the API's statuses (the one table in
 * `@secret-push/rules`).
 */
import type { Request, Response } from 'express';
import { ApiError, rateLimitFields, turnOn } from '@secret-push/rules';
import type { AccountUser } from '../account/account-service.js';
import type { Core, RequestContext, WebServices } from '../core.js';
import { actorOf, baseUrlOf } from '../http/auth.js';
import { LOCALE_COOKIE, negotiateLocale, translator, type MessageKey, type MessageValues } from '../i18n/i18n.js';
import { state } from '../http/middleware.js';
import { createBrands, type Brands } from './brand.js';
import { FormError, readForm, type FormFiles } from './forms.js';
import { comesFromOurPages, isHttps, pageHeaders, safeNext } from './security.js';
import { createSessions, CSRF_FIELD, parseCookies, viaProvider, type SessionClaims, type Sessions } from './session.js';
import { messagePage, type Viewer } from './views/layout.js';

/** Forms without files: sign-in, sign-up, token, expire. */
const SMALL_FORM_BYTES = 64 * 1024;

export interface Visit {
  user: AccountUser | null;
  viewer: Viewer;
  /** The session's claims (how and when it signed in), when it counts. */
  session?: SessionClaims;
}

/** A text of a page: as it is (a message of the core, in English), or a key of the catalogues. */
export type PageText = string | { key: MessageKey; values?: MessageValues };

/** A failure a page answers with an HTML message page. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: PageText,
    readonly text: PageText,
    readonly retryAfterSeconds?: number,
  ) {
    super(typeof text === 'string' ? text : text.key);
  }
}

/** How long the language chosen with `?locale=` is kept (a year). */
const LOCALE_COOKIE_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The visitor's language (`?locale=`, the cookie, `Accept-Language`); a `?locale=` that names one of ours is kept in
 * the cookie, so the next pages (and the sign-in a link leads to) keep it.
 */
function localeOf(req: Request, res: Response, secure: boolean) {
  const i18n = visitorLocale(req);
  if (chosen(req, i18n.locale) && !res.headersSent) {
    res.cookie(LOCALE_COOKIE, i18n.locale, {
      path: '/',
      sameSite: 'lax',
      httpOnly: true,
      secure,
      maxAge: LOCALE_COOKIE_MS,
    });
  }
  return i18n;
}

/** The visitor chose this language on this request: `?locale=` names it exactly (the language menu's value). */
function chosen(req: Request, locale: string): boolean {
  return typeof req.query.locale === 'string' && req.query.locale === locale;
}

/**
 * On a sign-in (a session begins): the page's language, as the visitor reads it, becomes the user's (`users.locale`),
 * which their owner mails and requester notices go out in.
 */
export async function rememberSignInLocale(kit: Pick<PageKit, 'web'>, req: Request, userId: string): Promise<void> {
  await kit.web().accounts.rememberLocale(userId, visitorLocale(req).locale);
}

/** The visitor's language without setting anything (a page answered before the visit is read, or without one). */
export function visitorLocale(req: Request) {
  return translator(
    negotiateLocale({
      query: req.query.locale,
      cookie: parseCookies(req)[LOCALE_COOKIE],
      acceptLanguage: req.get('accept-language'),
    }),
  );
}

function textOf(viewer: Viewer, text: PageText): string {
  return typeof text === 'string' ? text : viewer.i18n.t(text.key, text.values);
}

type PageHandler = (req: Request, res: Response, v: Visit) => Promise<void>;

export interface PageKit {
  core: Core;
  settings: Core['settings'];
  sessions: Sessions;
  /** The brand of each page (../brand.ts). */
  brands: Brands;
  clock?: () => Date;
  web(): WebServices;
  ctxOf(req: Request, userId: string | null): RequestContext;
  visit(req: Request, res: Response): Promise<Visit>;
  /** Reads a posted form and checks that it comes from our own page (CSRF token + origin); 403 otherwise. */
  postedForm(req: Request, v: Visit, limit?: number, files?: FormFiles): Promise<FormData>;
  redirectToSignIn(req: Request, res: Response): void;
  send(res: Response, status: number, body: string): void;
  pageRoute(route: string, handler: PageHandler, csp?: string): (req: Request, res: Response) => Promise<void>;
}

export function createPageKit(core: Core, clock?: () => Date): PageKit {
  const { settings } = core;
  const sessions = createSessions(settings);
  const brands = createBrands(settings, core.workspaceBrands);
  const send = (res: Response, status: number, body: string) => void res.status(status).type('html').send(body);

  const kit: PageKit = {
    core,
    settings,
    sessions,
    brands,
    clock,
    web() {
      if (!core.web)
        throw new PageError(503, { key: 'error.unavailable.title' }, { key: 'error.unavailable.accounts' });
      return core.web;
    },
    ctxOf: (req, userId) => {
      // How the visitor's session signed in: a workspace requiring single sign-on lets in only a provider's session.
      const claims = userId === null ? null : sessions.read(req);
      return {
        actor: actorOf(req, userId, settings.trustProxy),
        baseUrl: baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy),
        ...(clock ? { now: clock() } : {}),
        ...(claims?.userId === userId ? { session: { singleSignOn: viaProvider(claims.factors) } } : {}),
      };
    },
    async visit(req, res) {
      const claims = sessions.read(req);
      // PWPUSH_REQUIRE_2FA: a session signed in with a password alone (made before the setting) no longer counts.
      const counts = claims && !(settings.require2fa && claims.factors === 'password');
      const user =
        counts && core.web ? await core.web.accounts.sessionUser(claims.userId, claims.sessionVersion) : null;
      const cookie = sessions.csrfCookie(req, res);
      const i18n = localeOf(req, res, isHttps(req, settings.publicBaseUrl));
      // A language chosen on a page (the menu's `?locale=`) becomes the signed-in user's: their mails' language.
      if (user && chosen(req, i18n.locale) && user.locale !== i18n.locale)
        await core.web!.accounts.rememberLocale(user.userId, i18n.locale);
      return {
        user,
        ...(user && claims ? { session: claims } : {}),
        viewer: {
          user: user
            ? { email: user.email, admin: user.admin === true || settings.adminEmails.includes(user.email) }
            : null,
          csrf: sessions.csrfToken(cookie, user?.userId ?? null),
          signupsEnabled: signupsOpen(settings),
          retrieveOnly: settings.mode === 'retrieve-only',
          brand: brands.forRequest(req),
          i18n,
        },
      };
    },
    async postedForm(req, v, limit = SMALL_FORM_BYTES, files) {
      const form = await readForm(req, limit, files);
      if (
        !comesFromOurPages(req, settings.publicBaseUrl) ||
        !sessions.csrfValid(req, form.get(CSRF_FIELD), v.user?.userId ?? null)
      ) {
        throw new PageError(403, { key: 'error.formRejected.title' }, { key: 'error.formRejected.expired' });
      }
      return form;
    },
    redirectToSignIn(req, res) {
      res.redirect(302, `/users/sign_in?next=${encodeURIComponent(safeNext(req.originalUrl))}`);
    },
    send,
    pageRoute: (route, handler, csp) => async (req, res) => {
      state(res).route = route;
      pageHeaders(res, csp);
      let v: Visit = {
        user: null,
        viewer: {
          user: null,
          csrf: '',
          signupsEnabled: signupsOpen(settings),
          retrieveOnly: settings.mode === 'retrieve-only',
          brand: brands.forRequest(req),
          i18n: visitorLocale(req),
        },
      };
      try {
        v = await kit.visit(req, res);
        await handler(req, res, v);
      } catch (error) {
        if (res.headersSent) {
          if (!res.writableEnded) res.destroy();
          return;
        }
        const pe = pageErrorOf(error, res);
        if (pe.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(pe.retryAfterSeconds));
        // The limit that refused, as the API answers it (the RateLimit fields).
        if (error instanceof ApiError && error.details.limit)
          for (const [name, value] of Object.entries(rateLimitFields(error.details.limit))) res.setHeader(name, value);
        send(res, pe.status, messagePage(v.viewer, textOf(v.viewer, pe.title), textOf(v.viewer, pe.text)));
      }
    },
  };
  return kit;
}

/** Visitors may make an account with a password: sign-ups are on and the single sign-on provider is not the only way in. */
export function signupsOpen(settings: Core['settings']): boolean {
  return settings.enableSignups && !settings.oidc?.only;
}

/** The page of a sign-up while it is closed: why, and the setting that opens it (PWPUSH_OIDC_ONLY wins). */
export function signUpClosed(settings: Core['settings']): PageError {
  const gate = settings.oidc?.only ? 'passwordSignIn' : 'signUp';
  return new PageError(
    403,
    { key: 'account.signUpClosed.title' },
    { key: 'account.signUpClosed.text', values: { howToTurnOn: turnOn(gate, settings.env) } },
  );
}

function pageErrorOf(error: unknown, res: Response): PageError {
  if (error instanceof PageError) return error;
  if (error instanceof FormError)
    return new PageError(error.status, { key: 'error.formRejected.title' }, error.message);
  if (error instanceof ApiError) {
    const title: MessageKey =
      error.code === 'service_unavailable'
        ? 'error.unavailable.title'
        : error.status === 429
          ? 'error.tooManyRequests.title'
          : 'error.generic.title';
    return new PageError(error.status, { key: title }, error.message, error.details.retryAfterSeconds);
  }
  const e = error as { name?: string; code?: string };
  state(res).failure = { name: e?.name ?? typeof error, ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
  return new PageError(500, { key: 'error.generic.title' }, { key: 'error.generic.message' });
}
