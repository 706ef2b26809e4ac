/**
 * The admin console in real headless Chromium (issue 41): an administrator (PWPUSH_ADMIN_EMAILS) signs in, follows
 * the Admin link, finds a user by email, locks them (the user's own browser is signed out and cannot sign in again,
 * their API token answers 401), unlocks them, reads the security events and the audit, walks every section with no
 * CSP violation, and deletes the user after typing the email. Screenshots of the users and audit pages go to
 * test-results/screenshots (docs/screenshots with `npm run screenshots`).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotPath, startWeb, type WebApp } from './support.js';

const ADMIN = 'ops@example.org';
const USER = 'leaver@example.org';
const PASSWORD = 'a long enough password';

let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
let adminContext: BrowserContext;
let userContext: BrowserContext;
let admin: Page;
let user: Page;
let userToken = '';
const violations: string[] = [];

function watch(page: Page): Page {
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  return page;
}

async function signUp(page: Page, email: string): Promise<void> {
  await page.goto(`${app.baseUrl}/users/sign_up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const apiStatus = async () =>
  (await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${userToken}` } })).status;

beforeAll(async () => {
  app = await startWeb({ adminEmails: [ADMIN] });
  chromium = await launchChromium();
  adminContext = await chromium.browser.newContext({ viewport: { width: 1100, height: 800 } });
  userContext = await chromium.browser.newContext({ viewport: { width: 800, height: 700 } });
  admin = watch(await adminContext.newPage());
  user = watch(await userContext.newPage());
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

describe('the admin console in headless Chromium', () => {
  it('walks the console: find, lock, unlock, read the events and the audit, delete', async () => {
    await signUp(user, USER);
    userToken = await app.core.users.rotateToken(USER);
    expect(await apiStatus()).toBe(200);
    // The user has no Admin link and no way in.
    expect(await user.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    const refused = await user.goto(`${app.baseUrl}/admin/users`);
    expect(refused?.status()).toBe(403);

    await signUp(admin, ADMIN);
    await admin.getByRole('link', { name: 'Admin' }).click();
    await admin.getByRole('heading', { name: 'Admin console' }).waitFor();
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Users' }).click();
    await admin.getByLabel('Email contains').fill('leaver');
    await admin.getByRole('button', { name: 'Search' }).click();
    await admin.getByRole('link', { name: USER }).click();
    await admin.getByRole('heading', { name: USER }).waitFor();

    await admin.getByRole('button', { name: /^Lock/ }).click();
    await admin.getByText('The account is locked').waitFor();
    expect(await apiStatus()).toBe(401);
    await user.goto(`${app.baseUrl}/pushes/active`);
    await user.waitForURL(/\/users\/sign_in/);
    await user.getByLabel('Email').fill(USER);
    await user.getByLabel('Password').fill(PASSWORD);
    await user.getByRole('button', { name: 'Sign in', exact: true }).click();
    await user.getByText('This account is locked').waitFor();

    await admin.getByRole('button', { name: 'Unlock' }).click();
    await admin.getByText('The account is unlocked.').waitFor();
    expect(await apiStatus()).toBe(200);

    await admin.getByRole('link', { name: 'Security events' }).click();
    await admin.getByText('account_locked').first().waitFor();
    await admin.getByText('sign_in_locked_account').first().waitFor();
    await admin.getByRole('link', { name: 'Admin audit' }).click();
    const audit = admin.locator('table.admin-audit tbody tr');
    expect(await audit.count()).toBe(2);
    expect(await audit.first().textContent()).toContain('unlock');
    await admin.screenshot({ path: screenshotPath('admin-audit.png'), fullPage: true });

    for (const section of ['Storage', 'Queues', 'Settings']) {
      await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: section }).click();
      await admin.locator('h1').waitFor();
    }
    expect(await admin.locator('h1').textContent()).toBe('Settings in force');
    expect(await admin.content()).toContain('<em>set (key ids:');

    await admin.getByRole('link', { name: 'Users' }).first().click();
    await admin.screenshot({ path: screenshotPath('admin-users.png'), fullPage: true });
    await admin.getByRole('link', { name: USER }).click();
    await admin.getByLabel('Type the email to confirm').fill(USER);
    await admin.getByRole('button', { name: /^Delete the user/ }).click();
    await admin.getByText('The user and every push they made are deleted.').waitFor();
    expect(await admin.getByRole('link', { name: USER }).count()).toBe(0);
    expect(await apiStatus()).toBe(401);
    expect(violations).toEqual([]);
  });
});
