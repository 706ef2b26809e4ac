/**
 * The limits on the webhook calls that make the instance send on demand (issue 45): `testWebhook` and
 * `retryWebhookDelivery`, so many a clock minute per account (the server's `PWPUSH_WEBHOOK_TESTS_PER_MINUTE` and
 * `PWPUSH_WEBHOOK_REDELIVERIES_PER_MINUTE`, these defaults). The server counts them in PostgreSQL (every process
 * shares the count), the stateful mock in memory with the defaults; both answer past them with `webhookCallRefused`.
 */
import { ApiError, type LimitState } from './errors.js';

/** Each limited call: its RateLimit policy, its calls a minute per account by default, how its refusal names it. */
export const WEBHOOK_CALL_LIMITS = {
  test: {
    policy: 'webhook-test',
    perMinute: 5,
    refusal: (n: number) => `Too many test events: an account may send ${n} a minute.`,
  },
  redeliver: {
    policy: 'webhook-redeliver',
    perMinute: 20,
    refusal: (n: number) => `Too many redeliveries: an account may ask for ${n} a minute.`,
  },
} as const;

export type WebhookCall = keyof typeof WEBHOOK_CALL_LIMITS;

/** The limits' window: a clock minute. */
export const WEBHOOK_CALL_WINDOW_SECONDS = 60;

/** The start of the clock minute `at` falls in (epoch ms). */
export const minuteOf = (at: number): number => at - (((at % 60_000) + 60_000) % 60_000);

/**
 * 429 `rate_limited` past a call's limit (`perMinute` calls) at `at` (epoch ms): `Retry-After` is the rest of the
 * minute, the RateLimit fields name the limit.
 */
export function webhookCallRefused(call: WebhookCall, perMinute: number, at: number): ApiError {
  const { policy, refusal } = WEBHOOK_CALL_LIMITS[call];
  const retryAfterSeconds = Math.max(1, Math.ceil((minuteOf(at) + 60_000 - at) / 1000));
  const limit: LimitState = {
    policy,
    quota: perMinute,
    windowSeconds: WEBHOOK_CALL_WINDOW_SECONDS,
    remaining: 0,
    resetSeconds: retryAfterSeconds,
  };
  return new ApiError('rate_limited', `${refusal(perMinute)} Try again in ${retryAfterSeconds} seconds.`, {
    retryAfterSeconds,
    limit,
  });
}
