/**
 * Issue 23: signed webhooks, end to end. The real app on a throwaway PostgreSQL, called through the generated SDK; a
 * real HTTP receiver on loopback (PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true lets the server reach it); every delivery is
 * verified with the `standardwebhooks` package, as a receiver would. Create, view (twice, to the last view), a wrong
 * passphrase, a delete and a sweep give the right events with the right data and no secret material; a receiver
 * that answers 500, 500, then 200 gets the same webhook-id three times and the delivery log shows it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  createWebhook,
  deleteWebhook,
  expirePush,
  getPush,
  getPushAudit,
  getWebhook,
  listActivePushes,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  testWebhook,
  type WebhookEvent,
} from '@secret-push/sdk/generated';
import { verifyWebhook } from '@secret-push/sdk';
import pg from 'pg';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
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

const ALL_EVENTS = ['push.created', 'push.viewed', 'push.failed_passphrase', 'push.expired', 'push.deleted'] as const;

/** Waits until the receiver holds `count` requests for this push id, verifies each, returns their events in the order they happened. */
async function eventsOf(secret: string, pushId: string, count: number): Promise<WebhookEvent[]> {
  const end = Date.now() + 30_000;
  for (;;) {
    const mine = receiver.received
      .filter((r) => r.status < 300)
      .map((r) => receiver.verify(secret, r) as WebhookEvent)
      .filter((e) => 'push_id' in e.data && e.data.push_id === pushId);
    // Deliveries run side by side: order them as the events happened (their timestamps; an expiry after the view that
    // caused it).
    const rank = (e: WebhookEvent) =>
      ['push.created', 'push.viewed', 'push.failed_passphrase', 'push.deleted', 'push.expired'].indexOf(e.type);
    mine.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || rank(a) - rank(b));
    if (mine.length >= count || Date.now() > end) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('webhooks over HTTP', () => {
  it('create, two views, a wrong passphrase, a delete and a sweep: the right events, signed, without secret material', async () => {
    const { auth, hook } = await hookedOwner(api, 'hook-owner@example.org', {
      url: receiver.url,
      events: [...ALL_EVENTS],
      description: 'team chat',
    });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // Never shown again.
    const shown = expectData(await getWebhook({ client: api.client, auth, path: { id: hook.id } }));
    expect(shown).not.toHaveProperty('secret');
    expect(JSON.stringify(expectData(await listWebhooks({ client: api.client, auth })))).not.toContain(hook.secret);

    const secrets = ['payload-9f2c71', 'passphrase-5d0a', 'note-77b3e1'];
    const viewed = expectData(
      await createPush({
        client: api.client,
        auth,
        body: { push: { payload: secrets[0], name: 'Wi-Fi', note: secrets[2], expire_after_views: 2 } },
      }),
      201,
    );
    expect(viewed.push_id).toMatch(/^[0-9a-f-]{36}$/);
    const viewer = { 'user-agent': 'ViewerAgent/1.0', referer: 'https://chat.example.org/' };
    for (let i = 0; i < 2; i++) {
      const got = expectData(
        await getPush({ client: api.client, path: { url_token: viewed.url_token }, headers: viewer }),
      );
      expect(got.payload).toBe(secrets[0]);
    }
    const events = await eventsOf(hook.secret, viewed.push_id!, 4);
    expect(events.map((e) => e.type)).toEqual(['push.created', 'push.viewed', 'push.viewed', 'push.expired']);
    const [, first, last, expired] = events as [WebhookEvent, WebhookEvent, WebhookEvent, WebhookEvent];
    expect(first.data).toMatchObject({
      push_id: viewed.push_id,
      kind: 'text',
      name: 'Wi-Fi',
      views_remaining: 1,
      expired: false,
      viewer: { ip: '127.0.0.1', user_agent: 'ViewerAgent/1.0', referrer: 'https://chat.example.org/' },
    });
    expect(last.data).toMatchObject({ views_remaining: 0 });
    expect(expired.data).toMatchObject({ reason: 'views', expired: true, views_remaining: 0 });
    // The same push id as the owner's list and audit log show.
    const audit = expectData(await getPushAudit({ client: api.client, auth, path: { url_token: viewed.url_token } }));
    expect(audit.push_id).toBe(viewed.push_id);

    const guarded = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: secrets[0], passphrase: secrets[1] } } }),
      201,
    );
    const active = expectData(await listActivePushes({ client: api.client, auth }));
    expect(active.find((p) => p.url_token === guarded.url_token)?.push_id).toBe(guarded.push_id);
    expectError(
      await getPush({
        client: api.client,
        path: { url_token: guarded.url_token },
        headers: { 'X-Passphrase': 'wrong' },
      }),
      401,
      'passphrase_incorrect',
    );
    const failed = await eventsOf(hook.secret, guarded.push_id!, 2);
    expect(failed.map((e) => e.type)).toEqual(['push.created', 'push.failed_passphrase']);
    expect(failed[1]!.data).toMatchObject({ passphrase_protected: true, viewer: { ip: '127.0.0.1' } });

    const deleted = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: secrets[0] } } }),
      201,
    );
    expectData(await expirePush({ client: api.client, auth, path: { url_token: deleted.url_token } }));
    const gone = await eventsOf(hook.secret, deleted.push_id!, 2);
    expect(gone.map((e) => e.type)).toEqual(['push.created', 'push.deleted']);
    expect(gone[1]!.data).toMatchObject({ deleted_by: 'owner', expired: true });

    const swept = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: secrets[0], expire_after_days: 1 } } }),
      201,
    );
    await api.core.sweep(new Date(Date.now() + 2 * 86_400_000));
    const sweptEvents = await eventsOf(hook.secret, swept.push_id!, 2);
    expect(sweptEvents.map((e) => e.type)).toEqual(['push.created', 'push.expired']);
    expect(sweptEvents[1]!.data).toMatchObject({ reason: 'sweeper', expired: true, views_remaining: 5 });

    // No body holds a token, a link, the payload, the passphrase or the note.
    const tokens = [viewed, guarded, deleted, swept].map((p) => p.url_token);
    for (const request of receiver.received) {
      for (const secret of [...secrets, ...tokens, hook.secret]) expect(request.body).not.toContain(secret);
      expect(request.body).not.toMatch(/"(url_token|payload|passphrase|note|html_url|json_url|files)":/);
      expect(request.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9]{26}$/);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]{44}$/);
      // The SDK's verifyWebhook (WebCrypto) agrees with the standardwebhooks package.
      if (request.body.includes(viewed.push_id!)) {
        expect(await verifyWebhook(hook.secret, request.headers, request.body)).toEqual(
          receiver.verify(hook.secret, request),
        );
      }
    }
    // An anonymous push is nobody's: it sends nothing.
    const before = receiver.received.length;
    const anonymous = expectData(await createPush({ client: api.client, body: { push: { payload: 'anon' } } }), 201);
    expectData(await getPush({ client: api.client, path: { url_token: anonymous.url_token } }));
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.length).toBe(before);
  }, 90_000);

  it('views side by side: one push.viewed per view won, each with its own count, and one push.expired', async () => {
    // A view's events are written by its claim's statement for the count of views it read; a view that lost that count
    // to another one in between is claimed again in a transaction. Either way: exactly one event per view won.
    const { auth, hook } = await hookedOwner(api, 'race-owner@example.org', {
      url: receiver.url,
      events: ['push.viewed', 'push.expired'],
    });
    const push = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: 'raced', expire_after_views: 4 } } }),
      201,
    );
    const answers = await Promise.all(
      Array.from({ length: 9 }, () => getPush({ client: api.client, path: { url_token: push.url_token } })),
    );
    const won = answers.filter((a) => a.data?.payload === 'raced');
    expect(won).toHaveLength(4);
    const end = Date.now() + 30_000;
    let events: WebhookEvent[] = [];
    while (events.length < 5 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      events = receiver.received
        .filter((r) => r.status < 300 && r.body.includes(push.push_id!))
        .map((r) => receiver.verify(hook.secret, r) as WebhookEvent);
    }
    await new Promise((r) => setTimeout(r, 500));
    events = receiver.received
      .filter((r) => r.status < 300 && r.body.includes(push.push_id!))
      .map((r) => receiver.verify(hook.secret, r) as WebhookEvent);
    const viewed = events.filter((e) => e.type === 'push.viewed');
    const remaining = viewed.map((e) => (e.data as { views_remaining: number }).views_remaining).sort();
    expect(remaining).toEqual([0, 1, 2, 3]);
    expect(events.filter((e) => e.type === 'push.expired').map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'views', expired: true, views_remaining: 0 }),
    ]);
    expect(events).toHaveLength(5);
  }, 60_000);

  it("a view's events made by its statement are the server's own, to the byte: a name, the counts, the times", async () => {
    // A plain push is viewed in one statement, which makes the events' facts in SQL (the name's envelope copied, put in
    // when sent); a push behind a passphrase is claimed after the gate, with events the server makes. Same shape.
    const { auth, hook } = await hookedOwner(api, 'facts-owner@example.org', {
      url: receiver.url,
      events: ['push.viewed', 'push.expired'],
    });
    const name = 'Caf\u00e9 \u2615 \ud83d\udd11 "quoted" \\ back';
    const plain = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: 'p1', name, expire_after_views: 1 } } }),
      201,
    );
    const guarded = expectData(
      await createPush({
        client: api.client,
        auth,
        body: { push: { payload: 'p2', name, passphrase: 'open-sesame', expire_after_views: 1 } },
      }),
      201,
    );
    const headers = { 'user-agent': 'Agent/\u00e9'.padEnd(300, 'x'), referer: 'https://chat.example.org/room' };
    expectData(await getPush({ client: api.client, path: { url_token: plain.url_token }, headers }));
    expectData(
      await getPush({
        client: api.client,
        path: { url_token: guarded.url_token },
        headers: { ...headers, 'X-Passphrase': 'open-sesame' },
      }),
    );
    const bodies = async (pushId: string) => {
      const end = Date.now() + 30_000;
      for (;;) {
        const got = receiver.received.filter((r) => r.status < 300 && r.body.includes(pushId));
        if (got.length >= 2 || Date.now() > end) return got.map((r) => (receiver.verify(hook.secret, r), r.body));
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const byStatement = (await bodies(plain.push_id!)).sort();
    const byServer = (await bodies(guarded.push_id!)).sort();
    // Stored as facts with the name's envelope: the name is nowhere in clear in the database.
    const client = new pg.Client({ connectionString: api.db.url });
    await client.connect();
    try {
      const rows = await client.query<{ body: string | null; facts: string; name_ciphertext: string }>(
        'select body, facts, name_ciphertext from webhook_deliveries where webhook_id = $1',
        [hook.id],
      );
      expect(rows.rows).toHaveLength(4);
      for (const row of rows.rows) {
        expect(row.body).toBeNull();
        expect(JSON.parse(row.facts)).toMatchObject({ data: { name: '' } });
        expect(row.name_ciphertext).not.toContain('Caf');
      }
    } finally {
      await client.end();
    }
    const parsed = (body: string) => JSON.parse(body) as WebhookEvent & { data: Record<string, unknown> };
    expect(byStatement.map((b) => parsed(b).type)).toEqual(['push.expired', 'push.viewed']);
    const [expiredEvent, viewedEvent] = byStatement.map(parsed) as [
      ReturnType<typeof parsed>,
      ReturnType<typeof parsed>,
    ];
    expect(viewedEvent).toEqual({
      type: 'push.viewed',
      timestamp: expiredEvent.timestamp,
      data: {
        push_id: plain.push_id,
        kind: 'text',
        name,
        passphrase_protected: false,
        expire_after_views: 1,
        views_remaining: 0,
        expires_at: plain.expires_at,
        expired: true,
        created_at: plain.created_at,
        viewer: { ip: '127.0.0.1', user_agent: headers['user-agent'].slice(0, 255), referrer: headers.referer },
      },
    });
    expect(viewedEvent.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(expiredEvent.data).toEqual({ ...viewedEvent.data, viewer: undefined, reason: 'views' });
    // The same JSON as the server writes: the keys in the same order, compact, the same values but the push's own.
    const shape = (body: string) =>
      body.replace(/"(push_id|timestamp|expires_at|created_at|passphrase_protected)":("[^"]*"|true|false)/g, '"$1":_');
    expect(byStatement.map(shape)).toEqual(byServer.map(shape));
  }, 60_000);

  it('retries a failing endpoint with the same webhook-id (500, 500, 200), as the delivery log shows', async () => {
    const { auth, hook } = await hookedOwner(api, 'hook-retry@example.org', {
      url: receiver.url,
      events: ['push.created'],
    });
    const start = receiver.received.length;
    receiver.answer(500, 500);
    const push = expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'x' } } }), 201);
    const requests = (await receiver.waitFor(start + 3)).slice(start);
    expect(requests.map((r) => r.status)).toEqual([500, 500, 200]);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of requests)
      expect((receiver.verify(hook.secret, r) as WebhookEvent).data).toMatchObject({ push_id: push.push_id });
    let log;
    const end = Date.now() + 10_000;
    do {
      log = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } }));
      if (log.deliveries[0]?.status === 'delivered') break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < end);
    expect(log.deliveries).toEqual([
      expect.objectContaining({
        id: [...ids][0],
        event: 'push.created',
        status: 'delivered',
        attempts: 3,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
      }),
    ]);

    // A manual retry sends it once more, with the same id; a test event reaches the endpoint too.
    const again = expectData(
      await retryWebhookDelivery({ client: api.client, auth, path: { id: hook.id, delivery_id: [...ids][0]! } }),
      202,
    );
    expect(again.status).toBe('pending');
    const tested = expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
    const more = (await receiver.waitFor(start + 5)).slice(start + 3);
    expect(more.map((r) => r.headers['webhook-id']).sort()).toEqual([[...ids][0], tested.id].sort());
    const testEvent = more
      .map((r) => receiver.verify(hook.secret, r) as WebhookEvent)
      .find((e) => e.type === 'webhook.test');
    expect(testEvent?.data).toEqual({ webhook_id: hook.id });
  }, 60_000);

  it('signs with both secrets for a day after a rotation, then a deleted webhook gets nothing', async () => {
    const { auth, hook } = await hookedOwner(api, 'hook-rotate@example.org', {
      url: receiver.url,
      events: ['push.created'],
    });
    const rotated = expectData(await rotateWebhookSecret({ client: api.client, auth, path: { id: hook.id } }));
    expect(rotated.secret).not.toBe(hook.secret);
    const start = receiver.received.length;
    expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'x' } } }), 201);
    const [request] = (await receiver.waitFor(start + 1)).slice(start);
    expect(request!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    receiver.verify(hook.secret, request!);
    receiver.verify(rotated.secret, request!);
    expectData(await deleteWebhook({ client: api.client, auth, path: { id: hook.id } }));
    expectError(await getWebhook({ client: api.client, auth, path: { id: hook.id } }), 404, 'not_found');
    expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'y' } } }), 201);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.length).toBe(start + 1);
    // Its deliveries went with it (a statement trigger, since deliveries have no foreign key), and so do those of a
    // deleted user's webhooks.
    const other = await hookedOwner(api, 'hook-leaving@example.org', { url: receiver.url, events: ['push.created'] });
    expectData(await createPush({ client: api.client, auth: other.auth, body: { push: { payload: 'z' } } }), 201);
    const client = new pg.Client({ connectionString: api.db.url });
    await client.connect();
    try {
      const count = async (id: string) =>
        Number(
          (await client.query('select count(*) as n from webhook_deliveries where webhook_id = $1', [id])).rows[0].n,
        );
      expect(await count(hook.id)).toBe(0);
      await expect.poll(() => count(other.hook.id)).toBe(1); // once the outbox fanned the event out
      await api.core.users.deleteUserRecords(other.owner.userId);
      expect(await count(other.hook.id)).toBe(0);
    } finally {
      await client.end();
    }
  }, 60_000);

  it("answers 404 for another user's webhook, and at most 10 webhooks per account", async () => {
    const alice = await api.user('hook-alice@example.org');
    const bob = await api.user('hook-bob@example.org');
    const hook = expectData(
      await createWebhook({
        client: api.client,
        auth: bearer(alice.token),
        body: { webhook: { url: receiver.url, events: ['push.viewed'] } },
      }),
      201,
    );
    const asBob = { client: api.client, auth: bearer(bob.token), path: { id: hook.id } };
    for (const answer of [
      await getWebhook(asBob),
      await deleteWebhook(asBob),
      await rotateWebhookSecret(asBob),
      await testWebhook(asBob),
      await listWebhookDeliveries(asBob),
    ]) {
      expect({ status: answer.response?.status, code: answer.error?.code }).toEqual({ status: 404, code: 'not_found' });
    }
    for (let i = 1; i < 10; i++) {
      expectData(
        await createWebhook({
          client: api.client,
          auth: bearer(alice.token),
          body: { webhook: { url: `${receiver.url}/${i}`, events: ['push.viewed'] } },
        }),
        201,
      );
    }
    const over = expectError(
      await createWebhook({
        client: api.client,
        auth: bearer(alice.token),
        body: { webhook: { url: receiver.url, events: ['push.viewed'] } },
      }),
      422,
      'validation_failed',
    );
    expect(over.error).toContain('at most 10 webhooks');
  });
});

