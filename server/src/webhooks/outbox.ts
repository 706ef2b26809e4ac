/**
 * The webhooks' outbox: the events of a request (`push.created`, `push.viewed`, and `push.expired` on a last view)
 * are its audit entry, and a dispatcher turns them into deliveries afterwards, many in one statement.
 *
 * A create or a view of an owner with an enabled webhook writes no delivery in its statement. The `creation` or
 * `view` entry that statement writes anyway is marked (`tx`, the transaction's id, and for a view the push's count of
 * views after it: Migration20270106000000_webhook_outbox); committed with the change, it is the event, and a restart
 * loses none. `fanOut` then takes the marked entries in the order of `(tx, id)`, from where `webhook_outbox` says the
 * last one left off, and in one statement makes each entry's events (from the entry and its push, as the server's own
 * facts: the push name's envelope copied, opened by the sender, delivery.ts), writes one delivery per enabled
 * webhook of the owner subscribed to each (leased to this process, which sends them from memory: the dispatcher's
 * handoff) and moves `webhook_outbox` past them. One process fans out at a time (`for update skip locked` on that row).
 *
 * An entry is taken once no transaction that could still write one before it is running: its `tx` is below the
 * snapshot's `xmin`. A transaction that began earlier and commits later wrote its entries with a smaller `tx`, and
 * while it runs, `xmin` is at most that `tx`: nothing after it is taken before it. The price: an entry waits for
 * every transaction older than its own to end (a request's own take milliseconds; a long transaction anywhere in the
 * cluster holds the events back until it ends).
 *
 * Why: the bench measured a webhook's delivery row, written by the request's own statement, at about half of what a
 * webhook cost a create and a view (docs/webhooks.md, Benchmark). Written by the hundred, a delivery costs a fraction.
 */
import { sql, type Db } from '../db/sql.js';
import type { ClaimWrites } from '../push/push-repository.js';
import { deliveriesOfHooks, type ClaimedDelivery } from './webhook-repository.js';

/** ClaimWrites.outbox: an entry is marked when its push's owner has an enabled webhook. */
const outboxTx = (owner: string) =>
  `case when ${owner} is not null and exists (select 1 from webhooks w where w.user_id = ${owner} and w.enabled)
     then pg_current_xact_id() end`;

/**
 * The writes of a create or a view of an owned push whose events go through the outbox: its audit entry marked, and
 * once the statement committed with a marked entry, `wake` (this process's fan-out).
 */
export function outboxWrites(wake: () => void): ClaimWrites {
  return {
    ctes: '',
    params: {},
    outbox: outboxTx,
    written(db, marked) {
      if (marked === true) db.afterCommit(wake);
    },
  };
}

/** A time as the facts write it (iso_time: JavaScript's toISOString). */
const PUSH_DATA = `'push_id', p.id, 'kind', p.kind, 'name', '', 'passphrase_protected', p.passphrase_protected,
  'expire_after_views', p.expire_after_views, 'views_remaining', greatest(p.expire_after_views - e.views, 0),
  'expires_at', iso_time(p.expires_at), 'expired', e.views >= p.expire_after_views or p.expires_at <= e.created_at,
  'created_at', iso_time(p.created_at)`;
const VIEWER = `json_build_object('ip', left(e.ip, 64), 'user_agent', left(e.user_agent, 255),
  'referrer', left(e.referrer, 255))`;

type FanOutRow = { entries: number; held: boolean; waiting: boolean; written: unknown; hooks: unknown };

/**
 * The fan-out (see the module's comment), up to `:limit` entries. Not prepared: planned for each batch, with the
 * tables as they are (a generic plan made while `audit_entries` was small could read it all: record-plan.test.ts).
 * Answers how many entries it took, whether it held the outbox (another process fanning out: no), whether committed
 * entries wait for older transactions to end (the newest marked entry is at or past `xmin`: read backwards from the
 * index, never a scan), and the deliveries written with their webhooks (each once).
 */
