/**
 * The pages on a closed instance (PWPUSH_ALLOW_ANONYMOUS=false) and the recipient page's own JSON steps
 * (`POST /p/{token}/reveal`, `POST /p/{token}/delete`): signed-out visitors get a sign-in prompt that consumes
 * nothing; signed-in recipients reveal and delete as themselves, with the API's answers, limits and audit; the steps
 * are CSRF- and origin-checked and consume nothing when refused. Plain HTTP first, then headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { PushInput, RequestContext } from '../../src/core.js';
import { launchChromium, startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
let closed: WebApp;
let owner: { userId: string; token: string };
let counter = 0;

beforeAll(async () => {
  closed = await startWeb({ allowAnonymous: false, enableSignups: false });
  owner = await closed.core.users.createUser('owner@example.org', PASSWORD);
});

afterAll(async () => {
  await closed?.stop();
});

const ctxOf = (app: WebApp, userId: string | null): RequestContext => ({
  actor: { userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
  baseUrl: app.baseUrl,
});

async function makePush(app: WebApp, userId: string | null, extra: Partial<PushInput> = {}) {
  counter += 1;
  return app.core.pushes.create(
    { kind: 'text', payload: `closed-secret-${counter}`, expire_after_views: 3, ...extra },
    ctxOf(app, userId),
  );
}

async function row(app: WebApp, urlToken: string) {
  const [r] = await app.db.query<{ views_used: number; expired: boolean; deleted: boolean }>(
    'select views_used, expired, deleted from pushes where url_token = $1',
    [urlToken],
  );
  return r!;
}

async function auditOf(app: WebApp, urlToken: string) {
  return app.db.query<{ kind: string; user_id: string | null }>(
    'select a.kind, a.user_id from audit_entries a join pushes p on p.id = a.push_id where p.url_token = $1 order by a.id',
    [urlToken],
  );
}

/** A new user of the instance, signed in through the sign-in form, with the API token made for them. */
async function signedInUser(
  app: WebApp,
  email: string,
): Promise<{ visitor: Visitor; userId: string; apiToken: string }> {
  const made = await app.core.users.createUser(email, PASSWORD);
  const visitor = new Visitor(app.baseUrl);
  expect((await visitor.signIn(email, PASSWORD)).status).toBe(303);
  return { visitor, userId: made.userId, apiToken: made.token };
}

/** The CSRF token the recipient page gives its script (data-csrf), and how it reveals (data-reveal). */
async function recipientPage(visitor: Visitor, path: string) {
  const { response, html } = await visitor.page(path);
  return {
    status: response.status,
    html,
    csrf: /data-csrf="([^"]+)"/.exec(html)?.[1] ?? '',
    reveal: /data-reveal="([^"]+)"/.exec(html)?.[1] ?? '',
  };
}

