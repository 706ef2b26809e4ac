/**
 * API keys on the real server and database, through the generated SDK: made, listed and revoked; the token's form,
 * its digest-only storage, expiry and revocation (401 invalid_token with RFC 6750's challenge), bad input (422),
 * granting only held scopes, other accounts' keys, the legacy pair, and the once-a-minute last use. Every answer is
 * checked against the contract, and no token reaches a log line.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createPush, listApiKeys, revokeApiKey } from '@secret-push/sdk/generated';
import { isWellFormedApiKey, type ApiKeyScope } from '@secret-push/rules';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

let api: RealApi;
let owner: { token: string; email: string; userId: string };
let other: { token: string; email: string; userId: string };
const secrets: string[] = [];

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('keys-owner@example.org');
  other = await api.user('keys-other@example.org');
  secrets.push(owner.token, other.token);
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  try {
    const leaked = api.logs.filter((line) => secrets.some((s) => line.includes(s)));
    expect(leaked).toEqual([]);
  } finally {
    await api?.stop();
  }
});

async function makeKey(
  token: string,
  scopes: ApiKeyScope[],
  extra: { name?: string; expires_at?: string | null } = {},
) {
  const made = expectData(
    await createApiKey({
      client: api.client,
      body: { api_key: { name: extra.name ?? 'a key', scopes, expires_at: extra.expires_at } },
      auth: bearer(token),
    }),
    201,
  );
  secrets.push(made.token);
  return made;
}

function pushWith(token: string) {
  return createPush({ client: api.client, body: { push: { payload: 'for a key' } }, auth: bearer(token) });
}

describe('API keys', () => {
  it('makes a key: 201 with its record and a token shown once, with prefix and checksum, stored as a digest only', async () => {
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const made = await makeKey(owner.token, ['pushes:read', 'pushes:create'], { name: 'CI', expires_at: expiresAt });
    expect(made).toMatchObject({
      name: 'CI',
      scopes: ['pushes:create', 'pushes:read'],
      expires_at: expiresAt,
      last_used_at: null,
    });
    expect(made.token).toMatch(/^spk_[A-Za-z0-9]{36}$/);
    expect(isWellFormedApiKey(made.token)).toBe(true);
    const rows = await api.db.query<Record<string, unknown>>('select * from api_keys where id = $1', [made.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.digest).toBe(createHash('sha256').update(made.token).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(made.token.slice(4));
    // The list never shows a token.
    const list = expectData(await listApiKeys({ client: api.client, auth: bearer(owner.token) }));
    expect(list.api_keys.map((k) => k.id)).toContain(made.id);
    expect(JSON.stringify(list)).not.toContain(made.token);
    expect(list.api_keys.every((k) => !('token' in k))).toBe(true);
  });

  it('a key works as a bearer token for its scopes, and a key with pushes:create only cannot list', async () => {
    const key = await makeKey(owner.token, ['pushes:create']);
    const created = expectData(await pushWith(key.token), 201);
    expect(created.url_token).toBeTruthy();
    const refused = await listApiKeys({ client: api.client, auth: bearer(key.token) });
    expectError(refused, 403, 'insufficient_scope');
    expect(refused.response!.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="api_keys:manage"',
    );
  });

  it('revokes at once: the next request answers 401 invalid_token with its challenge', async () => {
    const key = await makeKey(owner.token, ['pushes:create']);
    expectData(await pushWith(key.token), 201);
    const revoked = expectData(
      await revokeApiKey({ client: api.client, path: { id: key.id }, auth: bearer(owner.token) }),
    );
    expect(revoked.id).toBe(key.id);
    const after = await pushWith(key.token);
    expectError(after, 401, 'invalid_token');
    expect(after.response!.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expectError(
      await revokeApiKey({ client: api.client, path: { id: key.id }, auth: bearer(owner.token) }),
      404,
      'not_found',
    );
  });

  it('an expired key answers 401 invalid_token', async () => {
    const key = await makeKey(owner.token, ['pushes:create'], {
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expectData(await pushWith(key.token), 201);
    await api.db.query("update api_keys set expires_at = now() - interval '1 second' where id = $1", [key.id]);
    expectError(await pushWith(key.token), 401, 'invalid_token');
  });

  it('refuses a token whose checksum is wrong as invalid_token (a typo), and a key in the legacy pair', async () => {
    const key = await makeKey(owner.token, ['pushes:create']);
    const last = key.token.at(-1)!;
    const typo = key.token.slice(0, -1) + (last === 'a' ? 'b' : 'a');
    expect(isWellFormedApiKey(typo)).toBe(false);
    expectError(await pushWith(typo), 401, 'invalid_token');
    const legacy = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user-email': owner.email, 'x-user-token': key.token },
      body: JSON.stringify({ push: { payload: 'legacy pair' } }),
    });
    expect([legacy.status, legacy.body.code]).toEqual([401, 'invalid_token']);
  });

  it('answers 422 for a scope not in the list, an expiry in the past or too far, and a name too long', async () => {
    const bad = async (api_key: Record<string, unknown>) =>
      api.raw('/api/v2/api_keys', {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ api_key }),
      });
    const scope = await bad({ name: 'x', scopes: ['pushes:create', 'pushes:everything'] });
    expect([scope.status, scope.body.code]).toEqual([422, 'validation_failed']);
    expect(scope.body.error).toMatch(/^scopes: item 2 must be one of pushes:create/);
    const past = await bad({ name: 'x', scopes: ['pushes:read'], expires_at: '2020-01-01T00:00:00.000Z' });
    expect([past.status, past.body.errors]).toEqual([422, { expires_at: ['must be in the future'] }]);
    const far = await bad({
      name: 'x',
      scopes: ['pushes:read'],
      expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString(),
    });
    expect([far.status, far.body.errors]).toEqual([422, { expires_at: ['must be at most 366 days away'] }]);
    const long = await bad({ name: 'n'.repeat(101), scopes: ['pushes:read'] });
    expect([long.status, Object.keys(long.body.errors ?? {})]).toEqual([422, ['name']]);
    const none = await bad({ name: 'x', scopes: [] });
    expect([none.status, Object.keys(none.body.errors ?? {})]).toEqual([422, ['scopes']]);
    const envelope = await api.raw('/api/v2/api_keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect([envelope.status, envelope.body.code]).toEqual([400, 'bad_request']);
  });

  it('a key may grant only the scopes it holds', async () => {
    const manager = await makeKey(owner.token, ['api_keys:manage', 'pushes:create']);
    await makeKey(manager.token, ['pushes:create']);
    const refused = await createApiKey({
      client: api.client,
      body: { api_key: { name: 'wider', scopes: ['pushes:create', 'pushes:delete'] } },
      auth: bearer(manager.token),
    });
    expectError(refused, 403, 'insufficient_scope');
    expect(refused.error!.error).toContain('pushes:delete');
  });

  it('a key makes only keys that expire no later than itself (its expiry by default; later → 422)', async () => {
    const parentExpiry = new Date(Date.now() + 40_000);
    const parent = await makeKey(owner.token, ['api_keys:manage', 'pushes:create'], {
      expires_at: parentExpiry.toISOString(),
    });
    // No expiry asked: the child takes its parent's, never "until revoked".
    const child = await makeKey(parent.token, ['api_keys:manage', 'pushes:create']);
    expect(child.expires_at).toBe(parentExpiry.toISOString());
    const later = await createApiKey({
      client: api.client,
      body: {
        api_key: {
          name: 'outlives',
          scopes: ['pushes:create'],
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        },
      },
      auth: bearer(parent.token),
    });
    expectError(later, 422, 'validation_failed');
    expect(later.error!.errors).toEqual({
      expires_at: [`must be no later than ${parentExpiry.toISOString()}, when the API key that makes it expires`],
    });
    const sooner = new Date(Date.now() + 20_000).toISOString();
    expect((await makeKey(parent.token, ['pushes:create'], { expires_at: sooner })).expires_at).toBe(sooner);
    // The account token is not bound: its keys may live until revoked.
    expect((await makeKey(owner.token, ['pushes:create'])).expires_at).toBeNull();
    // Once the parent's time is past, the child has stopped too (the same instant).
    await api.db.query("update api_keys set expires_at = now() - interval '1 second' where id = $1", [parent.id]);
    await api.db.query(
      'update api_keys set expires_at = (select expires_at from api_keys where id = $1) where id = $2',
      [parent.id, child.id],
    );
    expectError(await pushWith(child.token), 401, 'invalid_token');
  });

  it("revoking a key revokes the keys it made, and theirs; the account's other keys keep working", async () => {
    const parent = await makeKey(owner.token, ['api_keys:manage', 'pushes:create']);
    const child = await makeKey(parent.token, ['api_keys:manage', 'pushes:create']);
    const grandchild = await makeKey(child.token, ['pushes:create']);
    const sibling = await makeKey(owner.token, ['pushes:create']);
    for (const k of [parent, child, grandchild, sibling]) expectData(await pushWith(k.token), 201);
    expectData(await revokeApiKey({ client: api.client, path: { id: parent.id }, auth: bearer(owner.token) }));
    for (const k of [parent, child, grandchild]) expectError(await pushWith(k.token), 401, 'invalid_token');
    expectData(await pushWith(sibling.token), 201);
    const list = expectData(await listApiKeys({ client: api.client, auth: bearer(owner.token) }));
    const ids = list.api_keys.map((k) => k.id);
    expect(ids).toContain(sibling.id);
    for (const k of [parent, child, grandchild]) expect(ids).not.toContain(k.id);
  });

  it('a key revoked while its request is in flight makes no key (401)', async () => {
    const parent = await makeKey(owner.token, ['api_keys:manage', 'pushes:create']);
    // The parent is gone between authentication and the insert: what the guarded INSERT is for.
    const made = await api.core.users.keys
      .create(
        owner.userId,
        { name: 'orphan', scopes: ['pushes:create'] },
        {
          id: parent.id,
          expiresAt: null,
          workspaceId: null,
          scopes: ['api_keys:manage', 'pushes:create'],
        },
      )
      .then(() => 'made');
    expect(made).toBe('made');
    await api.db.query('delete from api_keys where id = $1', [parent.id]);
    await expect(
      api.core.users.keys.create(
        owner.userId,
        { name: 'orphan', scopes: ['pushes:create'] },
        {
          id: parent.id,
          expiresAt: null,
          workspaceId: null,
          scopes: ['api_keys:manage', 'pushes:create'],
        },
      ),
    ).rejects.toMatchObject({ code: 'invalid_token' });
    const [row] = await api.db.query<{ n: string }>("select count(*) as n from api_keys where name = 'orphan'");
    expect(Number(row!.n)).toBe(0);
  });

  it("keeps accounts apart: another account's key is not listed and cannot be revoked (404)", async () => {
    const mine = await makeKey(owner.token, ['pushes:read']);
    const theirs = expectData(await listApiKeys({ client: api.client, auth: bearer(other.token) }));
    expect(theirs.api_keys.map((k) => k.id)).not.toContain(mine.id);
    expectError(
      await revokeApiKey({ client: api.client, path: { id: mine.id }, auth: bearer(other.token) }),
      404,
      'not_found',
    );
    expectError(await listApiKeys({ client: api.client }), 401, 'authentication_required');
  });

  it('writes last_used_at at most once a minute per key', async () => {
    const key = await makeKey(owner.token, ['pushes:create']);
    expectData(await pushWith(key.token), 201);
    const read = async () => {
      // The write is not awaited by the request: wait for it.
      for (let i = 0; i < 50; i++) {
        const [row] = await api.db.query<{ last_used_at: string | null }>(
          'select last_used_at from api_keys where id = $1',
          [key.id],
        );
        if (row?.last_used_at) return String(row.last_used_at);
        await new Promise((r) => setTimeout(r, 20));
      }
      return null;
    };
    const first = await read();
    expect(first).not.toBeNull();
    await api.db.query("update api_keys set last_used_at = '2026-01-01T00:00:00Z' where id = $1", [key.id]);
    for (let i = 0; i < 5; i++) expectData(await pushWith(key.token), 201);
    await new Promise((r) => setTimeout(r, 100));
    const [row] = await api.db.query<{ last_used_at: Date }>('select last_used_at from api_keys where id = $1', [
      key.id,
    ]);
    // No request of the same minute wrote it again.
    expect(new Date(row!.last_used_at).toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('reports the feature in the version report', async () => {
    const version = await api.raw('/api/v2/version');
    expect(version.body.features.api_keys).toEqual({
      enabled: true,
      scopes: [
        'pushes:create',
        'pushes:read',
        'pushes:delete',
        'pushes:notify',
        'requests:write',
        'requests:read',
        'webhooks:manage',
        'api_keys:manage',
        'workspaces:read',
        'workspaces:manage',
      ],
    });
  });
});
