/**
 * Issue 22: a push's link emailed to recipients, through a real SMTP server in this process (test/support/mailbox.ts)
 * and the durable queue on the test's PostgreSQL. Requests are those pwpush-cli sends (`--notify`: JSON and
 * multipart, inside the `push` wrapper), and the generated SDK's `notifyEmails`; effects are read from the mailbox
 * (the messages as parsed by mailparser) and the audit log. Every answer is checked against the contract.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPush, getPushAudit, getVersion, notifyEmails } from '@secret-push/sdk/generated';
import type { AuditEntry } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { createServerMetrics } from '../../src/runtime/metrics.js';
import { createSecretPushClient } from '@secret-push/sdk';

const FAST_QUEUE = { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 };
const metrics = createServerMetrics('0');

let mailbox: Mailbox;
let api: RealApi;
let owner: { token: string; email: string; userId: string };
let other: { token: string; email: string; userId: string };
let users = 0;

/** A user of its own (the 5-a-minute limit of notifyEmails is per user). */
function freshUser() {
  users += 1;
  return api.user(`user${users}@example.org`);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function mailEntries(urlToken: string, token = owner.token): Promise<AuditEntry[]> {
  const page = expectData(
    await getPushAudit({ client: api.client, path: { url_token: urlToken }, auth: bearer(token) }),
  );
  return page.logs.filter((l) => l.kind === 'creation_email_send');
}

async function settled(urlToken: string, count = 1, token = owner.token): Promise<AuditEntry[]> {
  return until('the deliveries to finish', async () => {
    const entries = await mailEntries(urlToken, token);
    const done = entries.filter((e) => ['completed', 'partially_failed', 'failed'].includes(e.notify_by_email!.status));
    return done.length >= count ? entries : undefined;
  });
}

async function queued(): Promise<{ notifications: number; jobs: number }> {
  const [n] = await api.db.query<{ n: string }>('select count(*) as n from email_notifications');
  const [j] = await api.db.query<{ n: string }>('select count(*) as n from pgboss.job');
  return { notifications: Number(n!.n), jobs: Number(j!.n) };
}

function received(to: string) {
  return mailbox.messages.filter((m) => m.to.includes(to));
}

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      publicBaseUrl: 'https://secrets.example.org',
      mail: {
        smtpUrl: mailbox.url,
        from: 'Secret Push <no-reply@secrets.example.org>',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Example Secrets',
        attempts: 3,
        retrySeconds: 1,
      },
    },
    { core: { queue: FAST_QUEUE, metrics } },
  );
  owner = await api.user('owner@example.org');
  other = await api.user('other@example.org');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
});

describe('pwpush-cli --notify against this server', () => {
  it('reads email_auto_dispatch, sends notify_emails_to in the push wrapper, and two recipients get one message each', async () => {
    const version = expectData(await getVersion({ client: api.client }));
    expect(version.api_version).toBe('2.1');
    expect(version.features.pushes.email_auto_dispatch).toBe(true);

    const payload = 'cli-secret-payload-7c1f0e';
    const passphrase = 'cli-passphrase-93ab';
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({
        push: {
          payload,
          kind: 'text',
          expire_after_views: 2,
          expire_after_duration: 8,
          passphrase,
          deletable_by_viewer: true,
          retrieval_step: false,
          notify_emails_to: 'ana@example.net, ben@example.net',
          notify_emails_to_locale: 'fr',
        },
      }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      notify_emails_to: 'ana@example.net, ben@example.net',
      notify_emails_to_locale: 'fr',
    });
    const link = created.body.html_url as string;
    expect(link).toMatch(/^https:\/\/secrets\.example\.org\/p\//);

    const [entry] = await settled(created.body.url_token);
    expect(entry!.notify_by_email).toMatchObject({
      recipients: 'ana@example.net,ben@example.net',
      locale: 'fr',
      status: 'completed',
      successful_sends: 'ana@example.net,ben@example.net',
    });
    expect(entry!.notify_by_email!.proceed_at).toMatch(/Z$/);
    expect(entry!.notify_by_email!.error_message).toBeUndefined();

    for (const to of ['ana@example.net', 'ben@example.net']) {
      const mails = received(to);
      expect(mails).toHaveLength(1);
      const mail = mails[0]!;
      expect(mail.to).toEqual([to]); // one message per recipient: nobody sees the others
      expect(mail.parsed.subject).toBe('owner@example.org vous a envoyé un lien secret');
      expect(mail.parsed.text).toContain(link);
      expect(mail.parsed.html).toContain(link);
      expect(mail.parsed.text).toContain('Example Secrets');
      expect(mail.parsed.text).toContain('phrase secrète'); // says one is needed…
      expect(mail.raw).not.toContain(payload); // …and never the secret, nor the passphrase
      expect(mail.raw).not.toContain(passphrase);
      expect(mail.parsed.attachments).toHaveLength(0);
    }
  });

  it('multipart (push-file): push[notify_emails_to] is read like the JSON field', async () => {
    const form = new FormData();
    form.set('push[kind]', 'file');
    form.set('push[expire_after_days]', '3');
    form.set('push[notify_emails_to]', 'cara@example.net');
    form.set('push[notify_emails_to_locale]', 'de');
    form.append('push[files][]', new Blob(['file-secret-bytes-5521']), 'notes.txt');
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: form,
    });
    expect(created.status).toBe(201);
    const [entry] = await settled(created.body.url_token);
    expect(entry!.notify_by_email!.status).toBe('completed');
    const [mail] = received('cara@example.net');
    expect(mail!.parsed.subject).toBe('owner@example.org hat Ihnen einen geheimen Link gesendet');
    expect(mail!.parsed.attachments).toHaveLength(0);
    expect(mail!.raw).not.toContain('file-secret-bytes-5521');
    expect(mail!.raw).not.toContain('notes.txt');
  });
});