function step(
  visitor: Visitor,
  urlToken: string,
  action: 'reveal' | 'delete',
  body: unknown,
  headers: Record<string, string> = {},
) {
  return visitor.fetch(`/p/${urlToken}/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: visitor.baseUrl, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function apiGet(app: WebApp, urlToken: string, apiToken: string, passphrase?: string) {
  return fetch(`${app.baseUrl}/api/v2/pushes/${urlToken}`, {
    headers: {
      authorization: `Bearer ${apiToken}`,
      ...(passphrase !== undefined ? { 'x-passphrase': passphrase } : {}),
    },
  });
}

/** An error body without its per-request id, to compare the page step's answer with the API's. */
const withoutRequestId = (body: Record<string, unknown>) => {
  const { request_id: _ignored, ...rest } = body;
  return rest;
};

describe('signed-out visitors of a closed instance', () => {
  it('see a sign-in prompt at /p/{token} and /p/{token}/r that links back to the link, and consume nothing', async () => {
    const push = await makePush(closed, owner.userId, { expire_after_views: 1 });
    const visitor = new Visitor(closed.baseUrl, { 'user-agent': 'Slackbot-LinkExpanding 1.0' });
    for (let i = 0; i < 5; i += 1) {
      for (const [path, next] of [
        [`/p/${push.url_token}`, `/p/${push.url_token}`],
        [`/p/${push.url_token}/r`, `/p/${push.url_token}/r`],
      ] as const) {
        const { response, html } = await visitor.page(path);
        expect(response.status, path).toBe(200);
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(html).toContain('This instance requires sign-in');
        expect(html).toContain(`href="/users/sign_in?next=${encodeURIComponent(next)}"`);
        // No script, no secret, no state of the push: the prompt is all a signed-out visitor gets.
        expect(html).not.toContain('recipient.js');
        expect(html).not.toContain('data-token');
        expect(html).not.toContain('closed-secret-');
        // Sign-up is closed on this instance: no link to it.
        expect(html).not.toContain('/users/sign_up');
      }
    }
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0, expired: false });
    expect((await auditOf(closed, push.url_token)).map((a) => a.kind)).toEqual(['creation']);

    // An unknown token gets the same prompt: a signed-out visitor cannot tell which tokens exist.
    const unknown = await visitor.page('/p/no-such-token-here');
    expect(unknown.response.status).toBe(200);
    expect(unknown.html).toContain('This instance requires sign-in');
  });

  it('come back to the link after signing in, and then get the page that reveals as them', async () => {
    const push = await makePush(closed, owner.userId, { retrieval_step: true });
    await closed.core.users.createUser('comes-back@example.org', PASSWORD);
    const visitor = new Visitor(closed.baseUrl);
    const prompt = await visitor.page(push.html_url.replace(closed.baseUrl, ''));
    const href = /id="sign-in-link" href="([^"]+)"/.exec(prompt.html)![1]!.replace(/&amp;/g, '&');
    const signIn = await visitor.page(href);
    expect(signIn.html).toContain(`name="next" value="/p/${push.url_token}/r"`);
    const back = await visitor.post('/users/sign_in', {
      _csrf: signIn.csrf,
      email: 'comes-back@example.org',
      password: PASSWORD,
      next: `/p/${push.url_token}/r`,
    });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`/p/${push.url_token}/r`);
    const page = await recipientPage(visitor, `/p/${push.url_token}/r`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Reveal the secret');
    expect(page.reveal).toBe('web');
    expect(page.csrf).not.toBe('');
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0 });
  });

  it('are sent to sign in from the create page, and cannot create a push there', async () => {
    const visitor = new Visitor(closed.baseUrl);
    const get = await visitor.fetch('/');
    expect(get.status).toBe(302);
    expect(get.headers.get('location')).toBe(`/users/sign_in?next=${encodeURIComponent('/')}`);
    const before = await closed.db.query<{ n: number }>('select count(*)::int as n from pushes');
    const { csrf } = await visitor.page('/users/sign_in');
    const post = await visitor.post('/', { _csrf: csrf, kind: 'text', payload: 'anonymous on a closed instance' });
    expect(post.status).toBe(302);
    expect(await closed.db.query<{ n: number }>('select count(*)::int as n from pushes')).toEqual(before);

    const { visitor: user } = await signedInUser(closed, 'creates@example.org');
    expect((await user.fetch('/')).status).toBe(200);
  });

  it('are refused by the reveal and delete steps with 401, even with a valid anonymous CSRF token, and nothing is consumed', async () => {
    const push = await makePush(closed, owner.userId, { deletable_by_viewer: true });
    const visitor = new Visitor(closed.baseUrl);
    const { csrf } = await visitor.page('/users/sign_in'); // the anonymous visitor's own, valid token
    expect(csrf).not.toBe('');
    for (const action of ['reveal', 'delete'] as const) {
      const r = await step(visitor, push.url_token, action, {}, { 'x-csrf-token': csrf });
      expect(r.status, action).toBe(401);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await r.json()).code).toBe('authentication_required');
    }
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0, expired: false, deleted: false });
    expect((await auditOf(closed, push.url_token)).map((a) => a.kind)).toEqual(['creation']);
  });
});

describe('the reveal step for a signed-in recipient of a closed instance', () => {
  it('reveals as the session user: the view counts, the audit says view with the user, and the page never held the secret', async () => {
    const { visitor, userId } = await signedInUser(closed, 'reveals@example.org');
    const push = await makePush(closed, owner.userId, { expire_after_views: 2 });
    const page = await recipientPage(visitor, `/p/${push.url_token}`);
    expect(page.reveal).toBe('web');
    expect(page.html).not.toContain('closed-secret-');
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0 });

    const r = await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': page.csrf });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const body = await r.json();
    expect(body).toMatchObject({
      url_token: push.url_token,
      payload: `closed-secret-${counter}`,
      views_remaining: 1,
      expired: false,
      files: [],
    });
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 1, expired: false });
    expect(await auditOf(closed, push.url_token)).toEqual([
      { kind: 'creation', user_id: owner.userId },
      { kind: 'view', user_id: userId },
    ]);

    // The last view expires it; after that the step answers the expired record, as the API does (failed_view).
    const last = await (await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': page.csrf })).json();
    expect(last).toMatchObject({ views_remaining: 0, expired: false });
    expect(last.payload).toMatch(/^closed-secret-/);
    const after = await (await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': page.csrf })).json();
    expect(after).toMatchObject({ expired: true, payload: null, files: [] });
    expect((await auditOf(closed, push.url_token)).map((a) => a.kind)).toEqual([
      'creation',
      'view',
      'view',
      'failed_view',
    ]);
    // The access log names the route template, never the token.
    expect(closed.logs.join('\n')).not.toContain(push.url_token);
    expect(closed.logs.some((l) => l.includes('"/p/:url_token/reveal"'))).toBe(true);
  });

  it("is the owner's own look (owner_view, not counted) when the owner reveals, with the API's body", async () => {
    const ownerVisitor = new Visitor(closed.baseUrl);
    expect((await ownerVisitor.signIn('owner@example.org', PASSWORD)).status).toBe(303);
    const push = await makePush(closed, owner.userId, { expire_after_views: 1 });
    const page = await recipientPage(ownerVisitor, `/p/${push.url_token}`);
    const web = await step(ownerVisitor, push.url_token, 'reveal', {}, { 'x-csrf-token': page.csrf });
    expect(web.status).toBe(200);
    const api = await apiGet(closed, push.url_token, owner.token);
    expect(api.status).toBe(200);
    expect(await web.json()).toEqual(await api.json());
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0, expired: false });
    expect((await auditOf(closed, push.url_token)).map((a) => a.kind)).toEqual([
      'creation',
      'owner_view',
      'owner_view',
    ]);
  });

  it('takes the passphrase in the JSON body and answers required, incorrect and the attempt limit exactly as the API does', async () => {
    const { visitor, apiToken } = await signedInUser(closed, 'passphrase@example.org');
    const push = await makePush(closed, owner.userId, { passphrase: 'open sesame', expire_after_views: 3 });
    const { csrf } = await recipientPage(visitor, `/p/${push.url_token}`);
    const reveal = (body: unknown) => step(visitor, push.url_token, 'reveal', body, { 'x-csrf-token': csrf });

    const missing = await reveal({});
    const missingApi = await apiGet(closed, push.url_token, apiToken);
    expect(missing.status).toBe(401);
    expect(missingApi.status).toBe(401);
    const missingBody = await missing.json();
    expect(missingBody.code).toBe('passphrase_required');
    expect(withoutRequestId(missingBody)).toEqual(withoutRequestId(await missingApi.json()));

    const wrong = await reveal({ passphrase: 'wrong guess' });
    const wrongApi = await apiGet(closed, push.url_token, apiToken, 'another wrong guess');
    expect(wrong.status).toBe(401);
    const wrongBody = await wrong.json();
    expect(wrongBody.code).toBe('passphrase_incorrect');
    expect(withoutRequestId(wrongBody)).toEqual(withoutRequestId(await wrongApi.json()));
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0 });

    expect((await reveal({ passphrase: 42 })).status).toBe(400);

    const right = await reveal({ passphrase: 'open sesame' });
    expect(right.status).toBe(200);
    expect((await right.json()).payload).toMatch(/^closed-secret-/);
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 1 });
    expect((await auditOf(closed, push.url_token)).map((a) => a.kind)).toEqual([
      'creation',
      'failed_passphrase',
      'failed_passphrase',
      'failed_passphrase',
      'failed_passphrase',
      'view',
    ]);

    // Failed attempts count across both paths (the limit lives in PostgreSQL): 4 so far, so the 5th is refused
    // with 401 and the 6th, through either path, with 429 and Retry-After.
    expect((await reveal({ passphrase: 'guess 5' })).status).toBe(401);
    const limited = await reveal({ passphrase: 'open sesame' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const limitedApi = await apiGet(closed, push.url_token, apiToken, 'open sesame');
    expect(limitedApi.status).toBe(429);
    const [limitedBody, limitedApiBody] = [await limited.json(), await limitedApi.json()];
    expect(limitedBody.code).toBe('too_many_attempts');
    expect(limitedApiBody.code).toBe('too_many_attempts');
    expect(limitedBody.error).toBe(limitedApiBody.error);
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 1 });
  });

  it('gives signed download links for a file push, like the API', async () => {
    const { visitor } = await signedInUser(closed, 'files@example.org');
    const bytes = Buffer.from('file bytes for a signed-in recipient\n');
    const push = await makePush(closed, owner.userId, {
      kind: 'file',
      payload: 'with a file',
      files: [{ filename: 'note.txt', content_type: 'text/plain', content: bytes.toString('base64') }],
    });
    const { csrf } = await recipientPage(visitor, `/p/${push.url_token}`);
    const body = await (await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': csrf })).json();
    expect(body.payload).toBe('with a file');
    expect(body.files).toHaveLength(1);
    expect(body.files[0]).toMatchObject({ filename: 'note.txt', content_type: 'text/plain', size: bytes.length });
    const download = await fetch(body.files[0].url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 1 });
  });

  it('answers 404 for an unknown token, as the API does', async () => {
    const { visitor } = await signedInUser(closed, 'unknown@example.org');
    const { csrf } = await visitor.page('/');
    const r = await step(visitor, 'no-such-token-here', 'reveal', {}, { 'x-csrf-token': csrf });
    expect(r.status).toBe(404);
    expect((await r.json()).code).toBe('not_found');
  });
});

describe('CSRF and origin on the recipient steps', () => {
  it('refuses a reveal or delete without the token, with a wrong or foreign token, cross-site, or not as JSON, and consumes nothing', async () => {
    const { visitor } = await signedInUser(closed, 'csrf-steps@example.org');
    const push = await makePush(closed, owner.userId, { deletable_by_viewer: true });
    const { csrf } = await recipientPage(visitor, `/p/${push.url_token}`);
    const stranger = await signedInUser(closed, 'csrf-stranger@example.org');
    const foreign = (await recipientPage(stranger.visitor, `/p/${push.url_token}`)).csrf;
    expect(foreign).not.toBe(csrf);

    const refused: [string, Record<string, string>][] = [
      ['no token', {}],
      ['empty token', { 'x-csrf-token': '' }],
      ['wrong token', { 'x-csrf-token': 'x'.repeat(43) }],
      ["another visitor's token", { 'x-csrf-token': foreign }],
      ['cross-site Origin', { 'x-csrf-token': csrf, origin: 'https://evil.example' }],
      ['Sec-Fetch-Site cross-site', { 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site', { 'x-csrf-token': csrf, 'sec-fetch-site': 'same-site' }],
    ];
    for (const action of ['reveal', 'delete'] as const) {
      for (const [what, headers] of refused) {
        const r = await step(visitor, push.url_token, action, {}, headers);
        expect(r.status, `${action}: ${what}`).toBe(403);
        expect((await r.json()).code).toBe('csrf_rejected');
      }
      // The token in a form field (a cross-site form post can send that) does not count: it must be the header.
      const form = await visitor.post(`/p/${push.url_token}/${action}`, { _csrf: csrf });
      expect(form.status, `${action}: form post`).toBe(403);
      // A valid token with a body that is not JSON (what a cross-site form could send) is refused too.
      const text = await visitor.fetch(`/p/${push.url_token}/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', origin: closed.baseUrl, 'x-csrf-token': csrf },
        body: '{}',
      });
      expect(text.status, `${action}: text/plain`).toBe(415);
    }
    // A GET of a step path is not a step: it changes nothing.
    await visitor.fetch(`/p/${push.url_token}/reveal`);
    await visitor.fetch(`/p/${push.url_token}/delete`);

    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0, expired: false, deleted: false });
    expect((await auditOf(closed, push.url_token)).map((a) => a.kind)).toEqual(['creation']);

    // The token of the visitor's own page works (and so the refusals above were about the checks, not the push).
    const ok = await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': csrf });
    expect(ok.status).toBe(200);
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 1 });
  });

  it('refuses a token issued before sign-in once the visitor has signed in (tokens are bound to the session)', async () => {
    await closed.core.users.createUser('rebound@example.org', PASSWORD);
    const push = await makePush(closed, owner.userId);
    const visitor = new Visitor(closed.baseUrl);
    const { csrf: anonymousToken } = await visitor.page('/users/sign_in');
    expect((await visitor.signIn('rebound@example.org', PASSWORD)).status).toBe(303);
    expect((await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': anonymousToken })).status).toBe(403);
    expect(await row(closed, push.url_token)).toMatchObject({ views_used: 0 });
  });
});

