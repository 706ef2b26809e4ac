/**
 * The recipient flow in five languages (one right to left) in real headless Chromium: a push made through the API
 * with the generated SDK, opened by a stranger whose browser asks for a language (`Accept-Language`) or whose link
 * names one (`?locale=`, then kept in a cookie). Checks `<html lang dir>`, the page's texts from the catalogue, the
 * texts the page's script formats (the plural of the expiry line), and the language menu.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createPush } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { translator } from '../../src/i18n/i18n.js';
import { launchChromium, startWeb, type WebApp } from './support.js';

let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
const pageErrors: string[] = [];

/** A push with a retrieval step (nothing is fetched until Reveal) and 3 views, through the API. */
async function makeLink(payload: string): Promise<string> {
  const client = createClient({ baseUrl: app.baseUrl });
  const { data, response } = await createPush({
    client,
    body: { push: { payload, expire_after_views: 3, expire_after_days: 2, retrieval_step: true } },
  });
  expect(response?.status).toBe(201);
  return `${app.baseUrl}/p/${data!.url_token}/r`;
}

async function open(url: string, acceptLanguage?: string): Promise<Page> {
  const context = await chromium.browser.newContext(acceptLanguage ? { locale: acceptLanguage } : {});
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
  return page;
}

/** Reveals the secret and checks the page in `code`: lang, dir, headings, buttons, the script's expiry line. */
async function checkRecipientFlow(page: Page, code: string, dir: 'ltr' | 'rtl', payload: string): Promise<void> {
  const { t } = translator(code);
  expect(await page.locator('html').getAttribute('lang')).toBe(code);
  expect(await page.locator('html').getAttribute('dir')).toBe(dir);
  expect(await page.title()).toContain(t('recipient.pageTitle'));
  await expect.poll(() => page.locator('#push-title').textContent()).toBe(t('recipient.title'));
  expect(await page.locator('#language-select').inputValue()).toBe(code);
  await page.getByRole('button', { name: t('recipient.reveal') }).click();
  await page.locator('#revealed').waitFor();
  expect(await page.locator('#revealed-title').textContent()).toBe(t('recipient.revealed.title'));
  expect(await page.locator('#secret-value').textContent()).toBe(payload);
  // Formatted in the browser by intl-messageformat from the page's catalogue: 2 views left, 2 days.
  expect(await page.locator('#expiry-info').textContent()).toBe(t('js.recipient.expiresIn', { days: 2, views: 2 }));
  expect(await page.getByRole('button', { name: t('js.recipient.copySecret') }).count()).toBe(1);
  // Laid out in the language's direction (CSS follows <html dir>).
  expect(await page.locator('main').evaluate((m) => getComputedStyle(m).direction)).toBe(dir);
}

beforeAll(async () => {
  app = await startWeb();
  chromium = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

const LANGUAGES = [
  { code: 'de', accept: 'de-DE', dir: 'ltr' },
  { code: 'fr', accept: 'fr-FR', dir: 'ltr' },
  { code: 'es', accept: 'es-ES', dir: 'ltr' },
  { code: 'ar', accept: 'ar-EG', dir: 'rtl' },
  { code: 'en', accept: 'en-US', dir: 'ltr' },
] as const;

describe('the recipient page in the visitor’s language', () => {
  for (const { code, accept, dir } of LANGUAGES) {
    it(`${code} by Accept-Language (${accept})`, async () => {
      const payload = `secret for ${code}`;
      const page = await open(await makeLink(payload), accept);
      await checkRecipientFlow(page, code, dir, payload);
      await page.context().close();
    }, 60_000);

    it(`${code} by ?locale=, over a browser that asks for another language, kept in a cookie`, async () => {
      const payload = `secret by query for ${code}`;
      const page = await open(`${await makeLink(payload)}?locale=${code}`, 'ja-JP');
      await checkRecipientFlow(page, code, dir, payload);
      // The choice stays for the next page of this visitor (the cookie), without ?locale=.
      await page.goto(await makeLink('next'));
      expect(await page.locator('html').getAttribute('lang')).toBe(code);
      await page.context().close();
    }, 60_000);
  }

  it('switches language with the menu, keyboard only, and falls back to English for an unknown one', async () => {
    const page = await open(await makeLink('menu'), 'xx-YY');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.locator('#language-select').focus();
    await page.locator('#language-select').selectOption('ar');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(/locale=ar/);
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl');
    expect(await page.locator('#push-title').textContent()).toBe(translator('ar').t('recipient.title'));
    await page.context().close();
  }, 60_000);

  it('ran without a page error', () => {
    expect(pageErrors).toEqual([]);
  });
});

/** The creator's page (the create form at `/`): its body, and the labels its script (create.js) formats. */
describe('the creator’s page in the visitor’s language', () => {
  const english = translator('en').t;
  for (const { code, accept, dir } of [
    { code: 'de', accept: 'de-DE', dir: 'ltr' },
    { code: 'ar', accept: 'ar-EG', dir: 'rtl' },
  ] as const) {
    it(`${code} by Accept-Language (${accept}): the form, its labels and the script's`, async () => {
      const { t } = translator(code);
      const page = await open(`${app.baseUrl}/`, accept);
      expect(await page.locator('html').getAttribute('lang')).toBe(code);
      expect(await page.locator('html').getAttribute('dir')).toBe(dir);
      expect(await page.title()).toContain(t('create.pageTitle'));
      // Translated (not English's text), from the language's own catalogue.
      expect(t('create.title')).not.toBe(english('create.title'));
      expect(await page.locator('h1').textContent()).toBe(t('create.title'));
      expect(await page.getByRole('button', { name: t('create.submit') }).count()).toBe(1);
      expect(await page.locator('label[for="expire_after_views"]').textContent()).toBe(t('create.views.label'));
      // create.js relabels the secret's field for the chosen kind, from the page's catalogue.
      await expect.poll(() => page.locator('#payload-label').textContent()).toBe(t('js.create.textLabel'));
      await page.getByRole('radio', { name: t('pushes.kind', { kind: 'url' }) }).check();
      await expect.poll(() => page.locator('#payload-label').textContent()).toBe(t('js.create.urlLabel'));
      expect(await page.locator('#create-form').evaluate((f) => getComputedStyle(f).direction)).toBe(dir);
      await page.context().close();
    }, 60_000);
  }
});
