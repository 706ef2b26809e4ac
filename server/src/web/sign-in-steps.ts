/**
 * The steps between "the password is right" (or "the provider answered") and a session (issue 25):
 *
 * - `sp_2fa`: a password was right but a second factor is still owed: either a code (`verify`) or, under
 *   PWPUSH_REQUIRE_2FA, an enrolment (`enrol`). A JWT (HS256, its own key derived from the signing secret) naming
 *   the user and their session version, valid 10 minutes, HttpOnly, SameSite=Strict: no session exists until the
 *   step is done.
 * - `sp_oidc`: a single sign-on attempt in this browser: its state, nonce and PKCE verifier and where to go after,
 *   valid 10 minutes, HttpOnly, SameSite=Lax (the provider's redirect back is a top-level GET from its site). The
 *   callback clears it before anything else, so an answer is used once: a replayed or forged state finds none.
 */
import { createHmac } from 'node:crypto';
import type { CookieOptions, Request, Response } from 'express';
import jwt from 'jsonwebtoken';
import type { AccountUser } from '../account/account-service.js';
import type { SignInTransaction } from '../account/single-sign-on.js';
import type { Settings } from '../config/settings.js';
import { rememberSignInLocale, type PageKit } from './page-kit.js';
import { isHttps } from './security.js';
import { parseCookies } from './session.js';

const STEP_COOKIE = 'sp_2fa';
const OIDC_COOKIE = 'sp_oidc';
const LIFETIME_SECONDS = 10 * 60;

export interface PendingFactor {
  userId: string;
  sessionVersion: number;
  email: string;
  purpose: 'verify' | 'enrol';
  next: string;
  /** The first step: a password, or the single sign-on provider (the session's factors say which, with the code). */
  via: 'password' | 'oidc';
}

export interface PendingSso extends SignInTransaction {
  next: string;
}

export function createSignInSteps(settings: Pick<Settings, 'signingSecret' | 'publicBaseUrl'>) {
  const keyOf = (purpose: string) =>
    createHmac('sha256', settings.signingSecret).update(`secret-push ${purpose} v1`).digest();
  const stepKey = keyOf('second factor step');
  const oidcKey = keyOf('single sign-on transaction');
  const options = (req: Request, sameSite: 'strict' | 'lax', maxAgeMs?: number): CookieOptions => ({
    httpOnly: true,
    sameSite,
    secure: isHttps(req, settings.publicBaseUrl),
    path: '/users/',
    ...(maxAgeMs !== undefined ? { maxAge: maxAgeMs } : {}),
  });

  function put(res: Response, req: Request, name: string, key: Buffer, claims: object, sameSite: 'strict' | 'lax') {
    const token = jwt.sign(claims, key, { algorithm: 'HS256', audience: name, expiresIn: LIFETIME_SECONDS });
    res.cookie(name, token, options(req, sameSite, LIFETIME_SECONDS * 1000));
  }

  function take<T>(req: Request, name: string, key: Buffer): T | null {
    const token = parseCookies(req)[name];
    if (!token || token.length > 4096) return null;
    try {
      return jwt.verify(token, key, { algorithms: ['HS256'], audience: name }) as T;
    } catch {
      return null;
    }
  }

  return {
    pendingFactor(req: Request): PendingFactor | null {
      const c = take<Partial<PendingFactor>>(req, STEP_COOKIE, stepKey);
      if (!c || typeof c.userId !== 'string' || typeof c.sessionVersion !== 'number' || typeof c.email !== 'string')
        return null;
      if (c.purpose !== 'verify' && c.purpose !== 'enrol') return null;
      return {
        ...(c as PendingFactor),
        next: typeof c.next === 'string' ? c.next : '/',
        via: c.via === 'oidc' ? 'oidc' : 'password',
      };
    },
    startFactor(
      req: Request,
      res: Response,
      user: AccountUser,
      purpose: PendingFactor['purpose'],
      next: string,
      via: PendingFactor['via'] = 'password',
    ) {
      const claims: PendingFactor = {
        userId: user.userId,
        sessionVersion: user.sessionVersion,
        email: user.email,
        purpose,
        next,
        via,
      };
      put(res, req, STEP_COOKIE, stepKey, claims, 'strict');
    },
    endFactor(req: Request, res: Response) {
      res.clearCookie(STEP_COOKIE, options(req, 'strict'));
    },
    startSso(req: Request, res: Response, pending: PendingSso) {
      put(res, req, OIDC_COOKIE, oidcKey, pending, 'lax');
    },
    /** The attempt this browser started, cleared at once: a second callback with the same answer finds nothing. */
    takeSso(req: Request, res: Response): PendingSso | null {
      const c = take<Partial<PendingSso>>(req, OIDC_COOKIE, oidcKey);
      res.clearCookie(OIDC_COOKIE, options(req, 'lax'));
      if (!c || typeof c.state !== 'string' || typeof c.nonce !== 'string' || typeof c.codeVerifier !== 'string')
        return null;
      return { state: c.state, nonce: c.nonce, codeVerifier: c.codeVerifier, next: c.next ?? '/' };
    },
  };
}

export type SignInSteps = ReturnType<typeof createSignInSteps>;

/**
 * After a right password: a session, or the second factor's step (a code when the user has one; an enrolment when
 * PWPUSH_REQUIRE_2FA asks for one and the user has none).
 */
export async function afterPassword(
  kit: PageKit,
  steps: SignInSteps,
  req: Request,
  res: Response,
  user: AccountUser,
  next: string,
): Promise<void> {
  const status = await kit.web().twoFactor.status(user.userId);
  if (status.enabled) {
    steps.startFactor(req, res, user, 'verify', next);
    return res.redirect(303, '/users/two_factor/verify');
  }
  if (kit.settings.require2fa) {
    steps.startFactor(req, res, user, 'enrol', next);
    return res.redirect(303, '/users/two_factor/setup');
  }
  await rememberSignInLocale(kit, req, user.userId);
  kit.sessions.start(req, res, user, 'password');
  res.redirect(303, next);
}
