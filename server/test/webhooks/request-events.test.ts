/**
 * Issues 23 and 24: a request's moves as `request.*` webhook events, end to end. The real app on a throwaway
 * PostgreSQL, called through the generated SDK; a real HTTP receiver on loopback (PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true);
 * every delivery verified with the `standardwebhooks` package. A request answered anonymously and then collected, one
 * revoked and one swept give created → fulfilled → collected, created → revoked and created → expired, named by the
 * request's non-secret `request_id` (and the answer push's `push_id`), and no body holds a token, the ask, the note,
 * the answer or its passphrase. A webhook that did not subscribe to them gets none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  createRequest,
  createWebhook,
  getPush,
  getRequest,
  listWebhookDeliveries,
  respondToRequest,
  revokeRequest,
  type RequestOwner,
  type WebhookEvent,
} from '@secret-push/sdk/generated';
import { verifyWebhook } from '@secret-push/sdk';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { expectData, expectError } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { hookedOwner } from './support/hooked-owner.js';

let api: RealApi;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { queue: { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 } } },
  );
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

const REQUEST_EVENTS = [
  'request.created',
  'request.fulfilled',
  'request.collected',
  'request.expired',
  'request.revoked',
] as const;
const ORDER = [...REQUEST_EVENTS, 'push.created', 'push.viewed'];

/** The verified events of the receiver signed with `secret`, in the order they happened. */
function verified(secret: string): WebhookEvent[] {
  const events = receiver.received
    .filter((r) => r.status > 0 && r.status < 300)
    .flatMap((r) => {
      try {
        return [receiver.verify(secret, r) as WebhookEvent];
      } catch {
        return []; // another webhook's delivery
      }
    });
  return events.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || ORDER.indexOf(a.type) - ORDER.indexOf(b.type));
}

