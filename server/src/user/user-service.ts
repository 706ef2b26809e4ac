/**
 * UserService: users and their API token. A user has at most one token; only its SHA-256 digest is stored, and
 * rotating replaces it (the old token stops working at once). The token holds every scope; a user's API keys
 * (./api-keys.ts, `keys`) hold the scopes they were made with.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { passwordProblem, passwordRefused } from '../account/password-strength.js';
import { hashPassphrase } from '../crypto/passphrase.js';
import { newApiToken, tokenDigest } from '../crypto/tokens.js';
import { ApiToken, User } from '../db/entities.js';
import { API_KEY_PREFIX, ApiError, type ApiKeyScope } from '@secret-push/rules';
import type { CallerKey } from '../request-context.js';
import { createApiKeyService, revokeEveryCredential, type ApiKeyService } from './api-keys.js';
import { sql, type Db } from '../db/sql.js';
import { isUniqueViolation } from '../db/database-errors.js';

export interface UserService {
  /**
   * Resolves a bearer token (or the legacy pair, when `email` is given) to a user; null when invalid. An API key
   * (`spk_…`, bearer only) gives its `scopes`; the account token none (every scope).
   */
  authenticate(
    token: string,
    email?: string,
  ): Promise<{ userId: string; email: string; scopes?: readonly ApiKeyScope[]; key?: CallerKey } | null>;
  /** The users' API keys. */
  keys: ApiKeyService;
  /** `now`: the caller's clock (pages and tests move it; default the system's). */
  createUser(email: string, password?: string, now?: Date): Promise<{ userId: string; token: string }>;
  /** Replaces the user's token (the old one stops working at once); returns the new one. */
  rotateToken(email: string, now?: Date): Promise<string>;
  /** Every user, by email: when made, whether a password is set, the token's age and last use. */
  listUsers(): Promise<UserSummary[]>;
  /** Removes the user's API token (no new one); false when the user had none. not_found for an unknown email. */
  revokeToken(email: string): Promise<boolean>;
  /** The user's id, or not_found. */
  userIdOf(email: string): Promise<string>;
  /**
   * "Sign out everywhere": every session ends (the session version moves) and, when asked, the account token and
   * every API key are revoked, in one transaction (issue 45). What was revoked, or null when not asked.
   */
  endEverything(
    userId: string,
    revokeCredentials: boolean,
    now?: Date,
  ): Promise<{ apiToken: boolean; apiKeys: number } | null>;
  /**
   * Deletes the user's personal push records (files, audit and attempts go with them), then the user and its token,
   * after `first` (in the same transaction). The pushes they made in a workspace stay the workspace's, without a
   * creator (`pushes.user_id on delete set null`).
   */
  deleteUserRecords(userId: string, first?: (tx: Db) => Promise<void>): Promise<{ pushes: number }>;
}

interface UserSummary {
  email: string;
  createdAt: Date;
  hasPassword: boolean;
  tokenCreatedAt: Date | null;
  /** Within a minute (authentication writes it at most once a minute per token and process). */
  tokenLastUsedAt: Date | null;
}

/** How often one server process writes a token's last use (at most). */
const LAST_USED_EVERY_MS = 60_000;

/** One statement replaces the token: the old digest is gone the moment the new one exists. */
const REPLACE_TOKEN = sql<{ id: string; userId: string; digest: string; now: Date }>(
  `insert into api_tokens (id, user_id, digest, created_at) values (:id, :userId, :digest, :now)
   on conflict (user_id) do update set digest = excluded.digest, created_at = excluded.created_at`,
);

/** An email: no spaces or control characters (PostgreSQL cannot even store a NUL). */
export const EMAIL = /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

const U = {
  endSessions: sql<{ userId: string; now: Date }>(
    'update users set session_version = session_version + 1, updated_at = :now where id = :userId',
  ),
  /**
   * The token's user, by the token's digest (every authenticated request by the account token: one prepared read); a
   * locked account's token finds nothing.
   */
  byDigest: sql<{ digest: string }, { id: string; user_id: string; email: string }>(
    `select t.id, u.id as user_id, u.email from api_tokens t join users u on u.id = t.user_id
     where t.digest = :digest and u.locked_at is null`,
    { prepare: true },
  ),
  lastUsed: sql<{ id: string; now: Date }>('update api_tokens set last_used_at = :now where id = :id'),
  list: sql<
    Record<string, never>,
    {
      email: string;
      created_at: Date | string;
      has_password: boolean;
      token_created_at: Date | string | null;
      last_used_at: Date | string | null;
    }
  >(
    `select u.email, u.created_at, u.password_hash is not null as has_password, t.created_at as token_created_at, t.last_used_at
     from users u left join api_tokens t on t.user_id = u.id order by u.email`,
  ),
  revoke: sql<{ userId: string }, { id: string }>('delete from api_tokens where user_id = :userId returning id'),
  deletePushes: sql<{ userId: string }, { id: string }>(
    'delete from pushes where user_id = :userId and workspace_id is null returning id',
  ),
  deleteUser: sql<{ userId: string }>('delete from users where id = :userId'),
};