describe('form-urlencoded', () => {
  it('push[notify_emails_to] and push[notify_emails_to_locale] in an urlencoded create', async () => {
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${owner.token}` },
      body: new URLSearchParams({
        'push[payload]': 'form-secret-12',
        'push[notify_emails_to]': 'form1@example.net, form2@example.net',
        'push[notify_emails_to_locale]': 'es',
      }).toString(),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      notify_emails_to: 'form1@example.net, form2@example.net',
      notify_emails_to_locale: 'es',
    });
    const [entry] = await settled(created.body.url_token);
    expect(entry!.notify_by_email).toMatchObject({ status: 'completed', locale: 'es' });
    expect(received('form2@example.net')).toHaveLength(1);
  });
});

describe('notifyEmails', () => {
  it('emails more recipients later; the 6th call in a minute answers 429', async () => {
    const push = expectData(
      await createPush({
        client: api.client,
        body: { push: { payload: 'later-secret-1' } },
        auth: bearer(owner.token),
      }),
      201,
    );
    const path = { url_token: push.url_token };
    const first = expectData(
      await notifyEmails({
        client: api.client,
        path,
        body: { notify_emails_to: 'dan@example.net', notify_emails_to_locale: 'es' },
        auth: bearer(owner.token),
      }),
      201,
    );
    expect(first.message).toBe('Recipient(s) are added to the queue to be sent.');
    await settled(push.url_token);
    expect(received('dan@example.net')[0]!.parsed.subject).toBe('owner@example.org te ha enviado un enlace secreto');
    for (const to of ['e1@example.net', 'e2@example.net', 'e3@example.net', 'e4@example.net']) {
      expectData(
        await notifyEmails({ client: api.client, path, body: { notify_emails_to: to }, auth: bearer(owner.token) }),
        201,
      );
    }
    const sixth = await notifyEmails({
      client: api.client,
      path,
      body: { notify_emails_to: 'late@example.net' },
      auth: bearer(owner.token),
    });
    const error = expectError(sixth, 429, 'rate_limited');
    expect(error.error).toBe('Too many email notification requests. Please try again in a minute.');
    expect(Number(sixth.response!.headers.get('retry-after'))).toBeGreaterThan(0);
    await settled(push.url_token, 5);
  });

  it('through the SDK facade: createPush with recipients, client.notifyEmails with a list, the audit', async () => {
    const user = await freshUser();
    const client = createSecretPushClient({ baseUrl: api.baseUrl, token: user.token });
    const push = await client.createPush({ payload: 'sdk-secret-11', notify_emails_to: 'sdk1@example.net' });
    expect(push.notify_emails_to).toBe('sdk1@example.net');
    expect(
      await client.notifyEmails(push.url_token, { to: ['sdk2@example.net', 'sdk3@example.net'], locale: 'es' }),
    ).toEqual({ message: 'Recipient(s) are added to the queue to be sent.' });
    await settled(push.url_token, 2, user.token);
    const statuses = [];
    for await (const e of client.audit(push.url_token)) if (e.notify_by_email) statuses.push(e.notify_by_email);
    expect(statuses).toMatchObject([
      { recipients: 'sdk1@example.net', status: 'completed' },
      { recipients: 'sdk2@example.net,sdk3@example.net', locale: 'es', status: 'completed' },
    ]);
    expect(received('sdk3@example.net')).toHaveLength(1);
  });

  it('answers 401 anonymous, 403 to another user, 404 for an unknown push; more than 5 in all is 422', async () => {
    const owner = await freshUser();
    const push = expectData(
      await createPush({
        client: api.client,
        body: { push: { payload: 'owner-only-2', notify_emails_to: 'f1@example.net,f2@example.net,f3@example.net' } },
        auth: bearer(owner.token),
      }),
      201,
    );
    const path = { url_token: push.url_token };
    const body = { notify_emails_to: 'g1@example.net,g2@example.net,g3@example.net' };
    expectError(await notifyEmails({ client: api.client, path, body }), 401, 'authentication_required');
    const forbidden = expectError(
      await notifyEmails({ client: api.client, path, body, auth: bearer(other.token) }),
      403,
      'forbidden',
    );
    expect(forbidden.error).toBe("That push doesn't belong to you.");
    expectError(
      await notifyEmails({
        client: api.client,
        path: { url_token: 'nosuchpushtokenatall2345' },
        body,
        auth: bearer(owner.token),
      }),
      404,
      'not_found',
    );
    const tooMany = expectError(
      await notifyEmails({ client: api.client, path, body, auth: bearer(owner.token) }),
      422,
      'validation_failed',
    );
    expect(tooMany.errors).toEqual({
      base: ['You can notify up to 5 email(s) and you have already sent emails to 3 recipients'],
    });
  });
});

describe('bad input: a clear 422, nothing queued, nothing sent', () => {
  const cases: [string, string, string | null, Record<string, string[]>][] = [
    [
      'a malformed list',
      'a@example.net,,b@example.net',
      null,
      { notify_emails_to: ['has commas used in the wrong way'] },
    ],
    ['duplicates', 'a@example.net, A@example.net', null, { notify_emails_to: ['contains duplicate emails'] }],
    [
      'more than 5',
      'a@x.net,b@x.net,c@x.net,d@x.net,e@x.net,f@x.net',
      null,
      { notify_emails_to: ['contains more than 5 email(s)'] },
    ],
    [
      'a header injection',
      'a@example.net\r\nBcc: evil@example.com',
      null,
      { notify_emails_to: ['contains invalid email(s)'] },
    ],
    ['a unicode domain', 'ana@exämple.org', null, { notify_emails_to: ['contains invalid email(s)'] }],
    ['a blank list', '  ', null, { notify_emails_to: ['cannot be left blank'] }],
    [
      'an unknown locale',
      'a@example.net',
      'xx-YY',
      { notify_emails_to_locale: ['is not within the available options'] },
    ],
  ];
  for (const [what, to, locale, errors] of cases) {
    it(`notifyEmails with ${what}`, async () => {
      const user = await freshUser();
      const push = expectData(
        await createPush({ client: api.client, body: { push: { payload: 'bad-input-3' } }, auth: bearer(user.token) }),
        201,
      );
      const before = await queued();
      const toThem = () => mailbox.messages.filter((m) => m.to.some((t) => to.toLowerCase().includes(t.toLowerCase())));
      const sent = toThem().length;
      const error = expectError(
        await notifyEmails({
          client: api.client,
          path: { url_token: push.url_token },
          body: { notify_emails_to: to, notify_emails_to_locale: locale },
          auth: bearer(user.token),
        }),
        422,
        'validation_failed',
      );
      expect(error.errors).toEqual(errors);
      expect(await queued()).toEqual(before);
      await new Promise((r) => setTimeout(r, 700)); // a poll of the queue
      expect(toThem().length).toBe(sent);
    });
  }

  it('a 10,000-character address, on create and on notifyEmails', async () => {
    const owner = await freshUser();
    const long = `${'a'.repeat(10_000)}@example.net`;
    const before = await queued();
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ push: { payload: 'long-address-4', notify_emails_to: long } }),
    });
    expect(created.status).toBe(422);
    expect(Object.keys(created.body.errors)).toEqual(['notify_emails_to']);
    const push = expectData(
      await createPush({
        client: api.client,
        body: { push: { payload: 'long-address-5' } },
        auth: bearer(owner.token),
      }),
      201,
    );
    const answer = await api.raw(`/api/v2/pushes/${push.url_token}/notify_emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ notify_emails_to: long }),
    });
    expect(answer.status).toBe(422);
    expect(Object.keys(answer.body.errors)).toEqual(['notify_emails_to']);
    expect(await queued()).toEqual(before);
  });

  it('a create with recipients: anonymous 422, end-to-end encrypted 422, a bad list 422; no push is made', async () => {
    const pushesBefore = (await api.db.query<{ n: string }>('select count(*) as n from pushes'))[0]!.n;
    const anonymous = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'anon-6', notify_emails_to: 'a@example.net' } }),
    });
    expect(anonymous.status).toBe(422);
    expect(anonymous.body.errors).toEqual({
      notify_emails_to: ['are not allowed for unknown users'],
      notify_emails_to_locale: ['is not allowed for unknown users'],
    });
    const encrypted = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({
        push: {
          payload: `spe1.${'A'.repeat(60)}`,
          client_encryption: { scheme: 'aes-256-gcm', version: 1 },
          notify_emails_to: 'a@example.net',
        },
      }),
    });
    expect(encrypted.status).toBe(422);
    expect(encrypted.body.errors.notify_emails_to[0]).toMatch(/end-to-end encrypted/);
    const bad = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ push: { payload: 'bad-7', notify_emails_to: 'a@example.net\nBcc: x@example.com' } }),
    });
    expect(bad.status).toBe(422);
    const pushesAfter = (await api.db.query<{ n: string }>('select count(*) as n from pushes'))[0]!.n;
    expect(pushesAfter).toBe(pushesBefore);
  });
});

