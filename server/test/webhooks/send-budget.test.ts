/**
 * Issue 45: webhooks amplified traffic (7 API calls made 162 POSTs to one target: ten webhooks of one owner on one
 * target, every event and every retry a POST, nothing counted). Now every POST is counted against two budgets a
 * window, in PostgreSQL: the account's (its webhooks together) and the target address's (every account together).
 * Past either, a delivery is not sent and not dropped: it stays pending, not an attempt, due at the window its place in
 * the queue gives, and arrives then, once. Retries count; a create or a view never waits on the budget; two server
 * processes on one database share it.
 *
 * The window is shortened to 3 s (`webhookBudgetWindowSeconds`; the settings' minute otherwise), and each test starts
 * just after a window begins; a POST's window is read from its `webhook-timestamp` (signed as it goes out). The
 * receiver is a real HTTP server on loopback, every POST verified as a receiver would.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createPush,
  createWebhook,
  getPush,
  listWebhookDeliveries,
  type WebhookCreated,
} from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const WINDOW_S = 3;
const PER_ACCOUNT = 4;
const PER_ADDRESS = 7;

let a: RealApi;
let b: RealApi;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  const settings = {
    webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] },
    webhookBudget: { perAccount: PER_ACCOUNT, perAddress: PER_ADDRESS },
  };
  const core = { queue: { pollingIntervalSeconds: 0.5 }, webhookBudgetWindowSeconds: WINDOW_S };
  a = await startRealApi(settings, { core });
  b = await startRealApi(settings, { core, db: a.db });
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await receiver?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for the next window to begin (and 200 ms more); its index. */
async function nextWindow(): Promise<number> {
  const ms = WINDOW_S * 1000;
  await sleep(ms - (Date.now() % ms) + 200);
  return Math.floor(Date.now() / ms);
}

/** The POSTs received since `from` (an index into the receiver's log), each with its window and webhook-id. */
function posts(from: number) {
  return receiver.received.slice(from).map((r) => ({
    window: Math.floor(Number(r.headers['webhook-timestamp']) / WINDOW_S),
    id: r.headers['webhook-id']!,
    status: r.status,
  }));
}

/** How many POSTs each window from `first` on received, until `count` arrived (or a timeout). */
async function perWindow(from: number, first: number, count: number): Promise<number[]> {
  await receiver.waitFor(from + count, 60_000);
  await sleep(1500); // nothing more may come
  const counts: number[] = [];
  for (const p of posts(from)) counts[p.window - first] = (counts[p.window - first] ?? 0) + 1;
  return Array.from(counts, (n) => n ?? 0);
}

async function owner(api: RealApi, email: string, hooks: number, events: ('push.created' | 'push.viewed')[]) {
  const made = await api.user(email);
  const auth = bearer(made.token);
  const webhooks: WebhookCreated[] = [];
  for (let i = 0; i < hooks; i++) {
    webhooks.push(
      expectData(
        await createWebhook({ client: api.client, auth, body: { webhook: { url: receiver.url, events } } }),
        201,
      ),
    );
  }
  return { auth, webhooks };
}

const push = (api: RealApi, auth: ReturnType<typeof bearer>) =>
  createPush({ client: api.client, auth, body: { push: { payload: 'budgeted', expire_after_views: 2 } } });

it('an account with ten webhooks on one target sends its budget a window; the rest wait their turn, pending, and arrive once', async () => {
  const { auth, webhooks } = await owner(a, 'budget-ten@example.org', 10, ['push.created']);
  const from = receiver.received.length;
  const first = await nextWindow();
  expectData(await push(a, auth), 201);
  await receiver.waitFor(from + PER_ACCOUNT, 10_000);
  // While the first window lasts: four sent, six pending (not an attempt), due at the next two windows' start.
  const logs = await Promise.all(
    webhooks.map(
      async (h) =>
        expectData(await listWebhookDeliveries({ client: a.client, auth, path: { id: h.id } })).deliveries[0]!,
    ),
  );
  const pending = logs.filter((d) => d.status === 'pending');
  expect(pending).toHaveLength(10 - PER_ACCOUNT);
  expect(pending.every((d) => d.attempts === 0 && d.last_error === null)).toBe(true);
  const due = pending.map((d) => (Date.parse(d.next_attempt_at!) / 1000 - first * WINDOW_S) / WINDOW_S).sort();
  expect(due).toEqual([1, 1, 1, 1, 2, 2]);

  expect(await perWindow(from, first, 10)).toEqual([4, 4, 2]);
  const received = posts(from);
  expect(new Set(received.map((p) => p.id)).size).toBe(10);
  for (const h of webhooks) {
    const [d] = expectData(await listWebhookDeliveries({ client: a.client, auth, path: { id: h.id } })).deliveries;
    expect(d).toMatchObject({ status: 'delivered', attempts: 1 });
  }
}, 60_000);

