/**
 * The credentials of BENCH_AUTH's modes: one bench user with its account token (every scope) and an API key with
 * only `pushes:create`, written straight into the bench database (digests only, as the server stores them) once ours
 * has migrated it. Both modes then send the same creates as the same user, so the one difference between them is how
 * the credential is authenticated and authorised.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { newApiKeyToken, newApiToken, tokenDigest } from '../../server/src/crypto/tokens.js';

/** How creates are sent: without a credential, with the account token, or with a key scoped to `pushes:create`. */
export type AuthMode = 'anonymous' | 'token' | 'key';

export type Credentials = Record<AuthMode, string | undefined> & {
  /** BENCH_WEBHOOK: the account token of a second user, who has a webhook (registered by scripts/bench/webhook.ts). */
  webhookOwner?: string;
  /** The bench user's id: the owner of the `owner` scenarios, and BENCH_SCALE's busy owner. */
  ownerId?: string;
  /** BENCH_OWNERS above 1: the account tokens of that many owners, each a user of its own. */
  owners?: string[];
};

/** A user with an account token. */
async function benchUser(admin: pg.Client, now: Date): Promise<{ userId: string; token: string }> {
  const userId = randomUUID();
  const token = newApiToken();
  await admin.query('insert into users (id, email, created_at, updated_at) values ($1, $2, $3, $3)', [
    userId,
    `bench-${userId}@example.org`,
    now,
  ]);
  await admin.query('insert into api_tokens (id, user_id, digest, created_at) values ($1, $2, $3, $4)', [
    randomUUID(),
    userId,
    tokenDigest(token),
    now,
  ]);
  return { userId, token };
}

/** `n` users, each with an account token: the owners of BENCH_OWNERS' many-owner scenarios. */
async function manyOwners(admin: pg.Client, now: Date, n: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) tokens.push((await benchUser(admin, now)).token);
  return tokens;
}

export async function benchCredentials(admin: pg.Client, webhookOwner = false, owners = 0): Promise<Credentials> {
  const now = new Date();
  const { userId, token } = await benchUser(admin, now);
  const key = newApiKeyToken();
  await admin.query(
    'insert into api_keys (id, user_id, name, digest, scopes, created_at) values ($1, $2, $3, $4, $5, $6)',
    [randomUUID(), userId, 'bench', tokenDigest(key), ['pushes:create'], now],
  );
  return {
    anonymous: undefined,
    token,
    key,
    ownerId: userId,
    ...(webhookOwner ? { webhookOwner: (await benchUser(admin, now)).token } : {}),
    ...(owners > 1 ? { owners: await manyOwners(admin, now, owners) } : {}),
  };
}
