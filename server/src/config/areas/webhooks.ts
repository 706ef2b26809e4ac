/** Webhooks: on or off, private targets, the send budgets, the limits on tests and redeliveries, the retry schedule. */
import { WEBHOOK_CALL_LIMITS } from '@secret-push/rules';
import { type Env, flag, integer, SettingsError, text } from '../setting.js';

export interface WebhookSettings {
  /** Owners may register webhooks (PWPUSH_WEBHOOKS); false: the webhook routes answer 404 and nothing is sent. */
  enabled: boolean;
  /** Targets on loopback, private, link-local… addresses, and http:// in production, are allowed (PWPUSH_WEBHOOKS_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Seconds before each retry of a failed delivery, in order (PWPUSH_WEBHOOK_RETRY_SCHEDULE); then it is failed. */
  retrySchedule: number[];
}

const WEBHOOKS = flag('PWPUSH_WEBHOOKS', true, {
  meaning:
    'Owners may register signed webhooks for the events of their pushes and requests (at most 10 per account; [webhooks.md](webhooks.md)). `false`: the webhook routes answer 404 and nothing is sent.',
});
const WEBHOOKS_ALLOW_PRIVATE = flag('PWPUSH_WEBHOOKS_ALLOW_PRIVATE', false, {
  meaning:
    'Webhook targets that are or resolve to loopback, private, link-local, multicast, unspecified or cloud-metadata addresses are allowed, and `http://` targets in production. Off, they are refused at registration and again at every connection (DNS rebinding). For development and tests only.',
});
const WEBHOOK_SENDS_PER_MINUTE = integer('PWPUSH_WEBHOOK_SENDS_PER_MINUTE', {
  default: 600,
  min: 0,
  max: 1_000_000,
  meaning:
    "Webhook POSTs (first tries, retries, test events and redeliveries alike) one account's webhooks may send together per clock minute, counted in PostgreSQL across every server process; deliveries past it stay `pending` and are sent in a later minute, never dropped (`0`: no budget). [docs/webhooks.md](webhooks.md)",
});
const WEBHOOK_ADDRESS_SENDS_PER_MINUTE = integer('PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE', {
  default: 3000,
  min: 0,
  max: 1_000_000,
  meaning:
    'Webhook POSTs one target address (an IPv4 address, an IPv6 /64) may receive per clock minute from all accounts together, so that many accounts cannot aim the instance at one host; past it, deliveries to that address wait for a later minute (`0`: no budget).',
});
const WEBHOOK_TESTS_PER_MINUTE = integer('PWPUSH_WEBHOOK_TESTS_PER_MINUTE', {
  default: WEBHOOK_CALL_LIMITS.test.perMinute,
  min: 0,
  max: 10_000,
  meaning:
    'Test events (`testWebhook`, *Send a test event*) one account may send per clock minute, counted in PostgreSQL across every server process; past it 429 `rate_limited` with `Retry-After` and RateLimit fields, nothing queued (`0`: no limit, e.g. for a conformance grade, which sends one per webhook fault).',
});
const WEBHOOK_REDELIVERIES_PER_MINUTE = integer('PWPUSH_WEBHOOK_REDELIVERIES_PER_MINUTE', {
  default: WEBHOOK_CALL_LIMITS.redeliver.perMinute,
  min: 0,
  max: 10_000,
  meaning:
    'Redeliveries (`retryWebhookDelivery`) one account may ask for per clock minute, counted like test events; past it 429 (`0`: no limit).',
});
const WEBHOOK_RETRY_SCHEDULE = text('PWPUSH_WEBHOOK_RETRY_SCHEDULE', {
  default: '5s,5m,30m,2h,5h,10h',
  accepts: '1 to 20 comma-separated waits, each `<n>s`, `<n>m` or `<n>h`, at most 24h',
  meaning:
    'The waits before each retry of a webhook delivery that got no 2xx within 10 s, in order; after the last the delivery is `failed`.',
});

export const WEBHOOK_SETTINGS = [
  WEBHOOKS,
  WEBHOOKS_ALLOW_PRIVATE,
  WEBHOOK_SENDS_PER_MINUTE,
  WEBHOOK_ADDRESS_SENDS_PER_MINUTE,
  WEBHOOK_TESTS_PER_MINUTE,
  WEBHOOK_REDELIVERIES_PER_MINUTE,
  WEBHOOK_RETRY_SCHEDULE,
];

export function readWebhooks(env: Env) {
  return {
    webhookBudget: {
      perAccount: WEBHOOK_SENDS_PER_MINUTE.read(env),
      perAddress: WEBHOOK_ADDRESS_SENDS_PER_MINUTE.read(env),
    },
    webhookCalls: {
      testsPerMinute: WEBHOOK_TESTS_PER_MINUTE.read(env),
      redeliveriesPerMinute: WEBHOOK_REDELIVERIES_PER_MINUTE.read(env),
    },
    webhooks: {
      enabled: WEBHOOKS.read(env),
      allowPrivate: WEBHOOKS_ALLOW_PRIVATE.read(env),
      retrySchedule: retrySchedule(WEBHOOK_RETRY_SCHEDULE.name, WEBHOOK_RETRY_SCHEDULE.read(env)),
    } satisfies WebhookSettings,
  };
}

const SCHEDULE_UNIT: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A list of waits (`5s,5m,2h`) in seconds: 1..20 of them, each 1 s to 24 h. */
function retrySchedule(name: string, text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  const seconds = parts.map((p) => {
    const m = /^([0-9]{1,5})([smh])$/.exec(p);
    return m ? Number(m[1]) * SCHEDULE_UNIT[m[2]!]! : NaN;
  });
  if (parts.length > 20 || seconds.some((n) => !Number.isInteger(n) || n < 1 || n > 86_400)) {
    throw new SettingsError(
      name,
      `${name} must be 1 to 20 comma-separated waits such as 5s,5m,30m,2h (each 1s to 24h; got "${text.slice(0, 100)}")`,
    );
  }
  return seconds;
}
