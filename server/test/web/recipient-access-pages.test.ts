/**
 * Who may open it (issue 42), on the recipient's page, in real headless Chromium on the real app, with the real SMTP
 * server the tests run (test/support/mailbox.ts) and client addresses given by a trusted proxy's X-Forwarded-For:
 *
 * - specific people, without JavaScript and with the keyboard alone: the page asks for the visitor's address (never
 *   listing the push's), the request form answers with a redirect (Post/Redirect/Get), the code is read from the
 *   mailbox, a wrong code is refused (401) and audited, the secret shows only after the right code, the view count
 *   is read after each step; the same code again is refused;
 * - the same with JavaScript: the code form goes through the page's script (the API with X-Access-Code);
 * - a network left out: a clear page (403), no reveal control, no view spent; from inside the ranges the reveal works
 *   and spends one;
 * - the page in German (`?locale=de`);
 * - the forms by hand (plain HTTP): without the CSRF token or from another origin, refused before anything is
 *   recorded; a hostile code (64 KiB, letters) is a wrong code (401), never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import type { PushInput } from '@secret-push/sdk/generated';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { launchChromium, startWeb, Visitor, type WebApp } from './support.js';

let app: WebApp;
let mailbox: Mailbox;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let owner: { userId: string };

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startWeb({
    trustProxy: true,
    rateLimitPerMinute: 0,
    mail: {
      smtpUrl: mailbox.url,
      from: 'Secret Push <no-reply@secrets.example.org>',
      notifyByEmail: true,
      notifyDailyLimit: 500,
      instanceName: 'Example Secrets',
      attempts: 3,
      retrySeconds: 1,
    },
  });
  owner = await app.core.users.createUser(`sender-${Date.now()}@example.org`);
  chromium = await launchChromium();
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
  await mailbox?.stop();
});

const ctxOf = () => ({
  actor: { userId: owner.userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
  baseUrl: app.baseUrl,
});

async function make(push: PushInput) {
  const created = await app.core.pushes.create(push, ctxOf());
  const views = async () => (await app.core.pushes.state(created.url_token, ctxOf()))!.views_remaining;
  const audit = async () =>
    (await app.core.pushes.audit(created.url_token, 1, ctxOf())).items.map((e) => `${e.kind} ${e.ip}`);
  return { push: created, views, audit };
}

/** The 8 digits of the newest message to `to`, once `count` messages reached it. */
async function codeMailedTo(to: string, count: number): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mails = mailbox.messages.filter((m) => m.to.includes(to));
    if (mails.length >= count) {
      const text = mails[mails.length - 1]!.parsed.text ?? '';
      const match = /(\d{4}) (\d{4})/.exec(text);
      expect(match, text).not.toBeNull();
      expect(text).not.toContain(app.baseUrl);
      return `${match![1]}${match![2]}`;
    }
    if (Date.now() > deadline) throw new Error(`no code reached ${to}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Presses Tab until the focused element matches `selector`; fails when it never does. */
async function tabTo(page: Page, selector: string, max = 40): Promise<void> {
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`${selector} is not reachable with the Tab key`);
}

/** Every navigation of the page: method, status, path and query. */
function navigations(page: Page): string[] {
  const seen: string[] = [];
  page.on('response', (r) => {
    if (r.request().isNavigationRequest()) {
      const url = new URL(r.url());
      seen.push(`${r.request().method()} ${r.status()} ${url.pathname}${url.search}`);
    }
  });
  return seen;
}

describe('a push for specific people, on the page', () => {
  let context: BrowserContext;

  afterAll(async () => {
    await context?.close();
  });

  it('without JavaScript, keyboard only: asks for an address, mails a code, refuses a wrong one, shows the secret after the right one', async () => {
    context = await chromium.browser.newContext({ javaScriptEnabled: false });
    const secret = `for ana only ${Date.now()}`;
    const made = await make({ payload: secret, expire_after_views: 3, recipient_emails: ['Ana@example.net'] });
    const page = await context.newPage();
    const seen = navigations(page);
    const token = made.push.url_token;

    await page.goto(made.push.html_url);
    await page.locator('#access-step').waitFor();
    const html = await page.content();
    expect(html.toLowerCase()).not.toContain('ana@example.net');
    expect(html).not.toContain(secret);
    expect(await page.locator('noscript').count()).toBe(0);

    // Ask for a code: a plain form, answered with a redirect back to the page.
    await tabTo(page, '#access-email');
    await page.keyboard.type('ana@EXAMPLE.net');
    await page.keyboard.press('Enter');
    await page.locator('#code-sent').waitFor();
    expect(seen.slice(-2)).toEqual([`POST 303 /p/${token}/access_code`, `GET 200 /p/${token}?code_sent=1`]);
    expect(await page.locator('#code-sent').getAttribute('role')).toBe('status');
    const code = await codeMailedTo('Ana@example.net', 1);
    expect(await made.views()).toBe(3);

    // A wrong code: refused, said next to the field, audited; nothing spent.
    await tabTo(page, '#access_code');
    await page.keyboard.type(code === '11112222' ? '22221111' : '11112222');
    await page.keyboard.press('Enter');
    await page.locator('#access_code-error').waitFor();
    expect(seen.at(-1)).toBe(`POST 401 /p/${token}/open`);
    expect(await page.locator('#access_code-error').textContent()).toMatch(/not right/);
    expect(await page.locator('#access_code').getAttribute('aria-invalid')).toBe('true');
    expect(await page.content()).not.toContain(secret);
    expect(await made.views()).toBe(3);
    expect(await made.audit()).toContain('failed_passphrase 127.0.0.1');

    // The right code: the secret, and one view.
    await page.locator('#access_code').focus();
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    await page.locator('#secret-value').waitFor();
    expect(seen.at(-1)).toBe(`POST 200 /p/${token}/open`);
    expect(await page.locator('#secret-value').textContent()).toBe(secret);
    expect(await made.views()).toBe(2);

    // The same code again (the browser's back and resend): used up.
    await page.goto(made.push.html_url);
    await page.locator('#access_code').fill(code);
    await page.locator('#access_code').press('Enter');
    await page.locator('#access_code-error').waitFor();
    expect(await made.views()).toBe(2);
    expect((await made.audit()).filter((e) => e.startsWith('view ')).length).toBe(1);
  });

  it('with JavaScript: the code form goes through the page script; a wrong code is said in the alert, the right one reveals', async () => {
    const js = await chromium.browser.newContext();
    try {
      const secret = `for bo only ${Date.now()}`;
      const made = await make({ payload: secret, expire_after_views: 2, recipient_emails: ['bo@example.net'] });
      const page = await js.newPage();
      await page.goto(made.push.html_url);
      await page.getByLabel('Your email address').fill('bo@example.net');
      await page.getByRole('button', { name: 'Email me a code' }).click();
      await page.locator('#code-sent').waitFor();
      const code = await codeMailedTo('bo@example.net', 1);

      await page.getByLabel('Code from the email').fill('0000 0001');
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#push-error').filter({ hasText: 'not right' }).waitFor();
      expect(await made.views()).toBe(2);

      await page.getByLabel('Code from the email').fill(`${code.slice(0, 4)} ${code.slice(4)}`);
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#secret-value').waitFor();
      expect(await page.locator('#secret-value').textContent()).toBe(secret);
      expect(await made.views()).toBe(1);
    } finally {
      await js.close();
    }
  });

  it('speaks the visitor’s language: the forms in German with ?locale=de', async () => {
    const made = await make({ payload: 'x', recipient_emails: ['cy@example.net'] });
    const page = await chromium.browser.newPage();
    try {
      await page.goto(`${made.push.html_url}?locale=de`);
      expect(await page.locator('html').getAttribute('lang')).toBe('de');
      expect(await page.locator('label[for=access-email]').textContent()).toBe('Ihre E-Mail-Adresse');
      expect(await page.getByRole('button', { name: 'Code per E-Mail senden' }).count()).toBe(1);
    } finally {
      await page.close();
    }
  });
});

describe('a push for some networks, on the page', () => {
  it('refuses a visitor from elsewhere with a clear page and spends nothing; opens from inside the ranges', async () => {
    const secret = `office only ${Date.now()}`;
    const made = await make({ payload: secret, expire_after_views: 3, allowed_networks: ['203.0.113.0/24'] });

    const outside = await chromium.browser.newContext({ extraHTTPHeaders: { 'X-Forwarded-For': '198.51.100.7' } });
    try {
      const page = await outside.newPage();
      const response = await page.goto(made.push.html_url);
      expect(response!.status()).toBe(403);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'This secret cannot be opened from your network',
      );
      expect(await page.getByRole('button').filter({ hasText: 'Reveal' }).count()).toBe(0);
      expect(await page.content()).not.toContain('203.0.113');
      expect(await made.views()).toBe(3);
    } finally {
      await outside.close();
    }

    const inside = await chromium.browser.newContext({ extraHTTPHeaders: { 'X-Forwarded-For': '203.0.113.9' } });
    try {
      const page = await inside.newPage();
      await page.goto(made.push.html_url);
      await page.locator('#secret-value').waitFor();
      expect(await page.locator('#secret-value').textContent()).toBe(secret);
      expect(await made.views()).toBe(2);
    } finally {
      await inside.close();
    }
  });
});

describe('the forms by hand', () => {
  it('refuses a form without its CSRF token or from another origin, recording nothing; a hostile code is a wrong one', async () => {
    const made = await make({
      payload: 'hand-made-secret-7c1e',
      expire_after_views: 2,
      recipient_emails: ['dee@example.net'],
    });
    const token = made.push.url_token;
    const rows = async () =>
      Number(
        (
          await app.db.query<{ n: string }>(
            'select count(*) as n from push_access_codes c join pushes p on p.id = c.push_id where p.url_token = $1',
            [token],
          )
        )[0]!.n,
      );
    const visitor = new Visitor(app.baseUrl);
    const { csrf } = await visitor.page(`/p/${token}`);
    expect(csrf).not.toBe('');

    const noToken = await visitor.post(`/p/${token}/access_code`, { email: 'dee@example.net' });
    expect(noToken.status).toBe(403);
    const foreign = await visitor.post(
      `/p/${token}/access_code`,
      { _csrf: csrf, email: 'dee@example.net' },
      { origin: 'https://evil.example' },
    );
    expect(foreign.status).toBe(403);
    expect(await rows()).toBe(0);

    const bad = await visitor.post(`/p/${token}/access_code`, { _csrf: csrf, email: 'not an address' });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/Enter an email address/);
    expect(await rows()).toBe(0);

    for (const code of ['x'.repeat(60_000), 'letters!', '']) {
      const answer = await visitor.post(`/p/${token}/open`, { _csrf: csrf, access_code: code });
      expect(answer.status, code.slice(0, 10)).toBe(code === '' ? 422 : 401);
      expect(await answer.text()).not.toContain('hand-made-secret-7c1e');
    }
    expect(await made.views()).toBe(2);
    expect((await made.audit()).filter((e) => e.startsWith('failed_passphrase')).length).toBe(2);
  });
});
