/**
 * The admin console's workspaces in real headless Chromium (issue 41): an administrator (PWPUSH_ADMIN_EMAILS) signs
 * up, follows Admin → Workspaces, finds a workspace by name with the keyboard alone, opens it, and revokes its key
 * with the keyboard (Tab to the button, Enter): the key answers 401 after. axe-core finds no violation on the list,
 * the workspace's page, the user's page and the storage page, and no page breaks the Content Security Policy. A
 * screenshot of the workspace's page goes to test-results/screenshots (docs/screenshots with `npm run screenshots`).
 */
import type { Browser, Page } from 'playwright-core';
import { createClient } from '@secret-push/sdk/generated/client';
import { createApiKey, createPush, createWorkspace } from '@secret-push/sdk/generated';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './chromium.js';
import { launchChromium, screenshotPath, startWeb, type WebApp } from './support.js';

const ADMIN = 'ops@example.org';
const PASSWORD = 'a long enough password';
const PAYLOAD = 'PAYLOAD-SENTINEL-browser-31d0';

let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
let page: Page;
const violations: string[] = [];

beforeAll(async () => {
  app = await startWeb({ adminEmails: [ADMIN] });
  chromium = await launchChromium();
  const context = await chromium.browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

async function noAxeViolation(where: string) {
  expect([where, await axeViolations(page)]).toEqual([where, []]);
}

describe('the workspaces section in headless Chromium', () => {
  it('finds a workspace with the keyboard, shows it without a secret, revokes its key; no axe violation', async () => {
    const client = createClient({ baseUrl: app.baseUrl });
    const owner = await app.core.users.createUser('browser-owner@example.org');
    const auth = (a: { scheme?: string }) => (a.scheme === 'bearer' ? owner.token : undefined);
    const ws = (await createWorkspace({ client, auth, body: { workspace: { name: 'Browser Team' } } })).data!;
    await createPush({ client, auth, body: { push: { payload: PAYLOAD }, workspace_id: ws.id } });
    const key = (
      await createApiKey({
        client,
        auth,
        body: { api_key: { name: 'ci key', scopes: ['pushes:create', 'pushes:read'], workspace_id: ws.id } },
      })
    ).data!;
    const keyStatus = async () =>
      (await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${key.token}` } }))
        .status;
    expect(await keyStatus()).toBe(200);

    await page.goto(`${app.baseUrl}/users/sign_up`);
    await page.getByLabel('Email').fill(ADMIN);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Workspaces' }).click();
    await page.getByRole('heading', { name: 'Workspaces', level: 1 }).waitFor();
    await noAxeViolation('list');

    // The keyboard alone: the search field, typed, Enter.
    await page.getByLabel('Name contains, or id').focus();
    await page.keyboard.type('browser');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=browser/);
    await page.getByRole('link', { name: 'Browser Team' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Browser Team', level: 1 }).waitFor();
    await noAxeViolation('workspace');
    const html = await page.content();
    expect(html).toContain('browser-owner@example.org');
    expect(html).toContain('ci key');
    expect(html).not.toContain(PAYLOAD);
    expect(html).not.toContain(key.token);
    await page.screenshot({ path: screenshotPath('admin-workspace.png'), fullPage: true });

    // Tab to the key's revoke button, then Enter.
    let focused = '';
    for (let i = 0; i < 80 && focused !== 'Revoke key: ci key'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
    }
    expect(focused).toBe('Revoke key: ci key');
    await page.keyboard.press('Enter');
    await page.getByText('The key is revoked').waitFor();
    expect(await keyStatus()).toBe(401);
    expect(await page.getByText('No API key.').count()).toBe(1);

    await page.getByRole('link', { name: 'browser-owner@example.org' }).first().click();
    await page.getByRole('heading', { name: 'browser-owner@example.org' }).waitFor();
    expect(await page.getByRole('link', { name: 'Browser Team' }).count()).toBe(1);
    await noAxeViolation('user');
    await page.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Storage' }).click();
    await page.getByRole('heading', { name: 'Workspaces', level: 2 }).waitFor();
    await noAxeViolation('storage');
    await page.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Admin audit' }).click();
    expect(await page.locator('table.admin-audit tbody tr').first().textContent()).toContain('workspace_revoke_key');
    await noAxeViolation('audit');
    expect(violations).toEqual([]);
  });
});
