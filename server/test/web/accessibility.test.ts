/**
 * Accessibility (issue 42) in real headless Chromium: axe-core (./chromium.ts `axeViolations`, WCAG 2.1 A and AA
 * rules) on every page a person opens — the recipient's (retrieval step, revealed, passphrase with its error, expired;
 * a push for specific people: the code forms, the code sent, a wrong code; a network that may not open a push),
 * the request's answer page before and after an answer, create and its result, the lists, the audit log, the account's
 * token and keys, webhooks, two-factor, requests, sign-in, sign-up, password reset, a malformed link, and the admin
 * console's pages (users, a user, storage, queues, settings, security events, workspaces, a workspace, audit) — in our default
 * look and in a branded one (every PWPUSH_BRAND_* setting, from files in a temporary folder): zero violations. Then the
 * keyboard alone: create a push, retrieve one with a passphrase and copy the secret (a focusable button, announced in
 * the status line), answer a request.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { brandSettings } from '../../src/config/brand-settings.js';
import type { Settings } from '../../src/core.js';
import { axeViolations, type AxeViolation } from './chromium.js';
import { launchChromium, startWeb, type WebApp } from './support.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { makeSettings } from '../support/db.js';

const PASSWORD = 'a long enough password';
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32" viewBox="0 0 64 32"><rect width="64" height="32" rx="6" fill="#7a1f5c"/><text x="32" y="21" font-size="14" text-anchor="middle" fill="#fff">ACME</text></svg>`;

let chromium: Awaited<ReturnType<typeof launchChromium>>;
let folder: string;
/** The SMTP relay of both instances: pushes for specific people need one (their codes are mailed). */
let mailbox: Mailbox;
const apps: Record<'default' | 'branded', WebApp | undefined> = { default: undefined, branded: undefined };

function brandedSettings(): Partial<Settings> {
  writeFileSync(path.join(folder, 'logo.svg'), LOGO);
  writeFileSync(path.join(folder, 'favicon.png'), PNG);
  writeFileSync(
    path.join(folder, 'acme.css'),
    'main h1 { letter-spacing: .01em; }\nfooter.site .brand-footer { font-style: italic; }\n',
  );
  return {
    brand: brandSettings(
      {
        PWPUSH_BRAND_LOGO: path.join(folder, 'logo.svg'),
        PWPUSH_BRAND_FAVICON: path.join(folder, 'favicon.png'),
        PWPUSH_BRAND_CSS: path.join(folder, 'acme.css'),
        PWPUSH_BRAND_ACCENT_COLOR: '#7a1f5c',
        PWPUSH_BRAND_HEADER_COLOR: '#f0e6d2',
        PWPUSH_BRAND_FOOTER_TEXT: 'Acme Corp · 1 Example Street · Springfield',
        PWPUSH_BRAND_IMPRINT_URL: 'https://acme.example/imprint',
        PWPUSH_BRAND_PRIVACY_URL: 'https://acme.example/privacy',
      },
      'Acme Secrets',
    ),
  };
}

beforeAll(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), 'sp-brand-'));
  mailbox = await startMailbox();
  const webhooks = {
    webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] },
    mail: { ...makeSettings().mail, smtpUrl: mailbox.url, attempts: 3, retrySeconds: 1 },
    // The signed-in account of each look is the instance's administrator too: the admin console is checked in both.
    adminEmails: ['a11y-default@example.org', 'a11y-branded@example.org'],
  };
  // The two instances (each its own database) and the browser start together.
  [apps.default, apps.branded, chromium] = await Promise.all([
    startWeb(webhooks),
    startWeb({ ...webhooks, ...brandedSettings() }),
    launchChromium(),
  ]);
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await apps.default?.stop();
  await apps.branded?.stop();
  await mailbox?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** What the API answered, as JSON; fails the test on any status but `status`. */
