/**
 * The access code's mail (issue 42) in the language of the page the recipient asked from, on the real app with the
 * real SMTP server the tests run (test/support/mailbox.ts), by plain HTTP forms (no browser needed):
 *
 * - Arabic chosen by `?locale=ar` (then kept by its cookie for the form): subject and text from the Arabic catalogue,
 *   the HTML part `lang="ar" dir="rtl"`, the code in two groups of four; the code from it opens the secret;
 * - German by `Accept-Language` alone;
 * - through the API: in the language its `Accept-Language` asks for (the SDK facade's `locale`; a browser app on
 *   another origin sends the header by itself), English without one or with a language the instance has not;
 * - never the secret, the push's link or the address list in any of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient } from '@secret-push/sdk';
import { requestAccessCode } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { expectData } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startWeb, Visitor, type WebApp } from './support.js';

let app: WebApp;
let mailbox: Mailbox;
let owner: { userId: string };

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startWeb({
    trustProxy: true,
    rateLimitPerMinute: 0,
    mail: {
      smtpUrl: mailbox.url,
      from: 'Secret Push <no-reply@secrets.example.org>',
      notifyByEmail: true,
      notifyDailyLimit: 500,
      instanceName: 'Example Secrets',
      attempts: 3,
      retrySeconds: 1,
    },
  });
  owner = await app.core.users.createUser(`code-sender-${Date.now()}@example.org`);
}, 600_000);

afterAll(async () => {
  await app?.stop();
  await mailbox?.stop();
});

const ctxOf = () => ({
  actor: { userId: owner.userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
  baseUrl: app.baseUrl,
});

async function make(secret: string, recipient: string) {
  const push = await app.core.pushes.create(
    { payload: secret, expire_after_views: 2, recipient_emails: [recipient, 'someone-else@example.net'] },
    ctxOf(),
  );
  return push;
}

/** The one message that reached `to` (waits up to 15 s). */
async function mailTo(to: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const mails = mailbox.messages.filter((m) => m.to.includes(to));
    if (mails.length > 0) {
      expect(mails).toHaveLength(1);
      return mails[0]!;
    }
    if (Date.now() > deadline) throw new Error(`no code reached ${to}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectNothingOfThePush(mail: Awaited<ReturnType<typeof mailTo>>, secret: string, token: string) {
  for (const part of [mail.raw, mail.parsed.text ?? '', String(mail.parsed.html)]) {
    expect(part).not.toContain(secret);
    expect(part).not.toContain(token);
    expect(part).not.toContain(app.baseUrl);
    expect(part).not.toContain('someone-else');
  }
}

/** The 8 digits of a code's text, shown as two groups of four. */
function codeOf(text: string): string {
  const match = /(\d{4}) (\d{4})/.exec(text);
  expect(match, text).not.toBeNull();
  return `${match![1]}${match![2]}`;
}

describe("the access code's mail", () => {
  it('is in Arabic, right to left, when the recipient asked from the page in Arabic; its code opens the secret', async () => {
    const secret = `for rania only ${Date.now()}`;
    const push = await make(secret, 'rania@example.net');
    const visitor = new Visitor(app.baseUrl);
    const { html, csrf } = await visitor.page(`/p/${push.url_token}?locale=ar`);
    expect(html).toMatch(/<html lang="ar" dir="rtl"/);
    // The form is posted without ?locale=: the page's choice rides in its cookie.
    const asked = await visitor.post(`/p/${push.url_token}/access_code`, { _csrf: csrf, email: 'rania@example.net' });
    expect(asked.status).toBe(303);

    const mail = await mailTo('rania@example.net');
    expect(mail.parsed.subject).toBe('رمزك لفتح سرّ على Example Secrets');
    const text = mail.parsed.text ?? '';
    expect(text).toContain('شارك أحدهم سرًّا معك على Example Secrets');
    expect(text).toMatch(/رمزك: \d{4} \d{4}/);
    expect(text).toContain('خلال 10 دقائق من الآن');
    expect(String(mail.parsed.html)).toMatch(/<html lang="ar" dir="rtl">/);
    expectNothingOfThePush(mail, secret, push.url_token);

    const opened = await visitor.post(`/p/${push.url_token}/open`, { _csrf: csrf, access_code: codeOf(text) });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain(secret);
  });

  it('is in German when the page was German by Accept-Language alone', async () => {
    const secret = `für dora ${Date.now()}`;
    const push = await make(secret, 'dora@example.net');
    const visitor = new Visitor(app.baseUrl, { 'accept-language': 'de-AT,de;q=0.9,en;q=0.5' });
    const { html, csrf } = await visitor.page(`/p/${push.url_token}`);
    expect(html).toMatch(/<html lang="de" dir="ltr"/);
    expect(
      (await visitor.post(`/p/${push.url_token}/access_code`, { _csrf: csrf, email: 'DORA@example.net' })).status,
    ).toBe(303);

    const mail = await mailTo('dora@example.net');
    expect(mail.parsed.subject).toBe('Ihr Code zum Öffnen eines Geheimnisses auf Example Secrets');
    expect(mail.parsed.text).toContain('für die nächsten 10 Minuten');
    expect(String(mail.parsed.html)).toMatch(/<html lang="de" dir="ltr">/);
    codeOf(mail.parsed.text ?? '');
    expectNothingOfThePush(mail, secret, push.url_token);
  });

  it('is in the language Accept-Language asks for through the API (the facade’s locale, the raw header)', async () => {
    const secret = `für ida ${Date.now()}`;
    const push = await make(secret, 'ida@example.net');
    const sdk = createSecretPushClient({ baseUrl: app.baseUrl });
    expect(await sdk.requestAccessCode(push.url_token, 'ida@example.net', { locale: 'de' })).toEqual({
      expires_in: 600,
    });
    const german = await mailTo('ida@example.net');
    expect(german.parsed.subject).toBe('Ihr Code zum Öffnen eines Geheimnisses auf Example Secrets');
    expect(String(german.parsed.html)).toMatch(/<html lang="de" dir="ltr">/);
    expectNothingOfThePush(german, secret, push.url_token);

    const other = await make(`for ali ${Date.now()}`, 'ali@example.net');
    const asked = await fetch(`${app.baseUrl}/api/v2/pushes/${other.url_token}/access_code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-language': 'xx-YY, ar;q=0.8, de;q=0' },
      body: JSON.stringify({ email: 'ali@example.net' }),
    });
    expect(asked.status).toBe(202);
    const arabic = await mailTo('ali@example.net');
    expect(arabic.parsed.subject).toBe('رمزك لفتح سرّ على Example Secrets');
    expect(String(arabic.parsed.html)).toMatch(/<html lang="ar" dir="rtl">/);
  });

  it('is in English when asked through the API without a language', async () => {
    const secret = `for eve ${Date.now()}`;
    const push = await make(secret, 'eve@example.net');
    const client = createClient({ baseUrl: app.baseUrl });
    expectData(
      await requestAccessCode({ client, path: { url_token: push.url_token }, body: { email: 'eve@example.net' } }),
      202,
    );
    const mail = await mailTo('eve@example.net');
    expect(mail.parsed.subject).toBe('Your code to open a secret on Example Secrets');
    expect(mail.parsed.text).toContain('It works once, for the next 10 minutes.');
    expect(String(mail.parsed.html)).toMatch(/<html lang="en" dir="ltr">/);
    codeOf(mail.parsed.text ?? '');
    expectNothingOfThePush(mail, secret, push.url_token);
  });
});
