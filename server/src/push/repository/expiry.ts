/** A push expired: past its time (idempotent, as the sweeper does), or by request (its files dropped with it). */
import { sql, type Db } from '../../db/sql.js';
import { PUSHES, type PushRow } from '../push-tables.js';
import {
  AUDIT_COLUMNS,
  type AuditActor,
  auditParams,
  type AuditParams,
  changed,
  ERASE_SECRETS,
  GUARD,
  type Guarded,
  guardedPush,
  IN_TIME,
  type InTime,
  type WithinChange,
} from './statement-parts.js';

const P = PUSHES;

const S = {
  /** Marks a push past its time as expired (as of its expires_at) and erases its secrets; idempotent, any time. */
  expireByTime: sql<{ id: string; now: Date }>(
    `update pushes set expired = true, expired_on = expires_at, updated_at = :now, ${ERASE_SECRETS}
     where id = :id and not expired and expires_at <= :now returning ${P.list}`,
  ),
  /** Expire by request: flag, erase, drop the files and audit `expire`, as one statement. */
  expireByRequest: sql<{ id: string } & AuditParams & Guarded, InTime & Record<string, unknown>>(
    `with ${GUARD}, updated as (
       update pushes set expired = true, deleted = true, expired_on = :now, updated_at = :now, ${ERASE_SECRETS}
       where id = :id and not expired and expires_at > :now and ${IN_TIME} returning ${P.list}
     ), gone as (
       delete from push_files where push_id in (select id from updated) returning object_key
     ), logged as (
       insert into audit_entries (${AUDIT_COLUMNS}) select id, 'expire', :ip, :userAgent, :referrer, :userId, :now from updated
     )
     select guard.in_time, (select array_agg(object_key) from gone where object_key is not null) as gone_objects,
       updated.*
     from guard left join updated on true`,
  ),
};

/**
 * Expiry by time and by request. `findById`: the push's current row, for an expiry by time that changed nothing.
 * `objectsGone`: as createPushRepository's.
 */
export function expiryOperations(
  db: Db,
  findById: (id: string) => Promise<PushRow | null>,
  objectsGone?: (keys: string[]) => void,
) {
  return {
    /** Expires a push past its time (idempotent; the sweeper does the same); returns its current row. */
    async expireByTime(row: PushRow, now: Date, within?: WithinChange): Promise<PushRow> {
      const done = await changed(db, S.expireByTime, { id: row.id, now }, within, (rows) =>
        rows[0] ? P.fromRow(rows[0]) : null,
      );
      return done ?? (await findById(row.id)) ?? row;
    },

    /** Expire by request; null when it was already expired (or ran out of time). */
    async expireByRequest(
      id: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      within?: WithinChange,
    ): Promise<PushRow | null> {
      let gone: string[] = [];
      const row = await changed(db, S.expireByRequest, { id, ...auditParams(by, now), deadline }, within, (rows) => {
        gone = (rows[0]?.gone_objects as string[] | null | undefined) ?? [];
        return guardedPush(rows);
      });
      // After the commit: the objects of the files the statement deleted.
      if (gone.length > 0) objectsGone?.(gone);
      return row;
    },
  };
}
