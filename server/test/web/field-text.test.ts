/**
 * A refusal's field messages on a page in the visitor's language (issue 42, server/src/web/field-text.ts): every
 * field message the API's rules make for a push (the contract's schema, the instance's bounds, the files' rules, the
 * two lifetimes), read from real 422 answers of the running server, has a sentence in every catalogue; English keeps
 * the API's text; a message of another form is shown as the API says it. Then the pages: the create form in German
 * (two bounds refused) and the sign-up form in French say a refused field in their language, beside the field, and store nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCALES } from '../../src/i18n/locales.js';
import { translator } from '../../src/i18n/i18n.js';
import { fieldsLine, fieldText, fieldTexts } from '../../src/web/field-text.js';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
const en = LOCALES[0]!.messages;
const de = LOCALES.find((l) => l.code === 'de')!.messages;
const fr = LOCALES.find((l) => l.code === 'fr')!.messages;
const FILE = { filename: 'a.txt', content: 'aGk=', content_type: 'text/plain' };

/** Bodies the API refuses with 422, each for one rule of a push's fields. */
const REFUSED: Record<string, unknown> = {
  required: {},
  blank: { payload: '' },
  kind: { payload: 'x', expire_after_views: 'ten' },
  choice: { payload: 'x', kind: 'poem' },
  tooLong: { payload: 'x', name: 'n'.repeat(2000) },
  atLeast: { payload: 'x', expire_after_views: 0 },
  atMost: { payload: 'x', expire_after_views: 100_000 },
  between: { payload: 'x', expire_after_days: 60 },
  url: { payload: 'not a link', kind: 'url' },
  fileNeeded: { kind: 'file', files: [] },
  filesOnlyForFiles: { payload: 'x', kind: 'text', files: [FILE] },
  tooManyFiles: { kind: 'file', files: Array.from({ length: 12 }, () => FILE) },
  lifetimeConflict: { payload: 'x', expire_after_days: 2, expire_after_duration: 3 },
};

let app: WebApp;
/** A signed-in sender's token: file pushes need one. */
let token: string;

beforeAll(async () => {
  app = await startWeb({ expireAfterDays: { min: 1, max: 30, default: 7 } });
  token = (await app.core.users.createUser('field-text-api@example.org')).token;
});

afterAll(async () => {
  await app?.stop();
});

async function refusal(rule: string, push: unknown): Promise<Record<string, string[]>> {
  const response = await fetch(`${app.baseUrl}/api/v2/pushes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ push }),
  });
  const body = (await response.json()) as { code: string; errors?: Record<string, string[]> };
  expect([rule, response.status, body.code]).toEqual([rule, 422, 'validation_failed']);
  return body.errors ?? {};
}

describe('a field message in the visitor’s language', () => {
  it('has a sentence in every catalogue for each message the rules make, with its figures', async () => {
    const said: string[] = [];
    for (const [rule, push] of Object.entries(REFUSED)) {
      const messages = Object.values(await refusal(rule, push)).flat();
      expect(messages.length, rule).toBeGreaterThan(0);
      for (const message of messages) {
        for (const { code, messages: catalogue } of LOCALES.slice(1)) {
          const text = fieldText(translator(code), message);
          expect(text, `${code}: "${message}" (${rule}) has no sentence`).not.toBe(message);
          expect(Object.values(catalogue).some((v) => typeof v === 'string' && v.length > 0)).toBe(true);
        }
        expect(fieldText(translator('en'), message)).toBe(message);
        said.push(fieldText(translator('de'), message));
      }
    }
    // The figures travel: the instance's bound and the schema's length.
    expect(said).toContain(translator('de').t('fieldError.between', { min: 1, max: 30 }));
    expect(said.some((s) => /^Zu lang\. Höchstlänge: /.test(s))).toBe(true);
    expect(said).toContain(de['fieldError.required']);
  });

  it('keeps the API’s text for a message of another form, and in English', () => {
    const other = 'must be an https:// URL that resolves to a public address';
    expect(fieldText(translator('de'), other)).toBe(other);
    const fields = { payload: ['is required'], url: [other] };
    expect(fieldTexts(translator('en'), fields)).toBe(fields);
    expect(fieldTexts(translator('fr'), fields)).toEqual({ payload: [fr['fieldError.required']], url: [other] });
    const error = { message: 'payload: is required', details: { fields } };
    expect(fieldsLine(translator('en'), error)).toBe('payload: is required');
    expect(fieldsLine(translator('de'), error)).toBe(`payload: ${de['fieldError.required']} url: ${other}`);
    expect(fieldsLine(translator('de'), error, false)).toBe(`${de['fieldError.required']} ${other}`);
    expect(de['fieldError.required']).not.toBe(en['fieldError.required']);
  });
});

describe('on the pages', () => {
  it('says a refused field of the create form in German, beside the field, and stores nothing', async () => {
    const german = new Visitor(app.baseUrl, { 'accept-language': 'de' });
    expect((await german.signUp('field-text-de@example.org', PASSWORD)).status).toBe(303);
    const [before] = await app.db.query<{ n: string }>('select count(*) as n from pushes');
    const t = translator('de').t;
    // The schema's bound, then (the schema passed) the instance's narrower one.
    for (const [days, views, field, sentence] of [
      ['7', '0', 'expire_after_views', t('fieldError.atLeast', { limit: 1 })],
      ['60', '1', 'expire_after_days', t('fieldError.between', { min: 1, max: 30 })],
    ] as const) {
      const { csrf } = await german.page('/');
      const refused = await german.post('/', {
        _csrf: csrf,
        kind: 'text',
        payload: 'a secret',
        expire_after_days: days,
        expire_after_views: views,
      });
      expect(refused.status).toBe(422);
      const html = await refused.text();
      expect(html).toContain('<html lang="de"');
      const said = new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`).exec(html)?.[1];
      expect(said).toBe(sentence);
      expect(html).not.toMatch(/must be (an integer|at least)/);
    }
    const [after] = await app.db.query<{ n: string }>('select count(*) as n from pushes');
    expect(after!.n).toBe(before!.n);
  });

  it('says a refused password of the sign-up form in French, at the top and beside the field', async () => {
    const french = new Visitor(app.baseUrl, { 'accept-language': 'fr-FR,fr;q=0.9' });
    const { csrf } = await french.page('/users/sign_up');
    const short = await french.post('/users/sign_up', {
      _csrf: csrf,
      email: 'field-text-fr@example.org',
      password: 'short',
    });
    expect(short.status).toBe(422);
    const html = await short.text();
    expect(html).toContain('<html lang="fr"');
    expect(html).toContain(translator('fr').t('fieldError.tooShort', { limit: 12 }));
    expect(html).not.toContain('must be at least');
    const [made] = await app.db.query<{ n: string }>(
      "select count(*) as n from users where email = 'field-text-fr@example.org'",
    );
    expect(made!.n).toBe('0');
  });
});
