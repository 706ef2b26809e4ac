/**
 * The pages in real headless Chromium (playwright-core + Debian's /usr/bin/chromium): sign up, make an API token,
 * create pushes in the page, open them in a second browser context (another person), reveal, view limit, passphrase,
 * file download, delete by the viewer, the owner's pages, and the token against the API. Screenshots of the
 * recipient page (before reveal, revealed, expired) and the token page go to docs/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, screenshotPath, startWeb, type WebApp } from './support.js';

const EMAIL = 'alice@example.org';
const PASSWORD = 'a long enough password';

let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
let owner: BrowserContext;
let recipient: BrowserContext;
let ownerPage: Page;
let apiToken = '';
const cspViolations: string[] = [];

function watch(page: Page): Page {
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
  });
  page.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`));
  return page;
}

/** Fills and submits the create form; returns the share link shown. */
async function createPush(opts: {
  kind?: 'text' | 'url' | 'qr' | 'file';
  payload?: string;
  views?: number;
  passphrase?: string;
  retrievalStep?: boolean;
  deletable?: boolean;
  file?: { name: string; mimeType: string; buffer: Buffer };
}): Promise<string> {
  const page = ownerPage;
  await page.goto(`${app.baseUrl}/`);
  await page
    .getByRole('radio', {
      name: { url: 'URL', qr: 'QR code', file: 'Files', text: 'Text' }[opts.kind ?? 'text'],
      exact: true,
    })
    .check();
  if (opts.payload !== undefined) await page.locator('#payload').fill(opts.payload);
  if (opts.file) await page.locator('#files').setInputFiles(opts.file);
  await page.getByLabel('Expire after views').fill(String(opts.views ?? 5));
  if (opts.passphrase) await page.getByLabel('Passphrase (optional)').fill(opts.passphrase);
  await page.getByLabel(/Ask the recipient to click/).setChecked(opts.retrievalStep ?? false);
  await page.getByLabel(/Let the recipient delete/).setChecked(opts.deletable ?? true);
  await page.getByRole('button', { name: 'Make the secret link' }).click();
  await page.getByRole('heading', { name: 'Your secret link' }).waitFor();
  const link = page.locator('#share-link');
  await link.waitFor();
  return (await link.textContent())!.trim();
}

