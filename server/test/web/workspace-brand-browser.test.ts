/**
 * A workspace's brand in real headless Chromium (issue 42): a push made in a workspace with a brand opens with the
 * workspace's name, SVG logo, header and accent colours, footer and links, and "Sent through <instance>"; axe-core
 * (WCAG 2.1 A and AA) finds nothing on its recipient pages (retrieval step, the secret revealed, passphrase and its
 * refusal) nor on the responder's pages of a workspace request (before and after the answer); once expired, the
 * push's page carries the instance's look and names no workspace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, type AxeViolation } from './chromium.js';
import { launchChromium, startWeb, type WebApp } from './support.js';

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32" viewBox="0 0 64 32"><rect width="64" height="32" rx="6" fill="#102a43"/><text x="32" y="21" font-size="14" text-anchor="middle" fill="#fff">GLX</text></svg>`;

let chromium: Awaited<ReturnType<typeof launchChromium>>;
let app: WebApp;
let token: string;
let workspaceId: number;

async function call<T>(pathname: string, body?: unknown, status = 201): Promise<T> {
  const response = await fetch(`${app.baseUrl}${pathname}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${pathname}: ${await response.clone().text()}`).toBe(status);
  return (await response.json()) as T;
}

type Made = { url_token: string; html_url: string };

beforeAll(async () => {
  app = await startWeb();
  token = (await app.core.users.createUser('brand-owner@example.org')).token;
  workspaceId = (await call<{ id: number }>('/api/v2/workspaces', { workspace: { name: 'Globex' } })).id;
  await call(
    `/api/v2/workspaces/${workspaceId}/brand`,
    {
      brand: {
        name: 'Globex Service Desk',
        accent_color: '#005a32',
        header_color: '#102a43',
        footer_text: 'Globex Corp · 2 Example Road',
        imprint_url: 'https://globex.example/imprint',
        privacy_url: 'https://globex.example/privacy',
        logo: Buffer.from(LOGO).toString('base64'),
      },
    },
    200,
  );
  chromium = await launchChromium();
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

const inWorkspace = (push: Record<string, unknown>) =>
  call<Made>('/api/v2/pushes', { push, workspace_id: workspaceId });

async function audit(findings: Record<string, AxeViolation[]>, page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations.length > 0) findings[name] = violations;
}

describe("a workspace's brand in Chromium", () => {
  it("shows a workspace push with the workspace's brand, and the instance's once it expired", async () => {
    const made = await inWorkspace({ payload: 'branded secret', retrieval_step: true });
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    const loaded: string[] = [];
    page.on('response', (r) => void loaded.push(`${r.status()} ${new URL(r.url()).pathname}`));
    await page.goto(made.html_url);
    await page.getByRole('button', { name: 'Reveal the secret' }).waitFor();
    await expect(page.title()).resolves.toMatch(/ · Globex Service Desk$/);
    expect(await page.locator('header.site .brand').textContent()).toBe('Globex Service Desk');
    expect(
      await page.locator('header.site .brand img.logo').evaluate((img: HTMLImageElement) => img.naturalWidth),
    ).toBe(64);
    const colours = await page.evaluate(() => {
      const header = getComputedStyle(document.querySelector('header.site')!);
      const button = getComputedStyle(document.querySelector('main button')!);
      return { header: header.backgroundColor, headerText: header.color, button: button.backgroundColor };
    });
    expect(colours).toEqual({ header: 'rgb(16, 42, 67)', headerText: 'rgb(255, 255, 255)', button: 'rgb(0, 90, 50)' });
    const footer = page.locator('footer.site');
    expect(await footer.locator('.brand-footer').textContent()).toContain('Globex Corp · 2 Example Road');
    expect(await footer.getByRole('link', { name: 'Imprint' }).getAttribute('href')).toBe(
      'https://globex.example/imprint',
    );
    expect(await footer.locator('.sent-through').textContent()).toBe('Sent through Secret Push');
    expect(loaded.filter((line) => line.includes('/brand/')).sort()).toEqual([
      `200 /brand/ws-${workspaceId}/logo.svg`,
      `200 /brand/ws-${workspaceId}/theme.css`,
    ]);

    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toContain('branded secret');

    // Expired by its owner, the same link carries the instance's look.
    const expire = await fetch(`${app.baseUrl}/api/v2/pushes/${made.url_token}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(expire.status).toBe(200);
    await page.goto(made.html_url);
    expect(await page.locator('header.site .brand').textContent()).toBe('Secret Push');
    expect(await page.locator('img[src^="/brand/"], link[href^="/brand/"]').count()).toBe(0);
    expect(await page.content()).not.toContain('Globex');
    await context.close();
  }, 120_000);

  it("finds no axe-core violation on a workspace's recipient and responder pages", async () => {
    const plain = await inWorkspace({ payload: 'plain secret', retrieval_step: true, expire_after_views: 5 });
    const guarded = await inWorkspace({ payload: 'guarded secret', passphrase: 'open sesame', expire_after_views: 5 });
    const request = await call<Made>('/api/v2/requests', { request: { request: 'The VPN password' } });
    // A request of the workspace (requests name no workspace on the wire yet: its column, as a workspace's create
    // would write it).
    await app.db.query('update requests set workspace_id = $1 where url_token = $2', [workspaceId, request.url_token]);

    const findings: Record<string, AxeViolation[]> = {};
    const context = await chromium.browser.newContext({ viewport: { width: 420, height: 800 } });
    const page = await context.newPage();
    await page.goto(plain.html_url);
    await page.getByRole('button', { name: 'Reveal the secret' }).waitFor();
    await audit(findings, page, 'retrieval step');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    await audit(findings, page, 'revealed secret');

    await page.goto(guarded.html_url);
    await page.getByLabel('Passphrase').waitFor();
    await audit(findings, page, 'passphrase');
    await page.getByLabel('Passphrase').fill('wrong guess');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.getByRole('alert').filter({ hasText: 'That passphrase is not correct' }).waitFor();
    await audit(findings, page, 'passphrase refused');

    await page.goto(request.html_url);
    expect(await page.locator('header.site .brand').textContent()).toBe('Globex Service Desk');
    await audit(findings, page, 'request answer page');
    await page.getByLabel('The secret').fill('hunter2');
    await page.getByRole('button', { name: 'Send it' }).click();
    await page.getByRole('heading', { name: 'Sent' }).waitFor();
    expect(await page.locator('header.site .brand').textContent()).toBe('Globex Service Desk');
    await audit(findings, page, 'request answered');
    await context.close();
    expect(findings).toEqual({});
  }, 180_000);
});
