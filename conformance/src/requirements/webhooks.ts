/**
 * Signed webhooks (issue 23), gated on the version report's `features.webhooks.enabled`. HOOK-001 and HOOK-002 need
 * only the API and a URL the target accepts: the receiver's when there is one, else a public example host, which a
 * target resolves at registration; a target that cannot resolve it (no outside DNS) refuses it, and the two are then
 * `not-run`, quoting the target and naming the flag to add. The deliveries (HOOK-003 to HOOK-006) need a receiver the
 * target can reach: `--webhook-receiver host:port` (the suite listens there; the target must be allowed to send to
 * that address, e.g. Secret Push with `PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true` for a receiver on a private network).
 * Signatures are checked by the Standard Webhooks specification with node:crypto. Every webhook a requirement
 * registers is deleted at its end (an account holds at most 10).
 */
import { define } from '../requirement.js';
import {
  expect,
  expectCode,
  expectEqual,
  expectStatus,
  NotRunHere,
  saidByTarget,
  unique,
  type Ctx,
  type Res,
} from '../context.js';
import { signatureValid, type ReceivedHook, type WebhookReceiver } from '../receiver.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
/** The first retry of the instance's schedule may take a while (5 s by default). */
const RETRY_WAIT_MS = 90_000;

/**
 * A URL to register when nothing needs to arrive: the receiver's, when there is one (an instance resolves the host at
 * registration, and the receiver's is one it may send to), else a public example host.
 */
export function someUrl(ctx: Ctx, label: string): string {
  return ctx.options.receiver?.url(unique(label)) ?? `https://hooks.example.org/${unique(label)}`;
}

function receiverOf(ctx: Ctx): WebhookReceiver {
  const receiver = ctx.options.receiver;
  if (!receiver) throw new Error('internal: no webhook receiver');
  return receiver;
}

/**
 * A registration refused for its URL while the suite had no receiver: the target could not accept the public example
 * host (it resolves a target's host at registration, and this machine may have no outside DNS). Not the target's
 * fault: the requirement is not run, and the reason says what to add.
 */
export function refusedExampleUrl(ctx: Ctx, res: Res): void {
  const fields = res.body && typeof res.body === 'object' ? (res.body as { errors?: unknown }).errors : undefined;
  if (ctx.options.receiver || res.status !== 422 || !fields || typeof fields !== 'object' || !('url' in fields)) return;
  throw new NotRunHere(
    'needs --webhook-receiver host:port (an address of this machine the target may send to): the target refused ' +
      `the example URL https://hooks.example.org/…${saidByTarget(res)}`,
  );
}

/** Registers a webhook of user A for `events` at `url`; runs `body`, then deletes it. */
async function withWebhook(
  ctx: Ctx,
  url: string,
  events: string[],
  body: (hook: { id: string; secret: string }) => Promise<void>,
): Promise<void> {
  const made = await ctx.call('createWebhook', { body: { webhook: { url, events } }, as: 'a' });
  refusedExampleUrl(ctx, made);
  expectStatus(made, 201);
  try {
    await body(made.body);
  } finally {
    await ctx.call('deleteWebhook', { params: { id: made.body.id }, as: 'a' });
  }
}

/** Checks a delivery's headers and signature; returns its event. */
function signedEvent(hook: ReceivedHook, secret: string): Record<string, any> {
  expect(/^msg_[A-Za-z0-9]{1,64}$/.test(hook.headers['webhook-id'] ?? ''), 'webhook-id is msg_…');
  const timestamp = Number(hook.headers['webhook-timestamp']);
  expect(Math.abs(Date.now() / 1000 - timestamp) <= 300, 'webhook-timestamp within 5 minutes of now');
  expect(signatureValid(secret, hook), 'a v1 signature verifies with the secret (Standard Webhooks)');
  const event = JSON.parse(hook.body) as Record<string, any>;
  expect(
    typeof event.type === 'string' && !Number.isNaN(Date.parse(event.timestamp)),
    'a body {type, timestamp, data}',
  );
  return event;
}

/** The delivery log's row for `deliveryId` once `until` holds (or as it is after 10 s). */
async function deliveryRow(
  ctx: Ctx,
  webhookId: string,
  deliveryId: string | undefined,
  until: (row: Record<string, any>) => boolean,
): Promise<Record<string, any> | undefined> {
  let row: Record<string, any> | undefined;
  const end = Date.now() + 10_000;
  do {
    const log = await ctx.call('listWebhookDeliveries', { params: { id: webhookId }, as: 'a' });
    expectStatus(log, 200);
    row = (log.body.deliveries as Record<string, any>[]).find((d) => d.id === deliveryId);
    if (row && until(row)) break;
    await new Promise((r) => setTimeout(r, 300));
  } while (Date.now() < end);
  return row;
}

