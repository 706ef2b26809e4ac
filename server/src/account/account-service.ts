/**
 * Accounts for the web pages: sign-up and sign-in with email and password (scrypt, compared in constant time), a
 * session version per user, and the failed sign-in limit. The limit lives in PostgreSQL (login_attempts) so that it
 * holds across instances; an attempt reserves its row before the password is checked, so parallel guesses count too.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApiError } from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import { hashPassphrase, verifyPassphrase } from '../crypto/passphrase.js';
import { PASSWORD_MAX, passwordProblem, passwordRefused } from './password-strength.js';
import { ApiToken, User } from '../db/entities.js';
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';
import { clientAddressKey } from '../client-address.js';
import { EMAIL, normalizeEmail } from '../user/user-service.js';
import { securityEvents } from './security-events.js';
import { isUniqueViolation } from '../db/database-errors.js';

/** A web-page session's user: `sessionVersion` changes on sign-out, which ends every session made before. */
export interface AccountUser {
  userId: string;
  email: string;
  sessionVersion: number;
  /** Flagged an administrator (`npm run users -- grant-admin`), as read with a session; PWPUSH_ADMIN_EMAILS aside. */
  admin?: boolean;
  /** The language the pages recorded (`users.locale`); absent: none yet (English for the mails). */
  locale?: string;
}

/**
 * Accounts for the web pages: email + password sign-up and sign-in with a failed-attempt limit held in PostgreSQL,
 * session versions, and whether a user has an API token. Tokens themselves are made by UserService.rotateToken.
 */
export interface AccountService {
  /** validation_failed for a bad email, a short password or an email already registered. */
  signUp(email: string, password: string, now?: Date): Promise<AccountUser>;
  /**
   * authentication_required for a wrong email or password; too_many_attempts (with retryAfterSeconds) past the limit;
   * forbidden for a locked account (after its right password). Each refusal is a security event.
   */
  signIn(email: string, password: string, ip: string, now?: Date): Promise<AccountUser>;
  /** The user of a session, or null when the user is gone or the session's version is stale. */
  sessionUser(userId: string, sessionVersion: number): Promise<AccountUser | null>;
  /** Ends every session of the user (bumps the session version). */
  endSessions(userId: string, now?: Date): Promise<void>;
  /**
   * Records the user's language (`users.locale`, a catalogue's tag: the pages' on sign-in and on an explicit choice),
   * which their owner mails and requester notices go out in. Writes only when it changes.
   */
  rememberLocale(userId: string, locale: string): Promise<void>;
  tokenStatus(userId: string): Promise<{ hasToken: boolean; createdAt: string | null }>;
  /** Forgets failed sign-ins that no longer count (the sweeper calls it). */
  forgetAttempts(now: Date): Promise<void>;
  /**
   * Sets (or replaces) a user's password, as the operator does with `npm run users -- set-password`: the same rules
   * as sign-up; ends the user's sessions and forgets the email's failed sign-ins. not_found for an unknown email.
   */
  setPassword(email: string, password: string): Promise<void>;
  /**
   * setPassword's change, in the caller's transaction, with a password already checked and hashed: the hash set,
   * every session ended, the email's failed sign-ins forgotten. False for an unknown email.
   */
  storePasswordHash(tx: Db, email: string, hash: string, now: Date): Promise<boolean>;
}

interface LoginAttemptRow {
  id: string;
  email: string;
  ip: string;
  attemptedAt: Date;
}

/** One row per failed (or in-flight) sign-in; the per-email and per-address limits count them on every instance. */
export const LOGIN_ATTEMPTS = defineTable<LoginAttemptRow>('login_attempts', {
  id: column.bigint('id'),
  email: column.text('email'),
  ip: column.text('ip'),
  attemptedAt: column.date('attempted_at'),
});

const S = {
  reserve: sql<{ email: string; ip: string; now: Date }, { id: string }>(
    'insert into login_attempts (email, ip, attempted_at) values (:email, :ip, :now) returning id',
  ),
  release: sql<{ id: string }>('delete from login_attempts where id = :id'),
  recent: sql<{ since: Date; email: string; ip: string; id: string }>(
    `select ${LOGIN_ATTEMPTS.list} from login_attempts
     where attempted_at > :since and (email = :email or ip = :ip) and id <> :id order by attempted_at, id`,
  ),
  clearEmail: sql<{ email: string }>('delete from login_attempts where email = :email'),
  forget: sql<{ before: Date }>('delete from login_attempts where attempted_at < :before'),
  rememberLocale: sql<{ userId: string; locale: string }>(
    'update users set locale = :locale where id = :userId and locale is distinct from :locale',
  ),
  endSessions: sql<{ userId: string; now: Date }>(
    'update users set session_version = session_version + 1, updated_at = :now where id = :userId',
  ),
  setPassword: sql<{ email: string; hash: string; now: Date }, { id: string }>(
    `update users set password_hash = :hash, session_version = session_version + 1, updated_at = :now
     where email = :email returning id`,
  ),
};

const LOGIN_WINDOW_MS = 15 * 60_000;

/** What a locked account is told when it signs in (with its right password, or through the provider). */
const LOCKED_SENTENCE = 'This account is locked. Ask the administrator of this instance.';
// Verified against when the email is unknown, so that a missing account costs the same time as a wrong password.
const DUMMY_HASH = hashPassphrase(randomUUID());

function accountOf(user: {
  id: string;
  email: string;
  sessionVersion: number;
  admin?: boolean;
  locale?: string | null;
}): AccountUser {
  return {
    userId: user.id,
    email: user.email,
    sessionVersion: Number(user.sessionVersion),
    ...(user.admin ? { admin: true } : {}),
    ...(user.locale ? { locale: user.locale } : {}),
  };
}

