/**
 * Sign-in sessions and CSRF tokens.
 *
 * The session is a JWT (HS256, `jsonwebtoken`) in an HttpOnly, SameSite=Lax cookie (Secure when the site is https),
 * signed with a key derived from settings.signingSecret. It carries the user id, the user's session version and how
 * the user signed in (`f`: a password alone, a password and a second factor, or the single sign-on provider); sign-out
 * bumps the version in the database, so every older session stops working at once.
 *
 * CSRF: every visitor has a random `sp_csrf` cookie (HttpOnly); forms carry HMAC(key, cookie | user id) in a hidden
 * field (a signed double-submit token, bound to the cookie and to the signed-in user). The router checks it, with
 * the same-origin check of security.ts, on every form post.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, Request, Response } from 'express';
import jwt from 'jsonwebtoken';
import type { AccountUser } from '../account/account-service.js';
import type { Settings } from '../config/settings.js';
import { isHttps } from './security.js';

const SESSION_COOKIE = 'sp_session';
const CSRF_COOKIE = 'sp_csrf';
export const CSRF_FIELD = '_csrf';
const AUDIENCE = 'secret-push-web';

/**
 * How a session was signed in: PWPUSH_REQUIRE_2FA refuses `password` sessions (and older ones, which carry none);
 * `oidc+totp`: the provider, then the account's own second factor (an account that has one is always asked for it).
 */
export type SignInFactors = 'password' | 'password+totp' | 'oidc' | 'oidc+totp';
const FACTORS: readonly SignInFactors[] = ['password', 'password+totp', 'oidc', 'oidc+totp'];

/** Whether the session began at the single sign-on provider (whose own session sign-out ends too). */
export const viaProvider = (factors: SignInFactors | undefined): boolean =>
  factors === 'oidc' || factors === 'oidc+totp';

export interface SessionClaims {
  userId: string;
  sessionVersion: number;
  factors: SignInFactors;
  /** When the session began (ms since the epoch): the admin console's actions need a recent sign-in. */
  issuedAt: number;
}

export function parseCookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  const header = req.headers.cookie;
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!(name in out)) {
      try {
        out[name] = decodeURIComponent(value);
      } catch {
        out[name] = value;
      }
    }
  }
  return out;
}

export function createSessions(settings: Pick<Settings, 'signingSecret' | 'sessionLifetimeHours' | 'publicBaseUrl'>) {
  // Separate keys per purpose, so a download-link signature can never be passed off as a session or a CSRF token.
  const sessionKey = createHmac('sha256', settings.signingSecret).update('secret-push web session v1').digest();
  const csrfKey = createHmac('sha256', settings.signingSecret).update('secret-push web csrf v1').digest();
  const lifetimeSeconds = settings.sessionLifetimeHours * 3600;

  const cookieOptions = (req: Request, maxAgeMs?: number): CookieOptions => ({
    httpOnly: true,
    sameSite: 'lax',
    secure: isHttps(req, settings.publicBaseUrl),
    path: '/',
    ...(maxAgeMs !== undefined ? { maxAge: maxAgeMs } : {}),
  });

  return {
    /** The claims of a valid, unexpired session cookie, else null (the caller still checks the version in the DB). */
    read(req: Request): SessionClaims | null {
      const token = parseCookies(req)[SESSION_COOKIE];
      if (!token || token.length > 4096) return null;
      try {
        const claims = jwt.verify(token, sessionKey, { algorithms: ['HS256'], audience: AUDIENCE }) as jwt.JwtPayload;
        if (typeof claims.sub !== 'string' || typeof claims.sv !== 'number' || typeof claims.iat !== 'number')
          return null;
        const factors = FACTORS.find((f) => f === claims.f) ?? 'password';
        return { userId: claims.sub, sessionVersion: claims.sv, factors, issuedAt: claims.iat * 1000 };
      } catch {
        return null;
      }
    },

    /** Starts a session; returns the new CSRF cookie, for a page answered in the same response. */
    start(req: Request, res: Response, user: AccountUser, factors: SignInFactors = 'password'): string {
      const token = jwt.sign({ sv: user.sessionVersion, f: factors }, sessionKey, {
        algorithm: 'HS256',
        subject: user.userId,
        audience: AUDIENCE,
        expiresIn: lifetimeSeconds,
      });
      res.cookie(SESSION_COOKIE, token, cookieOptions(req, lifetimeSeconds * 1000));
      // A new CSRF cookie with every sign-in: tokens issued before it (to anyone) are void.
      const csrf = randomBytes(32).toString('base64url');
      res.cookie(CSRF_COOKIE, csrf, cookieOptions(req));
      return csrf;
    },

    end(req: Request, res: Response): void {
      res.clearCookie(SESSION_COOKIE, cookieOptions(req));
      res.cookie(CSRF_COOKIE, randomBytes(32).toString('base64url'), cookieOptions(req));
    },

    /** The visitor's CSRF cookie, made (and set on the response) when missing. */
    csrfCookie(req: Request, res: Response): string {
      const existing = parseCookies(req)[CSRF_COOKIE];
      if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
      const made = randomBytes(32).toString('base64url');
      res.cookie(CSRF_COOKIE, made, cookieOptions(req));
      return made;
    },

    csrfToken(cookie: string, userId: string | null): string {
      return createHmac('sha256', csrfKey)
        .update(`${cookie}|${userId ?? '-'}`)
        .digest('base64url');
    },

    csrfValid(req: Request, submitted: unknown, userId: string | null): boolean {
      const cookie = parseCookies(req)[CSRF_COOKIE];
      if (!cookie || typeof submitted !== 'string' || submitted.length === 0) return false;
      const expected = Buffer.from(this.csrfToken(cookie, userId));
      const given = Buffer.from(submitted);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