async function api(path: string, token: string, init: RequestInit = {}) {
  return fetch(`${app.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) },
  });
}

async function viewsRemaining(link: string): Promise<number> {
  const token = new URL(link).pathname.split('/')[2]!;
  const [row] = await app.db.query<{ n: number }>(
    'select expire_after_views - views_used as n from pushes where url_token = $1',
    [token],
  );
  return row!.n;
}

beforeAll(async () => {
  app = await startWeb();
  chromium = await launchChromium();
  owner = await chromium.browser.newContext({ viewport: { width: 1000, height: 800 } });
  recipient = await chromium.browser.newContext({ viewport: { width: 420, height: 800 }, acceptDownloads: true });
  ownerPage = watch(await owner.newPage());
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

describe('in headless Chromium', () => {
  it('signs up and makes an API token, shown once with a copy button', async () => {
    await ownerPage.goto(`${app.baseUrl}/users/sign_up`);
    await ownerPage.getByLabel('Email').fill(EMAIL);
    await ownerPage.getByLabel('Password').fill(PASSWORD);
    await ownerPage.getByRole('button', { name: 'Sign up' }).click();
    await ownerPage.waitForURL(`${app.baseUrl}/`);
    await ownerPage.getByRole('button', { name: 'Sign out' }).waitFor();

    await ownerPage.getByRole('link', { name: 'API token' }).click();
    await ownerPage.getByText('You have no API token yet.').waitFor();
    await ownerPage.getByRole('button', { name: 'Make a token' }).click();
    const token = ownerPage.locator('#api-token');
    apiToken = (await token.textContent())!.trim();
    expect(apiToken).toMatch(/^spt_/);
    await ownerPage.getByRole('button', { name: 'Copy the token' }).click();
    await ownerPage.getByRole('button', { name: 'Copied' }).waitFor();
    await ownerPage.screenshot({ path: screenshotPath('token-page.png'), fullPage: true });

    // Shown once: the page shows only that a token exists after a reload.
    await ownerPage.goto(`${app.baseUrl}/users/token`);
    expect(await ownerPage.locator('#api-token').count()).toBe(0);
    await ownerPage.getByText('You have an API token').waitFor();
  });

  it('creates a push in the page; the recipient reveals it in another context until its view limit expires it', async () => {
    const secret = 'correct-horse-battery-staple-42';
    const link = await createPush({ payload: secret, views: 2, retrievalStep: true });
    expect(link).toMatch(/\/p\/[^/]+\/r$/);
    expect(await viewsRemaining(link)).toBe(2);

    const page = watch(await recipient.newPage());
    await page.goto(link);
    await page.getByRole('button', { name: 'Reveal the secret' }).waitFor();
    expect(await page.locator('#secret-content').textContent()).toBe('');
    expect(await viewsRemaining(link)).toBe(2); // opening the page consumed nothing
    await page.screenshot({ path: screenshotPath('recipient-before-reveal.png'), fullPage: true });

    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe(secret);
    // Focus moves to the revealed secret's heading for keyboard and screen-reader users.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('revealed-title');
    await page.getByText('1 more view').waitFor();
    expect(await viewsRemaining(link)).toBe(1);
    await page.screenshot({ path: screenshotPath('recipient-revealed.png'), fullPage: true });

    await page.reload();
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe(secret);
    await page.getByText('This was the last view').waitFor();

    await page.reload();
    await page.getByRole('heading', { name: 'This secret has expired or was deleted' }).waitFor();
    expect(await page.getByRole('button', { name: 'Reveal the secret' }).count()).toBe(0);
    await page.screenshot({ path: screenshotPath('recipient-expired.png'), fullPage: true });
    await page.close();
  });

  it('asks for the passphrase: a wrong one is refused clearly, the right one opens the secret', async () => {
    const link = await createPush({ payload: 'behind-a-passphrase', views: 3, passphrase: 'open sesame' });
    const page = watch(await recipient.newPage());
    await page.goto(link);
    await page.getByLabel('Passphrase').fill('wrong guess');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.getByRole('alert').filter({ hasText: 'That passphrase is not correct' }).waitFor();
    expect(await page.locator('#passphrase').getAttribute('aria-invalid')).toBe('true');
    expect(await viewsRemaining(link)).toBe(3);

    await page.getByLabel('Passphrase').fill('open sesame');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe('behind-a-passphrase');
    expect(await viewsRemaining(link)).toBe(2);
    await page.close();
  });

  it('shows the too-many-attempts limit (429) clearly', async () => {
    const link = await createPush({ payload: 'rate-limited', views: 3, passphrase: 'right one' });
    const page = watch(await recipient.newPage());
    await page.goto(link);
    for (let i = 0; i < 6; i += 1) {
      await page.getByLabel('Passphrase').fill(`guess ${i}`);
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#loading').waitFor({ state: 'hidden' });
    }
    await page.getByRole('alert').filter({ hasText: 'Too many attempts' }).waitFor();
    await page.close();
  });

  it('downloads a file of a file push (signed in), and reveals on load when there is no retrieval step', async () => {
    const bytes = Buffer.from('hello from a file push\n'.repeat(20));
    const link = await createPush({
      kind: 'file',
      payload: 'the report',
      views: 2,
      file: { name: 'report.txt', mimeType: 'text/plain', buffer: bytes },
    });
    expect(link).not.toMatch(/\/r$/);
    const page = watch(await recipient.newPage());
    await page.goto(link);
    const fileLink = page.getByRole('link', { name: 'report.txt' });
    await fileLink.waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe('the report');
    const [download] = await Promise.all([page.waitForEvent('download'), fileLink.click()]);
    expect(download.suggestedFilename()).toBe('report.txt');
    const stream = await download.createReadStream();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    await page.close();
  });

  it('shows a URL push as a safe link and a QR push as a drawn QR code', async () => {
    const urlLink = await createPush({ kind: 'url', payload: 'https://example.org/reset?code=abc', views: 2 });
    const page = watch(await recipient.newPage());
    await page.goto(urlLink);
    const a = page.locator('a#secret-value');
    await a.waitFor();
    expect(await a.getAttribute('href')).toBe('https://example.org/reset?code=abc');
    expect(await a.getAttribute('rel')).toBe('noopener noreferrer');

    const qrLink = await createPush({ kind: 'qr', payload: 'WIFI:S:home;T:WPA;P:hunter2;;', views: 2 });
    await page.goto(qrLink);
    await page.locator('#qr-code svg').waitFor();
    expect(await page.locator('#qr-code svg path').count()).toBeGreaterThan(0);
    await page.close();
  });

  it('lets the viewer delete the secret now; the API then reports it expired and deleted', async () => {
    const link = await createPush({ payload: 'delete-me', views: 5, deletable: true });
    const page = watch(await recipient.newPage());
    await page.goto(link);
    await page.getByRole('button', { name: 'Delete now' }).click();
    await page.getByText('The secret was deleted').waitFor();
    const urlToken = new URL(link).pathname.split('/')[2]!;
    const after = await (await api(`/api/v2/pushes/${urlToken}`, apiToken)).json();
    expect(after.expired).toBe(true);
    expect(after.deleted).toBe(true);
    expect(after.payload).toBeNull();
    await page.close();
  });

  it('shows the owner active and expired pushes and the audit log, and expires a push from the list', async () => {
    await ownerPage.goto(`${app.baseUrl}/pushes/active`);
    const rows = ownerPage.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThan(0);
    await ownerPage
      .getByRole('link', { name: /^Audit log/ })
      .first()
      .click();
    await ownerPage.getByRole('heading', { name: 'Audit log' }).waitFor();
    await ownerPage.getByText('Created', { exact: true }).first().waitFor();

    await ownerPage.goto(`${app.baseUrl}/pushes/active`);
    const before = await rows.count();
    await ownerPage
      .getByRole('button', { name: /^Expire/ })
      .first()
      .click();
    await ownerPage.waitForURL(`${app.baseUrl}/pushes/expired`);
    expect(await ownerPage.locator('tbody tr').count()).toBeGreaterThan(0);
    await ownerPage.goto(`${app.baseUrl}/pushes/active`);
    expect(await ownerPage.locator('tbody tr').count()).toBe(before - 1);
  });

  it('the token made in the page works against the API, and rotating it stops the old one at once', async () => {
    const list = await api('/api/v2/pushes/active', apiToken);
    expect(list.status).toBe(200);
    const items = (await list.json()) as { url_token: string }[];
    expect(items.length).toBeGreaterThan(0);

    await ownerPage.goto(`${app.baseUrl}/users/token`);
    await ownerPage.getByRole('button', { name: /Make a new token/ }).click();
    const fresh = (await ownerPage.locator('#api-token').textContent())!.trim();
    expect(fresh).not.toBe(apiToken);
    expect((await api('/api/v2/pushes/active', apiToken)).status).toBe(401);
    expect((await api('/api/v2/pushes/active', fresh)).status).toBe(200);
  });

  it('renders the API docs from our own assets without CSP violations, and no page broke the CSP', async () => {
    const page = watch(await owner.newPage());
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(app.baseUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:'))
        external.push(r.url());
    });
    await page.goto(`${app.baseUrl}/help/api`);
    await page.getByText('Report the version and enabled features').first().waitFor({ timeout: 20_000 });
    // Its header is styled like every page's, and "try it" calls this instance, not the document's example host.
    expect(await page.locator('header.site').evaluate((e) => getComputedStyle(e).backgroundColor)).toBe(
      'rgb(36, 41, 47)',
    );
    await page.getByText('This instance').first().waitFor();
    expect(await page.getByText(app.baseUrl).count()).toBeGreaterThan(0);
    expect(await page.getByText('{scheme}://{host}').count()).toBe(0);
    await page.close();
    expect(external).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