export function createAccountService(
  orm: MikroORM,
  db: Db,
  settings: Pick<Settings, 'loginAttemptsPer15Minutes'>,
): AccountService {
  const em = (): EntityManager => orm.em.fork() as EntityManager;

  const storePasswordHash: AccountService['storePasswordHash'] = async (tx, email, hash, now) => {
    const [updated] = await tx.query(S.setPassword, { email, hash, now });
    if (!updated) return false;
    await tx.query(S.clearEmail, { email });
    return true;
  };

  return {
    async signUp(email: string, password: string, now: Date = new Date()) {
      const normalized = normalizeEmail(email ?? '');
      const fields: Record<string, string[]> = {};
      if (normalized.length > 320 || !EMAIL.test(normalized)) fields.email = ['must be an email address'];
      const problem = await passwordProblem(password, normalized);
      if (problem) fields.password = [problem.message];
      if (Object.keys(fields).length > 0) {
        throw new ApiError('validation_failed', 'Check the highlighted fields.', { fields, advice: problem?.advice });
      }
      const passwordHash = await hashPassphrase(password);
      const m = em();
      try {
        const user = m.create(User, {
          id: randomUUID(),
          email: normalized,
          passwordHash,
          createdAt: now,
          updatedAt: now,
          sessionVersion: 1,
        });
        await m.flush();
        return { userId: user.id, email: user.email, sessionVersion: 1 };
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new ApiError('validation_failed', 'An account with this email already exists.', {
            fields: { email: ['is already registered'] },
          });
        }
        throw err;
      }
    },

    async signIn(email: string, password: string, ip: string, now = new Date()) {
      // Control characters are no part of any registered email (a NUL could not even be stored): counted without them.
      const normalized = normalizeEmail(email ?? '')
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .slice(0, 320);
      const address = clientAddressKey(ip);
      const limit = settings.loginAttemptsPer15Minutes;
      const windowStart = new Date(now.getTime() - LOGIN_WINDOW_MS);
      const [reserved] = await db.query(S.reserve, { email: normalized, ip: address, now });
      const reservedId = String(reserved!.id);
      const release = () => db.query(S.release, { id: reservedId });
      const recent = (
        await db.query(S.recent, { since: windowStart, email: normalized, ip: address, id: reservedId })
      ).map((r) => LOGIN_ATTEMPTS.fromRow(r));
      const byEmail = recent.filter((r) => r.email === normalized);
      const byIp = recent.filter((r) => r.ip === address);
      const over = [byEmail, byIp].filter((rows) => rows.length >= limit);
      if (over.length > 0) {
        await release();
        await securityEvents.recordThrottled(db, { email: normalized, ip }, now);
        // Free again once enough of the counted failures have left the window.
        const freeAt = Math.max(
          ...over.map((rows) => rows[rows.length - limit]!.attemptedAt.getTime() + LOGIN_WINDOW_MS),
        );
        throw new ApiError('too_many_attempts', 'Too many failed sign-ins. Wait a while and try again.', {
          retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)),
        });
      }
      const user = await em().findOne(User, { email: normalized });
      const candidate = typeof password === 'string' ? password.slice(0, PASSWORD_MAX) : '';
      const ok = user?.passwordHash
        ? await verifyPassphrase(candidate, user.passwordHash)
        : (await verifyPassphrase(candidate, await DUMMY_HASH), false);
      if (!ok || !user) {
        await securityEvents.record(db, 'sign_in_failed', { email: normalized, userId: user?.id ?? null, ip }, now);
        throw new ApiError('authentication_required', 'That email and password do not match an account.');
      }
      await release();
      if (user.lockedAt) {
        await securityEvents.record(db, 'sign_in_locked_account', { email: normalized, userId: user.id, ip }, now);
        throw new ApiError('forbidden', LOCKED_SENTENCE);
      }
      // A success clears this email's failures (the per-address ones stay).
      await db.query(S.clearEmail, { email: normalized });
      return accountOf(user);
    },

    async sessionUser(userId: string, sessionVersion: number) {
      if (typeof userId !== 'string' || !/^[0-9a-f-]{36}$/i.test(userId) || !Number.isSafeInteger(sessionVersion))
        return null;
      // A locked account's sessions are refused (locking also ends them).
      const user = await em().findOne(User, { id: userId, sessionVersion, lockedAt: null });
      return user ? accountOf(user) : null;
    },

    async endSessions(userId: string, now: Date = new Date()) {
      await db.query(S.endSessions, { userId, now });
    },

    async rememberLocale(userId: string, locale: string) {
      await db.query(S.rememberLocale, { userId, locale });
    },

    async tokenStatus(userId: string) {
      const token = await em().findOne(ApiToken, { user: userId });
      return { hasToken: token !== null, createdAt: token ? token.createdAt.toISOString() : null };
    },

    async forgetAttempts(now: Date) {
      await db.query(S.forget, { before: new Date(now.getTime() - 2 * LOGIN_WINDOW_MS) });
    },

    async setPassword(email: string, password: string) {
      const normalized = normalizeEmail(email ?? '');
      const problem = await passwordProblem(password, normalized);
      if (problem) throw passwordRefused(problem);
      const hash = await hashPassphrase(password);
      const stored =
        EMAIL.test(normalized) && (await db.transaction((tx) => storePasswordHash(tx, normalized, hash, new Date())));
      if (!stored) throw new ApiError('not_found', 'No user has this email.');
    },

    storePasswordHash,
  };
}
