/**
 * Issue 25's "new recovery codes" button, through the real pages on the real core and PostgreSQL. In headless
 * Chromium: a password account turns two-factor sign-in on (codes computed from the key shown, with otplib), asks
 * for new recovery codes with a code from the app, and gets ten new ones, shown once; at the next sign-in an old code
 * is refused and a new one works, once. Over plain HTTP, the hostile cases: no code, a wrong code, a spent code,
 * no CSRF token, a wrong one, another origin, no session, and an account without a factor are all refused, and the
 * codes stay as they were; wrong codes count towards the limit like every code. No code reaches the log.
 */
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotPath, startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = await startWeb();
  chromium = await launchChromium();
}, 120_000);
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await chromium?.close();
  await app?.stop();
});

const codeAt = (secret: string, offsetSeconds = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

/** The digests of a user's recovery codes (used or not), to see that a refused request changed nothing. */
async function storedCodes(email: string): Promise<string[]> {
  const rows = await app.db.query<{ digest: string; used_at: Date | null }>(
    'select r.digest, r.used_at from recovery_codes r join users u on u.id = r.user_id where u.email = $1 order by r.id',
    [email],
  );
  return rows.map((r) => `${r.digest}:${r.used_at ? 'used' : 'unused'}`);
}

async function newPage(): Promise<Page> {
  const context = await chromium.browser.newContext();
  contexts.push(context);
  return context.newPage();
}

async function signInInBrowser(page: Page, email: string): Promise<void> {
  await page.goto(`${app.baseUrl}/users/sign_in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Turns the factor on in the page; returns the key and the ten codes shown. */
async function enrolInBrowser(page: Page): Promise<{ secret: string; codes: string[] }> {
  await page.goto(`${app.baseUrl}/users/two_factor`);
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
  await page.getByLabel('The 6-digit code the app shows').fill(await codeAt(secret));
  await page.getByRole('button', { name: 'Turn on' }).click();
  const codes = await page.locator('#recovery-codes code').allTextContents();
  expect(codes).toHaveLength(10);
  return { secret, codes };
}

describe('new recovery codes, in Chromium', () => {
  it('replaces every code at once: an old one is refused at sign-in, a new one works once', async () => {
    const email = 'renew@example.org';
    await app.core.users.createUser(email, PASSWORD);
    const page = await newPage();
    await signInInBrowser(page, email);
    await page.waitForURL((url) => url.pathname === '/');
    const { secret, codes: old } = await enrolInBrowser(page);

    await page.goto(`${app.baseUrl}/users/two_factor`);
    expect(await page.getByRole('heading', { name: 'New recovery codes', exact: true }).isVisible()).toBe(true);
    // A wrong code first: refused on the same page, nothing renewed.
    await page.getByLabel('Code from your app, or a recovery code').first().waitFor();
    await page.locator('#renew-code').fill('000000' === (await codeAt(secret, 30)) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    expect(await page.locator('#form-error').textContent()).toMatch(/not right/);
    // The next step's code from the app (the enrolment spent this step's).
    await page.locator('#renew-code').fill(await codeAt(secret, 30));
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    await page.getByRole('heading', { name: 'New recovery codes', exact: true }).waitFor();
    expect(await page.locator('#codes-replaced').textContent()).toMatch(/earlier recovery codes no longer work/);
    const fresh = await page.locator('#recovery-codes code').allTextContents();
    await page.screenshot({ path: screenshotPath('two-factor-new-recovery-codes.png') });
    expect(fresh).toHaveLength(10);
    expect(new Set(fresh).size).toBe(10);
    for (const c of fresh) expect(old).not.toContain(c);
    await page.goto(`${app.baseUrl}/users/two_factor`);
    expect(await page.content()).toContain('You have 10 unused recovery codes');

    // Sign out; the next sign-in refuses an old code and takes a new one.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInInBrowser(page, email);
    await page.waitForURL((url) => url.pathname === '/users/two_factor/verify');
    await page.getByLabel(/recovery code/).fill(old[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.locator('#form-error').textContent()).toMatch(/not right/);
    await page.getByLabel(/recovery code/).fill(fresh[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);

    // The same new code again, at another sign-in: refused (each works once).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInInBrowser(page, email);
    await page.waitForURL((url) => url.pathname === '/users/two_factor/verify');
    await page.getByLabel(/recovery code/).fill(fresh[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.locator('#form-error').textContent()).toMatch(/not right/);

    // No code, old or new, and not the key, in any log line.
    const log = app.logs.join('\n');
    for (const secretText of [secret, ...old, ...fresh]) expect(log).not.toContain(secretText);
    await app.db.query('delete from totp_attempts where user_id = (select id from users where email = $1)', [email]);
  });
});

describe('new recovery codes, hostile requests', () => {
  const email = 'renew-hostile@example.org';
  let v: Visitor;
  let codes: string[] = [];

  beforeAll(async () => {
    v = new Visitor(app.baseUrl);
    expect((await v.signUp(email, PASSWORD)).status).toBe(303);
    const { csrf } = await v.page('/users/two_factor');
    await v.post('/users/two_factor/setup', { _csrf: csrf });
    const setup = await v.page('/users/two_factor/setup');
    const secret = /id="totp-secret">([^<]+)</.exec(setup.html)![1]!.replace(/\s/g, '');
    const on = await v.post('/users/two_factor/confirm', { _csrf: setup.csrf, code: await codeAt(secret) });
    codes = [...(await on.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    expect(codes).toHaveLength(10);
  });

  it('refuses without a proof (no code, a wrong one, a spent one): 401, codes unchanged', async () => {
    const before = await storedCodes(email);
    const { csrf } = await v.page('/users/two_factor');
    for (const code of [undefined, '', '123456', 'aaaa-bbbb-cccc-dddd']) {
      const fields: Record<string, string> = { _csrf: csrf };
      if (code !== undefined) fields.code = code;
      const answer = await v.post('/users/two_factor/recovery_codes', fields);
      expect(answer.status).toBe(401);
      expect(await answer.text()).toMatch(/id="form-error">That code is not right/);
    }
    expect(await storedCodes(email)).toEqual(before);
    // A recovery code is a proof once: spent at sign-in, it renews nothing afterwards.
    const other = new Visitor(app.baseUrl);
    await other.signIn(email, PASSWORD);
    const step = await other.page('/users/two_factor/verify');
    expect((await other.post('/users/two_factor/verify', { _csrf: step.csrf, code: codes[9]! })).status).toBe(303);
    const spent = await storedCodes(email);
    expect((await v.post('/users/two_factor/recovery_codes', { _csrf: csrf, code: codes[9]! })).status).toBe(401);
    expect(await storedCodes(email)).toEqual(spent);
    await app.db.query('delete from totp_attempts where user_id = (select id from users where email = $1)', [email]);
  });

  it('refuses a form without the CSRF token, with a wrong one, or from another origin: 403, codes unchanged', async () => {
    const before = await storedCodes(email);
    const { csrf } = await v.page('/users/two_factor');
    const stranger = (await new Visitor(app.baseUrl).page('/users/sign_in')).csrf;
    const path = '/users/two_factor/recovery_codes';
    expect((await v.post(path, { code: codes[0]! })).status).toBe(403);
    expect((await v.post(path, { _csrf: 'x'.repeat(43), code: codes[0]! })).status).toBe(403);
    expect((await v.post(path, { _csrf: stranger, code: codes[0]! })).status).toBe(403);
    expect((await v.post(path, { _csrf: csrf, code: codes[0]! }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await v.post(path, { _csrf: csrf, code: codes[0]! }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await storedCodes(email)).toEqual(before);
  });

  it('refuses a visitor without a session, and an account without a second factor', async () => {
    const before = await storedCodes(email);
    const anonymous = new Visitor(app.baseUrl);
    const { csrf } = await anonymous.page('/users/sign_in');
    const answer = await anonymous.post('/users/two_factor/recovery_codes', { _csrf: csrf, code: codes[0]! });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toMatch(/^\/users\/sign_in\?next=/);
    expect(await storedCodes(email)).toEqual(before);

    const plain = new Visitor(app.baseUrl);
    await plain.signUp('renew-plain@example.org', PASSWORD);
    const page = await plain.page('/users/two_factor');
    expect(page.html).not.toContain('/users/two_factor/recovery_codes');
    const off = await plain.post('/users/two_factor/recovery_codes', { _csrf: page.csrf, code: '123456' });
    expect(off.status).toBe(409);
    expect(await off.text()).toMatch(/Turn two-factor sign-in on first/);
    expect(await storedCodes('renew-plain@example.org')).toEqual([]);
  });

  it('counts wrong codes towards the limit: 429 with Retry-After, even for a right code, and nothing renewed', async () => {
    const before = await storedCodes(email);
    const { csrf } = await v.page('/users/two_factor');
    let answer: Response | undefined;
    for (let i = 0; i < 8; i += 1) {
      answer = await v.post('/users/two_factor/recovery_codes', { _csrf: csrf, code: String(200000 + i) });
      if (answer.status === 429) break;
      expect(answer.status).toBe(401);
    }
    expect(answer!.status).toBe(429);
    expect(Number(answer!.headers.get('retry-after'))).toBeGreaterThan(0);
    const right = await v.post('/users/two_factor/recovery_codes', { _csrf: csrf, code: codes[0]! });
    expect(right.status).toBe(429);
    expect(await storedCodes(email)).toEqual(before);
  });
});
