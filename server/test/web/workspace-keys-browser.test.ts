/**
 * A workspace's API keys page in real headless Chromium, with the keyboard alone (issue 41): from the workspace's
 * page, the owner reaches the keys section, makes a key (name, a scope, a lifetime), copies its token with the Copy
 * button (announced by the status line), and the copied token works against the API for the workspace; then revokes
 * it through the confirmation page, and the token stops at once. axe-core finds nothing on the fresh key's page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { createPush, createWorkspace } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { axeViolations } from './chromium.js';
import { launchChromium, startWeb, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
const EMAIL = 'keyboard-owner@keys-ws.example.org';
const bearer = (token: string) => (auth: { scheme?: string }) => (auth.scheme === 'bearer' ? token : undefined);

let chromium: Awaited<ReturnType<typeof launchChromium>>;
let app: WebApp;
let context: BrowserContext;
let workspaceId: number;

beforeAll(async () => {
  app = await startWeb();
  const owner = await app.core.users.createUser(EMAIL, PASSWORD);
  const client = createClient({ baseUrl: app.baseUrl });
  const made = await createWorkspace({ client, auth: bearer(owner.token), body: { workspace: { name: 'Keyboard' } } });
  workspaceId = made.data!.id;
  chromium = await launchChromium();
  context = await chromium.browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
}, 600_000);

afterAll(async () => {
  await context?.close();
  await chromium?.close();
  await app?.stop();
});

describe("a workspace's API keys, with the keyboard alone", () => {
  it('makes a key, copies its token, which acts for the workspace, and revokes it after the confirmation', async () => {
    const page = await context.newPage();
    const tabTo = async (selector: string, max = 80) => {
      for (let i = 0; i < max; i += 1) {
        await page.keyboard.press('Tab');
        if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
      }
      throw new Error(`${selector} is not reachable with the Tab key`);
    };
    await page.goto(`${app.baseUrl}/users/sign_in?next=${encodeURIComponent(`/workspaces/${workspaceId}`)}`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);

    await tabTo(`a[href="/workspaces/${workspaceId}/keys"]`);
    await page.keyboard.press('Enter');
    await page.getByText('This workspace has no API keys.').waitFor();
    await tabTo('#key-name');
    await page.keyboard.type('Deploy bot');
    await tabTo('input[name="scopes"][value="pushes:create"]');
    await page.keyboard.press('Space');
    await tabTo('#key-expiry');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Make a key');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your new API key “Deploy bot”' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    const shown = (await page.locator('#api-key-token').textContent())!.trim();
    expect(shown).toMatch(/^spk_[A-Za-z0-9]{36}$/);
    await tabTo('button[data-copy-target="api-key-token"]');
    await page.keyboard.press('Enter');
    await page.locator('#status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(shown);

    const client = createClient({ baseUrl: app.baseUrl });
    const push = await createPush({ client, auth: bearer(copied), body: { push: { payload: 'from the copied key' } } });
    expect(push.response?.status).toBe(201);
    expect(push.data).toMatchObject({ workspace_id: workspaceId });

    await page.goto(`${app.baseUrl}/workspaces/${workspaceId}/keys`);
    await tabTo('a[href$="/revoke"]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Revoke the key “Deploy bot”?' }).waitFor();
    await tabTo('#revoke-confirm');
    await page.keyboard.press('Enter');
    await page.getByText('The key “Deploy bot” is revoked.').waitFor();
    const refused = await createPush({ client, auth: bearer(copied), body: { push: { payload: 'too late' } } });
    expect(refused.response?.status).toBe(401);
  }, 300_000);
});