async function api<T>(app: WebApp, token: string, pathname: string, body?: unknown, status = 201): Promise<T> {
  const response = await fetch(`${app.baseUrl}${pathname}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${pathname}: ${await response.clone().text()}`).toBe(status);
  return (await response.json()) as T;
}

/**
 * Signs in in the page (the account made as `npm run users` makes one: with an SMTP relay, a sign-up in the page waits
 * for its confirmation email) and makes an API token there; returns the token.
 */
async function signInWithToken(app: WebApp, page: Page, email: string): Promise<string> {
  await app.core.users.createUser(email, PASSWORD);
  await page.goto(`${app.baseUrl}/users/sign_in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${app.baseUrl}/`);
  await page.goto(`${app.baseUrl}/users/token`);
  // The account came with a token: the page makes a new one (shown once, as a fresh one is).
  await page.getByRole('button', { name: /^Make a new token/ }).click();
  return (await page.locator('#api-token').textContent())!.trim();
}

/** Pushes and a request of one account, made through the API, for the pages to show. */
async function fixtures(app: WebApp, token: string) {
  type Made = { url_token: string; html_url: string };
  const plain = await api<Made>(app, token, '/api/v2/pushes', {
    push: { payload: 'plain secret', expire_after_views: 5, retrieval_step: true, name: 'plain' },
  });
  const guarded = await api<Made>(app, token, '/api/v2/pushes', {
    push: { payload: 'guarded secret', expire_after_views: 5, passphrase: 'open sesame' },
  });
  const spent = await api<Made>(app, token, '/api/v2/pushes', { push: { payload: 'once', expire_after_views: 1 } });
  const expire = await fetch(`${app.baseUrl}/api/v2/pushes/${spent.url_token}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(expire.status).toBe(200);
  const request = await api<Made>(app, token, '/api/v2/requests', { request: { request: 'The VPN password' } });
  const answered = await api<Made>(app, token, '/api/v2/requests', { request: { request: 'The Wi-Fi key' } });
  const webhook = await api<{ id: string }>(app, token, '/api/v2/webhooks', {
    webhook: { url: 'http://127.0.0.1:9/a11y', events: ['push.viewed'] },
  });
  // Who may open it (issue 42): specific people (a code by email), and a network no test client comes from.
  const forPeople = await api<Made>(app, token, '/api/v2/pushes', {
    push: { payload: 'for ana', recipient_emails: ['ana@example.net'] },
  });
  const office = await api<Made>(app, token, '/api/v2/pushes', {
    push: { payload: 'office only', allowed_networks: ['192.0.2.0/24'] },
  });
  // A workspace (issue 41): its pages, the create form's chooser, and an invitation link's join page.
  const workspace = await api<{ id: number }>(app, token, '/api/v2/workspaces', { workspace: { name: 'Acme' } });
  const invitation = await api<{ url: string }>(app, token, `/api/v2/workspaces/${workspace.id}/invitations`, {
    invitation: { role: 'member' },
  });
  // The workspace's own key and webhook, for its keys and webhooks pages.
  const wsKey = await api<{ id: string }>(app, token, '/api/v2/api_keys', {
    api_key: { name: 'Deploy', scopes: ['pushes:create'], workspace_id: workspace.id },
  });
  const wsHook = await api<{ id: string }>(app, token, '/api/v2/webhooks', {
    webhook: { url: 'http://127.0.0.1:9/team', events: ['push.created'], workspace_id: workspace.id },
  });
  return { plain, guarded, spent, request, answered, webhook, forPeople, office, workspace, invitation, wsKey, wsHook };
}

/** Each page checked, by name, with its violations. */
type Findings = Record<string, AxeViolation[]>;

async function check(findings: Findings, page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations.length > 0) findings[name] = violations;
}

async function visit(findings: Findings, page: Page, url: string, name: string, ready?: () => Promise<unknown>) {
  await page.goto(url);
  await page.waitForLoadState('load');
  if (ready) await ready();
  await check(findings, page, name);
}

async function auditOwnerPages(app: WebApp, owner: Page, made: Awaited<ReturnType<typeof fixtures>>) {
  const findings: Findings = {};
  const base = app.baseUrl;
  await check(findings, owner, 'token page with a fresh token');
  await visit(findings, owner, `${base}/`, 'create');
  await owner.locator('#payload').fill('made in the page');
  await owner.getByRole('button', { name: 'Make the secret link' }).click();
  await owner.getByRole('heading', { name: 'Your secret link' }).waitFor();
  await check(findings, owner, 'create: the link');
  for (const [url, name] of [
    ['/pushes/active', 'my pushes'],
    ['/pushes/expired', 'expired pushes'],
    [`/pushes/${made.plain.url_token}/audit`, 'audit log'],
    ['/users/token', 'API token and keys'],
    ['/users/webhooks', 'webhooks'],
    [`/users/webhooks/${made.webhook.id}`, 'a webhook'],
    ['/users/two_factor', 'two-factor'],
    ['/users/two_factor/setup', 'two-factor setup'],
    ['/requests/active', 'my requests'],
    ['/requests/expired', 'closed requests'],
    ['/requests/new', 'new request'],
    [`/requests/${made.request.url_token}`, 'a request'],
  ] as const)
    await visit(findings, owner, `${base}${url}`, name);
  // The workspace pages (issue 41), each checked to be the page itself, not a 404.
  await visit(findings, owner, `${base}/workspaces`, 'my workspaces', () =>
    owner.getByRole('link', { name: 'Acme' }).first().waitFor(),
  );
  await visit(findings, owner, `${base}/workspaces/${made.workspace.id}`, 'a workspace with a pending invitation', () =>
    owner
      .getByRole('button', { name: /Revoke/ })
      .first()
      .waitFor(),
  );
  await visit(findings, owner, `${base}/`, 'create, with the workspace chooser', () =>
    owner.getByRole('option', { name: 'Acme' }).waitFor({ state: 'attached' }),
  );
  await auditWorkspaceSections(findings, owner, `${base}/workspaces/${made.workspace.id}`, made);
  await visit(findings, owner, `${base}/pushes/active?workspace_id=${made.workspace.id}`, "a workspace's pushes", () =>
    owner.getByText('The pushes of “Acme”.').waitFor(),
  );
  return findings;
}

/** A workspace's settings, audit trail, API keys and webhooks pages (issue 41), each waited for as itself. */
async function auditWorkspaceSections(
  findings: Findings,
  owner: Page,
  ws: string,
  made: Awaited<ReturnType<typeof fixtures>>,
) {
  const save = () => owner.getByRole('button', { name: 'Save the settings' });
  await visit(findings, owner, `${ws}/settings`, "a workspace's settings", () => save().waitFor());
  await owner.locator('#sso_domain').fill('not a domain');
  await save().click();
  await owner.locator('#sso_domain-error').waitFor();
  await check(findings, owner, "a workspace's settings, a field refused");
  const saveBrand = () => owner.getByRole('button', { name: 'Save the brand' });
  await visit(findings, owner, `${ws}/brand`, "a workspace's brand", () => saveBrand().waitFor());
  await owner.locator('#accent_color').fill('#ffff00');
  await saveBrand().click();
  await owner.locator('#accent_color-error').waitFor();
  await check(findings, owner, "a workspace's brand, a colour refused");
  await visit(findings, owner, `${ws}/brand/preview`, "a workspace's brand preview", () =>
    owner.getByRole('heading', { name: 'Someone sent you a secret' }).waitFor(),
  );
  await visit(findings, owner, `${ws}/audit`, "a workspace's audit trail", () =>
    owner
      .getByRole('cell', { name: /invited/ })
      .first()
      .waitFor(),
  );
  await visit(findings, owner, `${ws}/keys`, "a workspace's API keys", () =>
    owner
      .getByRole('link', { name: /Revoke/ })
      .first()
      .waitFor(),
  );
  await visit(findings, owner, `${ws}/keys/${made.wsKey.id}/revoke`, 'revoking a workspace key', () =>
    owner.locator('#revoke-confirm').waitFor(),
  );
  await visit(findings, owner, `${ws}/webhooks`, "a workspace's webhooks", () =>
    owner.getByRole('link', { name: 'http://127.0.0.1:9/team' }).waitFor(),
  );
  await visit(findings, owner, `${ws}/webhooks/${made.wsHook.id}`, "a workspace webhook's deliveries", () =>
    owner.getByRole('button', { name: 'Send a test event' }).waitFor(),
  );
}

async function auditRecipientPages(app: WebApp, stranger: Page, made: Awaited<ReturnType<typeof fixtures>>) {
  const findings: Findings = {};
  const base = app.baseUrl;
  for (const [url, name] of [
    ['/users/sign_in', 'sign in'],
    ['/users/sign_up', 'sign up'],
    ['/users/password/new', 'forgot password'],
    ['/', 'create (anonymous)'],
    ['/p/%ZZ', 'bad link'],
    [`/p/${made.spent.url_token}`, 'expired push'],
  ] as const)
    await visit(findings, stranger, `${base}${url}`, name);
  await visit(findings, stranger, made.invitation.url, 'join page (signed out)', () =>
    stranger
      .getByRole('link', { name: /sign in/i })
      .first()
      .waitFor(),
  );

  await visit(findings, stranger, made.plain.html_url, 'retrieval step', () =>
    stranger.getByRole('button', { name: 'Reveal the secret' }).waitFor(),
  );
  await stranger.getByRole('button', { name: 'Reveal the secret' }).click();
  await stranger.locator('#secret-value').waitFor();
  await check(findings, stranger, 'revealed secret');

  await visit(findings, stranger, made.guarded.html_url, 'passphrase', () =>
    stranger.getByLabel('Passphrase').waitFor(),
  );
  await stranger.getByLabel('Passphrase').fill('wrong guess');
  await stranger.getByRole('button', { name: 'Reveal the secret' }).click();
  await stranger.getByRole('alert').filter({ hasText: 'That passphrase is not correct' }).waitFor();
  await check(findings, stranger, 'passphrase refused');

  await visit(findings, stranger, made.forPeople.html_url, 'code forms', () =>
    stranger.getByLabel('Your email address').waitFor(),
  );
  await stranger.getByLabel('Your email address').fill('ana@example.net');
  await stranger.getByRole('button', { name: 'Email me a code' }).click();
  await stranger.locator('#code-sent').waitFor();
  await check(findings, stranger, 'code sent');
  await stranger.getByLabel('Code from the email').fill('0000 0000');
  await stranger.getByRole('button', { name: 'Reveal the secret' }).click();
  await stranger.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
  await check(findings, stranger, 'code refused');
  await visit(findings, stranger, made.office.html_url, 'network refused');

  await visit(findings, stranger, made.answered.html_url, 'request answer page');
  await stranger.getByLabel('The secret').fill('hunter2');
  await stranger.getByRole('button', { name: 'Send it' }).click();
  await stranger.getByRole('heading', { name: 'Sent' }).waitFor();
  await check(findings, stranger, 'request answered');
  await visit(findings, stranger, made.answered.html_url, 'request closed');
  return findings;
}

/** The admin console's pages (issue 41's operator pages), each waited for as itself, then the trail of an action. */
async function auditAdminPages(app: WebApp, admin: Page, made: Awaited<ReturnType<typeof fixtures>>) {
  const findings: Findings = {};
  const base = app.baseUrl;
  const heading = (name: string | RegExp) => () => admin.getByRole('heading', { name, level: 1 }).waitFor();
  await visit(findings, admin, `${base}/admin`, 'admin: home', heading('Admin console'));
  await visit(findings, admin, `${base}/admin/users?q=a11y`, 'admin: users found', () =>
    admin
      .getByRole('link', { name: /^a11y-/ })
      .first()
      .waitFor(),
  );
  await admin
    .getByRole('link', { name: /^a11y-/ })
    .first()
    .click();
  await admin.getByRole('heading', { name: /^a11y-/, level: 1 }).waitFor();
  await check(findings, admin, 'admin: a user');
  for (const [url, name, title] of [
    ['/admin/storage', 'admin: storage', /storage/i],
    ['/admin/queues', 'admin: queues', /queue/i],
    ['/admin/settings', 'admin: settings', /settings/i],
    ['/admin/security', 'admin: security events', /security/i],
    ['/admin/workspaces?q=Acme', 'admin: workspaces found', /workspaces/i],
    [`/admin/workspaces/${made.workspace.id}`, 'admin: a workspace', 'Acme'],
    ['/admin/audit', 'admin: audit', /audit/i],
  ] as const)
    await visit(findings, admin, `${base}${url}`, name, heading(title));
  return findings;
}

describe.each(['default', 'branded'] as const)('axe-core, WCAG 2.1 AA, the %s look', (theme) => {
  let owner: BrowserContext;
  let stranger: BrowserContext;
  let made: Awaited<ReturnType<typeof fixtures>>;
  let ownerPage: Page;

  beforeAll(async () => {
    const app = apps[theme]!;
    owner = await chromium.browser.newContext();
    stranger = await chromium.browser.newContext({ viewport: { width: 420, height: 800 } });
    ownerPage = await owner.newPage();
    const token = await signInWithToken(app, ownerPage, `a11y-${theme}@example.org`);
    made = await fixtures(app, token);
  }, 120_000);

  afterAll(async () => {
    await owner?.close();
    await stranger?.close();
  });

  it('finds nothing on the signed-in pages', async () => {
    expect(await auditOwnerPages(apps[theme]!, ownerPage, made)).toEqual({});
  }, 180_000);

  it('finds nothing on the pages of recipients, responders and visitors', async () => {
    expect(await auditRecipientPages(apps[theme]!, await stranger.newPage(), made)).toEqual({});
  }, 180_000);

  it("finds nothing on the admin console's pages", async () => {
    expect(await auditAdminPages(apps[theme]!, ownerPage, made)).toEqual({});
  }, 180_000);
});

describe('the check itself', () => {
  it('finds what it should: low contrast and an image without a text alternative, planted in a page', async () => {
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${apps.default!.baseUrl}/users/sign_in`);
    expect(await axeViolations(page)).toEqual([]);
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('main h1')!.style.color = '#cccccc';
      document.querySelector('main')!.append(Object.assign(document.createElement('img'), { src: '/nothing.png' }));
    });
    expect((await axeViolations(page)).map((v) => [v.rule, v.nodes])).toEqual([
      ['color-contrast', ['h1']],
      ['image-alt', ['img']],
    ]);
    await context.close();
  });
});