describe("a webhook owner's creates against the storage quota", () => {
  let quotaApi: RealApi;

  beforeAll(async () => {
    quotaApi = await startRealApi(
      { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] }, userStorageBytes: 100 },
      { core: { queue: { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 } } },
    );
  });

  afterAll(async () => {
    await quotaApi?.stop();
  });

  it('queues push.created exactly for the creates the quota took (side by side): a refused one leaves no delivery', async () => {
    const owner = await quotaApi.user('hook-quota@example.org');
    const auth = bearer(owner.token);
    const hook = expectData(
      await createWebhook({
        client: quotaApi.client,
        auth,
        body: { webhook: { url: receiver.url, events: ['push.created'] } },
      }),
      201,
    );
    // 30 bytes each against 100: three fit, whichever three come first.
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        createPush({ client: quotaApi.client, auth, body: { push: { payload: `quota-${i}`.padEnd(30, '.') } } }),
      ),
    );
    const statuses = answers.map((a) => a.response?.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
    const stored = answers.filter((a) => a.response?.status === 201).map((a) => a.data!.push_id!);
    // The delivery log: one push.created per stored push, none for the refused ones, each delivered. A delivery
    // shows once the outbox's fan-out has committed it (after its first try): wait for as many as were stored.
    const end = Date.now() + 30_000;
    const settled = (l: { deliveries: { status: string }[] }) =>
      l.deliveries.length >= stored.length && l.deliveries.every((d) => d.status === 'delivered');
    let log = expectData(await listWebhookDeliveries({ client: quotaApi.client, auth, path: { id: hook.id } }));
    while (!settled(log) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      log = expectData(await listWebhookDeliveries({ client: quotaApi.client, auth, path: { id: hook.id } }));
    }
    expect(log.deliveries.map((d) => [d.event, d.status])).toEqual(Array(3).fill(['push.created', 'delivered']));
    const ids = new Set(log.deliveries.map((d) => d.id));
    const bodies = receiver.received
      .filter((r) => ids.has(String(r.headers['webhook-id'])))
      .map((r) => receiver.verify(hook.secret, r) as WebhookEvent);
    expect(bodies.map((e) => ('push_id' in e.data ? e.data.push_id : null)).sort()).toEqual([...stored].sort());
  });
});
