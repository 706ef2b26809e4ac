/**
 * Issue 23: deliveries are sent from their own table (webhooks/dispatcher.ts). The API here sends nothing
 * (`jobWorkers: false`): it only writes the events, into the outbox (webhooks/outbox.ts), and the test fans them
 * out into pending deliveries (support/fan-out.ts). Then:
 * - two server processes (cores) on the same database send a backlog side by side: each delivery reaches the
 *   receiver exactly once (their claims skip each other's), and every one is recorded as delivered;
 * - a delivery claimed by a process that then died (its lease, next_attempt_at, moved ahead and nothing recorded) is
 *   not sent again before the lease lapses, and is sent, with the same webhook-id, once it has;
 * - deliveries one after the other to an endpoint that hints a 1 s keep-alive (a Node server's `keepAliveTimeout`
 *   of 1000) share one connection: Node's own 1 s margin would close each socket at once after its answer;
 * - a request's deliveries are leased to its own process and handed to it: sent at once, though no claim could take
 *   them before their lease lapses; one that process cannot start in time is left to a claim, after the lease;
 * - the loop itself: a claim that throws waits a poll before the next one, however often it is woken meanwhile;
 *   handed-off deliveries wait a little for others to join their batch, and are never sent once their time is past.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createPush, listWebhookDeliveries } from '@secret-push/sdk/generated';
import { createCore, type Core } from '../../src/core.js';
import { createServerMetrics } from '../../src/runtime/metrics.js';
import { poolDb } from '../../src/db/sql.js';
import { startDispatcher } from '../../src/webhooks/dispatcher.js';
import { createWebhookRepository } from '../../src/webhooks/webhook-repository.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { fanOutNow } from './support/fan-out.js';
import { hookedOwner } from './support/hooked-owner.js';

let api: RealApi;
let receiver: Receiver;
let senders: Core[] = [];
const metrics = createServerMetrics('0');

beforeAll(async () => {
  receiver = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { jobWorkers: false, metrics } },
  );
});

afterEach(async () => {
  for (const core of senders) await core.close();
  senders = [];
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

/** A server process's background side on the API's database: it sends deliveries (it serves no requests here). */
async function sender(): Promise<Core> {
  const core = await createCore(api.settings, { sweeper: false, queue: { pollingIntervalSeconds: 0.2 } });
  senders.push(core);
  return core;
}

/**
 * An owner with a webhook for push.created, and `count` pushes made: `count` events in the outbox, then (unless
 * `fanned` is false) fanned out into `count` deliveries pending, none sent.
 */
async function pendingCreates(email: string, count: number, fanned = true) {
  const { auth, hook } = await hookedOwner(api, email, { url: receiver.url, events: ['push.created'] });
  for (let i = 0; i < count; i++) {
    expectData(await createPush({ client: api.client, auth, body: { push: { payload: `p${i}` } } }), 201);
  }
  if (fanned) expect(await fanOutNow(api.db.url)).toBe(count);
  return { auth, hook };
}

async function deliveryLog(auth: ReturnType<typeof bearer>, id: string) {
  const statuses: string[] = [];
  for (let page = 1; ; page++) {
    const { deliveries } = expectData(
      await listWebhookDeliveries({ client: api.client, auth, path: { id }, query: { page } }),
    );
    if (deliveries.length === 0) return statuses;
    statuses.push(...deliveries.map((d) => `${d.status}/${d.attempts}`));
  }
}

it('/metrics shows the pending deliveries and the events not fanned out yet as the webhook.delivery queue', async () => {
  const before = receiver.received.length;
  const queued = async () =>
    Number(
      /^secret_push_job_queue_jobs\{queue="webhook.delivery",state="queued"\} (\d+)$/m.exec(
        await metrics.registry.metrics(),
      )?.[1],
    );
  await pendingCreates('dispatch-metrics@example.org', 2, false);
  expect(await queued()).toBe(2); // two events in the outbox
  await pendingCreates('dispatch-metrics-2@example.org', 3, false);
  expect(await queued()).toBe(5);
  expect(await fanOutNow(api.db.url)).toBe(5);
  expect(await queued()).toBe(5); // fanned out: five deliveries pending
  expect(await metrics.registry.metrics()).toMatch(
    /^secret_push_job_queue_jobs\{queue="webhook.delivery",state="active"\} 0$/m,
  );
  await sender();
  await receiver.waitFor(before + 5, 10_000);
  await expect.poll(queued).toBe(0);
});

