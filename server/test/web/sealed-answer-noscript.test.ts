/**
 * A sealed request's answer form without its script (issue 45), in real headless Chromium on the real app: with
 * JavaScript off, nothing the responder types ever leaves the browser (no request the page sends carries the
 * plaintext or the passphrase, however the form is submitted: the button, Enter in a field), the page says why
 * (`<noscript>`), and the request stays pending with nothing stored; with JavaScript on, the same page seals the
 * answer and sends only envelopes. The server still refuses a plaintext answer to a sealed request posted by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { generateRequestKeyPair } from '@secret-push/sdk';
import { launchChromium, startWeb, Visitor, type WebApp } from './support.js';

let app: WebApp;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let browser: Browser;

beforeAll(async () => {
  app = await startWeb();
  chromium = await launchChromium();
  browser = chromium.browser;
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

/** A sealed request made through the service, as the requester's browser makes it (the public half only). */
async function sealedRequest(): Promise<string> {
  const user = await app.core.users.createUser(`sealer-${Math.random().toString(36).slice(2)}@example.org`);
  const { publicKey } = await generateRequestKeyPair();
  const created = await app.core.requests.create(
    { request: 'The signing key, sealed please', public_key: publicKey },
    { actor: { userId: user.userId, ip: '127.0.0.1', userAgent: '', referrer: '' }, baseUrl: app.baseUrl },
  );
  return created.url_token;
}

async function stateOf(token: string): Promise<{ state: string; pushes: number }> {
  const [row] = await app.db.query<{ state: string; pushes: string }>(
    `select state, (select count(*) from pushes p where p.user_id = r.user_id) as pushes
     from requests r where url_token = $1`,
    [token],
  );
  return { state: row!.state, pushes: Number(row!.pushes) };
}

/** Every request the page sends, with its body. */
function record(page: Page): string[] {
  const sent: string[] = [];
  page.on('request', (r) => sent.push(`${r.method()} ${r.url()}\n${r.postData() ?? ''}`));
  return sent;
}

describe('the sealed answer form', () => {
  it('without JavaScript sends nothing the responder typed, says why, and stores nothing', async () => {
    const token = await sealedRequest();
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const sent = record(page);
      await page.goto(`${app.baseUrl}/r/${token}`);
      expect(await page.locator('#ask').textContent()).toBe('The signing key, sealed please');
      await expect.poll(() => page.locator('noscript').first().textContent()).toMatch(/JavaScript/);
      const plaintext = 'plain-signing-key-7f3a91';
      const passphrase = 'plain-passphrase-2c8e';
      await page.getByLabel('The secret').fill(plaintext);
      await page.getByLabel(/Passphrase/).fill(passphrase);
      // Every way a form without a script is sent: the button (even forced), Enter in a one-line field.
      await page
        .getByRole('button', { name: 'Send it' })
        .click({ force: true, timeout: 2000 })
        .catch(() => undefined);
      await page.getByLabel(/Passphrase/).press('Enter');
      await page.waitForTimeout(500);
      const posted = sent.filter((s) => s.startsWith('POST'));
      for (const body of posted) {
        expect(body).not.toContain(plaintext);
        expect(body).not.toContain(passphrase);
      }
      expect(sent.join('\n')).not.toContain(plaintext);
      expect(await stateOf(token)).toEqual({ state: 'pending', pushes: 0 });
    } finally {
      await context.close();
    }
  });

  it('with JavaScript seals the answer in the page and sends only envelopes', async () => {
    const token = await sealedRequest();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const sent = record(page);
      await page.goto(`${app.baseUrl}/r/${token}`);
      const plaintext = 'scripted-signing-key-51d0';
      await page.getByLabel('The secret').fill(plaintext);
      await page.getByRole('button', { name: 'Send it' }).click();
      await page.locator('#answer-sent').waitFor({ state: 'visible' });
      const posted = sent.filter((s) => s.startsWith('POST'));
      expect(posted).toHaveLength(1);
      expect(posted[0]).toContain(`/api/v2/requests/${token}/response`);
      expect(posted[0]).toContain('"sealed_key":"sph1.');
      expect(posted[0]).not.toContain(plaintext);
      expect(await stateOf(token)).toEqual({ state: 'fulfilled', pushes: 1 });
    } finally {
      await context.close();
    }
  });

  it('still refuses a plaintext answer to a sealed request posted by hand, storing nothing', async () => {
    const token = await sealedRequest();
    const responder = new Visitor(app.baseUrl);
    const form = await responder.page(`/r/${token}`);
    const refused = await responder.post(`/r/${token}`, { _csrf: form.csrf, payload: 'by hand', passphrase: '' });
    expect(refused.status).toBe(422);
    expect(await stateOf(token)).toEqual({ state: 'pending', pushes: 0 });
  });
});