describe('the delete step', () => {
  it('deletes a deletable push as the signed-in viewer (audit expire), and refuses one that is not deletable with 403', async () => {
    const { visitor, userId } = await signedInUser(closed, 'deletes@example.org');
    const deletable = await makePush(closed, owner.userId, { deletable_by_viewer: true });
    const { csrf } = await recipientPage(visitor, `/p/${deletable.url_token}`);
    const r = await step(visitor, deletable.url_token, 'delete', {}, { 'x-csrf-token': csrf });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ url_token: deletable.url_token, expired: true, deleted: true });
    expect(await row(closed, deletable.url_token)).toMatchObject({ expired: true, deleted: true });
    expect(await auditOf(closed, deletable.url_token)).toEqual([
      { kind: 'creation', user_id: owner.userId },
      { kind: 'expire', user_id: userId },
    ]);

    const kept = await makePush(closed, owner.userId, { deletable_by_viewer: false });
    const refused = await step(visitor, kept.url_token, 'delete', {}, { 'x-csrf-token': csrf });
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe('forbidden');
    expect(await row(closed, kept.url_token)).toMatchObject({ expired: false, deleted: false });
  });
});

describe('on an open instance', () => {
  let open: WebApp;
  beforeAll(async () => {
    open = await startWeb({ allowAnonymous: true }, { db: closed.db });
  });
  afterAll(async () => {
    await open?.stop();
  });

  it('anonymous visitors get the page that reveals through the API, and the API path works', async () => {
    const push = await makePush(open, null);
    const page = await recipientPage(new Visitor(open.baseUrl), `/p/${push.url_token}`);
    expect(page.reveal).toBe('api');
    expect(page.html).not.toContain('data-csrf');
    const api = await fetch(`${open.baseUrl}/api/v2/pushes/${push.url_token}`);
    expect(api.status).toBe(200);
    expect(await row(open, push.url_token)).toMatchObject({ views_used: 1 });
  });

  it('the reveal step also works for an anonymous visitor with its own CSRF token (an anonymous view)', async () => {
    const push = await makePush(open, null);
    const visitor = new Visitor(open.baseUrl);
    const { csrf } = await visitor.page('/');
    expect((await step(visitor, push.url_token, 'reveal', {}, {})).status).toBe(403);
    const r = await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': csrf });
    expect(r.status).toBe(200);
    expect((await r.json()).payload).toMatch(/^closed-secret-/);
    expect(await auditOf(open, push.url_token)).toEqual([
      { kind: 'creation', user_id: null },
      { kind: 'view', user_id: null },
    ]);
  });

  it('signed-in visitors get the page that reveals as them', async () => {
    const { visitor, userId } = await signedInUser(open, 'open-signed-in@example.org');
    const push = await makePush(open, null);
    const page = await recipientPage(visitor, `/p/${push.url_token}`);
    expect(page.reveal).toBe('web');
    const r = await step(visitor, push.url_token, 'reveal', {}, { 'x-csrf-token': page.csrf });
    expect(r.status).toBe(200);
    expect((await auditOf(open, push.url_token)).at(-1)).toEqual({ kind: 'view', user_id: userId });
  });
});

