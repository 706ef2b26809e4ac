/**
 * The webhooks area wired on a core: the dispatcher that sends deliveries (dispatcher.ts), the owner emails' queue
 * and its worker (when a relay is configured), the events the push service queues, the requests' `request.*` events
 * (a move follower of the request service), the service the API and the pages call, and what the sweeper adds
 * (`push.expired` by the sweeper, deliveries older than 30 days and the limits' past minutes forgotten).
 */
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import type { JobQueue, QueueDepth } from '../jobs/queue.js';
import type { Mailer } from '../mail/mailer.js';
import type { WithinChange } from '../push/push-repository.js';
import { deliveryAgents, webhookDelivery } from './delivery.js';
import { startDispatcher, type Dispatcher } from './dispatcher.js';
import { ownerNoticeDelivery } from './owner-notices.js';
import { fanOut, outboxBacklog, startOutboxLoop } from './outbox.js';
import type { MoveFollower } from '../request/request-service.js';
import type { PushEvents } from '../push/push-followers.js';
import { OWNER_NOTICE_QUEUE, PUSH_EVENT_QUEUE, pushEventWorker } from './push-event-path.js';
import { createPushEvents, WEBHOOK_QUEUE } from './push-events.js';
import { requestEventsFollower } from './request-events.js';
import { sendBudget } from './send-budget.js';
import { systemResolver, type Resolver, type TargetRules } from './targets.js';
import { createLimitRepository, createWebhookRepository, type ClaimedDelivery } from './webhook-repository.js';
import { createWebhookService, type WebhookService } from './webhook-service.js';

const KEEP_DELIVERIES_MS = 30 * 24 * 60 * 60 * 1000;

export interface WebhookArea {
  /** Null when webhooks are off (PWPUSH_WEBHOOKS=false): the routes answer 404. */
  service: WebhookService | null;
  events: PushEvents;
  /** The request service's move follower that queues `request.*` events; null when webhooks are off. */
  requestEvents: MoveFollower | null;
  /** The sweeper's `push.expired` (reason `sweeper`), for owned pushes. */
  sweptWithin: WithinChange;
  forget(now: Date): Promise<void>;
  /**
   * The deliveries' backlog, for /metrics: pending ones (of every process) and the outbox's events not fanned out yet,
   * and the ones this process is sending.
   */
  depth(): Promise<QueueDepth>;
  /**
   * Stops sending (waits, at most `timeoutMs`, for the batch in hand; makes the handed-off deliveries not started due
   * at once) and closes the kept-alive connections.
   */
  stop(timeoutMs?: number): Promise<void>;
}

export interface WebhookAreaDeps {
  db: Db;
  settings: Settings;
  keyring: Keyring;
  /** The job queue of emails: given when a relay is configured (with `mailer`). */
  queue: JobQueue | null;
  /** The SMTP side, when a relay is configured (read receipts, disabled-webhook notices). */
  mailer: Mailer | null;
  /** Send deliveries (and work the owner emails' queue) in this process. */
  workers: boolean;
  /** Seconds between the dispatcher's claims when it is not woken (default 2). */
  pollSeconds?: number;
  /**
   * Seconds a claimed delivery is leased to its process (default 60): a process that dies with it leaves it due again
   * then. More than a try can take (10 s, 20 s when a kept-alive connection was stale).
   */
  leaseSeconds?: number;
  /** Resolves webhook hosts (tests give their own). */
  resolve?: Resolver;
  /** Seconds of the send budget's window (default 60, as its settings say; a test shortens it). */
  budgetWindowSeconds?: number;
  /** Where the dispatcher's errors go (a claim or a batch that threw; never a delivery's content). */
  onError?: (error: unknown) => void;
}

