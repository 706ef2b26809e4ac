/**
 * The `request.*` events (issue 24 with the webhooks of issue 23): a move follower of the request service
 * (request/request-service.ts runs it in each move's transaction), which writes, like the push events
 * (./push-events.ts), one delivery row per enabled webhook of the requester (or of the request's workspace) that subscribes to the event, in one
 * statement (the dispatcher sends them). A body names the request by its non-secret `request_id` (and, once
 * answered, the answer push by its `push_id`) and holds nothing that opens it or was written into it: no url_token or
 * link (the request's opens the responder's page; the answer's opens the secret), no ask, note, file name, public key,
 * sealed key or answer content.
 */
import type { WebhookEvent, WebhookRequestData } from '@secret-push/sdk/generated';
import type { Keyring } from '../crypto/envelope.js';
import type { MoveFollower, RequestMove } from '../request/request-service.js';
import { queueDeliveries, sealEvent } from './push-events.js';
import type { WebhookRepository } from './webhook-repository.js';

export interface RequestEventDeps {
  repo: WebhookRepository;
  keyring: Keyring;
  /** Wakes this process's dispatcher (deliveries were committed). */
  wake: () => void;
}

const iso = (at: Date | null) => at?.toISOString() ?? null;

/** The request as an event shows it: what the requester's lists show of its life, minus anything that opens it. */
function requestData({ request: row }: RequestMove, name: string): WebhookRequestData {
  return {
    request_id: row.id,
    state: row.state,
    name,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    fulfilled_at: iso(row.fulfilledAt),
    collected_at: iso(row.collectedAt),
    closed_at: iso(row.closedAt ?? (row.state === 'expired' ? row.expiresAt : null)),
  };
}

/** The follower that queues a move's event for the requester's webhooks (webhooks on). */
export function requestEventsFollower({ repo, keyring, wake }: RequestEventDeps): MoveFollower {
  return async (tx, move) => {
    const row = move.request;
    const name = row.nameCiphertext ? keyring.decryptText(row.nameCiphertext, `requests.name:${row.id}`) : '';
    const answered = move.type === 'request.fulfilled' || move.type === 'request.collected';
    const data = { ...requestData(move, name), ...(answered && row.answerPushId ? { push_id: row.answerPushId } : {}) };
    const event = { type: move.type, timestamp: move.at.toISOString(), data } as WebhookEvent;
    const { eventId, body } = sealEvent(keyring, event);
    await queueDeliveries(tx, repo, wake, {
      userId: row.ownerId,
      workspaceId: row.workspaceId ?? null,
      event: move.type,
      eventId,
      body,
      facts: null,
      nameCiphertext: null,
      // The delivery's own time: an expiry by time is dated at its expiry, which a late notice may be long past.
      now: new Date(),
    });
  };
}
