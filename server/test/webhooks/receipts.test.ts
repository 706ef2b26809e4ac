/**
 * Issue 23: read receipts by email, and the endpoint disabled after failing for 5 days. A real SMTP server in this
 * process (support/mailbox.ts) takes what the server sends through the job queue. An owner who asks for it
 * (`notify_owner_on_view` on create, or the account's setting) is emailed at the first view only, and when a push
 * expires unviewed; the email names the push, never its link, payload, passphrase or note. Without a relay the
 * field answers 422. A webhook whose deliveries have failed for 5 days is disabled at its next failure and its owner
 * emailed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, getPush, getVersion, getWebhook, testWebhook } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
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
        attempts: 3,
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

describe('read receipts by email', () => {
  it('reports the feature, emails the first view only, and an expiry unviewed; never the secret', async () => {
    const version = expectData(await getVersion({ client: api.client }));
    expect(version.features.webhooks).toEqual({ enabled: true, read_receipts: true });
    const owner = await api.user('receipts@example.org');
    const auth = bearer(owner.token);
    const push = expectData(
      await createPush({
        client: api.client,
        auth,
        body: {
          push: { payload: 'receipt-payload-3f1', name: 'DB password', note: 'note-8c2', notify_owner_on_view: true },
        },
      }),
      201,
    );
    expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    const [viewed] = await mailbox.waitFor(1, 20_000);
    expect(viewed!.to).toEqual(['receipts@example.org']);
    expect(viewed!.parsed.subject).toContain('was viewed');
    expect(viewed!.parsed.text).toContain(push.push_id!);
    expect(viewed!.parsed.text).toContain('DB password');
    for (const secret of [push.url_token, 'receipt-payload-3f1', 'note-8c2']) expect(viewed!.raw).not.toContain(secret);

    // Unviewed until it expires (the sweeper notices): one more email.
    const unviewed = expectData(
      await createPush({
        client: api.client,
        auth,
        body: { push: { payload: 'x', name: 'never opened', expire_after_days: 1, notify_owner_on_view: true } },
      }),
      201,
    );
    await api.core.sweep(new Date(Date.now() + 2 * 86_400_000));
    const mails = await mailbox.waitFor(2, 20_000);
    expect(mails[1]!.parsed.subject).toContain('expired unviewed');
    expect(mails[1]!.parsed.text).toContain(unviewed.push_id!);
    await new Promise((r) => setTimeout(r, 1500));
    expect(mailbox.messages).toHaveLength(2); // the second view sent nothing
  }, 60_000);

  it('refuses notify_owner_on_view from an anonymous caller (422)', async () => {
    const refused = expectError(
      await createPush({ client: api.client, body: { push: { payload: 'x', notify_owner_on_view: true } } }),
      422,
      'validation_failed',
    );
    expect(refused.errors?.notify_owner_on_view).toEqual(['is not allowed for unknown users']);
  });
});

describe('an endpoint failing for 5 days', () => {
  it('is disabled at its next failure, and its owner emailed', async () => {
    const { auth, hook } = await hookedOwner(api, 'failing@example.org', {
      url: receiver.url,
      events: ['push.created'],
    });
    await api.db.query("update webhooks set failing_since = now() - interval '5 days 1 minute' where id = $1", [
      hook.id,
    ]);
    const before = mailbox.messages.length;
    receiver.answer(503);
    expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
    const mails = await mailbox.waitFor(before + 1, 20_000);
    const notice = mails[before]!;
    expect(notice.to).toEqual(['failing@example.org']);
    expect(notice.parsed.subject).toContain('was disabled');
    const shown = expectData(await getWebhook({ client: api.client, auth, path: { id: hook.id } }));
    expect(shown.enabled).toBe(false);
    expect(shown.disabled_at).not.toBeNull();
    // Disabled: nothing more is sent.
    const sent = receiver.received.length;
    expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'y' } } }), 201);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.length).toBe(sent);
  }, 60_000);
});
