/**
 * Every statement about email notifications (`email_notifications`, `notify_calls`): the limits counted under the
 * user's lock, the `creation_email_send` audit entry with its notification (one guarded statement: nothing is
 * written after the request's deadline), and the delivery's steps, each recipient's outcome written as it happens.
 */
import { ApiError } from '@secret-push/rules';
import { sql, type Db } from '../db/sql.js';
import type { Actor as AuditActor } from '../request-context.js';

export type NotifyStatus = 'pending' | 'processing' | 'completed' | 'partially_failed' | 'failed';

export interface NotificationRow {
  id: string;
  pushId: string;
  auditEntryId: string;
  userId: string | null;
  recipients: string[];
  locale: string | null;
  baseUrl: string;
  status: NotifyStatus;
  sent: string[];
  refused: string[];
  errorMessage: string | null;
  proceedAt: Date | null;
}

const COLUMNS =
  'id, push_id, audit_entry_id, user_id, recipients, locale, base_url, status, sent, refused, error_message, proceed_at';

function rowOf(r: Record<string, unknown>): NotificationRow {
  return {
    id: String(r.id),
    pushId: String(r.push_id),
    auditEntryId: String(r.audit_entry_id),
    userId: r.user_id === null ? null : String(r.user_id),
    recipients: r.recipients as string[],
    locale: (r.locale as string | null) ?? null,
    baseUrl: String(r.base_url),
    status: r.status as NotifyStatus,
    sent: r.sent as string[],
    refused: r.refused as string[],
    errorMessage: (r.error_message as string | null) ?? null,
    proceedAt: r.proceed_at ? new Date(r.proceed_at as string) : null,
  };
}

const S = {
  lockUser: sql<{ lockKey: string }>('select pg_advisory_xact_lock(hashtextextended(:lockKey, 0))'),
  /** Pushes' links and requests' links (request_mail `created`; a requester's own notices are not counted). */
  userSentSince: sql<{ userId: string; since: Date }, { n: string }>(
    `select (select coalesce(sum(cardinality(recipients)), 0) from email_notifications
             where user_id = :userId and created_at > :since)
          + (select coalesce(sum(cardinality(recipients)), 0) from request_mail
             where user_id = :userId and kind = 'created' and created_at > :since) as n`,
  ),
  pushRecipients: sql<{ pushId: string }, { n: string }>(
    'select coalesce(sum(cardinality(recipients)), 0) as n from email_notifications where push_id = :pushId',
  ),
  /**
   * The `creation_email_send` audit entry and the notification, in one statement. The notification's foreign key to
   * the push locks the push's row (for key share), so a delete of the push waits for both and its trigger deletes the
   * entry (audit entries have no key of their own: Migration20270105000000_audit_entries_unkeyed).
   */
  insert: sql<Record<string, unknown>, { in_time: boolean; id: string | null }>(
    `with guard as (select clock_timestamp() < :deadline as in_time),
     logged as (
       insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
       select :pushId, 'creation_email_send', :ip, :userAgent, :referrer, :userId, :now
       where (select in_time from guard)
       returning id
     ), made as (
       insert into email_notifications (id, push_id, audit_entry_id, user_id, recipients, locale, base_url, status, created_at, updated_at)
       select :id, :pushId, logged.id, :userId, :recipients::text[], :locale, :baseUrl, 'pending', :now, :now from logged
       returning id
     )
     select guard.in_time, made.id from guard left join made on true`,
  ),
  forgetCalls: sql<{ userId: string; since: Date }>(
    'delete from notify_calls where user_id = :userId and called_at <= :since',
  ),
  countCalls: sql<{ userId: string; since: Date }, { n: string }>(
    'select count(*) as n from notify_calls where user_id = :userId and called_at > :since',
  ),
  firstCall: sql<{ userId: string; since: Date }, { at: Date | string }>(
    'select min(called_at) as at from notify_calls where user_id = :userId and called_at > :since',
  ),
  addCall: sql<{ userId: string; now: Date }>('insert into notify_calls (user_id, called_at) values (:userId, :now)'),
  byAuditEntries: sql<{ ids: string[] }>(
    `select ${COLUMNS} from email_notifications where audit_entry_id = any(:ids::bigint[])`,
  ),
  find: sql<{ id: string }>(`select ${COLUMNS} from email_notifications where id = :id`),
  start: sql<{ id: string }>(
    `update email_notifications set status = 'processing', attempts = attempts + 1, updated_at = clock_timestamp()
     where id = :id and status in ('pending', 'processing') returning ${COLUMNS}`,
  ),
  markSent: sql<{ id: string; recipient: string }>(
    `update email_notifications set sent = array_append(sent, :recipient), updated_at = clock_timestamp()
     where id = :id and not (:recipient = any(sent))`,
  ),
  markRefused: sql<{ id: string; recipient: string; reason: string }>(
    `update email_notifications set refused = array_append(refused, :recipient), error_message = :reason,
       updated_at = clock_timestamp()
     where id = :id and not (:recipient = any(refused))`,
  ),
  retryLater: sql<{ id: string; reason: string }>(
    `update email_notifications set status = 'pending', error_message = :reason, updated_at = clock_timestamp()
     where id = :id and status = 'processing'`,
  ),
  finish: sql<{ id: string; status: NotifyStatus; reason: string | null }>(
    `update email_notifications set status = :status, error_message = coalesce(:reason, error_message),
       proceed_at = clock_timestamp(), updated_at = clock_timestamp()
     where id = :id and status in ('pending', 'processing')`,
  ),
  senderOf: sql<{ userId: string }, { email: string }>('select email from users where id = :userId'),
};

