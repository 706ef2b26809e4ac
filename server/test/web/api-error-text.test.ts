/**
 * A refusal's text on a page in the visitor's language (issue 42): the catalogue's `js.apiError.*` sentences, one per
 * error code of the contract a page can meet, said by the server's pages (server/src/web/error-text.ts) and by the
 * pages' scripts (`window.SecretPush.apiError`, app.js) in the page's language; English pages keep the API's own,
 * more precise text; a code without a sentence (`validation_failed`) keeps the API's text everywhere.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LOCALES } from '../../src/i18n/locales.js';
import { translator } from '../../src/i18n/i18n.js';
import { apiErrorKey, errorText } from '../../src/web/error-text.js';
import { launchChromium, startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
const english = LOCALES[0]!.messages;
const de = LOCALES.find((l) => l.code === 'de')!.messages;
const ar = LOCALES.find((l) => l.code === 'ar')!.messages;

/** The codes ErrorResponse's description lists (openapi/components/schemas/ErrorResponse.yaml). */
function contractCodes(): Set<string> {
  const schema = parse(
    readFileSync(new URL('../../../openapi/components/schemas/ErrorResponse.yaml', import.meta.url), 'utf8'),
  ) as { description: string };
  const list = schema.description.slice(schema.description.indexOf('Codes:'));
  return new Set([...list.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
}

describe('a refusal in the visitor’s language', () => {
  it('has a sentence only for codes the contract lists, found from the code', () => {
    const codes = contractCodes();
    const keys = Object.keys(english).filter((k) => k.startsWith('js.apiError.'));
    expect(keys.length).toBeGreaterThanOrEqual(20);
    const camel = (code: string) => code.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
    const byKey = new Map([...codes].map((code) => [`js.apiError.${camel(code)}`, code]));
    for (const key of keys) {
      const code = byKey.get(key);
      expect(code, `${key} names no code of ErrorResponse`).toBeDefined();
      expect(apiErrorKey(code!)).toBe(key);
    }
    expect(apiErrorKey('validation_failed')).toBeUndefined();
    expect(apiErrorKey('no_such_code')).toBeUndefined();
  });

  it('says the catalogue’s sentence in other languages and the API’s text in English', () => {
    const refusal = { code: 'storage_quota_exceeded', message: 'Storage quota exceeded: at most 1 MiB; 900 KiB used.' };
    expect(errorText(translator('en'), refusal)).toBe(refusal.message);
    expect(errorText(translator('de'), refusal)).toBe(de['js.apiError.storageQuotaExceeded']);
    expect(errorText(translator('ar'), refusal)).toBe(ar['js.apiError.storageQuotaExceeded']);
    expect(de['js.apiError.storageQuotaExceeded']).not.toBe(english['js.apiError.storageQuotaExceeded']);
    const fields = { code: 'validation_failed', message: 'payload: is required' };
    expect(errorText(translator('de'), fields)).toBe(fields.message);
  });

  describe('over HTTP and in Chromium', () => {
    let app: WebApp;
    let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
    beforeAll(async () => {
      app = await startWeb({ userOpenRequests: 1 });
    });
    afterAll(async () => {
      await chromium?.close();
      await app?.stop();
    });

    it('tells a requester in German that too many requests are open, and in English as the API says it', async () => {
      const ask = async (visitor: Visitor) => {
        const form = await visitor.page('/requests/new');
        return visitor.post('/requests', {
          _csrf: form.csrf,
          request: 'The wifi password',
          expire_after_days: '3',
          expire_after_views: '1',
          public_key: '',
        });
      };
      const german = new Visitor(app.baseUrl, { 'accept-language': 'de-DE,de;q=0.9' });
      expect((await german.signUp('error-text-de@example.org', PASSWORD)).status).toBe(303);
      expect((await ask(german)).status).toBe(303);
      const refused = await ask(german);
      expect(refused.status).toBe(429);
      const html = await refused.text();
      expect(html).toContain('<html lang="de"');
      // In the page's text, not only in its script's catalogue.
      const text = html.replace(/<div id="sp-messages"[^>]*><\/div>/, '');
      expect(text).toContain(de['js.apiError.tooManyOpenRequests']);
      expect(text).not.toContain('Too many open requests');

      const englishVisitor = new Visitor(app.baseUrl);
      expect((await englishVisitor.signUp('error-text-en@example.org', PASSWORD)).status).toBe(303);
      expect((await ask(englishVisitor)).status).toBe(303);
      const englishRefused = await ask(englishVisitor);
      expect(englishRefused.status).toBe(429);
      // The API's own message (it names the limit), as the JSON answer would carry it.
      expect(await englishRefused.text()).toContain(
        'Too many open requests: an account may have at most 1 open requests at once.',
      );
      const [open] = await app.db.query<{ n: string }>('select count(*) as n from requests');
      expect(Number(open!.n)).toBe(2);
    });

    it('gives the pages’ scripts the same sentences in the page’s language (right to left too)', async () => {
      chromium = await launchChromium();
      const context = await chromium.browser.newContext();
      try {
        const page = await context.newPage();
        // A recipient's page (opening it spends no view): its script meets the API's refusals.
        const made = await fetch(`${app.baseUrl}/api/v2/pushes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ push: { payload: 'error text', retrieval_step: true } }),
        });
        expect(made.status).toBe(201);
        const { html_url: link } = (await made.json()) as { html_url: string };
        const said = async (locale: string) => {
          await page.goto(`${link}?locale=${locale}`);
          return page.evaluate(() => {
            const S = (window as unknown as { SecretPush: { apiError(b: unknown, f: string): string } }).SecretPush;
            return {
              dir: document.documentElement.dir,
              limited: S.apiError({ code: 'rate_limited', error: 'Rate limit exceeded (10/min).' }, 'fallback'),
              fields: S.apiError({ code: 'validation_failed', error: 'payload: is required' }, 'fallback'),
              unknown: S.apiError({ code: 'no_such_code', error: 'Some text.' }, 'fallback'),
              empty: S.apiError(null, 'fallback'),
            };
          });
        };
        expect(await said('de')).toEqual({
          dir: 'ltr',
          limited: de['js.apiError.rateLimited'],
          fields: 'payload: is required',
          unknown: 'Some text.',
          empty: 'fallback',
        });
        expect(await said('ar')).toEqual({
          dir: 'rtl',
          limited: ar['js.apiError.rateLimited'],
          fields: 'payload: is required',
          unknown: 'Some text.',
          empty: 'fallback',
        });
        expect((await said('en')).limited).toBe('Rate limit exceeded (10/min).');
      } finally {
        await context.close();
      }
    });
  });
});
