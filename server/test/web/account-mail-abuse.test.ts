/**
 * Issue 45, account mail asked for by strangers, over plain HTTP against the real app with a real SMTP server in this
 * process:
 *
 * - a "forgot password" posted with `Host: evil.example` (and that Origin) mails a link to the instance's public base
 *   URL, never to the Host the client chose (the instance without PWPUSH_PUBLIC_BASE_URL is refused at start-up:
 *   server/src/config/settings.test.ts);
 * - a flood of sign-ups and resets for one address sends at most 5 mails an hour to it, and one client address gets
 *   at most 20 an hour for any addresses; past either, 429 with Retry-After and the RateLimit fields, the same answer
 *   whether or not the address has an account.
 *
 * - a reset link opened from the mailbox is the first proof of an address nobody had proven (an account made by a
 *   sign-up on an instance without email): the account is claimed, and its maker's second factor, token, keys and
 *   webhooks are gone before the owner's new password is set.
 *
 * - a password reset revokes the account token and every API key unless its owner unticks the box, and "sign out
 *   everywhere" does the same (the box on the token page); both end every session.
 *
 * The instance trusts one proxy hop (PWPUSH_TRUST_PROXY), so each test speaks from a client address of its own
 * (X-Forwarded-For).
 */
import http from 'node:http';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSettings } from '../support/db.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startWeb, Visitor, type WebApp } from './support.js';

let mailbox: Mailbox;
let app: WebApp;

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startWeb({ trustProxy: true, mail: { ...makeSettings().mail, smtpUrl: mailbox.url, retrySeconds: 1 } });
  await app.core.users.createUser('victim@example.org', 'the victim s long password');
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await mailbox?.stop();
});

const mailsTo = (address: string) => mailbox.messages.filter((m) => m.to.includes(address));