export function createNotifyRepository(db: Db) {
  return {
    /** Serialises one user's notifications (limits are counted, then written, on any instance). */
    async lockUser(tx: Db, userId: string): Promise<void> {
      await tx.query(S.lockUser, { lockKey: `notify:${userId}` });
    },
    async userSentSince(tx: Db, userId: string, since: Date): Promise<number> {
      return Number((await tx.query(S.userSentSince, { userId, since }))[0]!.n);
    },
    async pushRecipients(tx: Db, pushId: string): Promise<number> {
      return Number((await tx.query(S.pushRecipients, { pushId }))[0]!.n);
    },
    /** The audit entry and its notification; throws service_unavailable when it came after the deadline. */
    async insert(
      tx: Db,
      values: {
        id: string;
        pushId: string;
        recipients: string[];
        locale: string | null;
        baseUrl: string;
        by: AuditActor;
        now: Date;
        deadline: Date;
      },
    ): Promise<void> {
      const { by, ...rest } = values;
      const [row] = await tx.query(S.insert, {
        ...rest,
        ip: by.ip.slice(0, 255),
        userAgent: by.userAgent.slice(0, 255),
        referrer: by.referrer.slice(0, 255),
        userId: by.userId,
      });
      if (!row?.in_time || !row.id) throw new ApiError('service_unavailable');
    },
    /**
     * Counts one `notifyEmails` call against the user's minute (under the user's lock); false (nothing counted)
     * when the user already made `limit` calls in it, with the seconds until the oldest leaves the window.
     */
    async countCall(
      userId: string,
      now: Date,
      limit: number,
      windowMs: number,
    ): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
      const since = new Date(now.getTime() - windowMs);
      return db.transaction(async (tx) => {
        await tx.query(S.lockUser, { lockKey: `notify-calls:${userId}` });
        await tx.query(S.forgetCalls, { userId, since });
        const n = Number((await tx.query(S.countCalls, { userId, since }))[0]!.n);
        if (n >= limit) {
          const first = (await tx.query(S.firstCall, { userId, since }))[0]?.at;
          const frees = first ? new Date(first).getTime() + windowMs : now.getTime() + windowMs;
          return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((frees - now.getTime()) / 1000)) };
        }
        await tx.query(S.addCall, { userId, now });
        return { ok: true };
      });
    },
    async byAuditEntries(ids: string[]): Promise<Map<string, NotificationRow>> {
      if (ids.length === 0) return new Map();
      const rows = (await db.query(S.byAuditEntries, { ids })).map(rowOf);
      return new Map(rows.map((r) => [r.auditEntryId, r]));
    },
    async find(id: string): Promise<NotificationRow | null> {
      const [row] = await db.query(S.find, { id });
      return row ? rowOf(row) : null;
    },
    /** Takes the notification for a try; null when it is already finished (or gone). */
    async start(id: string): Promise<NotificationRow | null> {
      const [row] = await db.query(S.start, { id });
      return row ? rowOf(row) : null;
    },
    async markSent(id: string, recipient: string): Promise<void> {
      await db.query(S.markSent, { id, recipient });
    },
    async markRefused(id: string, recipient: string, reason: string): Promise<void> {
      await db.query(S.markRefused, { id, recipient, reason });
    },
    async retryLater(id: string, reason: string): Promise<void> {
      await db.query(S.retryLater, { id, reason });
    },
    async finish(id: string, status: NotifyStatus, reason: string | null): Promise<void> {
      await db.query(S.finish, { id, status, reason });
    },
    async senderOf(userId: string | null): Promise<string | null> {
      if (!userId) return null;
      return (await db.query(S.senderOf, { userId }))[0]?.email ?? null;
    },
  };
}
