/**
 * Issues 24 and 22: a request's moves by email, through a real SMTP server in this process (test/support/mailbox.ts)
 * and the durable queue on the test's PostgreSQL. pwpush-cli's create with `--notify` mails the request's link to the
 * listed addresses; the answer, the first retrieval of the answer, a revoke and an expiry each mail the requester.
 * Every message is read as a mail client reads it (mailparser) and scanned, headers and body, for every secret of
 * the request and its answer: none may be there. Every answer is checked against the contract.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getVersion } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { expectData } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';

const FAST_QUEUE = { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 };
const BASE = 'https://secrets.example.org';
const DAILY_LIMIT = 8;

let mailbox: Mailbox;
let api: RealApi;
let users = 0;

/** Every secret a test made: none may appear in any message (headers included). */
const secrets: string[] = [];
const secret = (s: string) => (secrets.push(s), s);

/** A user of its own, so that each test reads only its own mail and has its own daily limit. */
async function freshUser() {
  users += 1;
  return api.user(`requester${users}@example.org`);
}

const json = (token: string | null, body: unknown, extra: Record<string, string> = {}) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...extra,
  },
  body: JSON.stringify(body),
});

function mailTo(address: string) {
  return mailbox.messages.filter((m) => m.to.includes(address));
}

/** Waits until `address` has `count` messages, then gives them (the last one last). */
async function waitForMail(address: string, count: number, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (mailTo(address).length < count) {
    if (Date.now() > end) throw new Error(`expected ${count} messages to ${address}, got ${mailTo(address).length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return mailTo(address);
}

async function mailRows(requestToken: string) {
  return api.db.query<{ kind: string; status: string; recipients: string[] }>(
    `select m.kind, m.status, m.recipients from request_mail m join requests r on r.id = m.request_id
     where r.url_token = $1 order by m.created_at`,
    [requestToken],
  );
}

/** Opens the answer's push as the requester (its first retrieval moves the request to collected). */
async function retrieve(urlToken: string, token: string, passphrase?: string) {
  const opened = await api.raw(`/api/v2/pushes/${urlToken}`, {
    headers: { authorization: `Bearer ${token}`, ...(passphrase ? { 'x-passphrase': passphrase } : {}) },
  });
  expect(opened.status).toBe(200);
  return opened.body;
}

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      publicBaseUrl: BASE,
      mail: {
        smtpUrl: mailbox.url,
        from: 'Secret Push <no-reply@secrets.example.org>',
        notifyByEmail: true,
        notifyDailyLimit: DAILY_LIMIT,
        instanceName: 'Example Secrets',
        attempts: 3,
        retrySeconds: 1,
      },
    },
    { core: { queue: FAST_QUEUE } },
  );
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  // The scan over everything this file sent: no secret in any header or body, no attachment.
  expect(mailbox.messages.length).toBeGreaterThan(0);
  for (const message of mailbox.messages) {
    for (const s of secrets) expect(message.raw, `a message to ${message.to.join(',')}`).not.toContain(s);
    expect(message.parsed.attachments).toHaveLength(0);
  }
  await api?.stop();
  await mailbox?.stop();
});

describe('requests by email', () => {
  it('reports features.requests.email_auto_dispatch: true with a relay', async () => {
    const version = expectData(await getVersion({ client: api.client }));
    expect(version.features.requests).toMatchObject({ enabled: true, email_auto_dispatch: true });
    expect(version.features.pushes.email_auto_dispatch).toBe(true);
  });

  it("mails the link to pwpush-cli's --notify addresses, then the requester: answered, opened; nothing secret", async () => {
    const requester = await freshUser();
    const ask = secret('ask-staging-db-password-5d1c');
    const name = secret('name-vendor-x-4a7e');
    const note = secret('note-ticket-8842-b3f0');
    // `pwpush request "…" --notify … --notify-locale de --days 7 --views 2 --note … --name …`
    const created = await api.raw(
      '/api/v2/requests',
      json(
        requester.token,
        {
          request: {
            request: ask,
            notify_emails_to: 'vendor@example.net, ops@example.net',
            notify_emails_to_locale: 'de',
            expire_after_views: 2,
            note,
            name,
            deletable_by_viewer: false,
            retrieval_step: false,
            expire_after_duration: 12,
          },
        },
        { 'x-user-email': requester.email, 'x-user-token': requester.token, 'user-agent': 'pwpush-cli/0.16.0' },
      ),
    );
    expect(created.status).toBe(201);
    const token = created.body.url_token as string;
    expect(created.body.html_url).toBe(`${BASE}/r/${token}`);
    const preview = await api.raw(`/api/v2/requests/${token}/preview`, {
      headers: { authorization: `Bearer ${requester.token}` },
    });
    expect(preview.body.url).toBe(created.body.html_url);

    // Each listed address gets one message, in German, from the requester, with the request's page as its link.
    for (const to of ['vendor@example.net', 'ops@example.net']) {
      const [message] = await waitForMail(to, 1);
      expect(message!.parsed.subject).toBe(`${requester.email} bittet Sie, ein Geheimnis zu senden`);
      expect(message!.parsed.text).toContain(`${BASE}/r/${token}`);
      expect(message!.parsed.html).toContain(`href="${BASE}/r/${token}"`);
      expect(message!.from).toBe('no-reply@secrets.example.org');
    }
    expect(mailTo(requester.email)).toHaveLength(0); // the create tells the requester nothing

    // The vendor answers, anonymously: the requester is told, with the request's owner page (behind sign-in).
    const payload = secret('answer-payload-hunter2-91c3');
    const passphrase = secret('answer-passphrase-e5a0');
    const answered = await api.raw(
      `/api/v2/requests/${token}/response`,
      json(null, { push: { payload, passphrase } }, { 'user-agent': 'Mozilla/5.0 (vendor)' }),
    );
    expect(answered.status).toBe(201);
    const [fulfilled] = await waitForMail(requester.email, 1);
    expect(fulfilled!.parsed.subject).toBe('Your request on Example Secrets was answered');
    expect(fulfilled!.parsed.text).toContain(`${BASE}/requests/${token}`);
    const owner = await api.raw(`/api/v2/requests/${token}`, {
      headers: { authorization: `Bearer ${requester.token}` },
    });
    const answerToken = secret(owner.body.answer.url_token as string);

    // The requester opens the answer: collected, told once (a second retrieval tells nothing more).
    expect((await retrieve(answerToken, requester.token, passphrase)).payload).toBe(payload);
    const mails = await waitForMail(requester.email, 2);
    expect(mails[1]!.parsed.subject).toBe('The answer to your request on Example Secrets was opened');
    await retrieve(answerToken, requester.token, passphrase);

    const rows = await until(async () => {
      const r = await mailRows(token);
      return r.every((m) => m.status === 'completed') ? r : undefined;
    });
    expect(rows.map((m) => [m.kind, m.recipients])).toEqual([
      ['created', ['vendor@example.net', 'ops@example.net']],
      ['fulfilled', []],
      ['collected', []],
    ]);
    // The jobs carry a row id only.
    const jobs = await api.db.query<{ data: unknown }>(`select data from pgboss.job where name = 'email.request'`);
    for (const job of jobs) expect(Object.keys(job.data as object)).toEqual(['mail']);
    expect(mailTo(requester.email)).toHaveLength(2);
  });

  it('mails the link of a multipart create with a file, never the file; a revoke and an expiry mail the requester', async () => {
    const requester = await freshUser();
    const fileText = secret('file-content-form-7b21');
    const boundary = 'e3b0c44298fc1c149afbf4c8996fb924';
    const part = (n: string, v: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`;
    const body = Buffer.concat([
      Buffer.from(part('request[request]', secret('ask-fill-in-the-form-c9e2'))),
      Buffer.from(part('request[notify_emails_to]', 'filler@example.net')),
      Buffer.from(part('request[expire_after_days]', '10')),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="request[files][]"; filename="form.txt"\r\n\r\n`,
      ),
      Buffer.from(fileText),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const created = await api.raw('/api/v2/requests', {
      method: 'POST',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        authorization: `Bearer ${requester.token}`,
      },
      body: new Uint8Array(body),
    });
    expect(created.status).toBe(201);
    const [link] = await waitForMail('filler@example.net', 1);
    expect(link!.parsed.subject).toBe(`${requester.email} asks you to send a secret`);
    expect(link!.parsed.text).toContain(`${BASE}/r/${created.body.url_token}`);

    const revoked = await api.raw(`/api/v2/requests/${created.body.url_token}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${requester.token}` },
    });
    expect(revoked.body.state).toBe('revoked');
    const [notice] = await waitForMail(requester.email, 1);
    expect(notice!.parsed.subject).toBe('Your request on Example Secrets was revoked');

    // A request nobody answers expires with the sweep: the requester is told once.
    const lapsing = await api.raw('/api/v2/requests', json(requester.token, { request: { request: 'soon' } }));
    expect(lapsing.status).toBe(201);
    await api.core.sweep(new Date(Date.parse(lapsing.body.expires_at as string) + 1000));
    const [, expired] = await waitForMail(requester.email, 2);
    expect(expired!.parsed.subject).toBe('Your request on Example Secrets expired');
    await api.core.sweep(new Date(Date.parse(lapsing.body.expires_at as string) + 2000));
    expect((await mailRows(lapsing.body.url_token as string)).map((m) => m.kind)).toEqual(['expired']);
  });

  it("counts the links against the requester's daily limit with the pushes' links: over it, 422 and nothing stored", async () => {
    const requester = await freshUser();
    const five = ['a', 'b', 'c', 'd', 'e'].map((l) => `${l}-limit@example.net`).join(',');
    const first = await api.raw(
      '/api/v2/requests',
      json(requester.token, { request: { request: 'x', notify_emails_to: five } }),
    );
    expect(first.status).toBe(201);
    const push = await api.raw(
      '/api/v2/pushes',
      json(requester.token, { push: { payload: 'p', notify_emails_to: 'f-limit@example.net,g-limit@example.net' } }),
    );
    expect(push.status).toBe(201); // 7 of 8
    const count = async () =>
      Number(
        (
          await api.db.query<{ n: string }>('select count(*) as n from requests where user_id = $1', [requester.userId])
        )[0]!.n,
      );
    const before = await count();
    const over = await api.raw(
      '/api/v2/requests',
      json(requester.token, { request: { request: 'y', notify_emails_to: 'h-limit@example.net,i-limit@example.net' } }),
    );
    expect(over.status).toBe(422);
    expect(over.body.errors).toEqual({ base: ['The maximum number of emails has been reached for today'] });
    expect(await count()).toBe(before);
    // A request without addresses is not limited (the requester's own notices are not counted).
    const plain = await api.raw('/api/v2/requests', json(requester.token, { request: { request: 'z' } }));
    expect(plain.status).toBe(201);
  });
});

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
