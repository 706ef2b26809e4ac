/**
 * API keys in the stateful mock, by the server's rules (`@secret-push/rules`: the scopes, the token's form and
 * checksum, the error catalogue): made with a name, scopes and an optional expiry, listed without tokens, revoked at
 * once (with the keys it made); a key authenticates as its user with its scopes until it expires, and a key made by a
 * key expires no later than it. Kept in memory, per mock.
 */
import type { ApiKey, ApiKeyCreated } from '../generated/types.gen.js';
import {
  API_KEY_SCOPES,
  ApiError,
  childKeyExpiry,
  isApiKeyScope,
  isWellFormedApiKey,
  newApiKeyTokenFrom,
  validationFailed,
  type ApiKeyScope,
} from '@secret-push/rules';

const MAX_KEYS_PER_USER = 100;
const MAX_LIFETIME_MS = 366 * 24 * 3_600_000;

interface StoredKey extends ApiKey {
  email: string;
  token: string;
  /** The key that made this one (revoked with it), or null. */
  parentId: string | null;
}

/** The caller's API key: what a key it makes must stay inside (its scopes, expiry and id). */
export interface MockGrantor {
  id: string;
  scopes: readonly ApiKeyScope[];
  expiresAt: string | null;
  /** The workspace the key acts for, or null: a personal key. */
  workspaceId: number | null;
}

const randomBytes = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n));

/** The new key's fields from a request body, by the contract's rules (400 without `api_key`, else 422 per field). */
function readInput(body: unknown, now: number): { name: string; scopes: ApiKeyScope[]; expiresAt: string | null } {
  const input = (body as { api_key?: unknown } | null)?.api_key;
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new ApiError('bad_request', 'The request body must be a JSON object with an "api_key" object.');
  }
  const { name, scopes, expires_at: expiresAt } = input as Record<string, unknown>;
  const fields: Record<string, string[]> = {};
  if (typeof name !== 'string' || name.length < 1 || name.length > 100) fields.name = ['must be 1 to 100 characters'];
  if (
    !Array.isArray(scopes) ||
    scopes.length < 1 ||
    scopes.length > API_KEY_SCOPES.length ||
    new Set(scopes).size !== scopes.length
  ) {
    fields.scopes = [`must be 1 to ${API_KEY_SCOPES.length} different scopes`];
  } else {
    const bad = scopes.findIndex((s) => !isApiKeyScope(s));
    if (bad !== -1) fields.scopes = [`item ${bad + 1} must be one of ${API_KEY_SCOPES.join(', ')}`];
  }
  let expires: string | null = null;
  if (expiresAt !== undefined && expiresAt !== null) {
    const at = typeof expiresAt === 'string' ? Date.parse(expiresAt) : NaN;
    if (Number.isNaN(at)) fields.expires_at = ['must be an ISO-8601 instant in UTC with milliseconds, or null'];
    else if (at <= now) fields.expires_at = ['must be in the future'];
    else if (at - now > MAX_LIFETIME_MS) fields.expires_at = ['must be at most 366 days away'];
    else expires = new Date(at).toISOString();
  }
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
  return {
    name: name as string,
    scopes: API_KEY_SCOPES.filter((s) => (scopes as string[]).includes(s)),
    expiresAt: expires,
  };
}

const record = ({ email: _email, token: _token, parentId: _parent, ...key }: StoredKey): ApiKey => key;

export class MockApiKeys {
  private readonly keys = new Map<string, StoredKey>();

  /** `grantor`: the caller's key, or null for the account token (every scope, no expiry to stay inside). */
  /** `workspaceId`: the workspace the key acts for (the caller's right to make it checked first), or null. */
  create(
    email: string,
    body: unknown,
    grantor: MockGrantor | null,
    now: number,
    workspaceId: number | null = null,
  ): ApiKeyCreated {
    const input = readInput(body, now);
    const missing = grantor === null ? [] : input.scopes.filter((s) => !grantor.scopes.includes(s));
    if (missing.length > 0) {
      throw new ApiError(
        'insufficient_scope',
        `This API key lacks the scope ${missing.join(', ')}, so it cannot grant it.`,
        {
          scopes: missing,
        },
      );
    }
    const expiry = childKeyExpiry(
      input.expiresAt === null ? null : Date.parse(input.expiresAt),
      grantor?.expiresAt ? Date.parse(grantor.expiresAt) : null,
    );
    if ('problem' in expiry) throw validationFailed({ expires_at: [expiry.problem] });
    if ([...this.keys.values()].filter((k) => k.email === email).length >= MAX_KEYS_PER_USER) {
      throw validationFailed({ api_key: [`an account holds at most ${MAX_KEYS_PER_USER} keys; revoke one first`] });
    }
    const key: StoredKey = {
      id: globalThis.crypto.randomUUID(),
      name: input.name,
      scopes: input.scopes,
      created_at: new Date(now).toISOString(),
      expires_at: expiry.at === null ? null : new Date(expiry.at).toISOString(),
      last_used_at: null,
      workspace_id: workspaceId,
      email,
      token: newApiKeyTokenFrom(randomBytes),
      parentId: grantor?.id ?? null,
    };
    this.keys.set(key.id, key);
    return { ...record(key), token: key.token };
  }

  /** The user's personal keys, or with `workspaceId` that workspace's (whoever made them), newest first. */
  list(email: string, workspaceId: number | null = null): ApiKey[] {
    return [...this.keys.values()]
      .filter((k) =>
        workspaceId === null ? k.email === email && k.workspace_id === null : k.workspace_id === workspaceId,
      )
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .map(record);
  }

  /** The workspace the key `id` acts for (null: personal); 404 for an id no key has. */
  workspaceOf(id: string): number | null {
    const key = this.keys.get(id);
    if (!key) throw new ApiError('not_found', 'No API key of yours has this id.');
    return key.workspace_id;
  }

  /** One of the user's personal keys, or with `workspaceId` one of that workspace's keys. */
  revoke(email: string, id: string, workspaceId: number | null = null): ApiKey {
    const key = this.keys.get(id);
    const yours =
      workspaceId === null ? key?.email === email && key.workspace_id === null : key?.workspace_id === workspaceId;
    if (!key || !yours) throw new ApiError('not_found', 'No API key of yours has this id.');
    this.keys.delete(id);
    // The keys it made go with it, and theirs (a workspace's key makes keys of its workspace only).
    for (const child of [...this.keys.values()].filter((k) => k.parentId === id))
      this.revoke(child.email, child.id, child.workspace_id);
    return record(key);
  }

  /** The key's user (email), scopes and grant; null for a malformed, unknown, revoked or expired key. */
  authenticate(token: string, now: number): { email: string; scopes: ApiKeyScope[]; grantor: MockGrantor } | null {
    if (!isWellFormedApiKey(token)) return null;
    const key = [...this.keys.values()].find((k) => k.token === token);
    if (!key || (key.expires_at !== null && Date.parse(key.expires_at) <= now)) return null;
    key.last_used_at = new Date(now).toISOString();
    return {
      email: key.email,
      scopes: key.scopes,
      grantor: { id: key.id, scopes: key.scopes, expiresAt: key.expires_at, workspaceId: key.workspace_id },
    };
  }

  /** A deleted workspace's (deleteWorkspace): they go with it. */
  dropWorkspace(workspaceId: number): void {
    for (const [id, item] of this.keys) if (item.workspace_id === workspaceId) this.keys.delete(id);
  }

  reset(): void {
    this.keys.clear();
  }
}
