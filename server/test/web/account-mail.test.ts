/**
 * Issue 22, account emails, in real headless Chromium with a real SMTP server in the test process: sign-up confirms
 * the address by a link read from the mailbox (and answers the same for a taken address), "forgot password" sends a
 * single-use link that lapses (same answer for an unknown address), and a new password or API token sends a notice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { makeSettings } from '../support/db.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { translator } from '../../src/i18n/i18n.js';
import { launchChromium, startWeb, type WebApp } from './support.js';

const EMAIL = 'carol@example.org';
const FIRST = 'a first long enough password';
const SECOND = 'another long enough password';

let mailbox: Mailbox;
let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };

async function mailTo(address: string, count: number): Promise<{ subject: string; text: string }[]> {
  const end = Date.now() + 20_000;
  for (;;) {
    const mails = mailbox.messages.filter((m) => m.to.includes(address));
    if (mails.length >= count)
      return mails.map((m) => ({ subject: m.parsed.subject ?? '', text: m.parsed.text ?? '' }));
    if (Date.now() > end) throw new Error(`expected ${count} messages to ${address}, got ${mails.length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const linkIn = (text: string) => /(http:\/\/127\.0\.0\.1:\d+\/users\/[a-z/]+\?token=[A-Za-z0-9_-]+)/.exec(text)?.[1];

async function signUp(page: Page, email: string, password: string): Promise<string> {
  await page.goto(`${app.baseUrl}/users/sign_up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForLoadState();
  return (await page.locator('main').innerText()).trim();
}

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startWeb({ mail: { ...makeSettings().mail, smtpUrl: mailbox.url, retrySeconds: 1 } });
  chromium = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
  await mailbox?.stop();
});

describe('account emails in Chromium', () => {
  it('sign-up: a confirmation link, the same answer for a taken address, the account only once confirmed', async () => {
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    const answer = await signUp(page, EMAIL, FIRST);
    expect(answer).toContain('Check your email');
    expect(await app.db.query('select 1 from users where email = $1', [EMAIL])).toHaveLength(0);

    const [confirm] = await mailTo(EMAIL, 1);
    expect(confirm!.subject).toBe('Confirm your email for Secret Push');
    const link = linkIn(confirm!.text)!;
    expect(link).toMatch(/\/users\/confirm\?token=/);
    // Opening the link only shows a button (a mail scanner following it makes nothing).
    await page.goto(link);
    expect(await app.db.query('select 1 from users where email = $1', [EMAIL])).toHaveLength(0);
    await page.getByRole('button', { name: 'Confirm and sign in' }).click();
    await page.waitForURL(`${app.baseUrl}/`);
    expect(await page.locator('footer').innerText()).toContain(`Signed in as ${EMAIL}`);
    expect(await app.db.query('select 1 from users where email = $1', [EMAIL])).toHaveLength(1);

    // The link works once.
    await page.goto(link);
    await page.getByRole('button', { name: 'Confirm and sign in' }).click();
    expect(await page.locator('main').innerText()).toContain('Link not valid');

    // The same address again, from someone else: the same answer; the owner is told, with no link.
    const stranger = await (await chromium.browser.newContext()).newPage();
    expect(await signUp(stranger, EMAIL, 'a stranger s long password')).toBe(answer);
    const mails = await mailTo(EMAIL, 2);
    expect(mails[1]!.subject).toBe('Sign-up attempt on Secret Push');
    expect(linkIn(mails[1]!.text)).toBeUndefined();
    await context.close();
  }, 90_000);

  it('forgot password: the same answer for an unknown address, a single-use link, a notice, the new password works', async () => {
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    const ask = async (email: string) => {
      await page.goto(`${app.baseUrl}/users/sign_in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Email me a link' }).click();
      await page.waitForLoadState();
      return (await page.locator('main').innerText()).trim();
    };
    const before = mailbox.messages.length;
    const known = await ask(EMAIL);
    const unknown = await ask('nobody-here@example.org');
    expect(unknown).toBe(known);
    const mails = await mailTo(EMAIL, 3);
    const reset = mails[2]!;
    expect(reset.subject).toBe('Reset your password on Secret Push');
    await new Promise((r) => setTimeout(r, 2500)); // a poll of the queue: nothing goes to the unknown address
    expect(mailbox.messages.slice(before).map((m) => m.to)).toEqual([[EMAIL]]);

    const link = linkIn(reset.text)!;
    await page.goto(link);
    await page.getByLabel('New password').fill('short');
    await page.getByRole('button', { name: 'Set the password' }).click();
    expect(await page.locator('main').innerText()).toMatch(/at least 12 characters/);
    await page.getByLabel('New password').fill(SECOND);
    await page.getByRole('button', { name: 'Set the password' }).click();
    expect(await page.locator('main').innerText()).toContain('Password changed');
    const notice = (await mailTo(EMAIL, 4))[3]!;
    expect(notice.subject).toBe('Your password on Secret Push was changed');

    // Single use: the same link again is refused.
    await page.goto(link);
    expect(await page.locator('main').innerText()).toContain('Link not valid');

    // The new password signs in; the old one does not.
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(FIRST);
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.locator('main').innerText()).toContain('do not match');
    await page.getByLabel('Password').fill(SECOND);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${app.baseUrl}/`);

    // A new API token: a notice.
    await page.goto(`${app.baseUrl}/users/token`);
    await page.getByRole('button', { name: /Make a token/ }).click();
    const tokenNotice = (await mailTo(EMAIL, 5))[4]!;
    expect(tokenNotice.subject).toBe('A new API token was made on Secret Push');
    expect(tokenNotice.text).not.toMatch(/spt_/); // never the token itself
    await context.close();
  }, 90_000);

  it('a reset link lapses after an hour', async () => {
    const page = await (await chromium.browser.newContext()).newPage();
    await page.goto(`${app.baseUrl}/users/password/new`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByRole('button', { name: 'Email me a link' }).click();
    const mail = (await mailTo(EMAIL, 6))[5]!;
    const link = linkIn(mail.text)!;
    const [row] = await app.db.query<{ minutes: number }>(
      `select extract(epoch from (expires_at - now())) / 60 as minutes from account_mail_requests
       where purpose = 'reset' and used_at is null and token_digest is not null order by created_at desc limit 1`,
    );
    expect(Number(row!.minutes)).toBeGreaterThan(55);
    expect(Number(row!.minutes)).toBeLessThanOrEqual(60);
    await app.db.query(
      `update account_mail_requests set expires_at = now() - interval '1 second' where purpose = 'reset' and used_at is null`,
    );
    await page.goto(link);
    expect(await page.locator('main').innerText()).toContain('Link not valid');
  }, 60_000);

  it('the sweeper forgets requests a day after their links lapsed (an unused sign-up takes its password hash along)', async () => {
    const count = async () =>
      Number((await app.db.query<{ n: string }>('select count(*) as n from account_mail_requests'))[0]!.n);
    const before = await count();
    expect(before).toBeGreaterThan(0);
    // Nothing has lapsed a day ago yet: a sweep now keeps every request.
    await app.core.sweep(new Date());
    expect(await count()).toBe(before);
    // Two days on, every link sent (they last an hour at most) lapsed more than a day before.
    await app.core.sweep(new Date(Date.now() + 2 * 86_400_000));
    expect(await app.db.query('select 1 from account_mail_requests where expires_at is not null')).toHaveLength(0);
    // A week on, requests whose link never went out go too.
    await app.core.sweep(new Date(Date.now() + 8 * 86_400_000));
    expect(await count()).toBe(0);
  });

  it('writes each mail in the language of the page that asked for it (?locale=, then its cookie)', async () => {
    const de = translator('de');
    const context = await chromium.browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/users/sign_up?locale=de`);
    expect(await page.locator('h1').textContent()).toBe(de.t('account.signUp.title'));
    await page.getByLabel(de.t('account.email')).fill('dora@example.org');
    await page.getByLabel(de.t('account.password')).fill(FIRST);
    await page.getByRole('button', { name: de.t('account.signUp.submit') }).click();
    await page.waitForLoadState();
    expect(await page.locator('main').innerText()).toContain(de.t('account.checkEmail.signUp'));
    const [confirm] = await mailTo('dora@example.org', 1);
    expect(confirm!.subject).toBe(de.t('mail.account.subject', { kind: 'signup', instance: 'Secret Push' }));
    expect(confirm!.subject).not.toBe('Confirm your email for Secret Push');
    expect(confirm!.text).toContain(de.t('mail.account.signup.action'));
    const html = mailbox.messages.find((m) => m.to.includes('dora@example.org'))!.parsed.html;
    expect(html).toContain('<html lang="de" dir="ltr">');

    // Dora confirms (the link of the German mail), then asks for a reset from a French page: the link comes in French.
    await page.goto(linkIn(confirm!.text)!);
    await page.getByRole('button', { name: de.t('account.confirm.submit') }).click();
    await page.waitForURL(`${app.baseUrl}/`);
    const fr = translator('fr');
    const other = await (await chromium.browser.newContext({ locale: 'en-US' })).newPage();
    await other.goto(`${app.baseUrl}/users/password/new?locale=fr`);
    await other.getByLabel(fr.t('account.email')).fill('dora@example.org');
    await other.getByRole('button', { name: fr.t('account.forgot.submit') }).click();
    await other.waitForLoadState();
    expect(await other.locator('main').innerText()).toContain(fr.t('account.checkEmail.reset'));
    const [, reset] = await mailTo('dora@example.org', 2);
    expect(reset!.subject).toBe(fr.t('mail.account.subject', { kind: 'reset', instance: 'Secret Push' }));
    expect(reset!.text).toContain(fr.t('mail.account.reset.action'));
    await other.context().close();
    await context.close();
  }, 60_000);
});
