/**
 * Issue 42, who may open a push, through the real app, the real core on the test's PostgreSQL, a real SMTP server in
 * this process (test/support/mailbox.ts) and the generated SDK: the network allow-list (client addresses given by a
 * trusted proxy's X-Forwarded-For), the specific people's one-time codes (requested, mailed, refused when wrong, used
 * once, bound to their push), Password Pusher Pro's `authenticated_recipients` as its clients send it, and hostile
 * lists refused before anything is stored. The view count is read after every retrieval.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  getPush,
  getPushAudit,
  getVersion,
  requestAccessCode,
  type PushInput,
} from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';

let mailbox: Mailbox;
let api: RealApi;
let owner: { token: string; email: string; userId: string };

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi({
    publicBaseUrl: 'https://secrets.example.org',
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
  owner = await api.user('owner@example.org');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
});

const from = (ip: string) => ({ 'X-Forwarded-For': ip });

async function create(push: PushInput) {
  return expectData(await createPush({ client: api.client, body: { push }, auth: bearer(owner.token) }), 201);
}

/** The views left, as the owner's own look (which counts nothing) reads them. */
async function viewsLeft(urlToken: string): Promise<number> {
  const record = expectData(
    await getPush({ client: api.client, path: { url_token: urlToken }, auth: bearer(owner.token) }),
  );
  return record.views_remaining;
}

async function auditKinds(urlToken: string) {
  const page = expectData(
    await getPushAudit({ client: api.client, path: { url_token: urlToken }, auth: bearer(owner.token) }),
  );
  return page.logs.map((l) => ({ kind: l.kind, ip: l.ip }));
}

async function pushCount(): Promise<number> {
  const [row] = await api.db.query<{ n: string }>('select count(*) as n from pushes');
  return Number(row!.n);
}

/** The 8 digits of the newest message to `to` (shown as `1234 5678`). */
async function codeMailedTo(to: string, count: number): Promise<string> {
  await mailbox.waitFor(count, 15_000);
  const mails = mailbox.messages.filter((m) => m.to.includes(to));
  const text = mails[mails.length - 1]!.parsed.text ?? '';
  const match = /(\d{4}) (\d{4})/.exec(text);
  expect(match, text).not.toBeNull();
  return `${match![1]}${match![2]}`;
}

describe('allowed_networks', () => {
  it('serves clients inside the ranges, refuses the others without spending a view, and audits the refusal', async () => {
    const push = await create({
      payload: 'network-secret-41d2',
      expire_after_views: 3,
      allowed_networks: ['203.0.113.0/24', '2001:db8::/32'],
    });
    const path = { url_token: push.url_token };
    expect(push.allowed_networks).toEqual(['203.0.113.0/24', '2001:db8::/32']);

    const refused = await getPush({ client: api.client, path, headers: from('198.51.100.9') });
    expectError(refused, 403, 'network_not_allowed');
    expect(JSON.stringify(refused.error)).not.toContain('network-secret');
    expect(await viewsLeft(push.url_token)).toBe(3);

    const v4 = expectData(await getPush({ client: api.client, path, headers: from('203.0.113.77') }));
    expect(v4.payload).toBe('network-secret-41d2');
    expect(await viewsLeft(push.url_token)).toBe(2);

    expectError(await getPush({ client: api.client, path, headers: from('2001:db9::1') }), 403, 'network_not_allowed');
    expect(await viewsLeft(push.url_token)).toBe(2);

    const v6 = expectData(await getPush({ client: api.client, path, headers: from('2001:db8:ffff::5') }));
    expect(v6.payload).toBe('network-secret-41d2');
    expect(await viewsLeft(push.url_token)).toBe(1);

    // An IPv4-mapped IPv6 address is its IPv4 address.
    expectError(
      await getPush({ client: api.client, path, headers: from('::ffff:198.51.100.9') }),
      403,
      'network_not_allowed',
    );
    expect(await viewsLeft(push.url_token)).toBe(1);

    const kinds = await auditKinds(push.url_token);
    expect(kinds.filter((k) => k.kind === 'failed_view').map((k) => k.ip)).toEqual(
      expect.arrayContaining(['198.51.100.9', '2001:db9::1']),
    );
    expect(kinds.filter((k) => k.kind === 'view').map((k) => k.ip)).toEqual(['203.0.113.77', '2001:db8:ffff::5']);
  });

  it('normalizes bare addresses and refuses bad ranges, too many and too long ones with 4xx, storing nothing', async () => {
    const push = await create({ payload: 'x', allowed_networks: ['192.0.2.7', '2001:DB8:0:0::1'] });
    expect(push.allowed_networks).toEqual(['192.0.2.7/32', '2001:db8::1/128']);

    const before = await pushCount();
    const refuse = async (allowed_networks: string[], message: RegExp | null) => {
      const result = await createPush({
        client: api.client,
        body: { push: { payload: 'x', allowed_networks } },
        auth: bearer(owner.token),
      });
      const error = expectError(result, 422, 'validation_failed');
      if (message) expect(error.errors?.allowed_networks?.join(' ')).toMatch(message);
    };
    await refuse(['not-a-network'], /contains an invalid network: not-a-network/);
    await refuse(['10.0.0.1/8'], /has host bits set: 10\.0\.0\.1\/8/);
    await refuse(['10.0.0.0/33'], /invalid network/);
    await refuse(['2001:db8::/129'], /invalid network/);
    await refuse(['1.2.3.4/024'], /invalid network/);
    await refuse(['fe80::1%eth0/64'], /invalid network/);
    await refuse(['10.0.0.0/8', '10.0.0.0/8'], /duplicate/);
    await refuse(
      Array.from({ length: 21 }, (_, i) => `10.${i}.0.0/16`),
      null,
    );
    await refuse(['1'.repeat(50)], null);

    // A list far over the bound is refused as the body streams in, before any entry is read.
    const huge = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ push: { payload: 'x', allowed_networks: Array(200_000).fill('10.0.0.0/8') } }),
    });
    expect(huge.status).toBeGreaterThanOrEqual(400);
    expect(huge.status).toBeLessThan(500);
    expect(await pushCount()).toBe(before);
  });
});

