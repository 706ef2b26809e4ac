/**
 * The one path of an owned push's event to what follows it (docs/decisions/0008-one-push-event-path.md). The event is
 * made once, in the transaction of the change it reports (push-events.ts `publish`), and its followers are a delivery
 * for each enabled webhook of the owner that subscribes to it (`writeDeliveries`, the only writer of a push event's
 * deliveries outside the one-statement paths) and the read receipt it may carry (the push's first view, or its expiry
 * unviewed, when the owner wants receipts for the push: an email, owner-notices.ts).
 *
 * An event that carries a receipt is written as one job of PUSH_EVENT_QUEUE in the change's transaction; the queue's
 * worker writes its deliveries (in a transaction of its own) and sends the email, and a try that failed (the relay
 * answered a temporary error) is run again by the queue: the deliveries are keyed by the event's id, so they are not
 * written twice, and the email keeps its Message-ID (the event's id). Any other event has webhooks as its only
 * followers: its deliveries are written inside the change's transaction, as before.
 *
 * A create's and a view's events written by their one statement (the outbox, outbox.ts, and a claim's own
 * statement) never carry a receipt: receipts turn those paths off (push-events.ts).
 */
import type { WebhookEventType } from '@secret-push/sdk/generated';
import type { Db } from '../db/sql.js';
import type { QueuedJob } from '../jobs/queue.js';
import type { WebhookRepository } from './webhook-repository.js';

/** The queue of owned pushes' events that carry a read receipt (only with an SMTP relay: a job queue runs). */
export const PUSH_EVENT_QUEUE = 'push.event';
/** The queue of the other emails to an owner (a webhook disabled after failing for 5 days). */
export const OWNER_NOTICE_QUEUE = 'email.owner-notice';

/** An email to an owner: a read receipt (carried by its event), or a disabled webhook (a job of OWNER_NOTICE_QUEUE). */
export type OwnerNotice =
  | { kind: 'viewed'; pushId: string; at: string; ip: string }
  | { kind: 'expired_unviewed'; pushId: string; at: string }
  | { kind: 'webhook_disabled'; webhookId: string; userId: string; at: string };

/**
 * An owned push's event as the change made it: its type and id, the facts its deliveries send (nothing that opens
 * the push: push-event-facts.ts), the push name's envelope, and the read receipt it carries (null: none, or the
 * owner did not ask for it).
 */
export interface PushEvent {
  type: WebhookEventType;
  eventId: string;
  pushId: string;
  ownerId: string;
  /** The push's workspace (its webhooks receive the event), or null: the owner's personal webhooks. */
  workspaceId: number | null;
  /** When it happened (ISO 8601): its deliveries' `created_at`. */
  at: string;
  facts: string;
  nameCiphertext: string | null;
  notice: OwnerNotice | null;
}

export interface DeliveryDeps {
  repo: WebhookRepository;
  /** Webhooks are on (PWPUSH_WEBHOOKS). */
  webhooks: boolean;
  /** Wakes this process's dispatcher (deliveries were committed). */
  wake: () => void;
}

/**
 * In `tx`: the event's deliveries, one per enabled webhook listening to the push (its owner's personal ones, or its
 * workspace's) subscribed to it. `again`: the event may
 * have been fanned out before (a job run again), and a webhook that has its delivery gets none.
 */
export async function writeDeliveries(tx: Db, deps: DeliveryDeps, event: PushEvent, again: boolean): Promise<void> {
  if (!deps.webhooks) return;
  const values = {
    userId: event.ownerId,
    // A job queued before workspaces' webhooks has none: a personal push.
    workspaceId: event.workspaceId ?? null,
    event: event.type,
    eventId: event.eventId,
    body: null,
    facts: event.facts,
    nameCiphertext: event.nameCiphertext,
    now: new Date(event.at),
  };
  const ids = again ? await deps.repo.insertDeliveriesOnce(tx, values) : await deps.repo.insertDeliveries(tx, values);
  if (ids.length > 0) tx.afterCommit(deps.wake);
}

/**
 * The worker of PUSH_EVENT_QUEUE: the event's deliveries, then its email (`sendNotice`, owner-notices.ts, whose
 * throw on a temporary failure has the queue run the job again).
 */
export function pushEventWorker(
  db: Db,
  deps: DeliveryDeps,
  sendNotice: (job: QueuedJob<OwnerNotice>) => Promise<void>,
): (job: QueuedJob<PushEvent>) => Promise<void> {
  return async (job) => {
    const event = job.data;
    await db.transaction((tx) => writeDeliveries(tx, deps, event, true));
    if (event.notice) await sendNotice({ ...job, id: event.eventId, data: event.notice });
  };
}