/** Waits until `count` events name this request, and returns them in order. */
async function eventsOf(secret: string, requestId: string, count: number): Promise<WebhookEvent[]> {
  const end = Date.now() + 30_000;
  for (;;) {
    const mine = verified(secret).filter((e) => 'request_id' in e.data && e.data.request_id === requestId);
    if (mine.length >= count || Date.now() > end) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('request.* webhook events over HTTP', () => {
  it('created, fulfilled, collected, revoked and expired: the right events in order, signed, without secret material', async () => {
    const { auth, hook } = await hookedOwner(api, 'request-hook-owner@example.org', {
      url: receiver.url,
      events: [...REQUEST_EVENTS, 'push.created', 'push.viewed'],
    });
    // A webhook of the same owner for push events only gets no request event.
    const pushOnly = expectData(
      await createWebhook({
        client: api.client,
        auth,
        body: { webhook: { url: `${receiver.url}/push-only`, events: ['push.created'] } },
      }),
      201,
    );
    expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: 'for the push-only hook' } } }),
      201,
    );
    const secrets = {
      ask: 'ask-text-the-staging-db-3c1f',
      note: 'note-ticket-4711-a9e2',
      payload: 'answer-payload-hunter2-77d0',
      passphrase: 'passphrase-0b5e-corral',
    };

    // 1. Created, answered anonymously, the answer push retrieved: pending → fulfilled → collected.
    const asked = expectData(
      await createRequest({
        client: api.client,
        auth,
        body: { request: { request: secrets.ask, name: 'staging db', note: secrets.note, expire_after_views: 1 } },
      }),
      201,
    ) as RequestOwner;
    expect(asked.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expectData(
      await respondToRequest({
        client: api.client,
        path: { url_token: asked.url_token },
        body: { push: { payload: secrets.payload, passphrase: secrets.passphrase } },
        headers: { 'user-agent': 'Responder/1.0' },
      }),
      201,
    );
    const answered = expectData(
      await getRequest({ client: api.client, auth, path: { url_token: asked.url_token } }),
    ) as RequestOwner;
    expect(answered.request_id).toBe(asked.request_id);
    const answer = answered.answer!;
    expect(answer.push_id).toMatch(/^[0-9a-f-]{36}$/);
    const got = expectData(
      await getPush({
        client: api.client,
        path: { url_token: answer.url_token },
        headers: { 'X-Passphrase': secrets.passphrase },
      }),
    );
    expect(got.payload).toBe(secrets.payload);
    const life = await eventsOf(hook.secret, asked.request_id!, 3);
    expect(life.map((e) => e.type)).toEqual(['request.created', 'request.fulfilled', 'request.collected']);
    const [created, fulfilled, collected] = life as [WebhookEvent, WebhookEvent, WebhookEvent];
    expect(created.data).toEqual({
      request_id: asked.request_id,
      state: 'pending',
      name: 'staging db',
      created_at: asked.created_at,
      expires_at: asked.expires_at,
      fulfilled_at: null,
      collected_at: null,
      closed_at: null,
    });
    expect(created.timestamp).toBe(asked.created_at);
    expect(fulfilled.data).toEqual({
      ...created.data,
      state: 'fulfilled',
      fulfilled_at: answered.fulfilled_at,
      push_id: answer.push_id,
    });
    const after = expectData(
      await getRequest({ client: api.client, auth, path: { url_token: asked.url_token } }),
    ) as RequestOwner;
    expect(after.state).toBe('collected');
    expect(collected.data).toEqual({
      ...fulfilled.data,
      state: 'collected',
      collected_at: after.collected_at,
    });
    // The answer push is the requester's: its view names it by the same push_id (its making is request.fulfilled).
    const end = Date.now() + 30_000;
    let answerEvents: string[] = [];
    while (answerEvents.length === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      answerEvents = verified(hook.secret)
        .filter((e) => e.type.startsWith('push.') && (e.data as { push_id?: string }).push_id === answer.push_id)
        .map((e) => e.type);
    }
    expect(answerEvents).toEqual(['push.viewed']);

    // 2. Created, then revoked by its requester.
    const withdrawn = expectData(
      await createRequest({
        client: api.client,
        auth,
        body: { request: { request: secrets.ask, note: secrets.note } },
      }),
      201,
    ) as RequestOwner;
    const revoked = expectData(
      await revokeRequest({ client: api.client, auth, path: { url_token: withdrawn.url_token } }),
    ) as RequestOwner;
    const gone = await eventsOf(hook.secret, withdrawn.request_id!, 2);
    expect(gone.map((e) => e.type)).toEqual(['request.created', 'request.revoked']);
    expect(gone[1]!.data).toEqual({
      request_id: withdrawn.request_id,
      state: 'revoked',
      name: '',
      created_at: withdrawn.created_at,
      expires_at: withdrawn.expires_at,
      fulfilled_at: null,
      collected_at: null,
      closed_at: revoked.closed_at,
    });
    expect(gone[1]!.data).not.toHaveProperty('push_id');

    // 3. Created for 15 minutes, then expired by the sweeper: the event is dated at its expiry.
    const brief = expectData(
      await createRequest({
        client: api.client,
        auth,
        body: { request: { request: secrets.ask, name: 'brief', expire_after_duration: 0 } },
      }),
      201,
    ) as RequestOwner;
    await api.core.sweep(new Date(Date.now() + 16 * 60_000));
    const swept = await eventsOf(hook.secret, brief.request_id!, 2);
    expect(swept.map((e) => e.type)).toEqual(['request.created', 'request.expired']);
    expect(swept[1]!.timestamp).toBe(brief.expires_at);
    expect(swept[1]!.data).toMatchObject({
      request_id: brief.request_id,
      state: 'expired',
      name: 'brief',
      fulfilled_at: null,
      closed_at: brief.expires_at,
    });

    // No body holds a token, a link, the ask, the note, the answer or its passphrase.
    const tokens = [asked.url_token, answer.url_token, withdrawn.url_token, brief.url_token];
    expect(receiver.received.length).toBeGreaterThan(0);
    for (const request of receiver.received) {
      for (const secret of [...Object.values(secrets), ...tokens, hook.secret, pushOnly.secret])
        expect(request.body).not.toContain(secret);
      expect(request.body).not.toMatch(
        /"(url_token|payload|passphrase|note|html_url|json_url|files|request|public_key|sealed_key|answer)":/,
      );
    }
    // The SDK's verifyWebhook (WebCrypto) agrees with the standardwebhooks package, and types the new events.
    const fulfilledDelivery = receiver.received.find(
      (r) => r.body.includes('"request.fulfilled"') && r.body.includes(asked.request_id!),
    )!;
    const event = await verifyWebhook(hook.secret, fulfilledDelivery.headers, fulfilledDelivery.body);
    expect(event).toEqual(receiver.verify(hook.secret, fulfilledDelivery));
    if (event.type !== 'request.fulfilled') throw new Error(`expected request.fulfilled, got ${event.type}`);
    expect(event.data.push_id).toBe(answer.push_id);

    // The push-only webhook's log: push events only.
    // (Every request event above was written in its move's transaction, beside any delivery to this webhook.)
    const log = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: pushOnly.id } }));
    expect(log.deliveries.length).toBe(1);
    expect(new Set(log.deliveries.map((d) => d.event))).toEqual(new Set(['push.created']));
  }, 90_000);

  it('takes the request.* names at registration, and refuses an unknown one', async () => {
    const { auth, hook } = await hookedOwner(api, 'request-hook-names@example.org', {
      url: receiver.url,
      events: ['request.fulfilled', 'request.collected'],
    });
    expect(hook.events).toEqual(['request.fulfilled', 'request.collected']);
    const refused = expectError(
      await createWebhook({
        client: api.client,
        auth,
        body: { webhook: { url: receiver.url, events: ['request.answered' as never] } },
      }),
      422,
      'validation_failed',
    );
    expect(refused.errors?.events?.[0]).toContain('request.revoked');
  });
});