export async function startWebhookArea(deps: WebhookAreaDeps): Promise<WebhookArea> {
  const { db, settings, keyring, queue, mailer } = deps;
  const repo = createWebhookRepository(db);
  const limits = createLimitRepository(db);
  const rules: TargetRules = {
    allowPrivate: settings.webhooks.allowPrivate,
    requireHttps: settings.env === 'production' && !settings.webhooks.allowPrivate,
    resolve: deps.resolve ?? systemResolver,
  };
  // The owners' emails go through the job queue, and only with an SMTP relay: a read receipt with its event (and the
  // event's deliveries: push-event-path.ts), a disabled webhook's notice on its own.
  const noticeQueue = mailer && queue ? queue : null;
  if (noticeQueue) {
    for (const name of [PUSH_EVENT_QUEUE, OWNER_NOTICE_QUEUE]) {
      await noticeQueue.define(name, {
        attempts: settings.mail.attempts,
        retryDelaySeconds: settings.mail.retrySeconds,
        retryDelayMaxSeconds: 3600,
        expireInSeconds: 300,
      });
    }
  }
  const agents = deliveryAgents();
  const leaseMs = (deps.leaseSeconds ?? 60) * 1000;
  // Batches of up to 64 deliveries (each waits on its endpoint, up to 10 s), a next one beside a batch out for 0.5 s
  // (up to 4), claimed again at once while a burst lasts, and at once when this process commits deliveries. With
  // batches of 16, a burst of 500 create+view cycles a second outran the sending (bench: delivery p50 1.4 s, growing;
  // with 64, 79 ms).
  const sending = webhookDelivery({
    db,
    repo,
    keyring,
    mail: noticeQueue,
    rules,
    schedule: settings.webhooks.retrySchedule,
    agents,
    budget: sendBudget(db, { ...settings.webhookBudget, windowSeconds: deps.budgetWindowSeconds ?? 60 }),
  });
  const dispatcher: Dispatcher<ClaimedDelivery> | null = deps.workers
    ? startDispatcher<ClaimedDelivery>({
        claim: (limit) => {
          const now = new Date();
          return repo.claimDue(now, new Date(now.getTime() + leaseMs), limit);
        },
        send: sending.send,
        batchSize: 64,
        maxBatches: 4,
        stallMs: 500,
        gatherMs: 25,
        pollMs: (deps.pollSeconds ?? 2) * 1000,
        onError: deps.onError ?? (() => undefined),
      })
    : null;
  const wake = () => dispatcher?.wake();
  if (deps.workers && noticeQueue && mailer) {
    const sendNotice = ownerNoticeDelivery(db, settings, keyring, mailer);
    await noticeQueue.work(OWNER_NOTICE_QUEUE, sendNotice);
    const deliveries = { repo, webhooks: settings.webhooks.enabled, wake };
    await noticeQueue.work(PUSH_EVENT_QUEUE, pushEventWorker(db, deliveries, sendNotice));
  }
  // The outbox (outbox.ts): a create's and a view's events are fanned out into deliveries by the process that sends,
  // 25 ms after its own commit woke it (more entries join), again within 10 ms while committed entries wait for older
  // transactions, and every poll (another process's entries). Each delivery is tried once inside the fan-out, and
  // written as delivered when it was answered at once (delivery.ts firstTries).
  const outbox = dispatcher
    ? startOutboxLoop({
        run: () => fanOut(db, 64, new Date(Date.now() + leaseMs), sending.firstTries),
        handoff: (deliveries) => dispatcher.handoff(deliveries, Date.now() + leaseMs / 2, true),
        gatherMs: 25,
        retryMs: 10,
        pollMs: (deps.pollSeconds ?? 2) * 1000,
        onError: deps.onError ?? (() => undefined),
      })
    : null;
  const events = createPushEvents({
    repo,
    queue: noticeQueue,
    wake,
    wakeOutbox: () => outbox?.wake(),
    // Sent from memory if they can start while half their lease is left; else claimed after it.
    sender: dispatcher && {
      leaseMs,
      handoff: (deliveries) => dispatcher.handoff(deliveries, Date.now() + leaseMs / 2),
    },
    webhooks: settings.webhooks.enabled,
    receipts: mailer !== null,
    env: settings.env,
  });
  const expiredBySweeper = events.expired('sweeper');
  return {
    service: settings.webhooks.enabled
      ? createWebhookService({
          db,
          repo,
          limits,
          keyring,
          wake,
          rules,
          receipts: mailer !== null,
          env: settings.env,
          callLimits: {
            test: settings.webhookCalls.testsPerMinute,
            redeliver: settings.webhookCalls.redeliveriesPerMinute,
          },
        })
      : null,
    events,
    requestEvents: settings.webhooks.enabled ? requestEventsFollower({ repo, keyring, wake }) : null,
    sweptWithin: async (tx, row) => {
      if (row.ownerId !== null) await expiredBySweeper(tx, row);
    },
    async forget(now) {
      await repo.forgetDeliveries(new Date(now.getTime() - KEEP_DELIVERIES_MS));
      // The limits' counters of minutes that are over (a row comes back with the next call).
      await limits.forget(new Date(now.getTime() - 2 * 60_000));
    },
    async depth() {
      const [pending, backlog] = await Promise.all([repo.pendingCount(), outboxBacklog(db)]);
      return { queue: WEBHOOK_QUEUE, queued: pending + backlog, active: dispatcher?.inFlight() ?? 0 };
    },
    async stop(timeoutMs) {
      await outbox?.stop();
      // Handed-off deliveries not started are due again at once (a deploy would otherwise hold them for their lease).
      const left = (await dispatcher?.stop(timeoutMs)) ?? [];
      await repo
        .release(
          left.map((d) => d.delivery.id),
          new Date(),
        )
        .catch(deps.onError ?? (() => undefined));
      agents.close();
    },
  };
}
