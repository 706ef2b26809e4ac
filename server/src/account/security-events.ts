/**
 * Security events (issue 41): what an instance's operator reads in the admin console's "Security events" (/admin):
 * failed sign-ins, sign-ins refused past the limit (a lockout), sign-ins of locked accounts, wrong second-factor
 * codes, and accounts locked and unlocked. Written where each happens (account-service.ts, two-factor.ts, the admin
 * service), in table `security_events`; never a password, a code or a token, only the email as typed (bounded), the
 * account when there is one, and the client address.
 *
 * Bounded: the failures are already limited per email and per address (PWPUSH_LOGIN_ATTEMPTS), a refusal past the
 * limit writes at most one row a minute per email and address, and the sweeper keeps 30 days and at most
 * MAX_ROWS rows.
 */
import { clientAddressKey } from '../client-address.js';
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';

type SecurityEventKind =
  | 'sign_in_failed'
  | 'sign_in_throttled'
  | 'sign_in_locked_account'
  | 'two_factor_failed'
  | 'account_locked'
  | 'account_unlocked';

export interface SecurityEvent {
  id: string;
  kind: SecurityEventKind;
  email: string;
  userId: string | null;
  ip: string;
  at: Date;
}

export const SECURITY_EVENTS = defineTable<SecurityEvent>('security_events', {
  id: column.bigint('id'),
  kind: column.oneOf('kind'),
  email: column.text('email'),
  userId: column.uuidOrNull('user_id'),
  ip: column.text('ip'),
  at: column.date('at'),
});

/** Days an event is kept. */
const KEEP_DAYS = 30;
/** Rows kept at most: the oldest go first. */
const MAX_ROWS = 100_000;

const E = {
  record: sql<{ kind: string; email: string; userId: string | null; ip: string; now: Date }>(
    `insert into security_events (kind, email, user_id, ip, at)
     values (:kind, coalesce(nullif(:email, ''), (select email from users where id = cast(:userId as uuid)), ''),
       (select id from users where id = cast(:userId as uuid)), :ip, :now)`,
  ),
  /** A lockout: one row a minute per email and address, however many refusals. */
  recordOncePerMinute: sql<{ kind: string; email: string; ip: string; now: Date; since: Date }>(
    `insert into security_events (kind, email, user_id, ip, at)
     select :kind, :email, (select id from users where email = :email), :ip, :now
     where not exists (select 1 from security_events
       where kind = :kind and email = :email and ip = :ip and at > :since)`,
  ),
  recent: sql<{ limit: number; offset: number }>(
    `select ${SECURITY_EVENTS.list} from security_events order by at desc, id desc limit :limit offset :offset`,
  ),
  count: sql<Record<string, never>, { n: string }>('select count(*) as n from security_events'),
  forgetOld: sql<{ before: Date }>('delete from security_events where at < :before'),
  trim: sql<{ keep: number }>(
    `delete from security_events where id < (select id from security_events order by id desc offset :keep limit 1)`,
  ),
};

/** The email as typed, made printable and bounded (it may be anything a visitor sent). */
function shown(email: string): string {
  return email.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 320);
}

export interface SecurityEvents {
  /** Records one event; `userId` only when the account exists (an empty `email`: the account's). */
  record(
    db: Db,
    kind: SecurityEventKind,
    who: { email: string; userId?: string | null; ip: string },
    now: Date,
  ): Promise<void>;
  /** Records a lockout: at most one row a minute per email and address. */
  recordThrottled(db: Db, who: { email: string; ip: string }, now: Date): Promise<void>;
  /** The latest events, newest first, and how many are kept. */
  recent(db: Db, page: { limit: number; offset: number }): Promise<{ events: SecurityEvent[]; total: number }>;
  /** Forgets events older than 30 days, and all but the newest 100,000 (the sweeper calls it). */
  forget(db: Db, now: Date): Promise<void>;
}

export const securityEvents: SecurityEvents = {
  async record(db, kind, who, now) {
    await db.query(E.record, {
      kind,
      email: shown(who.email),
      userId: who.userId ?? null,
      ip: clientAddressKey(who.ip),
      now,
    });
  },
  async recordThrottled(db, who, now) {
    await db.query(E.recordOncePerMinute, {
      kind: 'sign_in_throttled',
      email: shown(who.email),
      ip: clientAddressKey(who.ip),
      now,
      since: new Date(now.getTime() - 60_000),
    });
  },
  async recent(db, page) {
    const [rows, [count]] = await Promise.all([db.query(E.recent, page), db.query(E.count, {})]);
    return { events: rows.map((r) => SECURITY_EVENTS.fromRow(r)), total: Number(count?.n ?? 0) };
  },
  async forget(db, now) {
    await db.query(E.forgetOld, { before: new Date(now.getTime() - KEEP_DAYS * 86_400_000) });
    await db.query(E.trim, { keep: MAX_ROWS });
  },
};
