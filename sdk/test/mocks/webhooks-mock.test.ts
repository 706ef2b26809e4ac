/**
 * Webhooks in the stateful mock, through the generated functions, every answer checked against the contract:
 * registered with a secret shown once, listed, shown, rotated, tested (a pending delivery: the mock sends nothing),
 * retried, deleted; another user's webhook is 404, an API key without webhooks:manage gets 403. Test events and
 * redeliveries are limited per account and clock minute as the server limits them (issue 45): 429 with Retry-After
 * and the RateLimit fields.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/generated/client/index.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  testWebhook,
} from '../../src/generated/sdk.gen.js';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';

const server = setupServer();
const checker = specCheckingFetch();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

describe('stateful mock: webhooks', () => {
  it('registers, lists, rotates, tests, retries and deletes; 404 for another user, 422 for a bad URL', async () => {
    const baseUrl = 'http://mock-hooks.test';
    const mock = createMockServerHandlers({ baseUrl });
    server.use(...mock.handlers);
    const client = createClient({ baseUrl, fetch: checker.fetch });
    const auth = mock.users[0]!.token;
    const made = await createWebhook({
      client,
      auth,
      body: { webhook: { url: 'https://hooks.example.org/x', events: ['push.viewed'] } },
    });
    expect(made.response?.status).toBe(201);
    const hook = made.data!;
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await listWebhooks({ client, auth })).data!.webhooks.map((h) => h.id)).toEqual([hook.id]);
    expect((await getWebhook({ client, auth, path: { id: hook.id } })).data).not.toHaveProperty('secret');
    const rotated = (await rotateWebhookSecret({ client, auth, path: { id: hook.id } })).data!;
    expect(rotated.secret).not.toBe(hook.secret);
    const delivery = (await testWebhook({ client, auth, path: { id: hook.id } })).data!;
    expect(delivery).toMatchObject({ event: 'webhook.test', status: 'pending', attempts: 0 });
    const log = await listWebhookDeliveries({ client, auth, path: { id: hook.id } });
    expect(log.data!.deliveries.map((d) => d.id)).toEqual([delivery.id]);
    const again = await retryWebhookDelivery({ client, auth, path: { id: hook.id, delivery_id: delivery.id } });
    expect(again.response?.status).toBe(202);

    const other = await getWebhook({ client, auth: mock.users[1]!.token, path: { id: hook.id } });
    expect({ status: other.response?.status, code: other.error?.code }).toEqual({ status: 404, code: 'not_found' });
    const bad = await createWebhook({
      client,
      auth,
      body: { webhook: { url: 'ftp://hooks.example.org/x', events: ['push.viewed'] } },
    });
    expect({ status: bad.response?.status, code: bad.error?.code }).toEqual({ status: 422, code: 'validation_failed' });
    expect((await deleteWebhook({ client, auth, path: { id: hook.id } })).response?.status).toBe(200);
    expect((await getWebhook({ client, auth, path: { id: hook.id } })).response?.status).toBe(404);
  });

  it('limits test events (5) and redeliveries (20) per account and minute: 429 with Retry-After and RateLimit', async () => {
    const baseUrl = 'http://mock-hooks-limits.test';
    const mock = createMockServerHandlers({ baseUrl });
    mock.setClock('2027-03-01T10:00:10Z');
    server.use(...mock.handlers);
    const client = createClient({ baseUrl, fetch: checker.fetch });
    const auth = mock.users[0]!.token;
    const hook = (
      await createWebhook({
        client,
        auth,
        body: { webhook: { url: 'https://hooks.example.org/x', events: ['push.viewed'] } },
      })
    ).data!;
    const tests = [];
    for (let i = 0; i < 5; i++) tests.push(await testWebhook({ client, auth, path: { id: hook.id } }));
    expect(tests.map((t) => t.response?.status)).toEqual([202, 202, 202, 202, 202]);
    const refused = await testWebhook({ client, auth, path: { id: hook.id } });
    expect({ status: refused.response?.status, code: refused.error?.code }).toEqual({
      status: 429,
      code: 'rate_limited',
    });
    expect(refused.error?.error).toBe('Too many test events: an account may send 5 a minute. Try again in 50 seconds.');
    expect(refused.response?.headers.get('retry-after')).toBe('50');
    expect(refused.response?.headers.get('ratelimit-policy')).toBe('"webhook-test";q=5;w=60');
    expect(refused.response?.headers.get('ratelimit')).toBe('"webhook-test";r=0;t=50');
    const delivery = tests[0]!.data!;
    const path = { id: hook.id, delivery_id: delivery.id };
    for (let i = 0; i < 20; i++) {
      expect((await retryWebhookDelivery({ client, auth, path })).response?.status).toBe(202);
    }
    const again = await retryWebhookDelivery({ client, auth, path });
    expect({ status: again.response?.status, code: again.error?.code }).toEqual({ status: 429, code: 'rate_limited' });
    expect(again.response?.headers.get('ratelimit-policy')).toBe('"webhook-redeliver";q=20;w=60');
    // Another account, and the next minute, start afresh.
    const other = await createWebhook({
      client,
      auth: mock.users[1]!.token,
      body: { webhook: { url: 'https://hooks.example.org/y', events: ['push.viewed'] } },
    });
    const theirs = await testWebhook({ client, auth: mock.users[1]!.token, path: { id: other.data!.id } });
    expect(theirs.response?.status).toBe(202);
    mock.setClock('2027-03-01T10:01:00Z');
    expect((await testWebhook({ client, auth, path: { id: hook.id } })).response?.status).toBe(202);
  });
});