describe('the branded look in Chromium', () => {
  it("carries the brand's name, logo, favicon, colours, CSS and footer on a recipient's page", async () => {
    const app = apps.branded!;
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    const loaded: string[] = [];
    page.on('response', (r) => void loaded.push(`${r.status()} ${new URL(r.url()).pathname}`));
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await expect(page.title()).resolves.toBe('Sign in · Acme Secrets');
    expect(await page.locator('header.site .brand').textContent()).toBe('Acme Secrets');
    expect(await page.locator('header.site .brand img.logo').getAttribute('alt')).toBe('');
    expect(
      await page.locator('header.site .brand img.logo').evaluate((img: HTMLImageElement) => img.naturalWidth),
    ).toBe(64);
    const colours = await page.evaluate(() => {
      const header = getComputedStyle(document.querySelector('header.site')!);
      const button = getComputedStyle(document.querySelector('main button[type=submit]')!);
      return { header: header.backgroundColor, headerText: header.color, button: button.backgroundColor };
    });
    expect(colours).toEqual({ header: 'rgb(240, 230, 210)', headerText: 'rgb(0, 0, 0)', button: 'rgb(122, 31, 92)' });
    expect(await page.locator('footer.site .brand-footer').evaluate((p) => getComputedStyle(p).fontStyle)).toBe(
      'italic',
    );
    expect(await page.locator('footer.site').getByRole('link', { name: 'Imprint' }).getAttribute('href')).toBe(
      'https://acme.example/imprint',
    );
    expect(await page.locator('footer.site').getByRole('link', { name: 'Privacy' }).getAttribute('href')).toBe(
      'https://acme.example/privacy',
    );
    const icon = await page.locator('link[rel=icon]').getAttribute('href');
    expect(icon).toMatch(/^\/brand\/instance\/favicon\.png\?v=/);
    // Chromium fetches the favicon when it likes: the page's own files are what it must have loaded.
    expect(loaded.filter((line) => line.includes('/brand/') && !line.includes('favicon')).sort()).toEqual([
      '200 /brand/instance/custom.css',
      '200 /brand/instance/logo.svg',
      '200 /brand/instance/theme.css',
    ]);
    await context.close();
  });

  it("keeps our own look on the default instance: no brand file, our name, our header's colour", async () => {
    const app = apps.default!;
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await expect(page.title()).resolves.toBe('Sign in · Secret Push');
    expect(await page.locator('link[href^="/brand/"], img[src^="/brand/"]').count()).toBe(0);
    expect(await page.locator('header.site').evaluate((h) => getComputedStyle(h).backgroundColor)).toBe(
      'rgb(36, 41, 47)',
    );
    expect(await page.locator('.brand-footer').count()).toBe(0);
    await context.close();
  });
});

