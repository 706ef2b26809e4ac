/**
 * The token page's API keys, through real HTTP on the real app and database: a signed-in user lists, makes (name,
 * scopes, expiry) and revokes keys with CSRF-checked forms; the new key works against the API with its scopes only
 * and stops at once when revoked; bad form input is refused on the page with nothing made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'correct horse battery staple';
let app: WebApp;

beforeAll(async () => {
  app = await startWeb();
});

afterAll(async () => {
  await app?.stop();
});

function postForm(visitor: Visitor, pathname: string, pairs: [string, string][]) {
  return visitor.fetch(pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
    body: new URLSearchParams(pairs).toString(),
  });
}

function createPush(token: string) {
  return fetch(`${app.baseUrl}/api/v2/pushes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ push: { payload: 'from a page-made key' } }),
  });
}

describe('the token page: API keys', () => {
  it('makes a key with a name, scopes and expiry, shows its token once, lists it, and revokes it', async () => {
    const visitor = new Visitor(app.baseUrl);
    expect((await visitor.signUp('keys-page@example.org', PASSWORD)).status).toBe(303);
    const { html, csrf } = await visitor.page('/users/token');
    expect(html).toContain('You have no API keys.');
    for (const scope of ['pushes:create', 'pushes:read', 'api_keys:manage']) expect(html).toContain(`value="${scope}"`);

    const made = await postForm(visitor, '/users/token/keys', [
      ['_csrf', csrf],
      ['name', 'CI <pushes>'],
      ['scopes', 'pushes:create'],
      ['expires_in_days', '30'],
    ]);
    expect(made.status).toBe(200);
    const page = await made.text();
    const token = /id="api-key-token">(spk_[A-Za-z0-9]{36})</.exec(page)?.[1];
    expect(token).toBeDefined();
    // The name is escaped, the key listed with its scope.
    expect(page).toContain('CI &lt;pushes&gt;');
    expect(page).not.toContain('CI <pushes>');
    expect(page).toContain('<code>pushes:create</code>');

    // The key works for its scope, and only for it.
    expect((await createPush(token!)).status).toBe(201);
    const list = await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${token}` } });
    expect(list.status).toBe(403);

    // Listed again later without its token; expiry about 30 days away.
    const again = await visitor.page('/users/token');
    expect(again.html).not.toContain(token!);
    const [row] = await app.db.query<{ id: string; expires_at: Date }>('select id, expires_at from api_keys');
    const days = (new Date(row!.expires_at).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);

    // Revoke: the form, then 401 at once.
    const revoked = await postForm(visitor, `/users/token/keys/${row!.id}/revoke`, [['_csrf', again.csrf]]);
    expect([revoked.status, revoked.headers.get('location')]).toEqual([303, '/users/token']);
    expect((await createPush(token!)).status).toBe(401);
    expect((await visitor.page('/users/token')).html).toContain('You have no API keys.');
  });

  it('refuses bad input on the page (no scope, an unknown scope, no name, an odd expiry) and a form without CSRF', async () => {
    const visitor = new Visitor(app.baseUrl);
    await visitor.signUp('keys-bad@example.org', PASSWORD);
    const { csrf } = await visitor.page('/users/token');
    const cases: [[string, string][], string][] = [
      [
        [
          ['name', 'x'],
          ['expires_in_days', '30'],
        ],
        'Choose at least one scope.',
      ],
      [
        [
          ['name', 'x'],
          ['scopes', 'pushes:everything'],
          ['expires_in_days', '30'],
        ],
        'Choose scopes from the list.',
      ],
      [
        [
          ['name', ''],
          ['scopes', 'pushes:read'],
          ['expires_in_days', '30'],
        ],
        'Give the key a name of 1 to 100 characters.',
      ],
      [
        [
          ['name', 'x'],
          ['scopes', 'pushes:read'],
          ['expires_in_days', '9999'],
        ],
        'Choose when the key expires.',
      ],
    ];
    for (const [fields, message] of cases) {
      const answer = await postForm(visitor, '/users/token/keys', [['_csrf', csrf], ...fields]);
      expect(answer.status, message).toBe(422);
      expect(await answer.text()).toContain(message);
    }
    const forged = await postForm(visitor, '/users/token/keys', [
      ['name', 'x'],
      ['scopes', 'pushes:read'],
      ['expires_in_days', 'never'],
    ]);
    expect(forged.status).toBe(403);
    const user = await app.db.query<{ n: string }>(
      "select count(*) as n from api_keys k join users u on u.id = k.user_id where u.email = 'keys-bad@example.org'",
    );
    expect(user[0]!.n).toBe('0');
  });

  it("cannot revoke another account's key (404) and sends a signed-out visitor to sign in", async () => {
    const owner = await app.core.users.createUser('keys-owner2@example.org');
    const { key } = await app.core.users.keys.create(owner.userId, { name: 'mine', scopes: ['pushes:read'] }, null);
    const visitor = new Visitor(app.baseUrl);
    await visitor.signUp('keys-intruder@example.org', PASSWORD);
    const { csrf } = await visitor.page('/users/token');
    expect((await postForm(visitor, `/users/token/keys/${key.id}/revoke`, [['_csrf', csrf]])).status).toBe(404);
    expect(await app.core.users.keys.list(owner.userId)).toHaveLength(1);
    const anonymous = new Visitor(app.baseUrl);
    expect((await anonymous.fetch('/users/token')).status).toBe(302);
  });
});