const FAN_OUT = sql<{ limit: number; leaseUntil: Date; now: Date }, FanOutRow>(
  `with held as (
     select tx, entry_id from webhook_outbox where id = 1 for update skip locked
   ), snap as (
     select pg_snapshot_xmin(pg_current_snapshot()) as xmin
   ), e as materialized (
     select a.id, a.tx, a.push_id, a.kind, a.ip, a.user_agent, a.referrer, a.created_at, coalesce(a.views_used, 0) as views
     from held, snap, lateral (
       select * from audit_entries a
       where a.tx is not null and (a.tx, a.id) > (held.tx, held.entry_id) and a.tx < snap.xmin
       order by a.tx, a.id limit :limit
     ) a
   ), ev as materialized (
     select p.user_id, v.event, gen_random_uuid() as event_id, p.name_ciphertext, e.created_at,
       json_build_object('type', v.event, 'timestamp', iso_time(e.created_at), 'data', case v.event
         when 'push.created' then json_build_object(${PUSH_DATA})
         when 'push.viewed' then json_build_object(${PUSH_DATA}, 'viewer', ${VIEWER})
         else json_build_object(${PUSH_DATA}, 'reason', 'views') end)::text as facts
     from e join pushes p on p.id = e.push_id and p.user_id is not null
     join (values ('push.created'), ('push.viewed'), ('push.expired')) as v(event)
       on (e.kind = 'creation' and v.event = 'push.created')
       or (e.kind = 'view' and (v.event = 'push.viewed' or (v.event = 'push.expired' and e.views >= p.expire_after_views)))
   ), d as (
     insert into webhook_deliveries
       (id, webhook_id, event, event_id, facts, name_ciphertext, status, attempts, next_attempt_at, created_at)
     select 'msg_' || left(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 26),
       w.id, ev.event, ev.event_id, ev.facts, ev.name_ciphertext, 'pending', 0, :leaseUntil, ev.created_at
     from ev join webhooks w on w.user_id = ev.user_id and w.enabled and ev.event = any(w.events)
     returning *
   ), moved as (
     update webhook_outbox o set tx = last.tx, entry_id = last.id
     from (select tx, id from e order by tx desc, id desc limit 1) last where o.id = 1
   )
   select (select count(*) from e)::int as entries, exists (select 1 from held) as held,
     coalesce((select max(tx) from audit_entries where tx is not null) >= (select xmin from snap), false) as waiting,
     (select json_agg(row_to_json(d)) from d) as written,
     (select json_agg(row_to_json(w)) from webhooks w where w.id in (select webhook_id from d)) as hooks`,
);

const BACKLOG = sql<Record<string, never>, { n: string }>(
  `select count(*) as n from audit_entries a, webhook_outbox o
   where a.tx is not null and (a.tx, a.id) > (o.tx, o.entry_id)`,
);

/** The entries not fanned out yet (events without their deliveries), for /metrics. */
export async function outboxBacklog(db: Db): Promise<number> {
  return Number((await db.query(BACKLOG, {}))[0]!.n);
}

export interface FanOut {
  /** The entries taken. */
  taken: number;
  /** The deliveries written, each with its webhook. */
  deliveries: ClaimedDelivery[];
  /** As many entries as asked: more may be waiting. */
  full: boolean;
  /** Committed entries wait for older transactions, or another process held the outbox: try again shortly. */
  retry: boolean;
}

/** One fan-out of up to `limit` entries, their deliveries leased until `leaseUntil`. */
export async function fanOut(db: Db, limit: number, leaseUntil: Date): Promise<FanOut> {
  const [row] = await db.query(FAN_OUT, { limit, leaseUntil, now: new Date() });
  return {
    taken: row!.entries,
    deliveries: deliveriesOfHooks(row!.written, row!.hooks),
    full: row!.entries >= limit,
    retry: row!.waiting || !row!.held,
  };
}

export interface OutboxLoopOptions {
  run(): Promise<FanOut>;
  /** The deliveries of a fan-out, for the dispatcher. */
  handoff(deliveries: ClaimedDelivery[]): void;
  /** How long a wake waits for more entries to join the fan-out. */
  gatherMs: number;
  /**
   * How soon to try again when entries wait for older transactions (or another process fans out); doubled at each
   * such try in a row that found nothing, up to a second (a long transaction holds the entries back for its length).
   */
  retryMs: number;
  /** A fan-out every `pollMs` regardless (another process's entries whose process died before it fanned them out). */
  pollMs: number;
  onError(error: unknown): void;
}

export interface OutboxLoop {
  /** Marked entries were committed: fan out within `gatherMs`. */
  wake(): void;
  /** Stops, after the fan-out in progress (its deliveries are handed off). */
  stop(): Promise<void>;
}

const MAX_RETRY_MS = 1000;

/** The fan-out's schedule: one at a time, `gatherMs` after a wake, again at once while they come back full. */
export function startOutboxLoop({ run, handoff, gatherMs, retryMs, pollMs, onError }: OutboxLoopOptions): OutboxLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let due = 0;
  let running: Promise<void> | null = null;
  /** Woken while a fan-out was out: the next one within gatherMs. */
  let woken = false;
  /** Tries in a row that were told to retry and found nothing. */
  let idleRetries = 0;

  /** The next fan-out in `ms`, unless one is already due sooner. */
  function schedule(ms: number): void {
    if (stopped) return;
    const at = Date.now() + ms;
    if (timer && due <= at) return;
    if (timer) clearTimeout(timer);
    due = at;
    timer = setTimeout(() => {
      timer = null;
      void go();
    }, ms);
    timer.unref();
  }

  async function go(): Promise<void> {
    woken = false;
    let next = pollMs;
    running = (async () => {
      try {
        const out = await run();
        if (out.deliveries.length > 0) handoff(out.deliveries);
        idleRetries = out.retry && out.taken === 0 ? idleRetries + 1 : 0;
        if (out.full) next = 0;
        else if (out.retry) next = Math.min(retryMs * 2 ** Math.max(idleRetries - 1, 0), MAX_RETRY_MS);
      } catch (error) {
        onError(error);
      }
    })();
    await running;
    running = null;
    schedule(woken ? Math.min(next, gatherMs) : next);
  }

  schedule(0);
  return {
    wake() {
      if (running) woken = true;
      else schedule(gatherMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
