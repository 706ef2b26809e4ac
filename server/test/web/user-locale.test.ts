/**
 * A user's language (`users.locale`, issue 42), on the real app with the real SMTP server the tests run
 * (test/support/mailbox.ts) and the job queue on the test's PostgreSQL:
 *
 * - a sign-in on a page records the page's language (here by `Accept-Language` alone); a signed-in user's explicit
 *   choice (`?locale=`, the language menu's) replaces it; a `?locale=` that names no language of ours changes nothing,
 *   and neither does a signed-out visitor's choice;
 * - the owner's read receipt goes out in the owner's language (lang and dir in its HTML), and a user who never signed
 *   in on a page (null) gets English, as before;
 * - the requester's notice (a request answered) goes out in the requester's language;
 * - none of these mails holds the secret, the link's token or the ask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, createRequest, getPush, respondToRequest } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { bearer, expectData } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'violet-harbour-71-quartz';

let app: WebApp;
let mailbox: Mailbox;
let client: ReturnType<typeof createClient>;

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startWeb({
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
  client = createClient({ baseUrl: app.baseUrl });
}, 600_000);

afterAll(async () => {
  await app?.stop();
  await mailbox?.stop();
});

async function localeOf(email: string): Promise<string | null> {
  const [row] = await app.db.query<{ locale: string | null }>('select locale from users where email = $1', [email]);
  return row!.locale;
}

/** The messages that reached `to`, once there are `count` (waits up to 20 s). */
async function mailsTo(to: string, count: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const mails = mailbox.messages.filter((m) => m.to.includes(to));
    if (mails.length >= count) return mails;
    if (Date.now() > deadline) throw new Error(`expected ${count} messages to ${to}, got ${mails.length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A push of `token`'s user that asks for a read receipt, viewed once by a stranger. */
async function viewedPush(token: string, payload: string) {
  const push = expectData(
    await createPush({
      client,
      auth: bearer(token),
      body: { push: { payload, name: 'DB password', notify_owner_on_view: true } },
    }),
    201,
  );
  expect(expectData(await getPush({ client, path: { url_token: push.url_token } })).payload).toBe(payload);
  return push;
}

describe("a user's language", () => {
  it('is recorded on sign-in and on an explicit choice; the read receipt goes out in it', async () => {
    const email = `olena-${Date.now()}@example.org`;
    const { token } = await app.core.users.createUser(email, PASSWORD);
    expect(await localeOf(email)).toBeNull();

    // A signed-out visitor's choice is the browser's (its cookie), not an account's.
    const visitor = new Visitor(app.baseUrl, { 'accept-language': 'ar-EG,ar;q=0.9,en;q=0.5' });
    expect((await visitor.fetch('/?locale=ja')).status).toBe(200);
    expect(await localeOf(email)).toBeNull();
    visitor.cookies.delete('sp_locale');

    // Sign-in: the page's language (Accept-Language here).
    expect((await visitor.signIn(email, PASSWORD)).status).toBe(303);
    expect(await localeOf(email)).toBe('ar');

    // An explicit choice on a page (the language menu's ?locale=) replaces it; a language we lack changes nothing.
    const page = await visitor.fetch('/users/token?locale=uk');
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html lang="uk" dir="ltr"/);
    expect(await localeOf(email)).toBe('uk');
    expect((await visitor.fetch('/users/token?locale=xx-unknown')).status).toBe(200);
    expect(await localeOf(email)).toBe('uk');

    const payload = `receipt-secret-${Date.now()}`;
    const push = await viewedPush(token!, payload);
    const [receipt] = await mailsTo(email, 1);
    expect(receipt!.parsed.subject).toBe(`Ваше надсилання "DB password" (${push.push_id}) переглянуто`);
    expect(receipt!.parsed.text).toContain('уперше переглянуто');
    expect(String(receipt!.parsed.html)).toMatch(/<html lang="uk" dir="ltr">/);
    for (const secret of [payload, push.url_token]) expect(receipt!.raw).not.toContain(secret);
  });

  it('is English for a user who never signed in on a page (null, as before the upgrade)', async () => {
    const email = `nobody-${Date.now()}@example.org`;
    const { token } = await app.core.users.createUser(email, PASSWORD);
    const push = await viewedPush(token!, `plain-secret-${Date.now()}`);
    const [receipt] = await mailsTo(email, 1);
    expect(await localeOf(email)).toBeNull();
    expect(receipt!.parsed.subject).toBe(`Your push "DB password" (${push.push_id}) was viewed`);
    expect(String(receipt!.parsed.html)).toMatch(/<html lang="en" dir="ltr">/);
  });

  it("tells the requester of an answer in the requester's language, right to left for Hebrew", async () => {
    const email = `requester-${Date.now()}@example.org`;
    const { token } = await app.core.users.createUser(email, PASSWORD);
    const visitor = new Visitor(app.baseUrl);
    expect((await visitor.signIn(email, PASSWORD)).status).toBe(303);
    expect(await localeOf(email)).toBe('en');
    expect((await visitor.fetch('/?locale=he')).status).toBe(200);
    expect(await localeOf(email)).toBe('he');

    const ask = `ask-for-the-vpn-key-${Date.now()}`;
    const created = expectData(
      await createRequest({ client, auth: bearer(token!), body: { request: { request: ask } } }),
      201,
    );
    const answer = `answer-secret-${Date.now()}`;
    expectData(
      await respondToRequest({ client, path: { url_token: created.url_token }, body: { push: { payload: answer } } }),
      201,
    );

    const [notice] = await mailsTo(email, 1);
    expect(notice!.parsed.subject).toBe('הבקשה שלך ב-Example Secrets נענתה');
    expect(String(notice!.parsed.html)).toMatch(/<html lang="he" dir="rtl">/);
    // The notice links to the requester's own page of the request (behind sign-in), never to the ask or the answer.
    for (const secret of [ask, answer]) expect(notice!.raw).not.toContain(secret);
  });
});
