/**
 * The web pages over plain HTTP (no script runs): headers, CSRF, sign-in limits, sign-up setting, redirects, the API
 * docs and the contract, and that fetching a recipient page any number of times consumes nothing.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/config/settings.js';
import { createCore } from '../../src/core.js';
import { createMigratedDatabase, makeSettings } from '../support/db.js';
import { listen, startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'correct horse battery staple';
let app: WebApp;

beforeAll(async () => {
  app = await startWeb({ trustProxy: true });
});

afterAll(async () => {
  await app?.stop();
});

function expectPageHeaders(response: Response, docs = false): void {
  const csp = response.headers.get('content-security-policy') ?? '';
  for (const directive of [
    "default-src 'self'",
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ]) {
    expect(csp, `CSP of ${response.url}`).toContain(directive);
  }
  expect(csp).not.toContain('unsafe-eval');
  expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
  if (!docs) expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toMatch(/https?:/);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('x-robots-tag')).toContain('noindex');
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
}

async function makePush(views = 3, extra: Record<string, unknown> = {}) {
  return app.core.pushes.create(
    { kind: 'text', payload: `s3cr3t-${Math.random().toString(36).slice(2)}`, expire_after_views: views, ...extra },
    { actor: { userId: null, ip: '127.0.0.1', userAgent: 'test', referrer: '' }, baseUrl: app.baseUrl },
  );
}

describe('page headers', () => {
  it('sends the strict CSP, no-store, no-referrer and noindex on every page, and a noindex meta tag', async () => {
    const push = await makePush();
    const anon = new Visitor(app.baseUrl);
    for (const p of [
      '/',
      '/users/sign_in',
      '/users/sign_up',
      `/p/${push.url_token}`,
      `/p/${push.url_token}/r`,
      '/p/no-such-token',
    ]) {
      const { response, html } = await anon.page(p);
      expectPageHeaders(response);
      expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    }
    const docs = await anon.page('/help/api');
    expectPageHeaders(docs.response, true);

    const owner = new Visitor(app.baseUrl);
    expect((await owner.signUp('headers@example.org', PASSWORD)).status).toBe(303);
    for (const p of ['/', '/users/token', '/pushes/active', '/pushes/expired']) {
      const { response } = await owner.page(p);
      expect(response.status, p).toBe(200);
      expectPageHeaders(response);
    }
  });

  it("refuses a guessable password on sign-up with zxcvbn's reason on the page, and keeps the length rule", async () => {
    const visitor = new Visitor(app.baseUrl);
    const { html: form } = await visitor.page('/users/sign_up');
    expect(form).toContain('minlength="12"');
    expect(form).toContain('At least 12 characters, and not easy to guess');
    const weak = await visitor.signUp('guessable@example.org', 'password1234');
    expect(weak.status).toBe(422);
    const page = await weak.text();
    expect(page).toContain(
      'is too easy to guess: This is similar to a commonly used password. Add more words that are less common.',
    );
    expect(page).not.toContain('password1234');
    const short = await visitor.signUp('guessable@example.org', 'Xk9#mQ2!zL4');
    expect(short.status).toBe(422);
    expect(await short.text()).toContain('must be at least 12 characters');
    // Nothing was made: the same email then signs up with a strong password.
    expect((await visitor.signUp('guessable@example.org', PASSWORD)).status).toBe(303);
  });

  it('sets the session cookie HttpOnly and SameSite=Lax, and Secure when the base URL is https', async () => {
    const visitor = new Visitor(app.baseUrl);
    const { csrf } = await visitor.page('/users/sign_up');
    const response = await visitor.post('/users/sign_up', {
      _csrf: csrf,
      email: 'cookie@example.org',
      password: PASSWORD,
    });
    const session = response.headers.getSetCookie().find((c) => c.startsWith('sp_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).not.toMatch(/Secure/i);

    const https = await startWeb({ publicBaseUrl: 'https://push.example.org' }, { db: app.db });
    try {
      const v = new Visitor(https.baseUrl);
      const page = await v.page('/users/sign_in');
      expect(page.response.headers.getSetCookie().join('\n')).toMatch(/sp_csrf=[^;]+;.*Secure/i);
      const signIn = await v.fetch('/users/sign_in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://push.example.org' },
        body: new URLSearchParams({ _csrf: page.csrf, email: 'cookie@example.org', password: PASSWORD }).toString(),
      });
      expect(signIn.status).toBe(303);
      expect(signIn.headers.getSetCookie().find((c) => c.startsWith('sp_session='))).toMatch(/Secure/);
    } finally {
      await https.stop();
    }
  });
});

describe('CSRF', () => {
  it('answers 403 to a form post without a token, with a wrong token, or from another origin', async () => {
    const visitor = new Visitor(app.baseUrl);
    await visitor.signUp('csrf@example.org', PASSWORD);
    const { csrf } = await visitor.page('/');
    const before = await app.db.query<{ n: string }>('select count(*) as n from pushes');
    const fields = { kind: 'text', payload: 'csrf-secret', expire_after_days: '1', expire_after_views: '1' };

    expect((await visitor.post('/', fields)).status).toBe(403);
    expect((await visitor.post('/', { ...fields, _csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await visitor.post('/', { ...fields, _csrf: csrf }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await visitor.post('/', { ...fields, _csrf: csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // A token made for another visitor (another CSRF cookie) does not count either.
    const stranger = new Visitor(app.baseUrl);
    const strangerToken = (await stranger.page('/')).csrf;
    expect((await visitor.post('/', { ...fields, _csrf: strangerToken })).status).toBe(403);
    expect((await visitor.post('/users/sign_out', {})).status).toBe(403);
    expect((await visitor.post('/users/token', { _csrf: 'nope' })).status).toBe(403);

    const after = await app.db.query<{ n: string }>('select count(*) as n from pushes');
    expect(after[0]!.n).toBe(before[0]!.n);
    // The right token from the same page works.
    const ok = await visitor.post('/', { ...fields, _csrf: csrf });
    expect(ok.status).toBe(201);
  });

  it('rejects a sign-in form posted without the CSRF cookie', async () => {
    const visitor = new Visitor(app.baseUrl);
    const { csrf } = await visitor.page('/users/sign_in');
    visitor.cookies.clear();
    expect(
      (await visitor.post('/users/sign_in', { _csrf: csrf, email: 'x@example.org', password: PASSWORD })).status,
    ).toBe(403);
  });
});

describe('sign-in', () => {
  it('limits failed sign-ins per email to 5 in 15 minutes with a clear 429, even for the right password', async () => {
    const owner = new Visitor(app.baseUrl, { 'x-forwarded-for': '198.51.100.1' });
    await owner.signUp('limited@example.org', PASSWORD);
    for (let i = 0; i < 5; i += 1) {
      const attacker = new Visitor(app.baseUrl, { 'x-forwarded-for': `203.0.113.${i + 1}` });
      const r = await attacker.signIn('limited@example.org', 'wrong password!');
      expect(r.status).toBe(401);
      expect(await r.text()).toContain('do not match an account');
    }
    const blocked = await new Visitor(app.baseUrl, { 'x-forwarded-for': '203.0.113.99' }).signIn(
      'limited@example.org',
      PASSWORD,
    );
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await blocked.text()).toContain('Too many failed sign-ins');
    expect(blocked.headers.getSetCookie().some((c) => c.startsWith('sp_session='))).toBe(false);
  });

  it('limits failed sign-ins per client address, and the limit holds on another instance (it is in PostgreSQL)', async () => {
    const ip = { 'x-forwarded-for': '192.0.2.77' };
    for (let i = 0; i < 5; i += 1) {
      const r = await new Visitor(app.baseUrl, ip).signIn(`nobody${i}@example.org`, 'wrong password!');
      expect(r.status).toBe(401);
    }
    expect((await new Visitor(app.baseUrl, ip).signIn('someone-else@example.org', 'whatever')).status).toBe(429);

    // A second server process on the same database sees the same failures.
    const core2 = await createCore(makeSettings({ databaseUrl: app.db.url, trustProxy: true }), { poolMax: 2 });
    const served2 = await listen(core2, []);
    try {
      expect((await new Visitor(served2.baseUrl, ip).signIn('another@example.org', 'whatever')).status).toBe(429);
      expect(
        (
          await new Visitor(served2.baseUrl, { 'x-forwarded-for': '192.0.2.78' }).signIn(
            'another@example.org',
            'whatever',
          )
        ).status,
      ).toBe(401);
    } finally {
      await served2.close();
      await core2.close();
    }
  });

  it('sends a signed-out visitor to sign-in and back, and only to a path on this site', async () => {
    const visitor = new Visitor(app.baseUrl);
    await visitor.signUp('redirect@example.org', PASSWORD);
    await visitor.post('/users/sign_out', { _csrf: (await visitor.page('/')).csrf });
    for (const p of ['/users/token', '/pushes/active', '/pushes/expired?page=2']) {
      const r = await visitor.fetch(p);
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe(`/users/sign_in?next=${encodeURIComponent(p)}`);
    }
    const signIn = await visitor.page('/users/sign_in?next=%2Fusers%2Ftoken');
    expect(signIn.html).toContain('name="next" value="/users/token"');
    const back = await visitor.post('/users/sign_in', {
      _csrf: signIn.csrf,
      email: 'redirect@example.org',
      password: PASSWORD,
      next: '/users/token',
    });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/users/token');
    expect((await visitor.fetch('/users/token')).status).toBe(200);

    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const v = new Visitor(app.baseUrl);
      const r = await v.signIn('redirect@example.org', PASSWORD, evil);
      expect(r.status).toBe(303);
      expect(r.headers.get('location')).toBe('/');
    }
  });

  it('sign-out ends the session: the old cookie no longer signs anyone in', async () => {
    const visitor = new Visitor(app.baseUrl);
    await visitor.signUp('signout@example.org', PASSWORD);
    const stolen = visitor.cookies.get('sp_session')!;
    expect((await visitor.fetch('/users/token')).status).toBe(200);
    await visitor.post('/users/sign_out', { _csrf: (await visitor.page('/')).csrf });
    const replay = new Visitor(app.baseUrl);
    replay.cookies.set('sp_session', stolen);
    expect((await replay.fetch('/users/token')).status).toBe(302);
  });

  it('redirects /api_tokens to /users/token with 301', async () => {
    const r = await new Visitor(app.baseUrl).fetch('/api_tokens');
    expect(r.status).toBe(301);
    expect(r.headers.get('location')).toBe('/users/token');
  });
});

describe('sign-up setting', () => {
  it('with PWPUSH_ENABLE_SIGNUPS off, the sign-up page and form answer 403 and make no account', async () => {
    const closed = await startWeb({ enableSignups: false }, { db: app.db });
    try {
      const v = new Visitor(closed.baseUrl);
      const page = await v.page('/users/sign_up');
      expect(page.response.status).toBe(403);
      expect(page.html).toContain('does not take new sign-ups');
      const signIn = await v.page('/users/sign_in');
      expect(signIn.html).not.toContain('href="/users/sign_up"');
      const r = await v.post('/users/sign_up', { _csrf: signIn.csrf, email: 'closed@example.org', password: PASSWORD });
      expect(r.status).toBe(403);
      expect(await app.db.query(`select 1 from users where email = 'closed@example.org'`)).toHaveLength(0);
    } finally {
      await closed.stop();
    }
    // On by default: the shared app takes sign-ups.
    expect((await new Visitor(app.baseUrl).page('/users/sign_up')).response.status).toBe(200);
  });
});

describe('recipient pages consume nothing', () => {
  it('GETs of /p/{token} and /p/{token}/r, any number of times, leave views_remaining unchanged and write no audit', async () => {
    const push = await makePush(2);
    const plain = new Visitor(app.baseUrl, { 'user-agent': 'Slackbot-LinkExpanding 1.0' });
    for (let i = 0; i < 10; i += 1) {
      const a = await plain.fetch(`/p/${push.url_token}`);
      const b = await plain.fetch(`/p/${push.url_token}/r`);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      // The page never carries the secret: it is fetched by script, through the API.
      expect(await a.text()).not.toContain('s3cr3t-');
      expect(await b.text()).not.toContain('s3cr3t-');
    }
    const [row] = await app.db.query<{ views_used: number; expired: boolean }>(
      'select views_used, expired from pushes where url_token = $1',
      [push.url_token],
    );
    expect(row).toEqual({ views_used: 0, expired: false });
    const audit = await app.db.query<{ kind: string }>(
      'select a.kind from audit_entries a join pushes p on p.id = a.push_id where p.url_token = $1',
      [push.url_token],
    );
    expect(audit.map((a) => a.kind)).toEqual(['creation']);
    const state = await app.core.web!.pushState(push.url_token, {
      actor: { userId: null, ip: '', userAgent: '', referrer: '' },
      baseUrl: app.baseUrl,
    });
    expect(state?.views_remaining).toBe(2);
    // The access log names the route template, never the token.
    expect(app.logs.join('\n')).not.toContain(push.url_token);
    expect(app.logs.some((l) => l.includes('"/p/:url_token"'))).toBe(true);
  });

  it('shows the expired state for an expired push and 404 for an unknown token', async () => {
    const push = await makePush(1);
    await app.core.pushes.expire(push.url_token, {
      actor: { userId: null, ip: '', userAgent: '', referrer: '' },
      baseUrl: app.baseUrl,
    });
    const v = new Visitor(app.baseUrl);
    const expired = await v.page(`/p/${push.url_token}`);
    expect(expired.response.status).toBe(200);
    expect(expired.html).toContain('This secret has expired or was deleted');
    expect(expired.html).not.toContain('recipient.js');
    const unknown = await v.page('/p/does-not-exist');
    expect(unknown.response.status).toBe(404);
  });
});

describe('API documentation and the contract', () => {
  it('serves /help/api with every asset from this server and no external URL in the HTML', async () => {
    const { response, html } = await new Visitor(app.baseUrl).page('/help/api');
    expect(response.status).toBe(200);
    // The only absolute URL is the instance itself: the "try it" server and the introduction name it.
    expect(html.replaceAll(app.baseUrl, '')).not.toMatch(/https?:\/\//);
    expect(html).toContain('data-openapi-url="/api/v2/openapi.json"');
    expect(html).toContain(`data-server-url="${app.baseUrl}"`);
    // Styled: its own stylesheet (the header and footer; the reference brings its own styles).
    expect(html).toContain('<link rel="stylesheet" href="/assets/docs.css">');
    const css = await fetch(`${app.baseUrl}/assets/docs.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('header.site');
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toContain('/assets/vendor/scalar-api-reference.js');
    for (const src of scripts) {
      expect(src.startsWith('/assets/')).toBe(true);
      const r = await fetch(`${app.baseUrl}${src}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/javascript/);
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
  });

  it('names PWPUSH_PUBLIC_BASE_URL as the "try it" server when it is set', async () => {
    const db = await createMigratedDatabase('sp_docs');
    const core = await createCore(makeSettings({ databaseUrl: db.url, publicBaseUrl: 'https://secrets.example.org' }), {
      poolMax: 2,
    });
    const served = await listen(core, []);
    try {
      const { html } = await new Visitor(served.baseUrl).page('/help/api');
      expect(html).toContain('data-server-url="https://secrets.example.org"');
    } finally {
      await served.close();
      await core.close();
      await db.drop();
    }
  });

  it('serves the bundled spec at /api/v2/openapi.json, equal to openapi/bundled/openapi.json', async () => {
    const r = await fetch(`${app.baseUrl}/api/v2/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const bundled = JSON.parse(readFileSync(path.join(repoRoot, 'openapi', 'bundled', 'openapi.json'), 'utf8'));
    expect(await r.json()).toEqual(bundled);
  });

  it('leaves the API fallback alone: unknown API paths still answer JSON 404', async () => {
    const r = await fetch(`${app.baseUrl}/api/v2/nope`);
    expect(r.status).toBe(404);
    expect((await r.json()).code).toBe('no_route');
    expect((await fetch(`${app.baseUrl}/assets/../package.json`)).status).toBe(404);
  });
});
