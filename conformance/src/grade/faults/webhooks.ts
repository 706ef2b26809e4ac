/**
 * Faults of signed webhooks (issue 23). Delivery faults act in the relay (relay.ts) that the proxy puts between the
 * server and the suite's receiver, and sign again what they change as the server would have (with the secrets the
 * journal saw), so that only the modelled bug shows; management faults act in the proxy, as the others do.
 */
import { createHmac } from 'node:crypto';
import { define } from '../fault.js';
import { messageId, type Delivery, type Exchange, type Headers } from '../proxy.js';

/** The push events a webhook may choose (the contract's WebhookEventType, push.*). */
const PUSH_EVENTS = ['push.created', 'push.viewed', 'push.failed_passphrase', 'push.expired', 'push.deleted'];

/** The journal's entry of a push made through the proxy: what its create sent and answered. */
type MadePush = { input: Record<string, any>; created: Record<string, any> };

/** A push event of a delivery, with its push_id, and the journal's entry for that push (when made through the proxy). */
function pushEvent(d: Delivery): { event: any; made?: MadePush } {
  const event = d.event;
  if (typeof event?.type !== 'string' || !event.type.startsWith('push.') || typeof event.data?.push_id !== 'string') {
    return { event: undefined };
  }
  const made = [...d.env.journal.values()].find((j) => j.created.push_id === event.data.push_id);
  return { event, made };
}

/** Changes the event of a delivery that `when` picks, and signs the delivery again. */
function rewriteEvent(d: Delivery, change: (event: any) => boolean): void {
  const event = d.event;
  if (!event || !change(event)) return;
  d.event = event;
  d.sign();
}

/** The credentials of the caller a journaled identity (`token:<token>`) stands for. */
function credentialsOf(identity: string): Headers | undefined {
  return identity.startsWith('token:') ? { authorization: `Bearer ${identity.slice(6)}` } : undefined;
}

/**
 * The operation, asked by a user who does not own the webhook, is answered as if its owner had asked (the server
 * looks the webhook up by id alone).
 */
async function asOwner(ex: Exchange, op: string): Promise<void> {
  if (ex.op !== op) return;
  const owner = ex.env.webhooks.get(ex.params.id ?? '')?.owner;
  const credentials = owner && owner !== ex.identity ? credentialsOf(owner) : undefined;
  if (!credentials) return;
  const headers = { ...ex.requestHeaders };
  for (const name of ['authorization', 'x-user-email', 'x-user-token']) delete headers[name];
  ex.adopt(await ex.send({ headers: { ...headers, ...credentials } }));
}

