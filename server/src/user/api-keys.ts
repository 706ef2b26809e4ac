/**
 * API keys: several per account, each with a name, scopes (the contract's `ApiKeyScope` list), an optional expiry and
 * its last use. Stored like the account token: only the SHA-256 digest of the token (`spk_…`, ../crypto/tokens.ts),
 * shown once. Revoking deletes the row: the next request with the token finds nothing, on every process.
 *
 * Authentication is one prepared statement by digest (the key and its user); a token whose checksum is wrong never
 * reaches the database. The last use is written at most once a minute per key and process, never awaited.
 *
 * A key made by a key (createApiKey with a key's token) stays inside it (issue 45): its scopes are among its parent's,
 * it expires no later than its parent (without an expiry of its own it takes the parent's), and it is deleted with
 * its parent (`parent_id` references the parent with `on delete cascade`), so revoking a key ends every key it made.
 */
import { randomUUID } from 'node:crypto';
import {
  API_KEY_SCOPES,
  ApiError,
  childKeyExpiry,
  isWellFormedApiKey,
  validationFailed,
  type ApiKeyScope,
} from '@secret-push/rules';
import { newApiKeyToken, tokenDigest } from '../crypto/tokens.js';
import { sql, type Db } from '../db/sql.js';
import type { CallerKey } from '../request-context.js';
import { column, defineTable } from '../db/table.js';

/** Keys one account may hold at once (its personal keys and the workspaces' keys it made). */
const MAX_KEYS_PER_USER = 100;
/** Keys one workspace may hold at once (listed in one answer). */
const MAX_KEYS_PER_WORKSPACE = 100;
/** The furthest expiry a key may be given. */
const MAX_LIFETIME_MS = 366 * 24 * 3_600_000;
/** How often one server process writes a key's last use (at most). */
const LAST_USED_EVERY_MS = 60_000;

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  /** SHA-256 (hex) of the token: all the server keeps of it. */
  digest: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** The key that made this one, or null (made by the account itself). */
  parentId: string | null;
  /** The workspace the key acts for (its creator's membership decides nothing), or null: its creator's own key. */
  workspaceId: number | null;
}

/** `text[]` as pg returns it: an array, or its `{a,b}` text when read as text (scopes hold no comma, quote or brace). */
function textList(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.map(String);
  const text = String(raw).replace(/^\{|\}$/g, '');
  return text === '' ? [] : text.split(',');
}

export const API_KEYS = defineTable<ApiKeyRecord>('api_keys', {
  id: column.text('id'),
  userId: column.text('user_id'),
  name: column.text('name'),
  digest: column.text('digest'),
  scopes: { name: 'scopes', parse: (raw) => textList(raw) as ApiKeyScope[] },
  createdAt: column.date('created_at'),
  expiresAt: column.dateOrNull('expires_at'),
  lastUsedAt: column.dateOrNull('last_used_at'),
  parentId: { name: 'parent_id', parse: (raw) => (raw === null || raw === undefined ? null : String(raw)) },
  workspaceId: column.intOrNull('workspace_id'),
});

const K = {
  byDigest: sql<
    { digest: string },
    { id: string; scopes: unknown; expires_at: unknown; workspace_id: unknown; user_id: string; email: string }
  >(
    `select k.id, k.scopes, k.expires_at, k.workspace_id, u.id as user_id, u.email
     from api_keys k join users u on u.id = k.user_id where k.digest = :digest and u.locked_at is null`,
    { prepare: true },
  ),
  lastUsed: sql<{ id: string; now: Date }>('update api_keys set last_used_at = :now where id = :id'),
  lockUser: sql<{ userId: string }, { n: string }>(
    'select (select count(*) from api_keys where user_id = u.id) as n from users u where u.id = :userId for update',
  ),
  /** Only while the parent key exists: a key revoked meanwhile makes nothing (no row, and the caller is told). */
  insert: sql<Omit<ApiKeyRecord, 'lastUsedAt'>, { id: string }>(
    `insert into api_keys (id, user_id, name, digest, scopes, created_at, expires_at, parent_id, workspace_id)
     select :id, :userId, :name, :digest, :scopes, :createdAt, :expiresAt, :parentId, :workspaceId::integer
     where :parentId::uuid is null or exists (select 1 from api_keys where id = :parentId::uuid and user_id = :userId)
     returning id`,
  ),
  /** The user's personal keys (a workspace's keys are the workspace's, listed by `listOfWorkspace`). */
  list: sql<{ userId: string }>(
    `select ${API_KEYS.list} from api_keys where user_id = :userId and workspace_id is null
     order by created_at desc, id limit ${MAX_KEYS_PER_USER}`,
  ),
  listOfWorkspace: sql<{ workspaceId: number }>(
    `select ${API_KEYS.list} from api_keys where workspace_id = :workspaceId
     order by created_at desc, id limit ${MAX_KEYS_PER_WORKSPACE}`,
  ),
  workspaceOf: sql<{ id: string }, { workspace_id: unknown; user_id: string }>(
    'select workspace_id, user_id from api_keys where id = :id',
  ),
  revoke: sql<{ userId: string; id: string }>(
    `delete from api_keys where user_id = :userId and id = :id and workspace_id is null returning ${API_KEYS.list}`,
  ),
  revokeOfWorkspace: sql<{ workspaceId: number; id: string }>(
    `delete from api_keys where workspace_id = :workspaceId and id = :id returning ${API_KEYS.list}`,
  ),
  countOfWorkspace: sql<{ workspaceId: number }, { n: string }>(
    'select count(*) as n from api_keys where workspace_id = :workspaceId',
  ),
};

