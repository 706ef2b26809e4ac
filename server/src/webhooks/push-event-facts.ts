/**
 * The facts of a push event: its JSON body with the push's name left empty (a delivery holds the name's envelope, and
 * the dispatcher puts the name in as it sends it, delivery.ts). Made the same way for the events a change writes
 * itself (push-events.ts) and for those the outbox makes from an audit entry (outbox.ts). A body names the push by
 * its `push_id` and holds nothing that opens it (no url_token, link, payload, passphrase, note or file name).
 */
import { randomUUID } from 'node:crypto';
import type { WebhookEvent, WebhookEventType, WebhookPushData } from '@secret-push/sdk/generated';
import { isPastTime } from '@secret-push/rules';
import type { AuditActor } from '../push/push-repository.js';
import type { PushRow } from '../push/push-tables.js';

/** What an event shows of its push (and the name's envelope, put in as it is sent). */
export type EventPush = Pick<
  PushRow,
  | 'id'
  | 'kind'
  | 'passphraseProtected'
  | 'expireAfterViews'
  | 'viewsUsed'
  | 'expiresAt'
  | 'expired'
  | 'createdAt'
  | 'nameCiphertext'
>;

export type Extra = Record<string, unknown>;

/** The viewer fields of an event, as the audit shows them to the owner. */
export const viewerOf = (actor: AuditActor) => ({
  ip: actor.ip.slice(0, 64),
  user_agent: actor.userAgent.slice(0, 255),
  referrer: actor.referrer.slice(0, 255),
});

/**
 * The push as an event shows it: what the owner's lists show, minus anything that opens it. The name is left empty
 * here: a delivery holds the name's envelope, and the dispatcher puts the name in when it sends it (delivery.ts).
 */
function pushData(row: EventPush, at: Date): WebhookPushData {
  return {
    push_id: row.id,
    kind: row.kind,
    name: '',
    passphrase_protected: row.passphraseProtected,
    expire_after_views: row.expireAfterViews,
    views_remaining: Math.max(row.expireAfterViews - row.viewsUsed, 0),
    expires_at: row.expiresAt.toISOString(),
    expired: row.expired || isPastTime(row, at),
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * An event's type, a new id, its facts (the body's JSON with an empty name: nothing in it is more than the push's
 * and the audit's own columns hold in clear) and the push name's envelope, put in when it is sent.
 */
export function made(type: WebhookEventType, row: EventPush, at: Date, extra: Extra) {
  const event = { type, timestamp: at.toISOString(), data: { ...pushData(row, at), ...extra } } as WebhookEvent;
  return { type, eventId: randomUUID(), facts: JSON.stringify(event), nameCiphertext: row.nameCiphertext };
}