describe('delivery faults', () => {
  it('with the relay down the entry stays pending/processing while retries run, and is delivered once it is back', async () => {
    await mailbox.stop();
    try {
      const push = expectData(
        await createPush({
          client: api.client,
          body: { push: { payload: 'down-secret-8', notify_emails_to: 'hal@example.net' } },
          auth: bearer(owner.token),
        }),
        201,
      );
      // At least one try failed (the relay refused the connection) and the delivery is waiting for the next one.
      await until('a failed try', async () => {
        const [row] = await api.db.query<{ attempts: number; status: string }>(
          'select attempts, status from email_notifications where push_id = (select id from pushes where url_token = $1)',
          [push.url_token],
        );
        return row && row.attempts >= 1 && row.status === 'pending' ? row : undefined;
      });
      const [waiting] = await mailEntries(push.url_token);
      expect(['pending', 'processing']).toContain(waiting!.notify_by_email!.status);
      expect(waiting!.notify_by_email!.error_message).toMatch(/ECONNECTION|could not be reached/);
      await mailbox.start();
      const [entry] = await settled(push.url_token);
      expect(entry!.notify_by_email).toMatchObject({ status: 'completed', successful_sends: 'hal@example.net' });
      expect(received('hal@example.net')).toHaveLength(1);
    } finally {
      await mailbox.start().catch(() => undefined);
    }
  });

  it('a recipient refused for good and one refused for now, to the last try: partially_failed with the reason', async () => {
    mailbox.refuse('gone@example.net', { code: 550, message: '5.1.1 no such user' });
    mailbox.refuse('busy@example.net', { code: 451, message: '4.7.1 try again later' });
    try {
      const push = expectData(
        await createPush({
          client: api.client,
          body: {
            push: { payload: 'mixed-9', notify_emails_to: 'ok@example.net,gone@example.net,busy@example.net' },
          },
          auth: bearer(owner.token),
        }),
        201,
      );
      const [entry] = await until(
        'three tries',
        async () => {
          const entries = await settled(push.url_token);
          return entries;
        },
        40_000,
      );
      expect(entry!.notify_by_email).toMatchObject({ status: 'partially_failed', successful_sends: 'ok@example.net' });
      expect(entry!.notify_by_email!.error_message).toMatch(/^451 /);
      expect(received('ok@example.net')).toHaveLength(1); // sent once, not once per try
      const [row] = await api.db.query<{ attempts: number; refused: string[] }>(
        'select attempts, refused from email_notifications where push_id = (select id from pushes where url_token = $1)',
        [push.url_token],
      );
      expect(row).toEqual({ attempts: 3, refused: ['gone@example.net'] });
    } finally {
      mailbox.refuse('gone@example.net', null);
      mailbox.refuse('busy@example.net', null);
    }
  }, 60_000);
});

describe('/metrics', () => {
  it('counts sends by outcome and finished notifications by status, and shows the queue depth', async () => {
    const text = await metrics.registry.metrics();
    const value = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1]);
    expect(value('secret_push_email_sends_total{outcome="sent"}')).toBeGreaterThanOrEqual(10);
    expect(value('secret_push_email_sends_total{outcome="temporary_failure"}')).toBeGreaterThanOrEqual(2);
    expect(value('secret_push_email_sends_total{outcome="permanent_failure"}')).toBe(1);
    expect(value('secret_push_email_notifications_finished_total{status="completed"}')).toBeGreaterThanOrEqual(5);
    expect(value('secret_push_email_notifications_finished_total{status="partially_failed"}')).toBe(1);
    // pg-boss refreshes its queue counts on each monitor pass (PWPUSH's default 10 s; 1 s here).
    expect(value('secret_push_job_queue_jobs{queue="email.push-link",state="queued"}')).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^secret_push_job_queue_jobs\{queue="email.push-link",state="active"\} \d+$/m);
    expect(text).not.toContain('@example.net'); // no address in a series
  });
});
