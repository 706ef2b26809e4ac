/**
 * Issue 45: `testWebhook` and `retryWebhookDelivery` are limited. Each queued a POST with no limit at all, so an owner
 * could make the instance send as much as they asked. Now an account may send 5 test events and ask for 20
 * redeliveries a clock minute; past them the API answers 429 `rate_limited` with `Retry-After` (the rest of the
 * minute) and the limit's RateLimit fields, and queues nothing. The calls are counted in PostgreSQL: two server
 * processes on one database (two cores here, called in turn) share the count. The services' clock is set, so the
 * minute is the test's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listWebhookDeliveries, retryWebhookDelivery, testWebhook } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
import { createMigratedDatabase, type TestDatabase } from '../support/db.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { hookedOwner } from './support/hooked-owner.js';

let db: TestDatabase;
let a: RealApi;
let b: RealApi;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  db = await createMigratedDatabase('sp_hook_calls');
  const settings = { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] } };
  a = await startRealApi(settings, { db, core: { queue: { pollingIntervalSeconds: 0.5 } } });
  b = await startRealApi(settings, { db, core: { queue: { pollingIntervalSeconds: 0.5 } } });
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await db?.drop();
  await receiver?.stop();
});

/** Both processes' clock, 10 s into a minute of the test's. */
function minute(at: string): void {
  a.setClock(new Date(at));
  b.setClock(new Date(at));
}

it('five test events a minute per account, on any process; the sixth is 429 with Retry-After and RateLimit, and queues nothing', async () => {
  minute('2027-03-01T10:00:10Z');
  const { auth, hook } = await hookedOwner(a, 'test-limit@example.org', { url: receiver.url, events: ['push.viewed'] });
  for (const api of [a, b, a, b, a]) {
    expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
  }
  const refused = await testWebhook({ client: b.client, auth, path: { id: hook.id } });
  const error = expectError(refused, 429, 'rate_limited');
  expect(error.error).toBe('Too many test events: an account may send 5 a minute. Try again in 50 seconds.');
  expect(error.retry_after).toBe(50);
  expect(refused.response?.headers.get('retry-after')).toBe('50');
  expect(refused.response?.headers.get('ratelimit-policy')).toContain('"webhook-test";q=5;w=60');
  expect(refused.response?.headers.get('ratelimit')).toContain('"webhook-test";r=0;t=50');
  const log = expectData(await listWebhookDeliveries({ client: a.client, auth, path: { id: hook.id } }));
  expect(log.deliveries.filter((d) => d.event === 'webhook.test')).toHaveLength(5);

  // Another account has its own five.
  const other = await hookedOwner(b, 'test-limit-2@example.org', { url: receiver.url, events: ['push.viewed'] });
  expectData(await testWebhook({ client: a.client, auth: other.auth, path: { id: other.hook.id } }), 202);
  // The next minute, five again.
  minute('2027-03-01T10:01:00Z');
  expectData(await testWebhook({ client: a.client, auth, path: { id: hook.id } }), 202);
});

it('twenty redeliveries a minute per account, on any process; the 21st is 429, and the test events keep their own count', async () => {
  minute('2027-03-01T11:00:10Z');
  const { owner, hook } = await hookedOwner(a, 'redeliver-limit@example.org', {
    url: receiver.url,
    events: ['push.viewed'],
  });
  const auth = bearer(owner.token);
  const delivery = expectData(await testWebhook({ client: a.client, auth, path: { id: hook.id } }), 202);
  for (let i = 0; i < 20; i++) {
    const api = i % 2 === 0 ? a : b;
    expectData(
      await retryWebhookDelivery({ client: api.client, auth, path: { id: hook.id, delivery_id: delivery.id } }),
      202,
    );
  }
  const refused = await retryWebhookDelivery({
    client: a.client,
    auth,
    path: { id: hook.id, delivery_id: delivery.id },
  });
  const error = expectError(refused, 429, 'rate_limited');
  expect(error.error).toBe('Too many redeliveries: an account may ask for 20 a minute. Try again in 50 seconds.');
  expect(refused.response?.headers.get('retry-after')).toBe('50');
  expect(refused.response?.headers.get('ratelimit-policy')).toContain('"webhook-redeliver";q=20;w=60');
  expect(refused.response?.headers.get('ratelimit')).toContain('"webhook-redeliver";r=0;t=50');
  // The test events' count is their own: one used this minute.
  expectData(await testWebhook({ client: b.client, auth, path: { id: hook.id } }), 202);
});
