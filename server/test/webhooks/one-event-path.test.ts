/**
 * One event path (docs/decisions/0008-one-push-event-path.md): a push's first view, for an owner with a webhook and
 * read receipts, is one event. Its webhook delivery and its receipt email come from that event, once each: the
 * delivery carries the event's id and the email's Message-ID is made of it, and when the relay refuses the email for
 * a while (a temporary 451) the queue runs the event's job again without a second delivery or a second email.
 * A real SMTP server (support/mailbox.ts), a real HTTP receiver (support/receiver.ts) and the server's own job queue.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush, getPush } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { expectData } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { hookedOwner } from './support/hooked-owner.js';

let api: RealApi;
let mailbox: Mailbox;
let receiver: Receiver;

beforeAll(async () => {
  mailbox = await startMailbox();
  receiver = await startReceiver();
  api = await startRealApi(
    {
      mail: {
        smtpUrl: mailbox.url,
        from: 'no-reply@secrets.example.org',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Secret Push',
        attempts: 5,
        retrySeconds: 1,
      },
      webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] },
    },
    { core: { queue: { pollingIntervalSeconds: 0.5 } } },
  );
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
  await receiver?.stop();
});

async function until<T>(what: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await what();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

it("a first view's webhook delivery and read receipt come from one event, once each, also when the email is retried", async () => {
  const email = 'one-path@example.org';
  const { auth, hook } = await hookedOwner(api, email, { url: receiver.url, events: ['push.viewed'] });
  mailbox.refuse(email, { code: 451, message: '4.7.1 try later' });
  const push = expectData(
    await createPush({
      client: api.client,
      auth,
      body: { push: { payload: 'one-path-payload', name: 'one path', notify_owner_on_view: true } },
    }),
    201,
  );
  expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));

  // The event's job: its first try wrote the delivery, and the relay's refusal has the queue run it again.
  const job = await until(async () => {
    const [row] = await api.db.query<{ event_id: string; retry_count: number }>(
      `select data->>'eventId' as event_id, retry_count from pgboss.job where name = 'push.event'
         and data->>'pushId' = $1`,
      [push.push_id],
    );
    return row && row.retry_count >= 1 ? row : undefined;
  });
  const [sent] = await receiver.waitFor(1, 20_000);
  mailbox.refuse(email, null);
  const [mail] = await mailbox.waitFor(1, 20_000);
  await until(async () => {
    const [row] = await api.db.query<{ state: string }>(
      `select state from pgboss.job where name = 'push.event' and data->>'pushId' = $1`,
      [push.push_id],
    );
    return row?.state === 'completed' ? row : undefined;
  });

  const deliveries = await api.db.query<{ event: string; event_id: string }>(
    'select event, event_id from webhook_deliveries where webhook_id = $1',
    [hook.id],
  );
  expect(deliveries).toEqual([{ event: 'push.viewed', event_id: job.event_id }]);
  expect((JSON.parse(sent!.body) as { type: string; data: { push_id: string } }).data.push_id).toBe(push.push_id);
  expect(mail!.to).toEqual([email]);
  expect(mail!.parsed.subject).toContain('was viewed');
  expect(mail!.parsed.messageId).toBe(`<${job.event_id}@notice.SecretPush>`);
  const jobs = await api.db.query('select 1 from pgboss.job where name = $1 and data->>$2 = $3', [
    'push.event',
    'pushId',
    push.push_id,
  ]);
  expect(jobs).toHaveLength(1);
  // Nothing else follows: one delivery sent, one email.
  await new Promise((r) => setTimeout(r, 1500));
  expect(receiver.received).toHaveLength(1);
  expect(mailbox.messages).toHaveLength(1);
}, 60_000);