/** Presses Tab until the focused element matches `selector` (at most `max` presses); fails when it never does. */
async function tabTo(page: Page, selector: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`${selector} is not reachable with the Tab key`);
}

describe('with the keyboard alone', () => {
  let context: BrowserContext;
  let token: string;

  beforeAll(async () => {
    const app = apps.default!;
    context = await chromium.browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    token = await signInWithToken(app, await context.newPage(), 'keyboard@example.org');
  }, 120_000);

  afterAll(async () => {
    await context?.close();
  });

  it('creates a push: every field and the button are reached with Tab, the form is sent with Enter', async () => {
    const page = await context.newPage();
    await page.goto(`${apps.default!.baseUrl}/`);
    await tabTo(page, '#payload');
    await page.keyboard.type('typed, never clicked');
    await tabTo(page, 'button[type=submit]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your secret link' }).waitFor();
    const link = (await page.locator('#share-link').textContent())!.trim();
    expect(link).toMatch(/\/p\//);
    await page.close();
  });

  it('retrieves a push with a passphrase and copies the secret with the keyboard; the copy is announced', async () => {
    const app = apps.default!;
    const made = await api<{ html_url: string }>(app, token, '/api/v2/pushes', {
      push: { payload: 'copied without a mouse', passphrase: 'keyboard only' },
    });
    const page = await context.newPage();
    await page.goto(made.html_url);
    await tabTo(page, '#passphrase');
    await page.keyboard.type('keyboard only');
    await page.keyboard.press('Enter');
    await page.locator('#secret-value').waitFor();
    await tabTo(page, 'button[data-copy-target="secret-value"]');
    const name = await page.evaluate(() => document.activeElement?.textContent);
    expect(name).toBe('Copy the secret');
    await page.keyboard.press('Enter');
    await page.locator('#status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    expect(await page.locator('#status').getAttribute('aria-live')).toBe('polite');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('copied without a mouse');
    await page.close();
  });

  it('answers a request', async () => {
    const app = apps.default!;
    const made = await api<{ html_url: string }>(app, token, '/api/v2/requests', {
      request: { request: 'The database password' },
    });
    const page = await context.newPage();
    await page.goto(made.html_url);
    await tabTo(page, '#payload');
    await page.keyboard.type('s3cr3t typed');
    await tabTo(page, 'button[type=submit]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sent' }).waitFor();
    await page.close();
  });
});
