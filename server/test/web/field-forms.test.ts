/**
 * The field messages of rules of their own in the visitor's language (issue 42, server/src/web/field-forms.ts): each
 * rule is driven with bad input, through the rules themselves (who may open a push, the link's email list, a
 * webhook's URL, a password's strength) and through real 422 answers of the running server (a push's, a webhook's,
 * an API key's, a request's fields), and every message it makes must have a sentence in every other catalogue: a
 * message that matches no form fails here. zxcvbn's feedback (every warning and suggestion it can return) has a
 * sentence per catalogue. Then the pages, in German and in Arabic (right to left): a webhook URL refused for its
 * private address, and a weak password's advice on the sign-up form, said in the page's language.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as en from '@zxcvbn-ts/language-en';
import {
  ApiError,
  NOTIFY_TEXT,
  notifyRefused,
  parseRecipients,
  readNotifyRequest,
  readReceiptsUnavailable,
  readRecipientAccess,
} from '@secret-push/rules';
import { LOCALES } from '../../src/i18n/locales.js';
import { translator } from '../../src/i18n/i18n.js';
import { passwordProblem } from '../../src/account/password-strength.js';
import { checkTarget, TargetRefused } from '../../src/webhooks/targets.js';
import { adviceKey } from '../../src/web/field-forms.js';
import { fieldText, fieldTexts } from '../../src/web/field-text.js';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
const OTHERS = LOCALES.slice(1).map((l) => l.code);

/** Every message must be said by a catalogue sentence in each other language, and kept as is in English. */
function expectSaid(source: string, messages: readonly string[]): void {
  expect(messages.length, source).toBeGreaterThan(0);
  for (const message of messages) {
    expect(fieldText(translator('en'), message)).toBe(message);
    for (const code of OTHERS) {
      expect(fieldText(translator(code), message), `${code}: "${message}" (${source}) matches no form`).not.toBe(
        message,
      );
    }
  }
}

/** The messages of a rule that throws validation_failed (or reports through `add`). */
function messagesOf(run: (add: (field: string, message: string) => void) => void): string[] {
  const said: string[] = [];
  try {
    run((_field, message) => said.push(message));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    said.push(...Object.values(error.details.fields ?? {}).flat());
  }
  return said;
}