const REVOKE_ALL = {
  token: sql<{ userId: string }, { id: string }>('delete from api_tokens where user_id = :userId returning id'),
  keys: sql<{ userId: string }, { id: string }>('delete from api_keys where user_id = :userId returning id'),
};

/**
 * Revokes every API credential of the user in `tx`: the account token and every API key (issue 45: a password reset,
 * "sign out everywhere" and the claim of an unproven account). The next request with any of them answers 401.
 */
export async function revokeEveryCredential(tx: Db, userId: string): Promise<{ apiToken: boolean; apiKeys: number }> {
  const token = await tx.query(REVOKE_ALL.token, { userId });
  const keys = await tx.query(REVOKE_ALL.keys, { userId });
  return { apiToken: token.length > 0, apiKeys: keys.length };
}

/** Who a key authenticates, and what it may do. */
interface KeyCaller {
  userId: string;
  email: string;
  scopes: readonly ApiKeyScope[];
  key: CallerKey;
}

/** The credential that asks for a new key: a key (its scopes, id and expiry), or null for the account itself. */
type KeyGrantor = (CallerKey & { scopes: readonly ApiKeyScope[] }) | null;

export interface NewApiKey {
  name: string;
  scopes: readonly ApiKeyScope[];
  /** ISO-8601, or null/undefined for a key that works until revoked. */
  expiresAt?: string | null;
  /** The workspace the key acts for, its creator's right to make it checked by the caller; null: a personal key. */
  workspaceId?: number | null;
}

export interface ApiKeyService {
  /** The key's user and scopes; null for a malformed, unknown, revoked or expired key. */
  authenticate(token: string, now?: Date): Promise<KeyCaller | null>;
  /**
   * Makes a key. `grantor`: the key asking (null: the account itself, every scope); a key may grant only scopes it
   * holds (403 insufficient_scope naming the others), and its child expires no later than itself (422 otherwise; by
   * default at the same instant) and is revoked with it.
   */
  create(
    userId: string,
    input: NewApiKey,
    grantor: KeyGrantor,
    now?: Date,
  ): Promise<{ key: ApiKeyRecord; token: string }>;
  /** The user's personal keys, newest first. */
  list(userId: string): Promise<ApiKeyRecord[]>;
  /** The workspace's keys, whoever made them, newest first (the caller's right to see them checked first). */
  listOfWorkspace(workspaceId: number): Promise<ApiKeyRecord[]>;
  /** The workspace a key acts for (null: personal) and its maker; null for an id no key has. */
  ownerOf(id: string): Promise<{ workspaceId: number | null; userId: string } | null>;
  /**
   * Deletes one of the user's personal keys, or with `workspaceId` one of that workspace's keys (and the keys it made,
   * and theirs) and answers it as it was; not_found for another user's or workspace's key or an unknown id.
   */
  revoke(userId: string, id: string, workspaceId?: number | null): Promise<ApiKeyRecord>;
}

/** Scopes in the contract's order, each once. */
function ordered(scopes: readonly ApiKeyScope[]): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((s) => scopes.includes(s));
}

/** The new key's expiry: as asked, within the bounds, and never after the key that makes it (its default then). */
function expiryOf(value: string | null | undefined, now: Date, grantor: KeyGrantor): Date | null {
  let asked: number | null = null;
  if (value !== null && value !== undefined) {
    asked = new Date(value).getTime();
    if (Number.isNaN(asked)) throw validationFailed({ expires_at: ['must be an ISO-8601 instant'] });
    if (asked <= now.getTime()) throw validationFailed({ expires_at: ['must be in the future'] });
    if (asked - now.getTime() > MAX_LIFETIME_MS)
      throw validationFailed({ expires_at: ['must be at most 366 days away'] });
  }
  const child = childKeyExpiry(asked, grantor?.expiresAt?.getTime() ?? null);
  if ('problem' in child) throw validationFailed({ expires_at: [child.problem] });
  return child.at === null ? null : new Date(child.at);
}

