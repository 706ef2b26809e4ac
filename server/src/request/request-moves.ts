/**
 * A request's states and moves (request-service.ts runs them): the state it is in at an instant, why an answer is
 * refused in a state, and a move as its transaction wrote it, with the followers that run in that transaction (the
 * email job: request-mail.ts; webhooks' events: ../webhooks/request-events.ts).
 */
import { ApiError } from '@secret-push/rules';
import type { Db } from '../db/sql.js';
import type { AuditActor } from '../push/push-repository.js';
import type { RequestRow } from './request-tables.js';

type RequestMoveType =
  'request.created' | 'request.fulfilled' | 'request.collected' | 'request.expired' | 'request.revoked';

/** A move of a request, as its transaction wrote it (the row after the move; its secrets are envelopes). */
export interface RequestMove {
  type: RequestMoveType;
  request: RequestRow;
  at: Date;
  /** Who moved it (null: time, through the sweeper or a read past the expiry). */
  by: AuditActor | null;
}

/**
 * Work that follows a move, written in the move's transaction `tx` (a job to enqueue, a row to write); a throw rolls
 * the move back. Followers get no secret in clear and must put none in what they write.
 */
export type MoveFollower = (tx: Db, move: RequestMove) => Promise<void>;

/** The state a request is in at `now` (a pending request past its time is expired, whether or not it was settled). */
export function stateAt(row: RequestRow, now: Date): RequestRow['state'] {
  return row.state === 'pending' && row.expiresAt.getTime() <= now.getTime() ? 'expired' : row.state;
}

/** Why an answer is refused in a state (null: it is taken). */
export function refusal(state: RequestRow['state']): ApiError | null {
  switch (state) {
    case 'pending':
      return null;
    case 'fulfilled':
    case 'collected':
      return new ApiError('request_answered', 'This request has already been answered; nothing was stored.');
    case 'revoked':
      return new ApiError('request_closed', 'This request was revoked by its requester; nothing was stored.');
    case 'expired':
      return new ApiError('request_closed', 'This request has expired; nothing was stored.');
  }
}