export function createUserService(orm: MikroORM, db: Db): UserService {
  const em = (): EntityManager => orm.em.fork() as EntityManager;
  // When this process last wrote each token's last use: one UPDATE a minute per token, never one per request.
  const lastUsedWritten = new Map<string, number>();
  const noteUse = (tokenId: string) => {
    const now = Date.now();
    if (now - (lastUsedWritten.get(tokenId) ?? 0) < LAST_USED_EVERY_MS) return;
    lastUsedWritten.set(tokenId, now);
    // Not awaited: the request does not wait for bookkeeping, and a failure only leaves the time older.
    db.query(U.lastUsed, { id: tokenId, now: new Date(now) }).catch(() => lastUsedWritten.delete(tokenId));
  };
  const findUser = async (email: string) => {
    const normalized = normalizeEmail(email ?? '');
    const user = EMAIL.test(normalized) ? await em().findOne(User, { email: normalized }) : null;
    if (!user) throw new ApiError('not_found', 'No user has this email.');
    return user;
  };

  const keys = createApiKeyService(db);

  return {
    keys,

    async authenticate(token: string, email?: string) {
      if (typeof token !== 'string' || token.length === 0 || token.length > 256) return null;
      // An API key: only as a bearer token (the legacy pair takes the account token), checked by its checksum first.
      if (token.startsWith(API_KEY_PREFIX)) return email === undefined ? keys.authenticate(token) : null;
      const [found] = await db.query(U.byDigest, { digest: tokenDigest(token) });
      if (!found) return null;
      // The legacy pair (X-User-Email + X-User-Token) only counts when the email is the token's user's.
      if (email !== undefined && normalizeEmail(email) !== found.email) return null;
      noteUse(found.id);
      return { userId: found.user_id, email: found.email };
    },

    async createUser(email: string, password?: string, now: Date = new Date()) {
      const normalized = normalizeEmail(email ?? '');
      if (normalized.length > 320 || !EMAIL.test(normalized)) {
        throw new ApiError('validation_failed', 'That is not an email address.', {
          fields: { email: ['must be an email address'] },
        });
      }
      const problem = password === undefined ? null : await passwordProblem(password, normalized);
      if (problem) throw passwordRefused(problem);
      const passwordHash = password !== undefined ? await hashPassphrase(password) : null;
      const token = newApiToken();
      const m = em();
      try {
        const userId = await m.transactional(async (tem) => {
          const user = tem.create(User, {
            id: randomUUID(),
            email: normalized,
            passwordHash,
            createdAt: now,
            updatedAt: now,
            // The operator made it for this address: as proven as a sign-up link (account/claim.ts).
            emailConfirmedAt: now,
          });
          tem.create(ApiToken, { id: randomUUID(), user, digest: tokenDigest(token), createdAt: now });
          await tem.flush();
          return user.id;
        });
        return { userId, token };
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new ApiError('validation_failed', 'A user with this email already exists.', {
            fields: { email: ['is already registered'] },
          });
        }
        throw err;
      }
    },

    async rotateToken(email: string, now: Date = new Date()) {
      const normalized = normalizeEmail(email ?? '');
      if (!EMAIL.test(normalized)) throw new ApiError('not_found', 'No user has this email.');
      const m = em();
      const user = await m.findOne(User, { email: normalized });
      if (!user) throw new ApiError('not_found', 'No user has this email.');
      const token = newApiToken();
      await db.query(REPLACE_TOKEN, { id: randomUUID(), userId: user.id, digest: tokenDigest(token), now });
      return token;
    },

    async listUsers() {
      // The pool reads timestamps as text (db/sql.ts): dates here.
      const at = (value: Date | string | null) => (value === null ? null : new Date(value));
      return (await db.query(U.list, {})).map((r) => ({
        email: r.email,
        createdAt: at(r.created_at)!,
        hasPassword: r.has_password,
        tokenCreatedAt: at(r.token_created_at),
        tokenLastUsedAt: at(r.last_used_at),
      }));
    },

    async revokeToken(email: string) {
      const user = await findUser(email);
      return (await db.query(U.revoke, { userId: user.id })).length > 0;
    },

    async userIdOf(email: string) {
      return (await findUser(email)).id;
    },

    async endEverything(userId: string, revokeCredentials: boolean, now: Date = new Date()) {
      return db.transaction(async (tx) => {
        await tx.query(U.endSessions, { userId, now });
        return revokeCredentials ? revokeEveryCredential(tx, userId) : null;
      });
    },

    async deleteUserRecords(userId: string, first?: (tx: Db) => Promise<void>) {
      return db.transaction(async (tx) => {
        await first?.(tx);
        const pushes = await tx.query(U.deletePushes, { userId });
        await tx.query(U.deleteUser, { userId });
        return { pushes: pushes.length };
      });
    },
  };
}
