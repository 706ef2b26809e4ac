/**
 * UserService: users and their API token. A user has at most one token; only its SHA-256 digest is stored, and
 * rotating replaces it (the old token stops working at once).
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { hashPassphrase } from '../crypto/passphrase.js';
import { newApiToken, tokenDigest } from '../crypto/tokens.js';
import { ApiToken, User } from '../db/entities.js';
import { ApiError } from '@secret-push/sdk/rules';
import { sql, type Db } from '../db/sql.js';

export interface UserService {
  /** Resolves a bearer token (or the legacy pair, when `email` is given) to a user; null when invalid. */
  authenticate(token: string, email?: string): Promise<{ userId: string; email: string } | null>;
  createUser(email: string, password?: string): Promise<{ userId: string; token: string }>;
  /** Replaces the user's token (the old one stops working at once); returns the new one. */
  rotateToken(email: string): Promise<string>;
}

/** One statement replaces the token: the old digest is gone the moment the new one exists. */
const REPLACE_TOKEN = sql<{ id: string; userId: string; digest: string; now: Date }>(
  `insert into api_tokens (id, user_id, digest, created_at) values (:id, :userId, :digest, :now)
   on conflict (user_id) do update set digest = excluded.digest, created_at = excluded.created_at`,
);

/** An email: no spaces or control characters (PostgreSQL cannot even store a NUL). */
export const EMAIL = /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/;
const PASSWORD_MIN = 12;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  return e?.name === 'UniqueConstraintViolationException' || e?.code === '23505' || e?.cause?.code === '23505';
}

export function createUserService(orm: MikroORM, db: Db): UserService {
  const em = (): EntityManager => orm.em.fork() as EntityManager;

  return {
    async authenticate(token: string, email?: string) {
      if (typeof token !== 'string' || token.length === 0 || token.length > 256) return null;
      const found = await em().findOne(ApiToken, { digest: tokenDigest(token) }, { populate: ['user'] });
      if (!found) return null;
      const user = found.user;
      // The legacy pair (X-User-Email + X-User-Token) only counts when the email is the token's user's.
      if (email !== undefined && normalizeEmail(email) !== user.email) return null;
      return { userId: user.id, email: user.email };
    },

    async createUser(email: string, password?: string) {
      const normalized = normalizeEmail(email ?? '');
      if (normalized.length > 320 || !EMAIL.test(normalized)) {
        throw new ApiError('validation_failed', 'That is not an email address.', {
          fields: { email: ['must be an email address'] },
        });
      }
      if (password !== undefined && password.length < PASSWORD_MIN) {
        throw new ApiError('validation_failed', `The password must be at least ${PASSWORD_MIN} characters.`, {
          fields: { password: [`must be at least ${PASSWORD_MIN} characters`] },
        });
      }
      const passwordHash = password !== undefined ? await hashPassphrase(password) : null;
      const token = newApiToken();
      const now = new Date();
      const m = em();
      try {
        const userId = await m.transactional(async (tem) => {
          const user = tem.create(User, { id: randomUUID(), email: normalized, passwordHash, createdAt: now, updatedAt: now });
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

    async rotateToken(email: string) {
      const normalized = normalizeEmail(email ?? '');
      if (!EMAIL.test(normalized)) throw new ApiError('not_found', 'No user has this email.');
      const m = em();
      const user = await m.findOne(User, { email: normalized });
      if (!user) throw new ApiError('not_found', 'No user has this email.');
      const token = newApiToken();
      await db.query(REPLACE_TOKEN, { id: randomUUID(), userId: user.id, digest: tokenDigest(token), now: new Date() });
      return token;
    },
  };
}
