/**
 * A target that limits test events per account (issue 45: Secret Push's `PWPUSH_WEBHOOK_TESTS_PER_MINUTE`, here 1): the
 * suite stops at the 429 as at any rate limit, and its reason names that limit, from the answer's `RateLimit-Policy`
 * (`"webhook-test"`), and how to turn it off, not the per-client rate limit's setting.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runSuite } from '../src/runner.js';
import { EMAIL_A, EMAIL_B, startOurServer, type Instance } from './support/our-server.js';

let instance: Instance;

beforeAll(async () => {
  instance = await startOurServer({
    webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] },
    webhookCalls: { testsPerMinute: 1, redeliveriesPerMinute: 20 },
  });
});
afterAll(async () => {
  await instance?.close();
});

it('stops at the test events limit and names it, with the settings that turn it off', async () => {
  const run = await runSuite({
    baseUrl: instance.baseUrl,
    token: instance.tokenA,
    tokenB: instance.tokenB,
    email: EMAIL_A,
    emailB: EMAIL_B,
    profile: 'full',
    webhookReceiver: { host: '127.0.0.1', port: 0 },
    // Two requirements that each send a test event as user A, first: the second meets the limit of one a minute.
    first: ['HOOK-003', 'HOOK-006'],
    stopOnFailure: true,
  });
  expect(run.rateLimited).toMatch(
    /^POST \/api\/v2\/webhooks\/[0-9a-f-]+\/test answered 429 \(rate limited, Retry-After \d+\): the target limits the test events and redeliveries/,
  );
  expect(run.rateLimited).toContain('PWPUSH_WEBHOOK_TESTS_PER_MINUTE=0');
  expect(run.rateLimited).not.toContain('PWPUSH_RATE_LIMIT_PER_MINUTE');
  expect(run.results.find((r) => r.id === 'HOOK-003')?.status).toBe('pass');
  expect(run.results.find((r) => r.id === 'HOOK-006')).toMatchObject({ status: 'fail', reason: run.rateLimited });
}, 120_000);
