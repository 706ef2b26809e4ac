/**
 * The events of owned pushes, made in the transaction of the change they report (push/push-service.ts passes these
 * as the `within` of its statements): `publish` makes each event once and hands it to the one event path
 * (push-event-path.ts), which turns it into its webhook deliveries (their body fixed now: the event's facts, with the
 * push name's envelope, which the dispatcher opens and puts in when it sends it, dispatcher.ts and delivery.ts) and
 * the read receipt it carries (the push's first view, or its expiry unviewed, when the owner asked). A create and a
 * view that are one statement write no delivery: their audit entry is marked for the outbox, which makes their
 * events and deliveries after the commit (outbox.ts). The request path only writes these rows (or the event's job),
 * and wakes this process's dispatcher (or fan-out) once they are committed. A body names the push by its `push_id`
 * and holds nothing that opens it (no url_token, link, payload, passphrase, note or file name).
 */
import { randomUUID } from 'node:crypto';
import type { WebhookEvent, WebhookEventType } from '@secret-push/sdk/generated';
import { ApiError, readReceiptsUnavailable, type ServerEnv } from '@secret-push/rules';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import type { JobQueue } from '../jobs/queue.js';
import { claimedPush, type ClaimWrites } from '../push/push-repository.js';
import type { PushEvents } from '../push/push-followers.js';
import type { PushRow } from '../push/push-tables.js';
import { outboxWrites } from './outbox.js';
import { made, viewerOf, type Extra } from './push-event-facts.js';
import { PUSH_EVENT_QUEUE, writeDeliveries, type OwnerNotice, type PushEvent } from './push-event-path.js';
import {
  EVENT_DELIVERIES_WRITTEN,
  EVENT_DELIVERY_CTES,
  writtenDeliveries,
  type ClaimedDelivery,
  type DeliveryValues,
  type WebhookRepository,
} from './webhook-repository.js';

/** The name the webhook deliveries' backlog has in /metrics (the queue depth's `queue` label). */
export const WEBHOOK_QUEUE = 'webhook.delivery';

/** The envelope context of an event's body (all its deliveries share it). */
export const deliveryBodyContext = (eventId: string) => `webhook_deliveries.body:${eventId}`;

/** An event sealed for its deliveries: a new event id, and the body as an envelope bound to that id. */
export function sealEvent(keyring: Keyring, event: WebhookEvent): { eventId: string; body: string } {
  const eventId = randomUUID();
  return { eventId, body: keyring.encryptText(JSON.stringify(event), deliveryBodyContext(eventId)) };
}

/** In `tx`: one event's deliveries (one per listening webhook), in one statement; `wake` once they are committed. */
export async function queueDeliveries(
  tx: Db,
  repo: WebhookRepository,
  wake: () => void,
  values: DeliveryValues,
): Promise<void> {
  const ids = await repo.insertDeliveries(tx, values);
  if (ids.length > 0) tx.afterCommit(wake);
}

export interface PushEventDeps {
  repo: WebhookRepository;
  /** The job queue, when an SMTP relay is configured: an event that carries a read receipt goes through it. */
  queue: JobQueue | null;
  /** Wakes this process's dispatcher (deliveries were committed). */
  wake: () => void;
  /** Wakes this process's fan-out of the outbox (marked audit entries were committed; outbox.ts). */
  wakeOutbox: () => void;
  /**
   * This process's dispatcher, when it sends: the deliveries a change's own statement writes are leased to it for
   * `leaseMs` and handed to it once committed (sent from memory, not claimed). Null: they are written due at once.
   */
  sender: { leaseMs: number; handoff(deliveries: ClaimedDelivery[]): void } | null;
  /** Webhooks are on (PWPUSH_WEBHOOKS). */
  webhooks: boolean;
  /** An SMTP relay is configured: read receipts are offered. */
  receipts: boolean;
  /** Where the server runs: a refusal of read receipts names the setting, outside production with the line. */
  env?: ServerEnv;
}

function refused(message: string): ApiError {
  return new ApiError('validation_failed', `notify_owner_on_view: ${message}`, {
    fields: { notify_owner_on_view: [message] },
  });
}