/** Decodes the entities the pages' templates write. */
function text(html: string): string {
  return html
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

let app: WebApp;
let token: string;

beforeAll(async () => {
  app = await startWeb({ webhooks: { enabled: true, allowPrivate: false, retrySchedule: [1] } });
  token = (await app.core.users.createUser('field-forms-api@example.org')).token;
});

afterAll(async () => {
  await app?.stop();
});

async function refusal(path: string, body: unknown): Promise<string[]> {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { code: string; errors?: Record<string, string[]> };
  expect([path, JSON.stringify(body).slice(0, 80), response.status, answer.code]).toEqual([
    path,
    JSON.stringify(body).slice(0, 80),
    422,
    'validation_failed',
  ]);
  return Object.values(answer.errors ?? {}).flat();
}

describe('the rules of their own, said in every language', () => {
  it('who may open a push: the networks and the addresses, with the value the English names', () => {
    const bad = {
      allowed_networks: ['not-a-network', '192.0.2.1/24', '10.0.0.0/8', '10.0.0.0/8'],
      recipient_emails: ['nobody', 'a@example.org', 'A@example.org'],
    };
    const messages = messagesOf((add) => readRecipientAccess(bad, add));
    expect(messages).toHaveLength(5);
    expectSaid('readRecipientAccess', messages);
    expectSaid(
      'readRecipientAccess',
      messagesOf((add) => readRecipientAccess({ authenticated_recipients: true }, add)),
    );
    const de = translator('de');
    expect(fieldText(de, messages[0]!)).toBe(de.t('fieldError.invalidNetwork', { value: 'not-a-network' }));
    expect(fieldText(de, messages[1]!)).toBe(de.t('fieldError.hostBits', { value: '192.0.2.1/24' }));
  });

  it('the link’s email list and its language', () => {
    const many = Array.from({ length: 7 }, (_, i) => `p${i}@example.org`).join(',');
    for (const to of [' ', 'a@example.org,,b@example.org', 'a@example.org,A@example.org', many, 'not an address']) {
      const parsed = parseRecipients(to);
      expect('errors' in parsed, to).toBe(true);
      expectSaid(`parseRecipients(${to})`, (parsed as { errors: string[] }).errors);
    }
    expectSaid(
      'readNotifyRequest',
      messagesOf(() => readNotifyRequest('a@example.org', 'xx')),
    );
    // Refused by the instance or the push (the create form's and the API's), and read receipts without a relay.
    for (const pair of [NOTIFY_TEXT.unavailable, NOTIFY_TEXT.anonymous, [NOTIFY_TEXT.encrypted]]) {
      const refused = messagesOf(() => {
        throw notifyRefused(pair);
      });
      expectSaid('notifyRefused', refused);
    }
    expectSaid('limits', [NOTIFY_TEXT.daily, NOTIFY_TEXT.perPush(3), readReceiptsUnavailable(undefined)]);
    expect(fieldText(translator('fr'), NOTIFY_TEXT.perPush(3))).toBe(
      translator('fr').t('fieldError.notifyPerPush', { limit: 5, already: 3 }),
    );
  });

  it('a webhook’s URL: form, credentials, scheme, host, private addresses', async () => {
    const rules = { allowPrivate: false, requireHttps: false, resolve: async () => ['10.1.2.3'] };
    const cases: [string, Partial<typeof rules>][] = [
      ['not a url', {}],
      ['ftp://example.org/', {}],
      ['http://example.org/hook', { requireHttps: true }],
      ['https://user:secret@example.org/hook', {}],
      ['https://127.0.0.1/hook', {}],
      ['https://[::1]/hook', {}],
      ['https://internal.example.org/hook', {}],
      [
        'https://nowhere.example.org/hook',
        {
          resolve: async () => {
            throw new Error('ENOTFOUND');
          },
        },
      ],
      ['https://empty.example.org/hook', { resolve: async () => [] }],
    ];
    for (const [url, over] of cases) {
      const refused = await checkTarget(url, { ...rules, ...over }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused, url).toBeInstanceOf(TargetRefused);
      expectSaid(`checkTarget(${url})`, [(refused as TargetRefused).reason]);
    }
  });

  it('a push’s fields refused by the running server', async () => {
    const bodies: unknown[] = [
      { payload: 'x', allowed_networks: ['nope', '192.0.2.1/24'] },
      { payload: 'x', allowed_networks: ['192.0.2.0/24', '192.0.2.0/24'] },
      { payload: 'x', recipient_emails: ['a@example.org', 'a@example.org'] },
      { payload: 'x', authenticated_recipients: true },
      { payload: 'x', notify_emails_to: 'a@example.org,,b@example.org' },
      { payload: 'x', notify_emails_to: 'a@example.org', notify_emails_to_locale: 'xx' },
      { payload: 'x', notify_emails_to: 'a@example.org' },
      { payload: 'x', expire_after_duration: 99 },
    ];
    for (const push of bodies) expectSaid(JSON.stringify(push), await refusal('/api/v2/pushes', { push }));
  });

  it('a webhook’s, an API key’s and a request’s fields refused by the running server', async () => {
    const hook = { url: 'https://127.0.0.1/hook', events: ['push.viewed'] };
    const webhooks: unknown[] = [
      { webhook: {} },
      { webhook: { url: 'x'.repeat(3000), events: ['no.such'] } },
      { webhook: { ...hook, description: 'd'.repeat(300), workspace_id: 'w', colour: 'red' } },
      { webhook: hook },
      { webhook: { ...hook, url: 'https://a:b@example.org/hook' } },
    ];
    for (const body of webhooks) expectSaid(JSON.stringify(body), await refusal('/api/v2/webhooks', body));
    const keys: unknown[] = [
      { api_key: { name: 'k', scopes: ['pushes:read', 'no:such'] } },
      { api_key: { name: 'k', scopes: ['pushes:read'], expires_at: 'tomorrow' } },
      { api_key: { name: 'k', scopes: ['pushes:read'], expires_at: '2000-01-01T00:00:00.000Z' } },
      { api_key: { name: 'k', scopes: ['pushes:read'], expires_at: '2999-01-01T00:00:00.000Z' } },
    ];
    for (const body of keys) expectSaid(JSON.stringify(body), await refusal('/api/v2/api_keys', body));
    expectSaid('createRequest', await refusal('/api/v2/requests', { request: { request: '' } }));
  });

  it('a weak password: zxcvbn’s warning and suggestion by key, every key in every catalogue', async () => {
    const all = [
      ...Object.keys(en.translations.warnings).map((k) => `warnings.${k}`),
      ...Object.keys(en.translations.suggestions).map((k) => `suggestions.${k}`),
    ];
    for (const key of all) {
      const catalogueKey = adviceKey(key);
      expect(catalogueKey, key).not.toBeNull();
      const english = translator('en').t(catalogueKey!);
      for (const code of OTHERS) expect(translator(code).t(catalogueKey!), `${code}: ${key}`).not.toBe(english);
    }
    const seen = new Set<string>();
    for (const password of ['password1234', 'qwertyuiopasdfgh', 'aaaaaaaaaaaaaaaa', 'field-forms@example.org']) {
      const problem = await passwordProblem(password, 'field-forms@example.org');
      expect(problem, password).not.toBeNull();
      expect(problem!.message).not.toContain(password);
      expectSaid(password, [problem!.message]);
      for (const key of problem!.advice) seen.add(key);
      // The page's sentence: the short refusal, then the warning and the suggestion in that language.
      const fr = translator('fr');
      const said = fieldTexts(fr, { password: [problem!.message] }, problem!.advice)!.password![0]!;
      expect(said).toBe(
        [fr.t('fieldError.weakPasswordShort'), ...problem!.advice.map((k) => fr.t(adviceKey(k)!))].join(' '),
      );
      expect(problem!.advice.length, password).toBeGreaterThan(0);
    }
    expect(seen.size).toBeGreaterThan(2);
    // The English the API keeps: zxcvbn's own text after "is too easy to guess: ".
    const common = await passwordProblem('password1234');
    const texts = common!.advice.map((k) => {
      const [group, name] = k.split('.') as ['warnings' | 'suggestions', string];
      return (en.translations[group] as Record<string, string>)[name];
    });
    expect(common!.message).toBe(`is too easy to guess: ${texts.join(' ')}`);
  });
});

describe('on the pages', () => {
  for (const code of ['de', 'ar'] as const) {
    it(`says a webhook URL refusal and a weak password's advice in ${code}`, async () => {
      const i18n = translator(code);
      const visitor = new Visitor(app.baseUrl, { 'accept-language': code });
      // The sign-up form: a password too easy to guess, with zxcvbn's advice in the page's language.
      const weak = 'password1234';
      const problem = (await passwordProblem(weak, `field-forms-${code}@example.org`))!;
      const { csrf: signUpCsrf } = await visitor.page('/users/sign_up');
      const refused = await visitor.post('/users/sign_up', {
        _csrf: signUpCsrf,
        email: `field-forms-${code}@example.org`,
        password: weak,
      });
      expect(refused.status).toBe(422);
      const signUp = text(await refused.text());
      expect(signUp).toContain(`<html lang="${code}" dir="${code === 'ar' ? 'rtl' : 'ltr'}"`);
      for (const key of problem.advice) expect(signUp).toContain(i18n.t(adviceKey(key)!));
      expect(signUp).toContain(i18n.t('fieldError.weakPasswordShort'));
      expect(signUp).not.toContain(problem.message);
      // The webhooks page: a URL of a private address, refused and said in the page's language; nothing stored.
      expect((await visitor.signUp(`field-forms-${code}@example.org`, PASSWORD)).status).toBe(303);
      const { csrf } = await visitor.page('/users/webhooks');
      const response = await visitor.fetch('/users/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
        body: new URLSearchParams([
          ['_csrf', csrf],
          ['url', 'https://127.0.0.1/hook'],
          ['events', 'push.viewed'],
        ]).toString(),
      });
      expect(response.status).toBe(422);
      const page = text(await response.text());
      expect(page).toContain(`url: ${i18n.t('fieldError.privateAddress')}`);
      expect(page).not.toContain('private or reserved address');
      const [stored] = await app.db.query<{ n: string }>('select count(*) as n from webhooks');
      expect(stored!.n).toBe('0');
    });
  }
});
