/**
 * API keys in the stateful mock, through the SDK facade, every answer checked against the contract: made, listed,
 * revoked, held to each operation's scope (the contract's, compared operation by operation) with the server's 403
 * and challenge, and 401 once revoked or with a typo.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@secret-push/contract';
import { isWellFormedApiKey } from '@secret-push/rules';
import { AuthenticationError, createSecretPushClient, ForbiddenError, ValidationError } from '../../src/index.js';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { mockOperationScopes } from '../../src/mocks/server.js';
import { specCheckingFetch } from '../support/spec-fetch.js';

const server = setupServer();
const checker = specCheckingFetch();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

function start() {
  const baseUrl = 'http://mock-keys.test';
  const mock = createMockServerHandlers({ baseUrl });
  server.use(...mock.handlers);
  const account = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
  const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
  return { mock, account, as };
}

describe('stateful mock: API keys', () => {
  it("declares for each operation the contract's scope", () => {
    const c = contract();
    const expected = Object.fromEntries(c.operations().map((op) => [op.operationId, c.scopes(op.operationId)[0]]));
    expect(mockOperationScopes()).toEqual(expected);
  });

  it('makes, lists and revokes keys; a key is held to its scopes', async () => {
    const { account, as } = start();
    const made = await account.createApiKey({ name: 'CI', scopes: ['pushes:create'] });
    expect(isWellFormedApiKey(made.token)).toBe(true);
    expect(made).toMatchObject({ name: 'CI', scopes: ['pushes:create'], expires_at: null });
    expect((await account.listApiKeys()).map((k) => k.id)).toEqual([made.id]);

    const ci = as(made.token);
    await ci.createPush({ payload: 'from CI' });
    const refused = await ci.activePushes.page(1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect((refused as ForbiddenError).code).toBe('insufficient_scope');
    expect((refused as ForbiddenError).headers?.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="pushes:read"',
    );

    await account.revokeApiKey(made.id);
    expect(await account.listApiKeys()).toEqual([]);
    expect(await ci.createPush({ payload: 'after revoke' }).catch((e: unknown) => e)).toBeInstanceOf(
      AuthenticationError,
    );
  });

  it('refuses an unknown scope (422), a wider grant (403) and a typo (401)', async () => {
    const { account, as } = start();
    const bad = await account
      .createApiKey({ name: 'x', scopes: ['pushes:everything' as 'pushes:read'] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    const manager = await account.createApiKey({ name: 'manager', scopes: ['api_keys:manage'] });
    const wider = await as(manager.token)
      .createApiKey({ name: 'wider', scopes: ['pushes:delete'] })
      .catch((e: unknown) => e);
    expect((wider as ForbiddenError).code).toBe('insufficient_scope');
    const typo = manager.token.slice(0, -1) + (manager.token.endsWith('a') ? 'b' : 'a');
    expect(
      await as(typo)
        .listApiKeys()
        .catch((e: unknown) => e),
    ).toBeInstanceOf(AuthenticationError);
  });

  it('a key makes keys that expire no later than itself and are revoked with it', async () => {
    const { account, as } = start();
    const expiry = new Date(Date.now() + 3_600_000).toISOString();
    const parent = await account.createApiKey({
      name: 'parent',
      scopes: ['api_keys:manage', 'pushes:create'],
      expires_at: expiry,
    });
    const child = await as(parent.token).createApiKey({ name: 'child', scopes: ['api_keys:manage', 'pushes:create'] });
    expect(child.expires_at).toBe(expiry);
    const later = await as(parent.token)
      .createApiKey({
        name: 'later',
        scopes: ['pushes:create'],
        expires_at: new Date(Date.now() + 7_200_000).toISOString(),
      })
      .catch((e: unknown) => e);
    expect(later).toBeInstanceOf(ValidationError);
    expect((later as ValidationError).errors).toEqual({
      expires_at: [`must be no later than ${expiry}, when the API key that makes it expires`],
    });
    const grandchild = await as(child.token).createApiKey({ name: 'grandchild', scopes: ['pushes:create'] });
    await account.revokeApiKey(parent.id);
    for (const k of [parent, child, grandchild])
      expect(
        await as(k.token)
          .createPush({ payload: 'x' })
          .catch((e: unknown) => e),
      ).toBeInstanceOf(AuthenticationError);
    expect(await account.listApiKeys()).toEqual([]);
  });
});