export function createPushEvents({
  repo,
  queue,
  wake,
  wakeOutbox,
  sender,
  webhooks,
  receipts,
  env,
}: PushEventDeps): PushEvents {
  /** A create's and a view's events, through the outbox. */
  const outbox = outboxWrites(wakeOutbox);

  /**
   * An event of an owned push, made once in the change's transaction `tx` and handed to the one event path
   * (push-event-path.ts): with a read receipt the owner wants, one job of PUSH_EVENT_QUEUE (its deliveries and its
   * email); else its deliveries, written here.
   */
  async function publish(
    tx: Db,
    type: WebhookEventType,
    row: PushRow,
    at: Date,
    extra: Extra = {},
    receipt: OwnerNotice | null = null,
  ): Promise<void> {
    if (row.ownerId === null) return;
    const mailed = receipt && receipts && queue && (await repo.receiptWanted(tx, row.id, row.ownerId)) ? receipt : null;
    if (!webhooks && !mailed) return;
    const { eventId, facts, nameCiphertext } = made(type, row, at, extra);
    const event: PushEvent = {
      type,
      eventId,
      pushId: row.id,
      ownerId: row.ownerId,
      workspaceId: row.workspaceId,
      at: at.toISOString(),
      facts,
      nameCiphertext,
      notice: mailed,
    };
    if (mailed && queue) await queue.enqueue(tx, PUSH_EVENT_QUEUE, event);
    else await writeDeliveries(tx, { repo, webhooks, wake }, event, false);
  }

  /**
   * A statement's ClaimWrites.written: once it committed, the deliveries it wrote (if any) handed to this process's
   * dispatcher (or, when this process does not send, the dispatcher woken: they were written due at once).
   */
  function wroteDeliveries(db: Db, result: unknown): void {
    const written = writtenDeliveries(result);
    if (written.length === 0) return;
    db.afterCommit(sender ? () => sender.handoff(written) : wake);
  }

  /** Until when the deliveries a statement writes at `now` are this process's (now: not sending, due at once). */
  const leaseUntil = (now: Date) => (sender ? new Date(now.getTime() + sender.leaseMs) : now);

  /**
   * Events written by the change's own statement (at `now`): their deliveries as a CTE that reads `won` (the push as
   * changed), handed to the dispatcher once committed.
   */
  function inStatement(row: PushRow, now: Date, events: ReturnType<typeof made>[]): ClaimWrites {
    return {
      ctes: EVENT_DELIVERY_CTES,
      params: {
        eventTypes: events.map((e) => e.type),
        eventIds: events.map((e) => e.eventId),
        eventFacts: events.map((e) => e.facts),
        eventName: row.nameCiphertext,
        leaseUntil: leaseUntil(now),
      },
      result: EVENT_DELIVERIES_WRITTEN,
      written: wroteDeliveries,
    };
  }

  const expiredBy =
    (reason: 'views' | 'time' | 'sweeper', at: () => Date) =>
    async (tx: Db, row: PushRow): Promise<void> => {
      const now = at();
      const notice: OwnerNotice | null =
        row.viewsUsed === 0 ? { kind: 'expired_unviewed', pushId: row.id, at: now.toISOString() } : null;
      await publish(tx, 'push.expired', row, now, { reason }, notice);
    };

  return {
    prepareCreate(input, ctx) {
      const choice = (input as { notify_owner_on_view?: boolean }).notify_owner_on_view;
      if (choice !== undefined) {
        if (ctx.actor.userId === null) throw refused('is not allowed for unknown users');
        if (choice && !receipts) throw refused(readReceiptsUnavailable(env));
      }
      if (ctx.actor.userId === null || (!webhooks && !receipts)) return undefined;
      return {
        ...(webhooks
          ? {
              ahead: (tx: Db, row: PushRow) => publish(tx, 'push.created', row, ctx.now ?? row.createdAt),
              inStatement: () => outbox,
            }
          : {}),
        ...(choice !== undefined && receipts
          ? {
              after: async (tx: Db, row: PushRow) => {
                await repo.setReceipt(tx, row.id, choice);
                if (choice) await repo.addOwner(tx, row.ownerId!);
              },
            }
          : {}),
      };
    },

    viewed: (ctx) => async (tx, row) => {
      const now = ctx.now ?? new Date();
      const notice: OwnerNotice | null =
        row.viewsUsed === 1
          ? { kind: 'viewed', pushId: row.id, at: now.toISOString(), ip: ctx.actor.ip.slice(0, 64) }
          : null;
      await publish(tx, 'push.viewed', row, now, { viewer: viewerOf(ctx.actor) }, notice);
      if (row.expired) await expiredBy('views', () => now)(tx, row);
    },

    viewInStatement: () => (webhooks && !receipts ? outbox : null),

    viewedInClaim(ctx, before, now) {
      if (!webhooks || receipts || before.ownerId === null) return null;
      const after = claimedPush(before, before.viewsUsed + 1, now, now);
      const events = [made('push.viewed', after, now, { viewer: viewerOf(ctx.actor) })];
      if (after.expired) events.push(made('push.expired', after, now, { reason: 'views' }));
      return inStatement(after, now, events);
    },

    failedPassphrase: (ctx) => async (tx, row) => {
      await publish(tx, 'push.failed_passphrase', row, ctx.now ?? new Date(), { viewer: viewerOf(ctx.actor) });
    },

    deleted:
      (ctx, governor = false) =>
      async (tx, row) => {
        const own = ctx.actor.userId !== null && ctx.actor.userId === row.ownerId;
        const by = own ? 'owner' : governor ? 'workspace_admin' : 'viewer';
        await publish(tx, 'push.deleted', row, ctx.now ?? new Date(), { deleted_by: by, viewer: viewerOf(ctx.actor) });
      },

    expired: (by = 'time') => expiredBy(by, () => new Date()),
  };
}