export const hookFaults = define('hook', [
  {
    name: 'signature-key-not-decoded',
    models: "the HMAC is keyed with the secret's text (whsec_…) instead of the bytes its base64 decodes to",
    killers: ['HOOK-003'],
    start: () => ({
      delivery(d) {
        d.sign(undefined, (secret, id, timestamp, body) =>
          createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64'),
        );
      },
    }),
  },
  {
    name: 'signature-over-body-only',
    models: 'the signature is the HMAC of the body alone, not of webhook-id.webhook-timestamp.body',
    killers: ['HOOK-003'],
    start: () => ({
      delivery(d) {
        d.sign(undefined, (secret, _id, _timestamp, body) =>
          createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
            .update(body)
            .digest('base64'),
        );
      },
    }),
  },
  {
    name: 'timestamp-in-milliseconds',
    models: 'webhook-timestamp is Date.now() in milliseconds, not Unix seconds (signed as sent)',
    killers: ['HOOK-003'],
    start: () => ({
      delivery(d) {
        const seconds = Number(d.headers['webhook-timestamp']);
        if (!Number.isFinite(seconds)) return;
        d.headers['webhook-timestamp'] = String(seconds * 1000 + Math.floor(Math.random() * 1000));
        d.sign();
      },
    }),
  },
  {
    name: 'webhook-id-per-attempt',
    models: 'each try of a delivery gets a new webhook-id, so receivers cannot tell a retry from a new event',
    killers: ['HOOK-005'],
    start: () => {
      const tried = new Set<string>();
      return {
        delivery(d) {
          const id = d.headers['webhook-id'] ?? '';
          if (!tried.has(id)) return void tried.add(id);
          d.headers['webhook-id'] = messageId();
          d.sign();
        },
      };
    },
  },
  {
    name: 'failed-try-not-retried',
    models: 'a try answered 5xx marks the delivery failed: it is never tried again (the retry schedule is not used)',
    killers: ['HOOK-005'],
    start: () => {
      const failed = new Map<string, number>();
      return {
        async delivery(d) {
          const id = d.headers['webhook-id'] ?? '';
          if (failed.has(id)) return d.drop(); // the server would not have sent it
          d.answer = await d.forward();
          if (d.answer.status >= 300) failed.set(id, d.answer.status);
        },
        response(ex) {
          // The log agrees: one try, failed, none due.
          const body = ex.json;
          if (ex.op !== 'listWebhookDeliveries' || ex.status !== 200 || !Array.isArray(body?.deliveries)) return;
          for (const row of body.deliveries) {
            const code = failed.get(row.id);
            if (code === undefined) continue;
            Object.assign(row, {
              status: 'failed',
              attempts: 1,
              last_status_code: code,
              last_error: `status ${code}`,
              next_attempt_at: null,
              delivered_at: null,
            });
          }
          ex.json = body;
        },
      };
    },
  },
  {
    name: 'viewed-sent-as-created',
    models: 'a view is reported with the type push.created (the event name taken from the wrong constant)',
    killers: ['HOOK-004'],
    start: () => ({
      delivery(d) {
        rewriteEvent(d, (e) => e.type === 'push.viewed' && Boolean((e.type = 'push.created')));
      },
    }),
  },
  {
    name: 'viewed-counts-before-view',
    models: 'push.viewed carries views_remaining read before the view was counted (one too many)',
    killers: ['HOOK-004'],
    start: () => ({
      delivery(d) {
        rewriteEvent(d, (e) => {
          if (e.type !== 'push.viewed' || typeof e.data?.views_remaining !== 'number') return false;
          e.data.views_remaining += 1;
          e.data.expired = false;
          return true;
        });
      },
    }),
  },
  {
    name: 'expired-not-queued-on-last-view',
    models: 'the view that uses the last one expires the push without push.expired (only the sweeper queues it)',
    killers: ['HOOK-004'],
    start: () => ({
      response(ex) {
        // Never queued, so the delivery log does not show it either: a push.expired queued with a push.viewed (in
        // the same transaction, so at the same time) is the one the last view would have queued.
        const body = ex.json;
        if (ex.op !== 'listWebhookDeliveries' || ex.status !== 200 || !Array.isArray(body?.deliveries)) return;
        const viewedAt = body.deliveries.filter((r: any) => r.event === 'push.viewed').map((r: any) => r.created_at);
        body.deliveries = body.deliveries.filter(
          (r: any) =>
            r.event !== 'push.expired' ||
            !viewedAt.some((at: string) => Math.abs(Date.parse(at) - Date.parse(r.created_at)) < 1000),
        );
        ex.json = body;
      },
      delivery(d) {
        const event = d.event;
        if (event?.type === 'push.expired' && event.data?.reason === 'views') d.drop();
      },
    }),
  },
  {
    name: 'events-filter-ignored',
    models: 'every push event goes to every webhook of the owner, whatever events it chose (the list is only shown)',
    killers: ['HOOK-004'],
    start: () => {
      const chosen = new Map<string, unknown>();
      const show = (hook: any) => {
        if (hook && typeof hook === 'object' && chosen.has(hook.id)) hook.events = chosen.get(hook.id);
      };
      return {
        request(ex) {
          const body = ex.requestJson;
          if (ex.op !== 'createWebhook' || !Array.isArray(body?.webhook?.events)) return;
          body.webhook.events = [...new Set([...body.webhook.events, ...PUSH_EVENTS])];
          ex.requestJson = body;
        },
        response(ex) {
          const body = ex.json;
          if (ex.op === 'createWebhook' && ex.status === 201) chosen.set(body.id, ex.sentJson.webhook.events);
          if (!['createWebhook', 'getWebhook', 'listWebhooks'].includes(ex.op) || ex.status >= 300 || !body) return;
          for (const hook of Array.isArray(body.webhooks) ? body.webhooks : [body]) show(hook);
          ex.json = body;
        },
      };
    },
  },
  {
    name: 'rotation-keeps-old-secret',
    models: 'after rotate_secret deliveries are still signed with the old secret only (the signer cached it)',
    killers: ['HOOK-006'],
    start: () => ({
      delivery(d) {
        const secrets = d.webhook?.secrets ?? [];
        if (secrets.length > 1) d.sign(secrets.slice(1));
      },
    }),
  },
  {
    name: 'rotation-drops-old-secret',
    models: 'rotate_secret replaces the secret at once: the old one stops verifying, not after 24 hours',
    killers: ['HOOK-006'],
    start: () => ({
      delivery(d) {
        const secrets = d.webhook?.secrets ?? [];
        if (secrets.length > 1) d.sign(secrets.slice(0, 1));
      },
    }),
  },
]);

/** A leak fault: each push event gets `field`, taken from what the push's create sent or answered (`pick`). */
function leakIntoEvents(name: string, models: string, field: string, pick: (made: MadePush) => unknown) {
  return {
    name,
    models,
    killers: ['HOOK-004'],
    start: () => ({
      delivery(d: Delivery) {
        const { event, made } = pushEvent(d);
        const value = made ? pick(made) : undefined;
        if (!event || typeof value !== 'string') return;
        event.data[field] = value;
        d.event = event;
        d.sign();
      },
    }),
  };
}

export const hookLeakFaults = define('leak', [
  leakIntoEvents(
    'url-token-in-event',
    "push events carry the push's url_token next to push_id (the data built from the owner's record)",
    'url_token',
    (made) => made.created.url_token,
  ),
  leakIntoEvents(
    'note-in-event',
    "push events carry the owner's note, as the owner's lists do",
    'note',
    (made) => made.input.note,
  ),
  {
    name: 'webhook-list-shows-secret',
    models: "listWebhooks serializes each webhook's row with its signing secret",
    killers: ['HOOK-001'],
    start: () => ({
      response(ex) {
        const body = ex.json;
        if (ex.op !== 'listWebhooks' || ex.status !== 200 || !Array.isArray(body?.webhooks)) return;
        for (const hook of body.webhooks) {
          const secret = ex.env.webhooks.get(hook?.id)?.secrets[0];
          if (secret) hook.secret = secret;
        }
        ex.json = body;
      },
    }),
  },
]);

export const hookAuthFaults = define('auth', [
  {
    name: 'webhook-get-owner-unchecked',
    models: "getWebhook looks the webhook up by id alone: another user's answers 200",
    killers: ['HOOK-002'],
    start: () => ({ request: (ex) => asOwner(ex, 'getWebhook') }),
  },
  {
    name: 'webhook-rotate-owner-unchecked',
    models: "rotate_secret looks the webhook up by id alone: another user gets a secret of someone else's webhook",
    killers: ['HOOK-002'],
    start: () => ({ request: (ex) => asOwner(ex, 'rotateWebhookSecret') }),
  },
]);