it('one target address receives its budget a window from every account together', async () => {
  const owners = await Promise.all(
    [1, 2, 3].map((i) => owner(a, `budget-address-${i}@example.org`, 3, ['push.created'])),
  );
  const from = receiver.received.length;
  const first = await nextWindow();
  await Promise.all(owners.map(async (o) => expectData(await push(a, o.auth), 201)));
  // Nine POSTs, three per account (under its four), seven a window to the one address.
  expect(await perWindow(from, first, 9)).toEqual([7, 2]);
  expect(new Set(posts(from).map((p) => p.id)).size).toBe(9);
}, 60_000);

it('retries count against the budget, and a put-off try is no attempt', async () => {
  const { auth, webhooks } = await owner(a, 'budget-retries@example.org', 1, ['push.created']);
  const from = receiver.received.length;
  const first = await nextWindow();
  receiver.answer(500, 500, 500, 500);
  await Promise.all([1, 2, 3, 4].map(async () => expectData(await push(a, auth), 201)));
  // Four first tries fail (500) in the first window; their retries (due 1 s later) wait for the next.
  expect(await perWindow(from, first, 8)).toEqual([4, 4]);
  const statuses = posts(from).map((p) => `${p.window - first}:${p.status}`);
  expect(statuses.sort()).toEqual(['0:500', '0:500', '0:500', '0:500', '1:200', '1:200', '1:200', '1:200']);
  const log = expectData(
    await listWebhookDeliveries({ client: a.client, auth, path: { id: webhooks[0]!.id } }),
  ).deliveries;
  expect(log.map((d) => `${d.status}/${d.attempts}`)).toEqual(Array(4).fill('delivered/2'));
}, 60_000);

it('a create and a view never wait on the budget: answered at once, their events put off', async () => {
  const { auth } = await owner(a, 'budget-requests@example.org', 1, ['push.created', 'push.viewed']);
  const from = receiver.received.length;
  const first = await nextWindow();
  await Promise.all([1, 2, 3, 4].map(async () => expectData(await push(a, auth), 201)));
  await receiver.waitFor(from + PER_ACCOUNT, 10_000);
  // The window's budget is spent: a create and a view answer as fast as ever.
  const started = performance.now();
  const made = expectData(await push(a, auth), 201);
  expectData(await getPush({ client: a.client, path: { url_token: made.url_token } }));
  expect(performance.now() - started).toBeLessThan(1000);
  expect(await perWindow(from, first, 6)).toEqual([4, 2]);
}, 60_000);

it('two server processes on one database share the budget', async () => {
  const { auth, webhooks } = await owner(a, 'budget-processes@example.org', 3, ['push.created']);
  const from = receiver.received.length;
  const first = await nextWindow();
  await Promise.all([a, b, a, b].map(async (api) => expectData(await push(api, auth), 201)));
  expect(await perWindow(from, first, 12)).toEqual([4, 4, 4]);
  expect(new Set(posts(from).map((p) => p.id)).size).toBe(12);
  for (const h of webhooks) {
    const log = expectData(await listWebhookDeliveries({ client: b.client, auth, path: { id: h.id } })).deliveries;
    expect(log.map((d) => `${d.status}/${d.attempts}`)).toEqual(Array(4).fill('delivered/1'));
  }
}, 60_000);
