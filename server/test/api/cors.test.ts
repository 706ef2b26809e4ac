/**
 * CORS over real HTTP (the browser's own view, in Chromium, is server/test/web/cross-origin.test.ts): preflights,
 * answers to listed and unlisted origins, the v1 `POST /p.json` exception, 429s, and pages and cookies that never
 * carry a CORS header. The policy is the contract's `x-cors`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, corsRules } from '@secret-push/contract';
import { startRealApi, type RealApi } from './support/real.js';
import { Visitor } from '../web/support.js';

const APP = 'http://app.localhost:3000';
const OTHER = 'http://evil.localhost:4000';
const rules = corsRules(contract().document);

function corsHeaders(response: Response): Record<string, string> {
  const found: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name.startsWith('access-control-')) found[name] = value;
  });
  return found;
}

const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe('CORS with listed origins', () => {
  let api: RealApi;
  let token: string;

  beforeAll(async () => {
    api = await startRealApi({ corsOrigins: [APP, 'https://second.example'], rateLimitPerMinute: 0 });
    token = (await api.user('cors@example.org')).token;
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('answers a preflight from a listed origin with 204, the contract methods and headers, a max-age, and no credentials', async () => {
    const response = await fetch(`${api.baseUrl}/api/v2/pushes`, {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,idempotency-key',
      },
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(list(response.headers.get('access-control-allow-methods'))).toEqual(['get', 'post', 'delete']);
    expect(list(response.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'x-passphrase',
        'idempotency-key',
        'x-user-email',
        'x-user-token',
      ]),
    );
    expect(response.headers.get('access-control-max-age')).toBe(String(rules.maxAgeSeconds));
    expect(list(response.headers.get('vary'))).toContain('origin');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets a listed origin create, list and retrieve, exposing the headers clients read', async () => {
    const create = await fetch(`${api.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: {
        origin: APP,
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify({ push: { payload: 'from another origin', passphrase: 'pw' } }),
    });
    expect(create.status).toBe(201);
    expect(create.headers.get('access-control-allow-origin')).toBe(APP);
    const exposed = list(create.headers.get('access-control-expose-headers'));
    for (const name of [
      'link',
      'x-total-count',
      'retry-after',
      'ratelimit',
      'ratelimit-policy',
      'location',
      'idempotent-replayed',
      'x-request-id',
    ]) {
      expect(exposed).toContain(name);
    }
    expect(create.headers.get('access-control-allow-credentials')).toBeNull();
    const { url_token } = (await create.json()) as { url_token: string };

    const active = await fetch(`${api.baseUrl}/api/v2/pushes/active.json`, {
      headers: { origin: APP, authorization: `Bearer ${token}` },
    });
    expect(active.status).toBe(200);
    expect(active.headers.get('access-control-allow-origin')).toBe(APP);
    expect(active.headers.get('x-total-count')).toBe('1');

    const retrieved = await fetch(`${api.baseUrl}/api/v2/pushes/${url_token}`, {
      headers: { origin: 'https://second.example', 'x-passphrase': 'pw' },
    });
    expect(retrieved.status).toBe(200);
    expect(retrieved.headers.get('access-control-allow-origin')).toBe('https://second.example');
    expect(((await retrieved.json()) as { payload: string }).payload).toBe('from another origin');
  });

  it('puts the headers on error answers too (401, 404, 405)', async () => {
    for (const [path, init, status] of [
      ['/api/v2/pushes/active', {}, 401],
      ['/api/v2/nowhere', {}, 404],
      ['/api/v2/pushes/active', { method: 'PUT' }, 405],
    ] as const) {
      const response = await fetch(`${api.baseUrl}${path}`, { ...init, headers: { origin: APP } });
      expect(response.status, path).toBe(status);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(APP);
      expect(list(response.headers.get('access-control-expose-headers'))).toContain('www-authenticate');
    }
  });

  it('gives an unlisted origin no CORS header at all, and still answers it (the browser is what blocks)', async () => {
    const preflight = await fetch(`${api.baseUrl}/api/v2/pushes`, {
      method: 'OPTIONS',
      headers: {
        origin: OTHER,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(405);
    expect(corsHeaders(preflight)).toEqual({});
    const version = await fetch(`${api.baseUrl}/api/v2/version`, { headers: { origin: OTHER } });
    expect(version.status).toBe(200);
    expect(corsHeaders(version)).toEqual({});
    // Answers differ by Origin on this instance: caches are told so.
    expect(list(version.headers.get('vary'))).toContain('origin');
    // A lookalike of a listed origin is another origin.
    for (const lookalike of [`${APP}/`, 'http://app.localhost:3001', 'https://app.localhost:3000', 'null']) {
      const response = await fetch(`${api.baseUrl}/api/v2/version`, { headers: { origin: lookalike } });
      expect(corsHeaders(response), lookalike).toEqual({});
    }
  });

  it('sends nothing to requests without Origin (servers, CLIs, same-origin GETs)', async () => {
    const response = await fetch(`${api.baseUrl}/api/v2/version`);
    expect(corsHeaders(response)).toEqual({});
    const options = await fetch(`${api.baseUrl}/api/v2/pushes`, { method: 'OPTIONS' });
    expect(options.status).toBe(405);
    expect(corsHeaders(options)).toEqual({});
  });

  it('never puts CORS headers on pages, assets or cookies, whatever the origin', async () => {
    const visitor = new Visitor(api.baseUrl, { origin: APP });
    for (const path of [
      '/',
      '/users/sign_in',
      '/users/sign_up',
      '/help/api',
      '/p/no-such-token',
      '/assets/style.css',
      '/healthz',
    ]) {
      const response = await visitor.fetch(path);
      expect(corsHeaders(response), path).toEqual({});
    }
    const preflight = await visitor.fetch('/users/sign_in', {
      method: 'OPTIONS',
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(corsHeaders(preflight)).toEqual({});
    // A sign-in that sets the session cookie: no CORS header, so no other origin can read or use the answer.
    const signedUp = await visitor.signUp('pages@example.org', 'correct horse battery staple');
    expect(corsHeaders(signedUp)).toEqual({});
    const returning = new Visitor(api.baseUrl, { origin: APP });
    const signedIn = await returning.signIn('pages@example.org', 'correct horse battery staple');
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.getSetCookie().length).toBeGreaterThan(0);
    expect(corsHeaders(signedIn)).toEqual({});
    const tokenPage = await returning.fetch('/users/token');
    expect(tokenPage.status).toBe(200);
    expect(corsHeaders(tokenPage)).toEqual({});
  });

  it('keeps v1 paths under the same policy, but POST /p.json answers * to any origin (as the reference)', async () => {
    const listed = await fetch(`${api.baseUrl}/p/active.json`, {
      headers: { origin: APP, authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP);
    const unlisted = await fetch(`${api.baseUrl}/api/v1/version.json`, { headers: { origin: OTHER } });
    expect(corsHeaders(unlisted)).toEqual({});

    const preflight = await fetch(`${api.baseUrl}/p.json`, {
      method: 'OPTIONS',
      headers: {
        origin: OTHER,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(preflight.headers.get('access-control-allow-headers'))).toContain('content-type');
    const created = await fetch(`${api.baseUrl}/p.json`, {
      method: 'POST',
      headers: { origin: OTHER, 'content-type': 'application/json' },
      body: JSON.stringify({ password: { payload: 'v1 from anywhere' } }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe('*');
    expect(created.headers.get('access-control-allow-credentials')).toBeNull();
    // Only the create: the v1 retrieval of that push follows the list.
    const { url_token } = (await created.json()) as { url_token: string };
    const retrieved = await fetch(`${api.baseUrl}/p/${url_token}.json`, { headers: { origin: OTHER } });
    expect(retrieved.status).toBe(200);
    expect(corsHeaders(retrieved)).toEqual({});
  });
});

describe('CORS and the per-client limit', () => {
  let api: RealApi;

  beforeAll(async () => {
    api = await startRealApi({ corsOrigins: [APP], rateLimitPerMinute: 3 });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('never counts preflights, and lets the browser read Retry-After on the 429', async () => {
    for (let i = 0; i < 10; i++) {
      const preflight = await fetch(`${api.baseUrl}/api/v2/version`, {
        method: 'OPTIONS',
        headers: { origin: APP, 'access-control-request-method': 'GET' },
      });
      expect(preflight.status).toBe(204);
    }
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${api.baseUrl}/api/v2/version`, { headers: { origin: APP } });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(limited!.headers.get('access-control-allow-origin')).toBe(APP);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(list(limited!.headers.get('access-control-expose-headers'))).toContain('retry-after');
  });
});

describe('CORS off (the default) and the v1 exception turned off', () => {
  let api: RealApi;

  beforeAll(async () => {
    api = await startRealApi({ corsOrigins: [], corsV1Create: false });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('sends no CORS header anywhere, answers preflights 405, and adds no Vary', async () => {
    const preflight = await fetch(`${api.baseUrl}/api/v2/pushes`, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(405);
    expect(corsHeaders(preflight)).toEqual({});
    const version = await fetch(`${api.baseUrl}/api/v2/version`, { headers: { origin: APP } });
    expect(corsHeaders(version)).toEqual({});
    expect(list(version.headers.get('vary'))).not.toContain('origin');
    const created = await fetch(`${api.baseUrl}/p.json`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json' },
      body: JSON.stringify({ password: { payload: 'v1' } }),
    });
    expect(created.status).toBe(201);
    expect(corsHeaders(created)).toEqual({});
  });
});
