/**
 * The webhooks area wired on a core: its queues (deliveries, owner emails) and their workers, the events the push
 * service queues, the requests' `request.*` events (a move follower of the request service), the service the API and
 * the pages call, and what the sweeper adds (`push.expired` by the sweeper, deliveries older than 30 days forgotten).
 */
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Mailer } from '../mail/mailer.js';
import type { WithinChange } from '../push/push-repository.js';
import { deliveryAgents, webhookDelivery } from './delivery.js';
import { ownerNoticeDelivery } from './owner-notices.js';
import type { MoveFollower } from '../request/request-service.js';
import { createPushEvents, OWNER_NOTICE_QUEUE, WEBHOOK_QUEUE, type PushEvents } from './push-events.js';
import { requestEventsFollower } from './request-events.js';
import { systemResolver, type Resolver, type TargetRules } from './targets.js';
import { createWebhookRepository } from './webhook-repository.js';
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
  /** Closes the kept-alive connections to endpoints (after the queue stopped). */
  close(): void;
}

export interface WebhookAreaDeps {
  db: Db;
  settings: Settings;
  keyring: Keyring;
  queue: JobQueue;
  /** The SMTP side, when a relay is configured (read receipts, disabled-webhook notices). */
  mailer: Mailer | null;
  /** Work the queues in this process. */
  workers: boolean;
  /** Resolves webhook hosts (tests give their own). */
  resolve?: Resolver;
}

export async function startWebhookArea(deps: WebhookAreaDeps): Promise<WebhookArea> {
  const { db, settings, keyring, queue, mailer } = deps;
  const repo = createWebhookRepository(db);
  const rules: TargetRules = {
    allowPrivate: settings.webhooks.allowPrivate,
    requireHttps: settings.env === 'production' && !settings.webhooks.allowPrivate,
    resolve: deps.resolve ?? systemResolver,
  };
  // One job is one try; the queue's own retries only cover a handler that throws (the database away, a crash).
  await queue.define(WEBHOOK_QUEUE, {
    attempts: 5,
    retryDelaySeconds: 5,
    retryDelayMaxSeconds: 300,
    expireInSeconds: 60,
  });
  if (mailer) {
    await queue.define(OWNER_NOTICE_QUEUE, {
      attempts: settings.mail.attempts,
      retryDelaySeconds: settings.mail.retrySeconds,
      retryDelayMaxSeconds: 3600,
      expireInSeconds: 300,
    });
  }
  const agents = deliveryAgents();
  if (deps.workers) {
    const schedule = settings.webhooks.retrySchedule;
    // Up to 64 deliveries side by side (each waits on its endpoint, up to 10 s), fetched again at once while a burst
    // lasts, and at once when this process commits a job of it. With 16, a burst of 500 create+view cycles a second
    // outran the sending (bench: delivery p50 1.4 s, growing; with 64, 79 ms).
    await queue.workBatches(
      WEBHOOK_QUEUE,
      webhookDelivery({ db, repo, keyring, queue, rules, schedule, mail: mailer !== null, agents }),
      { batchSize: 64 },
    );
    if (mailer) await queue.work(OWNER_NOTICE_QUEUE, ownerNoticeDelivery(db, settings, keyring, mailer));
  }
  const events = createPushEvents({
    repo,
    keyring,
    queue,
    webhooks: settings.webhooks.enabled,
    receipts: mailer !== null,
  });
  const expiredBySweeper = events.expired('sweeper');
  return {
    service: settings.webhooks.enabled
      ? createWebhookService({ db, repo, keyring, queue, rules, receipts: mailer !== null })
      : null,
    events,
    requestEvents: settings.webhooks.enabled ? requestEventsFollower({ repo, keyring, queue }) : null,
    sweptWithin: async (tx, row) => {
      if (row.ownerId !== null) await expiredBySweeper(tx, row);
    },
    forget: (now) => repo.forgetDeliveries(new Date(now.getTime() - KEEP_DELIVERIES_MS)),
    close: () => agents.close(),
  };
}