describe('in headless Chromium, on a closed instance', () => {
  let chromium: { browser: Browser; close(): Promise<void> };
  const problems: string[] = [];
  const watch = (page: Page): Page => {
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    return page;
  };

  beforeAll(async () => {
    chromium = await launchChromium();
  }, 600_000);
  afterAll(async () => {
    await chromium?.close();
  });

  it('a signed-out recipient is sent to sign in and back, then reveals, enters a passphrase and deletes, as themselves', async () => {
    const recipient = await closed.core.users.createUser('browser-recipient@example.org', PASSWORD);
    const first = await makePush(closed, owner.userId, {
      payload: 'opened-in-chromium',
      retrieval_step: true,
      expire_after_views: 2,
    });
    const guarded = await makePush(closed, owner.userId, {
      payload: 'behind-a-passphrase',
      passphrase: 'open sesame',
      deletable_by_viewer: true,
    });
    const context = await chromium.browser.newContext({ viewport: { width: 420, height: 800 } });
    try {
      const page = watch(await context.newPage());
      await page.goto(first.html_url);
      await page.getByRole('heading', { name: 'Sign in to open this secret' }).waitFor();
      expect(await page.getByRole('button', { name: 'Reveal the secret' }).count()).toBe(0);
      expect(await row(closed, first.url_token)).toMatchObject({ views_used: 0 });

      await page.getByRole('link', { name: 'Sign in' }).last().click();
      await page.getByLabel('Email').fill('browser-recipient@example.org');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(first.html_url);
      await page.getByRole('button', { name: 'Reveal the secret' }).waitFor();
      expect(await row(closed, first.url_token)).toMatchObject({ views_used: 0 }); // the page itself consumed nothing

      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#secret-value').waitFor();
      expect(await page.locator('#secret-value').textContent()).toBe('opened-in-chromium');
      await page.getByText('1 more view').waitFor();
      expect(await row(closed, first.url_token)).toMatchObject({ views_used: 1 });
      expect((await auditOf(closed, first.url_token)).at(-1)).toEqual({ kind: 'view', user_id: recipient.userId });

      // The passphrase path: wrong is refused clearly, right opens; then Delete now deletes it as this user.
      await page.goto(guarded.html_url);
      await page.getByLabel('Passphrase').fill('wrong guess');
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.getByRole('alert').filter({ hasText: 'That passphrase is not correct' }).waitFor();
      expect(await row(closed, guarded.url_token)).toMatchObject({ views_used: 0 });
      await page.getByLabel('Passphrase').fill('open sesame');
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#secret-value').waitFor();
      expect(await page.locator('#secret-value').textContent()).toBe('behind-a-passphrase');
      expect(await row(closed, guarded.url_token)).toMatchObject({ views_used: 1 });

      await page.getByRole('button', { name: 'Delete now' }).click();
      await page.getByText('The secret was deleted').waitFor();
      expect(await row(closed, guarded.url_token)).toMatchObject({ expired: true, deleted: true });
      expect((await auditOf(closed, guarded.url_token)).map((a) => [a.kind, a.user_id])).toEqual([
        ['creation', owner.userId],
        ['failed_passphrase', recipient.userId],
        ['view', recipient.userId],
        ['expire', recipient.userId],
      ]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