it('two processes send one backlog side by side: each delivery exactly once', async () => {
  const { auth, hook } = await pendingCreates('dispatch-two@example.org', 150);
  const before = receiver.received.length;
  await Promise.all([sender(), sender()]);
  await receiver.waitFor(before + 150, 30_000);
  // Anything sent twice would arrive meanwhile.
  await new Promise((r) => setTimeout(r, 1000));
  const ids = receiver.received.slice(before).map((r) => receiver.verify(hook.secret, r) && r.headers['webhook-id']);
  expect(ids).toHaveLength(150);
  expect(new Set(ids).size).toBe(150);
  expect(await deliveryLog(auth, hook.id)).toEqual(Array.from({ length: 150 }, () => 'delivered/1'));
}, 60_000);

it('a delivery held by a process that died is sent again once its lease lapses, not before', async () => {
  const { auth, hook } = await pendingCreates('dispatch-lease@example.org', 1);
  // What a claim does (the lease), by a process that then died before recording anything.
  const client = new pg.Client({ connectionString: api.db.url });
  await client.connect();
  try {
    const leased = await client.query(
      `update webhook_deliveries d set next_attempt_at = now() + interval '3 seconds'
       from webhooks w where w.id = d.webhook_id and w.id = $1 and d.status = 'pending' returning d.id`,
      [hook.id],
    );
    expect(leased.rowCount).toBe(1);
    const before = receiver.received.length;
    const start = Date.now();
    await sender();
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.length).toBe(before);
    const [sent] = (await receiver.waitFor(before + 1, 10_000)).slice(before);
    expect(Date.now() - start).toBeGreaterThanOrEqual(2500);
    expect(sent!.headers['webhook-id']).toBe(leased.rows[0].id);
    receiver.verify(hook.secret, sent!);
    await expect.poll(() => deliveryLog(auth, hook.id)).toEqual(['delivered/1']);
  } finally {
    await client.end();
  }
}, 30_000);

/**
 * A push made through an API on the same database whose process sends (its requests' deliveries are handed to its own
 * dispatcher, leased for `leaseSeconds`), by a new owner with a webhook for push.created: the delivery arrived and was
 * recorded once; how long after the create it arrived, and the owner's delivery log. The API is stopped after.
 */
async function handedOffCreate(leaseSeconds: number, email: string) {
  const own = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { db: api.db, core: { webhookLeaseSeconds: leaseSeconds, queue: { pollingIntervalSeconds: 0.2 } } },
  );
  try {
    const { auth, hook } = await hookedOwner(own, email, { url: receiver.url, events: ['push.created'] });
    const before = receiver.received.length;
    const start = Date.now();
    expectData(await createPush({ client: own.client, auth, body: { push: { payload: 'h' } } }), 201);
    const [sent] = (await receiver.waitFor(before + 1, 10_000)).slice(before);
    const ms = Date.now() - start;
    receiver.verify(hook.secret, sent!);
    await expect.poll(() => deliveryLog(auth, hook.id)).toEqual(['delivered/1']);
    return { before, ms, log: () => deliveryLog(auth, hook.id) };
  } finally {
    await own.stop();
  }
}

it("a request's deliveries are handed to its own process: sent at once, though leased to it for 30 s", async () => {
  const { ms } = await handedOffCreate(30, 'dispatch-handoff@example.org');
  // No claim could have taken it: it was written leased to the process for 30 s.
  expect(ms).toBeLessThan(5000);
}, 30_000);

it('a handed-off delivery its process cannot start while half its lease is left is claimed after the lease', async () => {
  // A lease of 40 ms: half of it is gone before the dispatcher's 25 ms wait for a fuller batch ends, so the process
  // drops it from memory (as a process that dies would lose it); its next claim after the lease sends it, once.
  const { before, log } = await handedOffCreate(0.04, 'dispatch-dropped@example.org');
  await new Promise((r) => setTimeout(r, 500));
  expect(receiver.received.length).toBe(before + 1);
  expect(await log()).toEqual(['delivered/1']);
}, 30_000);

