/** The passphrase attempts of a push (../passphrase-gate.ts decides with them). */
import { sql, type Db } from '../../db/sql.js';
import { PASSPHRASE_ATTEMPTS, type PushRow } from '../push-tables.js';
import {
  AUDIT_COLUMNS,
  type AuditActor,
  auditParams,
  type AuditParams,
  checkInTime,
  GUARD,
  type Guarded,
  IN_TIME,
  type InTime,
  PUSH_KEPT,
  type WithinChange,
} from './statement-parts.js';

const S = {
  // Passphrase attempts. Attempts of one push are serialised by a lock on its row, in a short transaction.
  lockPush: sql<{ id: string }>('select id from pushes where id = :id for update'),
  attemptsSince: sql<{ pushId: string; failuresSince: Date; inFlightSince: Date }>(
    `select ${PASSPHRASE_ATTEMPTS.list} from passphrase_attempts
     where push_id = :pushId and ((failed and attempted_at > :failuresSince) or (not failed and attempted_at > :inFlightSince))
     order by attempted_at, id`,
  ),
  reserveAttempt: sql<{ pushId: string; now: Date }, { id: string }>(
    'insert into passphrase_attempts (push_id, attempted_at, failed) values (:pushId, :now, false) returning id',
  ),
  releaseAttempt: sql<{ id: string }>('delete from passphrase_attempts where id = :id'),
  /** A wrong (or missing) passphrase: the reservation becomes a failure, with its `failed_passphrase` entry. */
  failAttempt: sql<{ id: string; pushId: string } & AuditParams & Guarded, InTime>(
    `with ${GUARD}, failed as (
       update passphrase_attempts set failed = true, attempted_at = :now where id = :id and ${IN_TIME} returning push_id
     ), ${PUSH_KEPT}, logged as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select kept.id, 'failed_passphrase', :ip, :userAgent, :referrer, :userId, :now from kept where ${IN_TIME}
     )
     select in_time from guard`,
  ),
};

/** The outcome of asking for a place to check a passphrase. */
type AttemptReservation =
  | { state: 'reserved'; id: string }
  /** Too many failures in the window: their instants, for Retry-After. */
  | { state: 'blocked'; failures: Date[] }
  /** Enough attempts are being checked right now that one more might exceed the limit: ask again shortly. */
  | { state: 'busy' };

/** The passphrase attempts of a push (passphrase-gate.ts decides with them). */
export function attemptOperations(db: Db) {
  return {
    /**
     * A place to check one passphrase attempt. Failures within `windowMs` count against the push; attempts being
     * checked (younger than `inFlightMs`) hold a place too, so that parallel guesses cannot all slip under the limit,
     * but they never count once decided right.
     */
    async reserveAttempt(
      pushId: string,
      now: Date,
      limit: number,
      windowMs: number,
      inFlightMs: number,
    ): Promise<AttemptReservation> {
      return db.transaction(async (tx) => {
        await tx.query(S.lockPush, { id: pushId });
        const recent = (
          await tx.query(S.attemptsSince, {
            pushId,
            failuresSince: new Date(now.getTime() - windowMs),
            inFlightSince: new Date(now.getTime() - inFlightMs),
          })
        ).map((r) => PASSPHRASE_ATTEMPTS.fromRow(r));
        const failures = recent.filter((r) => r.failed).map((r) => r.attemptedAt);
        if (failures.length >= limit) return { state: 'blocked', failures };
        if (recent.length >= limit) return { state: 'busy' };
        const [reserved] = await tx.query(S.reserveAttempt, { pushId, now });
        return { state: 'reserved', id: String(reserved!.id) };
      });
    },

    async releaseAttempt(id: string): Promise<void> {
      await db.query(S.releaseAttempt, { id });
    },

    /** `within` (given the push as read): in the failure's transaction. */
    async failAttempt(
      id: string,
      push: PushRow,
      by: AuditActor,
      now: Date,
      deadline: Date,
      within?: WithinChange,
    ): Promise<void> {
      const params = { id, pushId: push.id, ...auditParams(by, now), deadline };
      if (!within) return checkInTime(await db.query(S.failAttempt, params));
      await db.transaction(async (tx) => {
        checkInTime(await tx.query(S.failAttempt, params));
        await within(tx, push);
      });
    },
  };
}
