/**
 * What the push service hands its statements for the events of owned pushes: the interface webhooks/push-events.ts
 * implements (deliveries, read receipts, the outbox's marks). It lives here, on the push floor, because the push
 * service calls it; the webhooks area, a floor above, implements it (ARCHITECTURE.md, "Floors").
 */
import type { PushInput } from '@secret-push/sdk/generated';
import type { AuditActor, ClaimWrites, CreateWrites, WithinChange } from './push-repository.js';
import type { PushRow } from './push-tables.js';

/** The part of a request an event needs: who, and when (tests move the instant). */
interface EventContext {
  actor: AuditActor;
  now?: Date;
}

export interface PushEvents {
  /**
   * Checks a create's `notify_owner_on_view` (422 when it cannot be honoured); the create's writes, for owners: its
   * events ahead of the push (they need not see it), the read-receipt choice after it.
   */
  prepareCreate(input: PushInput, ctx: EventContext): CreateWrites | undefined;
  viewed(ctx: EventContext): WithinChange;
  /**
   * The events of a recipient's view as its one statement writes them (push-repository.ts's viewByToken): its audit
   * entry marked for the outbox (webhooks/outbox.ts), so an owner with webhooks is viewed in one statement, as one without. Null
   * when that cannot be (webhooks off; read receipts on: they are decided in a transaction).
   */
  viewInStatement(): ClaimWrites | null;
  /**
   * The same events written by the claim's own statement (no transaction), given the push as read before the claim
   * (the claim then only happens from that count of views, so the bodies, made now, say what the claim did); null
   * when that cannot be (read receipts on: they are decided in the transaction; no webhooks; an anonymous push).
   */
  viewedInClaim(ctx: EventContext, before: PushRow, now: Date): ClaimWrites | null;
  failedPassphrase(ctx: EventContext): WithinChange;
  /** `governor`: deleted by a manager of the push's workspace who is not its owner (`deleted_by: workspace_admin`). */
  deleted(ctx: EventContext, governor?: boolean): WithinChange;
  /** By time: noticed by a request, or by the sweeper. */
  expired(by?: 'time' | 'sweeper'): WithinChange;
}