export function createApiKeyService(db: Db): ApiKeyService {
  const lastUsedWritten = new Map<string, number>();
  const noteUse = (keyId: string) => {
    const now = Date.now();
    if (now - (lastUsedWritten.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    lastUsedWritten.set(keyId, now);
    // Not awaited: the request does not wait for bookkeeping, and a failure only leaves the time older.
    db.query(K.lastUsed, { id: keyId, now: new Date(now) }).catch(() => lastUsedWritten.delete(keyId));
  };

  return {
    async authenticate(token, now = new Date()) {
      if (!isWellFormedApiKey(token)) return null;
      const [row] = await db.query(K.byDigest, { digest: tokenDigest(token) });
      if (!row) return null;
      const expiresAt = API_KEYS.columns.expiresAt.parse(row.expires_at);
      if (expiresAt && expiresAt.getTime() <= now.getTime()) return null;
      noteUse(row.id);
      return {
        userId: row.user_id,
        email: row.email,
        scopes: textList(row.scopes) as ApiKeyScope[],
        key: { id: row.id, expiresAt, workspaceId: API_KEYS.columns.workspaceId.parse(row.workspace_id) },
      };
    },

    async create(userId, input, grantor, now = new Date()) {
      const scopes = ordered(input.scopes);
      const missing = grantor === null ? [] : scopes.filter((s) => !grantor.scopes.includes(s));
      if (missing.length > 0) {
        throw new ApiError(
          'insufficient_scope',
          `This API key lacks the scope ${missing.join(', ')}, so it cannot grant it.`,
          {
            scopes: missing,
          },
        );
      }
      const expiresAt = expiryOf(input.expiresAt, now, grantor);
      const token = newApiKeyToken();
      const key: ApiKeyRecord = {
        id: randomUUID(),
        userId,
        name: input.name,
        digest: tokenDigest(token),
        scopes,
        createdAt: now,
        expiresAt,
        lastUsedAt: null,
        parentId: grantor?.id ?? null,
        workspaceId: input.workspaceId ?? null,
      };
      await db.transaction(async (tx) => {
        // The user's row, locked: two creates at once cannot both pass the count.
        const [held] = await tx.query(K.lockUser, { userId });
        if (!held) throw new ApiError('invalid_token');
        if (Number(held.n) >= MAX_KEYS_PER_USER) {
          throw validationFailed({ api_key: [`an account holds at most ${MAX_KEYS_PER_USER} keys; revoke one first`] });
        }
        if (key.workspaceId !== null) {
          const [ws] = await tx.query(K.countOfWorkspace, { workspaceId: key.workspaceId });
          if (Number(ws?.n ?? 0) >= MAX_KEYS_PER_WORKSPACE)
            throw validationFailed({
              api_key: [`a workspace holds at most ${MAX_KEYS_PER_WORKSPACE} keys; revoke one first`],
            });
        }
        const [made] = await tx.query(K.insert, {
          id: key.id,
          userId,
          name: key.name,
          digest: key.digest,
          scopes: key.scopes,
          createdAt: key.createdAt,
          expiresAt: key.expiresAt,
          parentId: key.parentId,
          workspaceId: key.workspaceId,
        });
        // The asking key was revoked since it authenticated this request: it can make nothing any more.
        if (!made) throw new ApiError('invalid_token');
      });
      return { key, token };
    },

    async list(userId) {
      return (await db.query(K.list, { userId })).map((r) => API_KEYS.fromRow(r));
    },

    async listOfWorkspace(workspaceId) {
      return (await db.query(K.listOfWorkspace, { workspaceId })).map((r) => API_KEYS.fromRow(r));
    },

    async ownerOf(id) {
      const [row] = await db.query(K.workspaceOf, { id });
      return row ? { workspaceId: API_KEYS.columns.workspaceId.parse(row.workspace_id), userId: row.user_id } : null;
    },

    async revoke(userId, id, workspaceId = null) {
      const [row] =
        workspaceId === null
          ? await db.query(K.revoke, { userId, id })
          : await db.query(K.revokeOfWorkspace, { workspaceId, id });
      if (!row) throw new ApiError('not_found', 'No API key of yours has this id.');
      lastUsedWritten.delete(id);
      return API_KEYS.fromRow(row);
    },
  };
}