async function settle(address: string, count: number): Promise<void> {
  const end = Date.now() + 20_000;
  while (mailsTo(address).length < count) {
    if (Date.now() > end) throw new Error(`expected ${count} messages to ${address}, got ${mailsTo(address).length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // A poll of the queue more: nothing else is on its way.
  await new Promise((r) => setTimeout(r, 1500));
}

/** A visitor speaking from its own client address (one proxy hop is trusted). */
const from = (ip: string) => new Visitor(app.baseUrl, { 'x-forwarded-for': ip });

async function forgot(v: Visitor, email: string): Promise<Response> {
  const { csrf } = await v.page('/users/password/new');
  return v.post('/users/password/new', { _csrf: csrf, email });
}

/** A raw HTTP/1.1 request whose Host header is the client's choice (fetch would not send it). */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const url = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('account mail asked for by strangers', () => {
  it('builds the reset link from the public base URL, never from the Host header a client sends', async () => {
    const hostile = { host: 'evil.example', 'x-forwarded-for': '203.0.113.7' };
    const form = await rawRequest('GET', '/users/password/new', hostile);
    expect(form.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const cookie = (form.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    const posted = await rawRequest(
      'POST',
      '/users/password/new',
      {
        ...hostile,
        origin: 'http://evil.example',
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
      },
      new URLSearchParams({ _csrf: csrf, email: 'victim@example.org' }).toString(),
    );
    expect(posted.status).toBe(200);
    await settle('victim@example.org', 1);
    const [mail] = mailsTo('victim@example.org');
    const text = `${mail!.parsed.text ?? ''}${mail!.parsed.html || ''}`;
    expect(text).toContain(`${app.baseUrl}/users/password/edit?token=`);
    expect(text).not.toContain('evil.example');
  });

  it('sends at most 5 sign-up and reset mails an hour to one address; then 429 with Retry-After and RateLimit', async () => {
    const before = mailsTo('victim@example.org').length;
    const statuses: number[] = [];
    let refused: Response | undefined;
    // Each ask from another client address: the per-recipient limit holds however many addresses the attacker has.
    for (let i = 0; i < 30; i++) {
      const v = from(`198.51.100.${i + 1}`);
      const answer =
        i % 2 === 0
          ? await forgot(v, 'victim@example.org')
          : await v.signUp('victim@example.org', 'a long password for a flood');
      statuses.push(answer.status);
      if (answer.status === 429) refused ??= answer;
    }
    // The first test's ask counts too (same address, same hour).
    expect(statuses.filter((s) => s === 200)).toHaveLength(5 - before);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30 - (5 - before));
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect(refused!.headers.get('ratelimit-policy')).toBe('"account-mail-recipient";q=5;w=3600');
    expect(refused!.headers.get('ratelimit')).toMatch(/^"account-mail-recipient";r=0;t=\d+$/);
    expect(await refused!.text()).toMatch(/Too many emails were asked for this address or from your network/);
    await settle('victim@example.org', 5);
    expect(mailsTo('victim@example.org')).toHaveLength(5);
  });

  it('answers an address without an account exactly as one with an account, limit included', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await forgot(from(`198.51.100.${100 + i}`), 'nobody@example.org')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });

  it('takes at most 20 asks an hour from one client address, for any addresses', async () => {
    const v = from('192.0.2.55');
    const statuses: number[] = [];
    for (let i = 0; i < 24; i++) statuses.push((await forgot(v, `person-${i}@example.org`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429]);
    // Another client is not held back by it.
    expect((await forgot(from('192.0.2.56'), 'person-99@example.org')).status).toBe(200);
    const [row] = await app.db.query<{ n: string }>(
      "select count(*) as n from account_mail_requests where ip = '192.0.2.55'",
    );
    expect(Number(row!.n)).toBe(20);
  });

  it("a reset link claims an account nobody had proven: the maker's factor, token, keys and webhooks are gone", async () => {
    // An instance without email on the same database: its sign-up makes the account at once, unproven.
    const open = await startWeb(
      { trustProxy: true, webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] } },
      { db: app.db },
    );
    try {
      const EMAIL = 'leo@example.org';
      const MAKERS = 'the maker s long password';
      const maker = new Visitor(open.baseUrl, { 'x-forwarded-for': '203.0.113.80' });
      expect((await maker.signUp(EMAIL, MAKERS)).status).toBe(303);
      const [user] = await app.db.query<{ id: string; email_confirmed_at: string | null }>(
        'select id, email_confirmed_at from users where email = $1',
        [EMAIL],
      );
      expect(user!.email_confirmed_at).toBeNull();
      // The maker sets up a second factor, the account token, a key and a webhook.
      const { secret } = await open.core.web!.twoFactor.begin(user!.id, EMAIL);
      await open.core.web!.twoFactor.confirm(user!.id, await generate({ secret }), '203.0.113.80');
      const token = await open.core.users.rotateToken(EMAIL);
      const key = await open.core.users.keys.create(user!.id, { name: 'maker', scopes: ['pushes:read'] }, null);
      await open.core.webhooks!.create(user!.id, { url: 'http://127.0.0.1:9/maker', events: ['push.viewed'] });

      // The owner of the address: "forgot password" on the instance with a relay, the link from the mailbox.
      const owner = from('203.0.113.81');
      expect((await forgot(owner, EMAIL)).status).toBe(200);
      await settle(EMAIL, 1);
      const link = new URL(
        /(http:\/\/\S+\/users\/password\/edit\?token=[A-Za-z0-9_-]+)/.exec(mailsTo(EMAIL)[0]!.parsed.text ?? '')![1]!,
      );
      const { csrf } = await owner.page(`${link.pathname}${link.search}`);
      const NEW = 'the owner s new long password';
      const done = await owner.post('/users/password/edit', {
        _csrf: csrf,
        token: link.searchParams.get('token')!,
        password: NEW,
      });
      expect(done.status).toBe(200);
      const page = await done.text();
      expect(page).toContain('whose email nobody had confirmed');
      expect(page).toMatch(/its two-factor sign-in, its API token, 1 API key and 1 webhook/);

      // The new password alone signs in: the maker's second factor is not asked.
      const signedIn = await owner.signIn(EMAIL, NEW);
      expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, '/']);
      // The maker's password, token and key are dead; nothing of theirs is left on the account.
      const retry = new Visitor(open.baseUrl, { 'x-forwarded-for': '203.0.113.82' });
      expect((await retry.signIn(EMAIL, MAKERS)).status).not.toBe(303);
      for (const credential of [token, key.token]) {
        const answer = await fetch(`${app.baseUrl}/api/v2/pushes/active`, {
          headers: { authorization: `Bearer ${credential}` },
        });
        expect(answer.status).toBe(401);
      }
      const [after] = await app.db.query<Record<string, unknown>>(
        `select email_confirmed_at, totp_secret,
           (select count(*) from recovery_codes where user_id = u.id) as codes,
           (select count(*) from webhooks where user_id = u.id) as hooks
         from users u where id = $1`,
        [user!.id],
      );
      expect(after).toMatchObject({ totp_secret: null, codes: '0', hooks: '0' });
      expect(after!.email_confirmed_at).not.toBeNull();
    } finally {
      await open.stop();
    }
  });

  /** The API answers a credential: 200 while it works, 401 once revoked. */
  const statusWith = async (credential: string) =>
    (await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${credential}` } })).status;

  it('a reset revokes the API token and every key, unless the owner unticks the box', async () => {
    const EMAIL = 'mia@example.org';
    const made = await app.core.users.createUser(EMAIL, 'mia s first long password');
    const credentials = async () => [
      await app.core.users.rotateToken(EMAIL),
      (await app.core.users.keys.create(made.userId, { name: 'ci', scopes: ['pushes:read'] }, null)).token,
    ];
    const resetWith = async (ip: string, mailNo: number, fields: Record<string, string>) => {
      const owner = from(ip);
      expect((await forgot(owner, EMAIL)).status).toBe(200);
      await settle(EMAIL, mailNo);
      const text = mailsTo(EMAIL)[mailNo - 1]!.parsed.text ?? '';
      const link = new URL(/(http:\/\/\S+\/users\/password\/edit\?token=[A-Za-z0-9_-]+)/.exec(text)![1]!);
      const { html, csrf } = await owner.page(`${link.pathname}${link.search}`);
      expect(html).toMatch(/<input type="checkbox" name="revoke_credentials" value="on" checked>/);
      const done = await owner.post('/users/password/edit', {
        _csrf: csrf,
        token: link.searchParams.get('token')!,
        ...fields,
      });
      expect(done.status).toBe(200);
      return done.text();
    };

    const [token, key] = await credentials();
    const said = await resetWith('203.0.113.90', 1, {
      password: 'mia s second long password',
      revoke_credentials: 'on',
    });
    expect(said).toContain('Your API token and 1 API key were revoked');
    expect([await statusWith(token!), await statusWith(key!)]).toEqual([401, 401]);

    // Unticked (a form post without the box): the password changes, the token and keys keep working.
    const [kept, keptKey] = await credentials();
    expect(await resetWith('203.0.113.91', 3, { password: 'mia s third long password' })).not.toContain('revoked');
    expect([await statusWith(kept!), await statusWith(keptKey!)]).toEqual([200, 200]);
  });

  it('"sign out everywhere" ends every session and, when asked, revokes the token and every key', async () => {
    const EMAIL = 'noah@example.org';
    const PASSWORD = 'noah s long password';
    const made = await app.core.users.createUser(EMAIL, PASSWORD);
    const key = (await app.core.users.keys.create(made.userId, { name: 'ci', scopes: ['pushes:read'] }, null)).token;
    const [here, there] = [from('203.0.113.100'), from('203.0.113.101')];
    for (const v of [here, there]) expect((await v.signIn(EMAIL, PASSWORD)).status).toBe(303);
    const { html, csrf } = await here.page('/users/token');
    expect(html).toContain('Sign out everywhere');
    const kept = await here.post('/users/sign_out_everywhere', { _csrf: csrf });
    expect(await kept.text()).toContain('Your API token and keys still work');
    expect([(await here.fetch('/users/token')).status, (await there.fetch('/users/token')).status]).toEqual([302, 302]);
    expect([await statusWith(made.token), await statusWith(key)]).toEqual([200, 200]);

    expect((await there.signIn(EMAIL, PASSWORD)).status).toBe(303);
    const again = await there.page('/users/token');
    const revoked = await there.post('/users/sign_out_everywhere', { _csrf: again.csrf, revoke_credentials: 'on' });
    expect(await revoked.text()).toContain('Your API token and 1 API key were revoked');
    expect([await statusWith(made.token), await statusWith(key)]).toEqual([401, 401]);
    expect((await there.fetch('/users/token')).status).toBe(302);
  });
});