describe('recipient_emails', () => {
  it('mails a code to a listed address, refuses and audits a wrong one, and shows the secret only for the right one, once', async () => {
    const push = await create({
      payload: 'people-secret-9e3a',
      expire_after_views: 3,
      recipient_emails: ['ana@example.net', 'ben@example.net'],
    });
    expect(push.recipient_emails).toEqual(['ana@example.net', 'ben@example.net']);
    const path = { url_token: push.url_token };
    const client = '192.0.2.10';

    const missing = await getPush({ client: api.client, path, headers: from(client) });
    expectError(missing, 401, 'access_code_required');
    expect(missing.response!.headers.get('www-authenticate')).toBe('AccessCode header="X-Access-Code"');
    expect(await viewsLeft(push.url_token)).toBe(3);

    // An address that is not listed gets the same answer, and no mail.
    const mailsBefore = mailbox.messages.length;
    expect(
      expectData(
        await requestAccessCode({
          client: api.client,
          path,
          body: { email: 'eve@example.net' },
          headers: from(client),
        }),
        202,
      ),
    ).toEqual({ expires_in: 600 });
    const asked = await requestAccessCode({
      client: api.client,
      path,
      body: { email: 'ANA@example.net' },
      headers: from(client),
    });
    expect(expectData(asked, 202)).toEqual({ expires_in: 600 });
    const code = await codeMailedTo('ana@example.net', mailsBefore + 1);
    expect(mailbox.messages.filter((m) => m.to.includes('eve@example.net'))).toEqual([]);
    const mail = mailbox.messages.find((m) => m.to.includes('ana@example.net'))!;
    expect(mail.raw).not.toContain('people-secret');
    expect(mail.raw).not.toContain(push.url_token);

    // The code is stored only as a hash.
    const stored = await api.db.query<{ code_hash: string | null }>('select code_hash from push_access_codes');
    expect(stored.some((r) => r.code_hash?.includes(code))).toBe(false);

    const wrong = String((Number(code) + 1) % 100_000_000).padStart(8, '0');
    expectError(
      await getPush({ client: api.client, path, headers: { ...from(client), 'X-Access-Code': wrong } }),
      401,
      'access_code_incorrect',
    );
    expectError(
      await getPush({ client: api.client, path, headers: { ...from(client), 'X-Access-Code': 'letters!' } }),
      401,
      'access_code_incorrect',
    );
    expect(await viewsLeft(push.url_token)).toBe(3);
    expect((await auditKinds(push.url_token)).filter((k) => k.kind === 'failed_passphrase')).toHaveLength(2);

    const opened = expectData(
      await getPush({
        client: api.client,
        path,
        headers: { ...from(client), 'X-Access-Code': `${code.slice(0, 4)}-${code.slice(4)}` },
      }),
    );
    expect(opened.payload).toBe('people-secret-9e3a');
    expect(await viewsLeft(push.url_token)).toBe(2);

    // Single use.
    expectError(
      await getPush({ client: api.client, path, headers: { ...from(client), 'X-Access-Code': code } }),
      401,
      'access_code_incorrect',
    );
    expect(await viewsLeft(push.url_token)).toBe(2);
  });

  it('refuses a code made for another push', async () => {
    const first = await create({ payload: 'first-push', recipient_emails: ['cy@example.net'] });
    const second = await create({ payload: 'second-push', recipient_emails: ['cy@example.net'] });
    const client = '192.0.2.20';
    const count = mailbox.messages.length;
    expectData(
      await requestAccessCode({
        client: api.client,
        path: { url_token: second.url_token },
        body: { email: 'cy@example.net' },
        headers: from(client),
      }),
      202,
    );
    const code = await codeMailedTo('cy@example.net', count + 1);
    expectError(
      await getPush({
        client: api.client,
        path: { url_token: first.url_token },
        headers: { ...from(client), 'X-Access-Code': code },
      }),
      401,
      'access_code_incorrect',
    );
    expect(await viewsLeft(first.url_token)).toBe(5);
    // The code still opens its own push.
    const opened = expectData(
      await getPush({
        client: api.client,
        path: { url_token: second.url_token },
        headers: { ...from(client), 'X-Access-Code': code },
      }),
    );
    expect(opened.payload).toBe('second-push');
  });

  it('keeps a right code through a wrong or missing passphrase, and uses it up once the passphrase is right', async () => {
    const push = await create({
      payload: 'both-gates-secret-6b0d',
      passphrase: 'blue-lantern',
      expire_after_views: 3,
      recipient_emails: ['dana@example.net'],
    });
    const path = { url_token: push.url_token };
    const client = '192.0.2.21';
    const count = mailbox.messages.length;
    expectData(
      await requestAccessCode({ client: api.client, path, body: { email: 'dana@example.net' }, headers: from(client) }),
      202,
    );
    const code = await codeMailedTo('dana@example.net', count + 1);
    // The owner's own look (it counts nothing) needs the passphrase too.
    const left = async () =>
      expectData(
        await getPush({
          client: api.client,
          path,
          auth: bearer(owner.token),
          headers: { 'X-Passphrase': 'blue-lantern' },
        }),
      ).views_remaining;
    const withCode = (passphrase?: string) => ({
      ...from(client),
      'X-Access-Code': code,
      ...(passphrase === undefined ? {} : { 'X-Passphrase': passphrase }),
    });

    // The right code with a wrong passphrase, then with none: the passphrase's refusals; the code stays unused.
    expectError(
      await getPush({ client: api.client, path, headers: withCode('red-lantern') }),
      401,
      'passphrase_incorrect',
    );
    expectError(await getPush({ client: api.client, path, headers: withCode() }), 401, 'passphrase_required');
    const [row] = await api.db.query<{ used_at: Date | null }>(
      `select c.used_at from push_access_codes c join pushes p on p.id = c.push_id
       where p.url_token = $1 and c.code_hash is not null`,
      [push.url_token],
    );
    expect(row).toEqual({ used_at: null });
    expect(await left()).toBe(3);
    expect((await auditKinds(push.url_token)).filter((k) => k.kind === 'failed_passphrase')).toHaveLength(2);

    // The same code with the right passphrase opens it, and is used up then.
    const opened = expectData(await getPush({ client: api.client, path, headers: withCode('blue-lantern') }));
    expect(opened.payload).toBe('both-gates-secret-6b0d');
    expect(await left()).toBe(2);
    expectError(
      await getPush({ client: api.client, path, headers: withCode('blue-lantern') }),
      401,
      'access_code_incorrect',
    );
    expect(await left()).toBe(2);
  });

  it('limits code requests per push and per client address (429 with Retry-After)', async () => {
    const push = await create({ payload: 'x', recipient_emails: ['dee@example.net'] });
    const path = { url_token: push.url_token };
    for (let i = 0; i < 5; i += 1) {
      expectData(
        await requestAccessCode({
          client: api.client,
          path,
          body: { email: 'nobody@example.net' },
          headers: from(`192.0.2.${100 + i}`),
        }),
        202,
      );
    }
    const limited = await requestAccessCode({
      client: api.client,
      path,
      body: { email: 'dee@example.net' },
      headers: from('192.0.2.99'),
    });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.response!.headers.get('retry-after'))).toBeGreaterThan(0);

    // One client address across many pushes: 10 requests, then 429.
    const others = await Promise.all(
      Array.from({ length: 4 }, () => create({ payload: 'y', recipient_emails: ['dee@example.net'] })),
    );
    let answered = 0;
    let refused = 0;
    for (const other of others) {
      for (let i = 0; i < 3; i += 1) {
        const result = await requestAccessCode({
          client: api.client,
          path: { url_token: other.url_token },
          body: { email: 'nobody@example.net' },
          headers: from('192.0.2.200'),
        });
        if (result.response!.status === 202) answered += 1;
        else if (expectError(result, 429, 'rate_limited')) refused += 1;
      }
    }
    expect({ answered, refused }).toEqual({ answered: 10, refused: 2 });
  });

  it('answers clear 4xx to bad addresses, bad bodies and unknown pushes', async () => {
    const before = await pushCount();
    for (const recipient_emails of [['not an email'], ['a@example.net', 'A@example.net']]) {
      expectError(
        await createPush({
          client: api.client,
          body: { push: { payload: 'x', recipient_emails } },
          auth: bearer(owner.token),
        }),
        422,
        'validation_failed',
      );
    }
    expectError(
      await createPush({
        client: api.client,
        body: { push: { payload: 'x', recipient_emails: Array.from({ length: 6 }, (_, i) => `p${i}@example.net`) } },
        auth: bearer(owner.token),
      }),
      422,
      'validation_failed',
    );
    expect(await pushCount()).toBe(before);

    const open = await create({ payload: 'x' });
    const asked = (url_token: string, email: string) =>
      requestAccessCode({ client: api.client, path: { url_token }, body: { email }, headers: from('192.0.2.30') });
    expectError(await asked(open.url_token, 'ana@example.net'), 422, 'validation_failed');
    expectError(await asked('unknowntoken1234567890', 'ana@example.net'), 404, 'not_found');
    const restricted = await create({ payload: 'x', recipient_emails: ['ana@example.net'] });
    expectError(await asked(restricted.url_token, 'nope'), 422, 'validation_failed');
    const huge = await api.raw(`/api/v2/pushes/${restricted.url_token}/access_code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a'.repeat(100_000) }),
    });
    expect(huge.status).toBeGreaterThanOrEqual(400);
    expect(huge.status).toBeLessThan(500);
  });

  it("takes Pro's authenticated_recipients as its clients send it (multipart, with notify_emails_to)", async () => {
    const form = new FormData();
    form.append('push[payload]', 'pro-secret');
    form.append('push[kind]', 'text');
    form.append('push[notify_emails_to]', 'fay@example.net, gus@example.net');
    form.append('push[authenticated_recipients]', 'true');
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: form,
    });
    expect(created.status).toBe(201);
    expect(created.body.recipient_emails).toEqual(['fay@example.net', 'gus@example.net']);
    expectError(
      await getPush({ client: api.client, path: { url_token: created.body.url_token }, headers: from('192.0.2.40') }),
      401,
      'access_code_required',
    );

    const alone = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ push: { payload: 'x', authenticated_recipients: true } }),
    });
    expect(alone.status).toBe(422);
    expect(alone.body.errors.authenticated_recipients).toEqual(['needs notify_emails_to or recipient_emails']);
  });

  it('reports the feature in the version report', async () => {
    const version = expectData(await getVersion({ client: api.client }));
    expect(version.features.pushes.recipient_access).toEqual({
      networks: true,
      email_codes: true,
      single_sign_on: false,
      max_emails: 5,
      max_networks: 20,
    });
  });
});
