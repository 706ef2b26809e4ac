/**
 * The outbox's fan-out schedule (webhooks/outbox.ts, startOutboxLoop), with a fan-out of the test's own: one at
 * start, then one gatherMs after a wake (a wake during a fan-out brings the next one forward), at once after a full
 * one, retries that find nothing spaced out further and further, and after an error a poll's wait.
 */
import { expect, it } from 'vitest';
import { startOutboxLoop, type FanOut } from '../../src/webhooks/outbox.js';

const result = (over: Partial<FanOut> = {}): FanOut => ({
  taken: 0,
  deliveries: [],
  handoff: [],
  rest: null,
  full: false,
  retry: false,
  ...over,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('fans out at start, then gatherMs after a wake, and at once after a full fan-out', async () => {
  const at: number[] = [];
  const answers = [result(), result({ taken: 8, full: true }), result({ taken: 3 })];
  const start = Date.now();
  const loop = startOutboxLoop({
    run: () => {
      at.push(Date.now() - start);
      return Promise.resolve(answers.shift() ?? result());
    },
    handoff: () => undefined,
    gatherMs: 100,
    retryMs: 10,
    pollMs: 60_000,
    onError: () => undefined,
  });
  await expect.poll(() => at.length).toBe(1);
  await sleep(50);
  loop.wake();
  await expect.poll(() => at.length).toBe(3);
  // The wake's fan-out waited gatherMs; the full one was followed at once.
  expect(at[1]! - 50).toBeGreaterThanOrEqual(90);
  expect(at[2]! - at[1]!).toBeLessThan(50);
  await sleep(200);
  expect(at).toHaveLength(3);
  await loop.stop();
});

it('retries that find nothing are spaced out, up to a second; an error waits a poll', async () => {
  const at: number[] = [];
  let calls = 0;
  const errors: unknown[] = [];
  const start = Date.now();
  const loop = startOutboxLoop({
    run: () => {
      calls += 1;
      at.push(Date.now() - start);
      if (calls === 8) return Promise.reject(new Error('database away'));
      return Promise.resolve(result({ retry: true }));
    },
    handoff: () => undefined,
    gatherMs: 0,
    retryMs: 10,
    pollMs: 400,
    onError: (error) => errors.push(error),
  });
  await expect.poll(() => calls, { timeout: 5000 }).toBe(8);
  // Gaps of 10, 20, 40, 80, 160, 320, 640 ms.
  const gaps = at.slice(1).map((t, i) => t - at[i]!);
  for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(10 * 2 ** i - 2);
  expect(gaps[6]).toBeLessThan(1000 + 300);
  await expect.poll(() => calls, { timeout: 2000 }).toBe(9);
  expect(at[8]! - at[7]!).toBeGreaterThanOrEqual(390);
  expect(errors).toHaveLength(1);
  await loop.stop();
});