export const webhooks = define('HOOK', [
  {
    id: 'HOOK-001',
    title: 'createWebhook answers 201 with a whsec_ secret shown once; get and list never show it; delete, then 404',
    source: 'spec: paths/webhooks (createWebhook, listWebhooks), paths/webhooks-{id} (getWebhook, deleteWebhook)',
    needs: ['token', 'webhooks'],
    async run(ctx) {
      const made = await ctx.call('createWebhook', {
        body: { webhook: { url: someUrl(ctx, 'hook-crud'), events: ['push.viewed'] } },
        as: 'a',
      });
      refusedExampleUrl(ctx, made);
      expectStatus(made, 201);
      expect(SECRET.test(made.body.secret), 'secret is whsec_ and 32 bytes of base64');
      const shown = await ctx.call('getWebhook', { params: { id: made.body.id }, as: 'a' });
      expectStatus(shown, 200);
      expect(!('secret' in shown.body), 'getWebhook shows no secret');
      const list = await ctx.call('listWebhooks', { as: 'a' });
      expectStatus(list, 200);
      expect(!list.text.includes(made.body.secret), 'listWebhooks shows no secret');
      expectStatus(await ctx.call('deleteWebhook', { params: { id: made.body.id }, as: 'a' }), 200);
      const gone = await ctx.call('getWebhook', { params: { id: made.body.id }, as: 'a' });
      expectStatus(gone, 404);
      expectCode(gone, 'not_found');
    },
  },
  {
    id: 'HOOK-002',
    title: "Another user's webhook answers 404 to get, test, its deliveries, rotate_secret and delete",
    source: 'spec: paths/webhooks-{id} (404: another account’s webhook answers the same)',
    needs: ['token', 'tokenB', 'webhooks'],
    async run(ctx) {
      await withWebhook(ctx, someUrl(ctx, 'hook-other'), ['push.viewed'], async (hook) => {
        const params = { id: hook.id };
        for (const op of [
          'getWebhook',
          'testWebhook',
          'listWebhookDeliveries',
          'rotateWebhookSecret',
          'deleteWebhook',
        ]) {
          const res = await ctx.call(op, { params, as: 'b' });
          expectStatus(res, 404);
          expectCode(res, 'not_found');
        }
      });
    },
  },
  {
    id: 'HOOK-003',
    title:
      'testWebhook (202) delivers webhook.test, signed by the Standard Webhooks specification, with its webhook-id',
    source: 'spec: paths/webhooks-{id}-test; spec: webhooks (webhook.test); Standard Webhooks specification',
    needs: ['token', 'webhooks', 'webhookReceiver'],
    async run(ctx) {
      const receiver = receiverOf(ctx);
      const path = unique('hook-test');
      await withWebhook(ctx, receiver.url(path), ['push.viewed'], async (hook) => {
        const queued = await ctx.call('testWebhook', { params: { id: hook.id }, as: 'a' });
        expectStatus(queued, 202);
        const [got] = await receiver.waitFor(path, 1, 30_000);
        expect(got, 'the test event reached the receiver within 30 s');
        expectEqual(got.headers['webhook-id'], queued.body.id, 'webhook-id is the delivery id');
        const event = signedEvent(got, hook.secret);
        expectEqual(event.type, 'webhook.test', 'type');
        expectEqual(event.data?.webhook_id, hook.id, 'data.webhook_id');
      });
    },
  },
  {
    id: 'HOOK-004',
    title:
      'Create, wrong passphrase, view: the log and receiver get the 3 subscribed events by push_id, nothing secret',
    source:
      'spec: webhooks (push.created, push.viewed, push.expired); spec: schemas/WebhookPushData; spec: info.description (Webhooks: queued in the same transaction)',
    needs: ['token', 'viewer', 'webhooks', 'webhookReceiver'],
    async run(ctx) {
      const receiver = receiverOf(ctx);
      const path = unique('hook-events');
      // Not push.failed_passphrase: the wrong passphrase below must not be sent.
      const events = ['push.created', 'push.viewed', 'push.expired'];
      await withWebhook(ctx, receiver.url(path), events, async (hook) => {
        const payload = `s3cret ${unique('payload')}`;
        const passphrase = unique('open sesame');
        const note = unique('note for the owner');
        const push = await ctx.create({ payload, passphrase, note, expire_after_views: 1 }, 'a');
        const params = { url_token: push.url_token };
        const wrong = await ctx.call('getPush', { params, as: ctx.viewer, headers: { 'x-passphrase': 'open barley' } });
        expectStatus(wrong, 401);
        const view = await ctx.call('getPush', { params, as: ctx.viewer, headers: { 'x-passphrase': passphrase } });
        expectStatus(view, 200);
        // Each event is queued with the change it reports; the log lists them once they are written (an outbox may
        // write a create's delivery a moment after the create: up to 10 s).
        let logged: string[];
        const end = Date.now() + 10_000;
        do {
          const log = await ctx.call('listWebhookDeliveries', { params: { id: hook.id }, as: 'a' });
          expectStatus(log, 200);
          logged = (log.body.deliveries as Record<string, any>[]).map((d) => String(d.event)).sort();
          if (logged.length >= events.length) break;
          await new Promise((r) => setTimeout(r, 100));
        } while (Date.now() < end);
        expectEqual(logged, [...events].sort(), 'the delivery log: the subscribed events, nothing else');
        const got = await receiver.waitFor(path, 3, 30_000);
        expectEqual(got.length, 3, 'deliveries within 30 s');
        const byType: Record<string, Record<string, any>> = Object.fromEntries(
          got.map((h) => signedEvent(h, hook.secret)).map((e) => [String(e.type), e]),
        );
        expectEqual(Object.keys(byType).sort(), [...events].sort(), 'event types');
        const ids = new Set(Object.values(byType).map((e) => e.data?.push_id));
        expectEqual(ids.size, 1, 'one push_id in all three');
        if (push.push_id !== undefined) expectEqual([...ids][0], push.push_id, 'push_id as the create answer gave it');
        expectEqual(byType['push.expired']?.data?.reason, 'views', 'push.expired reason');
        expectEqual(byType['push.viewed']?.data?.views_remaining, 0, 'push.viewed views_remaining');
        for (const h of got) {
          expect(!h.body.includes(push.url_token), 'no body holds the url_token');
          expect(!h.body.includes(payload), 'no body holds the payload');
          expect(!h.body.includes(passphrase), 'no body holds the passphrase');
          expect(!h.body.includes(note), 'no body holds the note');
        }
      });
    },
  },
  {
    id: 'HOOK-005',
    title: 'A delivery answered 500 is logged pending, tried again with the same webhook-id; the log shows the tries',
    source: 'spec: info.description (Webhooks: retried on the schedule); spec: schemas/WebhookDelivery (status)',
    needs: ['token', 'webhooks', 'webhookReceiver'],
    async run(ctx) {
      const receiver = receiverOf(ctx);
      const path = unique('hook-retry');
      receiver.answer(path, 500);
      await withWebhook(ctx, receiver.url(path), ['push.viewed'], async (hook) => {
        expectStatus(await ctx.call('testWebhook', { params: { id: hook.id }, as: 'a' }), 202);
        const [first] = await receiver.waitFor(path, 1, 30_000);
        expect(first, 'the first try reached the receiver within 30 s');
        const id = first.headers['webhook-id'];
        // Once the 500 is recorded, the delivery waits for its next try (or has had it already): it is not failed.
        const tried = await deliveryRow(ctx, hook.id, id, (r) => (r.attempts ?? 0) >= 1);
        expect(
          tried?.status === 'delivered' || (tried?.status === 'pending' && tried.next_attempt_at !== null),
          `after the 500 the log shows the delivery pending with a next try (got ${tried?.status})`,
        );
        const got = await receiver.waitFor(path, 2, RETRY_WAIT_MS);
        expectEqual(got.length, 2, 'tries within 90 s');
        expectEqual(got[1]!.headers['webhook-id'], id, 'the same webhook-id');
        signedEvent(got[1]!, hook.secret);
        const row = await deliveryRow(ctx, hook.id, id, (r) => r.status === 'delivered');
        expectEqual(row?.status, 'delivered', 'the delivery log status');
        expect((row?.attempts ?? 0) >= 2, 'the delivery log counts both tries');
      });
    },
  },
  {
    id: 'HOOK-006',
    title:
      'rotateWebhookSecret shows a new whsec_ secret once; deliveries verify with it and, for 24 h, the old one too',
    source: 'spec: paths/webhooks-{id}-rotate_secret; spec: schemas/WebhookRotated (previous_secret_expires_at)',
    needs: ['token', 'webhooks', 'webhookReceiver'],
    async run(ctx) {
      const receiver = receiverOf(ctx);
      const path = unique('hook-rotate');
      await withWebhook(ctx, receiver.url(path), ['push.viewed'], async (hook) => {
        const rotated = await ctx.call('rotateWebhookSecret', { params: { id: hook.id }, as: 'a' });
        expectStatus(rotated, 200);
        const secret = String(rotated.body.secret);
        expect(SECRET.test(secret) && secret !== hook.secret, 'a new whsec_ secret');
        const until = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
        expect(Math.abs(until - 24 * 3600_000) <= 300_000, 'previous_secret_expires_at 24 hours from now');
        const list = await ctx.call('listWebhooks', { as: 'a' });
        expectStatus(list, 200);
        expect(!list.text.includes(secret), 'listWebhooks shows no secret');
        expectStatus(await ctx.call('testWebhook', { params: { id: hook.id }, as: 'a' }), 202);
        const [got] = await receiver.waitFor(path, 1, 30_000);
        expect(got, 'the test event reached the receiver within 30 s');
        signedEvent(got, secret);
        expect(signatureValid(hook.secret, got), 'a v1 signature still verifies with the old secret');
      });
    },
  },
]);
