/**
 * API keys with scopes: made, listed without their tokens, revoked at once, held to the scope each operation
 * declares (403 insufficient_scope with RFC 6750's challenge), and an unknown scope refused. Gated on the version
 * report's `features.api_keys` (servers without keys, such as the reference, skip the class). Every key the class
 * makes is revoked before it ends.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Caller, type Ctx, type Res } from '../context.js';

const KEY_TOKEN = /^spk_[A-Za-z0-9]{36}$/;

async function makeKey(
  ctx: Ctx,
  scopes: string[],
  extra: { expires_at?: string; as?: Caller } = {},
): Promise<{ id: string; token: string; expires_at: string | null }> {
  const res = await ctx.call('createApiKey', {
    body: { api_key: { name: unique('conformance key'), scopes, expires_at: extra.expires_at } },
    as: extra.as ?? 'a',
  });
  expectStatus(res, 201);
  return res.body as { id: string; token: string; expires_at: string | null };
}

async function revoke(ctx: Ctx, id: string): Promise<Res> {
  return ctx.call('revokeApiKey', { params: { id }, as: 'a' });
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

export const apiKeys = define('KEY', [
  {
    id: 'KEY-001',
    title: 'createApiKey answers 201 with the key and its spk_ token once; listApiKeys lists it without any token',
    source: 'spec: paths/api-keys (createApiKey, listApiKeys); spec: schemas/ApiKeyCreated',
    needs: ['token', 'apiKeys'],
    async run(ctx) {
      const key = await makeKey(ctx, ['pushes:read', 'pushes:create']);
      try {
        expect(KEY_TOKEN.test(key.token), `the token ${JSON.stringify(key.token.slice(0, 4))}… has not the spk_ form`);
        const list = await ctx.call('listApiKeys', { as: 'a' });
        expectStatus(list, 200);
        const listed = (list.body.api_keys as { id: string; scopes: string[] }[]).find((k) => k.id === key.id);
        expect(listed, 'the new key is not listed');
        expectEqual(listed.scopes, ['pushes:create', 'pushes:read'], 'scopes of the listed key');
        expect(!list.text.includes(key.token), 'listApiKeys shows a token');
      } finally {
        await revoke(ctx, key.id);
      }
    },
  },
  {
    id: 'KEY-002',
    title: 'A key with only pushes:create creates, and gets 403 insufficient_scope with its challenge on a list',
    source: 'spec: security of createPush and listActivePushes; RFC 6750 §3.1',
    needs: ['token', 'apiKeys'],
    async run(ctx) {
      const key = await makeKey(ctx, ['pushes:create']);
      try {
        const created = await ctx.call('createPush', {
          body: { push: { payload: unique('key push') } },
          as: bearer(key.token),
        });
        expectStatus(created, 201);
        const listed = await ctx.call('listActivePushes', { as: bearer(key.token) });
        expectStatus(listed, 403);
        expectCode(listed, 'insufficient_scope');
        expect(
          String(listed.body.error).includes('pushes:read'),
          `the error does not name pushes:read: ${listed.body.error}`,
        );
        expectEqual(
          listed.headers.get('www-authenticate'),
          'Bearer error="insufficient_scope", scope="pushes:read"',
          'WWW-Authenticate',
        );
      } finally {
        await revoke(ctx, key.id);
      }
    },
  },
  {
    id: 'KEY-003',
    title: 'A revoked key answers 401 invalid_token at once, with WWW-Authenticate: Bearer error="invalid_token"',
    source: 'spec: paths/api-keys-{id} (revokeApiKey); spec: headers/WwwAuthenticate',
    needs: ['token', 'apiKeys'],
    async run(ctx) {
      const key = await makeKey(ctx, ['pushes:create']);
      expectStatus(await revoke(ctx, key.id), 200);
      const after = await ctx.call('createPush', {
        body: { push: { payload: unique('revoked') } },
        as: bearer(key.token),
      });
      expectStatus(after, 401);
      expectCode(after, 'invalid_token');
      expectEqual(after.headers.get('www-authenticate'), 'Bearer error="invalid_token"', 'WWW-Authenticate');
      expectStatus(await revoke(ctx, key.id), 404);
    },
  },
  {
    id: 'KEY-004',
    title: 'A scope that is not in the list answers 422 and makes no key',
    source: 'spec: schemas/ApiKeyScope; spec: paths/api-keys (422)',
    needs: ['token', 'apiKeys'],
    async run(ctx) {
      const name = unique('bad scope');
      const res = await ctx.call('createApiKey', {
        body: { api_key: { name, scopes: ['pushes:create', 'pushes:everything'] } },
        as: 'a',
      });
      expectStatus(res, 422);
      expectCode(res, 'validation_failed');
      const list = await ctx.call('listApiKeys', { as: 'a' });
      expectStatus(list, 200);
      expect(!list.text.includes(name), 'a key was made anyway');
    },
  },
  {
    id: 'KEY-005',
    title: "Another user's key cannot be revoked (404) and is not in their list",
    source: 'spec: paths/api-keys-{id} (404)',
    needs: ['token', 'tokenB', 'apiKeys'],
    async run(ctx) {
      const key = await makeKey(ctx, ['pushes:read']);
      try {
        expectStatus(await ctx.call('revokeApiKey', { params: { id: key.id }, as: 'b' }), 404);
        const theirs = await ctx.call('listApiKeys', { as: 'b' });
        expectStatus(theirs, 200);
        expect(!theirs.text.includes(key.id), "another user's key is listed");
      } finally {
        await revoke(ctx, key.id);
      }
    },
  },
  {
    id: 'KEY-006',
    title:
      'A key made by a key expires no later than it (its expiry by default, a later one 422) and is revoked with it',
    source: 'spec: paths/api-keys (createApiKey), paths/api-keys-{id} (revokeApiKey); issue 45',
    needs: ['token', 'apiKeys'],
    async run(ctx) {
      const expiry = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000).toISOString();
      const parent = await makeKey(ctx, ['api_keys:manage', 'pushes:create'], { expires_at: expiry });
      try {
        const child = await makeKey(ctx, ['pushes:create'], { as: bearer(parent.token) });
        expectEqual(child.expires_at, expiry, "the child's expires_at (its maker's, when none is asked)");
        const later = await ctx.call('createApiKey', {
          body: {
            api_key: {
              name: unique('outlives its maker'),
              scopes: ['pushes:create'],
              expires_at: new Date(Date.parse(expiry) + 86_400_000).toISOString(),
            },
          },
          as: bearer(parent.token),
        });
        expectStatus(later, 422);
        expectCode(later, 'validation_failed');
        expectStatus(await revoke(ctx, parent.id), 200);
        const after = await ctx.call('createPush', {
          body: { push: { payload: unique('child of a revoked key') } },
          as: bearer(child.token),
        });
        expectStatus(after, 401);
        expectCode(after, 'invalid_token');
      } finally {
        await revoke(ctx, parent.id);
      }
    },
  },
]);