it('a stopping process gives up the lease of what it was handed and did not start: due at once', async () => {
  const { hook } = await pendingCreates('dispatch-release@example.org', 1);
  const pool = new pg.Pool({ connectionString: api.db.url, max: 1 });
  try {
    // As a request's statement writes it for its process: leased for 30 s.
    const leased = await pool.query<{ id: string }>(
      `update webhook_deliveries set next_attempt_at = now() + interval '30 seconds'
       where webhook_id = $1 and status = 'pending' returning id`,
      [hook.id],
    );
    const ids = leased.rows.map((r) => r.id);
    expect(ids).toHaveLength(1);
    await createWebhookRepository(poolDb(pool)).release(ids, new Date());
    const before = receiver.received.length;
    await sender();
    const [sent] = (await receiver.waitFor(before + 1, 5000)).slice(before);
    expect(sent!.headers['webhook-id']).toBe(ids[0]);
  } finally {
    await pool.end();
  }
}, 30_000);

it('deliveries one after the other to an endpoint that hints a 1 s keep-alive share a connection', async () => {
  let connections = 0;
  const arrived: string[] = [];
  const endpoint = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived.push(String(req.headers['webhook-id']));
      res.writeHead(204).end();
    });
  });
  endpoint.keepAliveTimeout = 1000;
  endpoint.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hook`;
    const { auth } = await hookedOwner(api, 'dispatch-keepalive@example.org', { url, events: ['push.created'] });
    await sender();
    for (let i = 1; i <= 8; i++) {
      expectData(await createPush({ client: api.client, auth, body: { push: { payload: `k${i}` } } }), 201);
      await expect.poll(() => arrived.length, { timeout: 5000 }).toBe(i);
    }
    expect(connections).toBeLessThanOrEqual(2);
  } finally {
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  }
}, 30_000);

it('a claim that throws waits a poll before the next, however often the loop is woken', async () => {
  let claims = 0;
  const errors: unknown[] = [];
  const dispatcher = startDispatcher<number>({
    claim: () => {
      claims += 1;
      return Promise.reject(new Error('database away'));
    },
    send: () => Promise.resolve(),
    batchSize: 8,
    maxBatches: 1,
    stallMs: 500,
    gatherMs: 0,
    pollMs: 200,
    onError: (error) => errors.push(error),
  });
  const waking = setInterval(() => dispatcher.wake(), 1);
  await new Promise((r) => setTimeout(r, 700));
  clearInterval(waking);
  await dispatcher.stop(1000);
  // At 0, 200, 400 and 600 ms (one more on a slow machine), never once per wake.
  expect(claims).toBeGreaterThanOrEqual(2);
  expect(claims).toBeLessThanOrEqual(5);
  expect(errors).toHaveLength(claims);
});

it('a full batch is followed at once by the next claim, a short one by a wait (or a wake)', async () => {
  const backlog = Array.from({ length: 20 }, (_, i) => i);
  const sent: number[][] = [];
  const dispatcher = startDispatcher<number>({
    claim: (limit) => Promise.resolve(backlog.splice(0, limit)),
    send: (batch) => {
      sent.push(batch);
      return Promise.resolve();
    },
    batchSize: 8,
    maxBatches: 2,
    stallMs: 500,
    gatherMs: 0,
    pollMs: 60_000,
    onError: () => undefined,
  });
  await expect.poll(() => sent.length).toBe(3);
  expect(sent.map((b) => b.length)).toEqual([8, 8, 4]);
  backlog.push(20, 21);
  await new Promise((r) => setTimeout(r, 100));
  expect(sent).toHaveLength(3);
  dispatcher.wake();
  await expect.poll(() => sent.length).toBe(4);
  expect(sent[3]).toEqual([20, 21]);
  await dispatcher.stop(1000);
});

it('a batch out for stallMs does not hold the next one, up to maxBatches at once', async () => {
  const claims: number[][] = [[1], [2], [3]];
  const release: (() => void)[] = [];
  const sent: number[] = [];
  const dispatcher = startDispatcher<number>({
    claim: () => Promise.resolve(claims.shift() ?? []),
    send: (batch) => {
      sent.push(...batch);
      return new Promise<void>((resolve) => release.push(resolve));
    },
    batchSize: 1,
    maxBatches: 2,
    stallMs: 300,
    gatherMs: 0,
    pollMs: 60_000,
    onError: () => undefined,
  });
  // Each claim came back full (1 of 1), but the next waits while the first has been out less than stallMs.
  await expect.poll(() => sent).toEqual([1]);
  await new Promise((r) => setTimeout(r, 150));
  expect(sent).toEqual([1]);
  // Then it starts beside the first, still being sent.
  await expect.poll(() => sent).toEqual([1, 2]);
  expect(dispatcher.inFlight()).toBe(2);
  await new Promise((r) => setTimeout(r, 100));
  expect(sent).toEqual([1, 2]); // two batches in hand: the third waits for one of them
  release[0]!();
  await expect.poll(() => sent).toEqual([1, 2, 3]);
  for (const done of release) done();
  await dispatcher.stop(1000);
  expect(dispatcher.inFlight()).toBe(0);
});

it('handed-off deliveries skip the claim, wait up to gatherMs for a fuller batch, and are dropped past their time', async () => {
  let claims = 0;
  const sent: number[][] = [];
  const dispatcher = startDispatcher<number>({
    claim: () => {
      claims += 1;
      return Promise.resolve([]);
    },
    send: (batch) => {
      sent.push(batch);
      return Promise.resolve();
    },
    batchSize: 4,
    maxBatches: 1,
    stallMs: 500,
    gatherMs: 150,
    pollMs: 60_000,
    onError: () => undefined,
  });
  await expect.poll(() => claims).toBe(1); // the first claim, at start
  const far = Date.now() + 60_000;
  dispatcher.handoff([1], far);
  await new Promise((r) => setTimeout(r, 50));
  dispatcher.handoff([2], far);
  expect(sent).toEqual([]); // waiting for more, up to 150 ms after the first
  await expect.poll(() => sent).toEqual([[1, 2]]);
  // A batch that fills goes at once.
  const t0 = Date.now();
  dispatcher.handoff([3, 4, 5, 6], far);
  await expect.poll(() => sent.length).toBe(2);
  expect(Date.now() - t0).toBeLessThan(140);
  expect(sent[1]).toEqual([3, 4, 5, 6]);
  // Past its time to start: dropped (a claim takes it after its lease), the others of its batch sent.
  dispatcher.handoff([7], Date.now() + 20);
  dispatcher.handoff([8], far);
  await expect.poll(() => sent.length).toBe(3);
  expect(sent[2]).toEqual([8]);
  expect(claims).toBe(1); // none of it needed a claim
  // Stopping gives back what was handed off and not started (the caller makes it due at once).
  dispatcher.handoff([9, 10], far);
  expect(await dispatcher.stop(1000)).toEqual([9, 10]);
  expect(sent).toHaveLength(3);
});

it('a claim still comes every poll while handoffs keep the loop busy', async () => {
  let claims = 0;
  const dispatcher = startDispatcher<number>({
    claim: () => {
      claims += 1;
      return Promise.resolve([]);
    },
    send: () => Promise.resolve(),
    batchSize: 4,
    maxBatches: 1,
    stallMs: 500,
    gatherMs: 0,
    pollMs: 100,
    onError: () => undefined,
  });
  const feeding = setInterval(() => dispatcher.handoff([1, 2, 3, 4], Date.now() + 60_000), 5);
  await new Promise((r) => setTimeout(r, 550));
  clearInterval(feeding);
  await dispatcher.stop(1000);
  // At 0, 100, …, 500 ms (a slow machine may miss one).
  expect(claims).toBeGreaterThanOrEqual(4);
  expect(claims).toBeLessThanOrEqual(7);
});

it("an endpoint that answers slowly holds only its own deliveries: another webhook's arrive meanwhile", async () => {
  const slowArrived: string[] = [];
  const slow = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      slowArrived.push(String(req.headers['webhook-id']));
      setTimeout(() => res.writeHead(204).end(), 4000);
    });
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  try {
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
    const a = await hookedOwner(api, 'dispatch-slow@example.org', { url: slowUrl, events: ['push.created'] });
    const b = await hookedOwner(api, 'dispatch-fast@example.org', { url: receiver.url, events: ['push.created'] });
    await sender();
    expectData(await createPush({ client: api.client, auth: a.auth, body: { push: { payload: 'slow' } } }), 201);
    await expect.poll(() => slowArrived.length, { timeout: 5000 }).toBe(1);
    const before = receiver.received.length;
    const start = Date.now();
    expectData(await createPush({ client: api.client, auth: b.auth, body: { push: { payload: 'fast' } } }), 201);
    const [fast] = (await receiver.waitFor(before + 1, 10_000)).slice(before);
    receiver.verify(b.hook.secret, fast!);
    // The API's commits do not wake the sender (another core): it finds the delivery at its next poll (0.2 s).
    expect(Date.now() - start).toBeLessThan(2500);
    await expect.poll(() => deliveryLog(a.auth, a.hook.id), { timeout: 10_000 }).toEqual(['delivered/1']);
  } finally {
    slow.closeAllConnections();
    await new Promise((resolve) => slow.close(resolve));
  }
}, 30_000);
