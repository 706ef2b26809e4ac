/**
 * The webhooks' outbox: the events of a request (`push.created`, `push.viewed`, and `push.expired` on a last view)
 * are its audit entry, and a dispatcher turns them into deliveries afterwards, many in one statement.
 *
 * A create or a view of an owner with an enabled webhook writes no delivery in its statement. The `creation` or
 * `view` entry that statement writes anyway is marked (`tx`, the transaction's id, and for a view the push's count of
 * views after it: Migration20270106000000_webhook_outbox); committed with the change, it is the event, and a restart
 * loses none. `fanOut` then takes the marked entries in the order of `(tx, id)`, from where `webhook_outbox` says the
 * last one left off, makes each entry's events (from the entry and its push, by the same code as every other push
 * event: push-event-facts.ts; the push name's envelope copied, opened by the sender, delivery.ts), tries each
 * delivery once (one per enabled webhook of the owner subscribed to each event: delivery.ts `firstTries`, up to
 * 200 ms; each first counted against the send budget, send-budget.ts), then in one statement writes them (those
 * answered 2xx as delivered, those the budget put off pending and due at their window, the others leased to this
 * process, which records them as their tries end) and moves `webhook_outbox` past them, all in one transaction. One process
 * fans out at a time (`for update skip locked` on that row).
 *
 * An entry is taken once no transaction that could still write one before it is running: its `tx` is below the
 * snapshot's `xmin`. Why the outbox, why try before writing and why four statements, measured:
 * docs/decisions/0006-webhook-outbox-first-tries.md.
 */
import { createHash } from 'node:crypto';
import { sql, type Db } from '../db/sql.js';
import type { ClaimWrites } from '../push/push-repository.js';
import type { PushRow } from '../push/push-tables.js';
import { made, viewerOf, type EventPush } from './push-event-facts.js';
import {
  enabledWebhooksOf,
  hookListens,
  webhooksAnswered,
  type ClaimedDelivery,
  type DeliveryRow,
} from './webhook-repository.js';

/**
 * ClaimWrites.outbox: an entry is marked when a webhook listens to its push: for a personal push an enabled personal
 * webhook of its owner, for a push of a workspace an enabled webhook of the workspace (webhook-repository.ts
 * `hookListens`).
 */
const outboxTx = (owner: string, workspace: string) =>
  `case when ${owner} is not null and (case when ${workspace} is null
       then exists (select 1 from webhooks w where w.user_id = ${owner} and w.workspace_id is null and w.enabled)
       else exists (select 1 from webhooks w where w.workspace_id = ${workspace} and w.enabled) end)
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

/**
 * The outbox's row, locked (none: another process is fanning out), with the snapshot's `xmin` and whether committed
 * entries wait for older transactions to end (the newest marked entry is at or past `xmin`: read backwards from the
 * index, never a scan). Not prepared, as the others below but the writes: planned with the tables as they are (a
 * generic plan made while `audit_entries` was small could read it all: record-plan.test.ts, outbox.test.ts).
 */
const HOLD = sql<Record<string, never>, { tx: string; entry_id: string; xmin: string; waiting: boolean }>(
  `select o.tx, o.entry_id, s.xmin,
     coalesce((select max(tx) from audit_entries where tx is not null) >= s.xmin, false) as waiting
   from webhook_outbox o, (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) s
   where o.id = 1 for update of o skip locked`,
);

/**
 * The marked entries after the outbox's place, below `xmin`, in order, each with what its events show of its push
 * (null: gone meanwhile; never the push's token or secrets).
 */
const ENTRIES = sql<{ tx: string; entryId: string; xmin: string; limit: number }>(
  `select a.id as entry_id, a.tx as entry_tx, a.kind as entry_kind, a.ip as entry_ip,
     a.user_agent as entry_user_agent, a.referrer as entry_referrer, a.created_at as entry_at,
     coalesce(a.views_used, 0) as entry_views, p.id, p.user_id, p.workspace_id, p.kind, p.name_ciphertext, p.passphrase_protected,
     p.expire_after_views, p.expires_at, p.created_at
   from (
     select * from audit_entries
     where tx is not null and (tx, id) > (:tx::xid8, :entryId::bigint) and tx < :xmin::xid8
     order by tx, id limit :limit
   ) a left join pushes p on p.id = a.push_id
   order by a.tx, a.id`,
);

/**
 * The fan-out's writes, in one statement: its deliveries (each leased to this process, or delivered when its first try
 * was answered 2xx before: `code`), the webhooks of those answered no longer failing, and the outbox moved past the
 * entries. The rows go as one JSON array (node-postgres writes a text[] parameter by escaping every element in
 * JavaScript, and the facts are JSON, full of quotes). Not prepared, as `delivered` (webhook-repository.ts): a generic
 * plan of `webhooks` made while it was small could scan it.
 */
const WRITE = sql<{
  rows: string;
  leaseUntil: Date;
  now: Date;
  answeredHooks: string[];
  tx: string;
  entryId: string;
}>(
  `with written as (
     insert into webhook_deliveries (id, webhook_id, event, event_id, facts, name_ciphertext, status, attempts,
       last_status_code, next_attempt_at, delivered_at, created_at, budget_window)
     select v.id, v.webhook_id, v.event, v.event_id, v.facts, v.name_ciphertext,
       case when v.code is null then 'pending' else 'delivered' end, case when v.code is null then 0 else 1 end,
       v.code, case when v.code is null then coalesce(v.put_off, :leaseUntil::timestamptz) end,
       case when v.code is not null then :now::timestamptz end, v.created_at, v.put_off
     from json_to_recordset(:rows::json) as v(id text, webhook_id uuid, event text, event_id uuid, facts text,
       name_ciphertext text, code int, created_at timestamptz, put_off timestamptz)
   ), recovered as (
     ${webhooksAnswered(':answeredHooks')}
   )
   update webhook_outbox set tx = :tx::xid8, entry_id = :entryId::bigint where id = 1`,
);

/**
 * A delivery's `webhook-id`, made from its entry, event and webhook: the same at every fan-out of the entry. A
 * fan-out that sent an event and then did not commit (its process died) leaves the entry to the next one, which
 * sends it again under the same id, so the endpoint can tell it is the same delivery.
 */
function outboxDeliveryId(webhookId: string, entryId: string, type: string, at: Date): string {
  const digest = createHash('sha256').update(`${webhookId}:${entryId}:${type}:${at.toISOString()}`).digest('hex');
  return `msg_${digest.slice(0, 26)}`;
}

type EntryRow = {
  entry_id: string;
  entry_tx: string;
  entry_kind: string;
  entry_ip: string;
  entry_user_agent: string;
  entry_referrer: string;
  entry_at: Date | string;
  entry_views: number;
  id: string | null;
  user_id: string | null;
  workspace_id: number | null;
  kind: PushRow['kind'];
  name_ciphertext: string | null;
  passphrase_protected: boolean;
  expire_after_views: number;
  expires_at: Date | string;
  created_at: Date | string;
};

/**
 * An entry's events, made as the change's own statement would have made them (push-event-facts.ts): the push as the
 * entry left it (its count of views then, expired by views when that was its last), a view's viewer from the entry.
 */
function eventsOf(entry: EntryRow) {
  if (entry.id === null || entry.user_id === null) return [];
  const owner = entry.user_id;
  const viewsUsed = Number(entry.entry_views);
  const at = new Date(entry.entry_at);
  const expireAfterViews = Number(entry.expire_after_views);
  const then: EventPush = {
    id: entry.id,
    kind: entry.kind,
    passphraseProtected: entry.passphrase_protected,
    expireAfterViews,
    viewsUsed,
    expiresAt: new Date(entry.expires_at),
    expired: viewsUsed >= expireAfterViews,
    createdAt: new Date(entry.created_at),
    nameCiphertext: entry.name_ciphertext,
  };
  const events = [];
  if (entry.entry_kind === 'creation') events.push(made('push.created', then, at, {}));
  if (entry.entry_kind === 'view') {
    const viewer = viewerOf({
      userId: null,
      ip: entry.entry_ip,
      userAgent: entry.entry_user_agent,
      referrer: entry.entry_referrer,
    });
    events.push(made('push.viewed', then, at, { viewer }));
    if (then.expired) events.push(made('push.expired', then, at, { reason: 'views' }));
  }
  const workspaceId = entry.workspace_id === null ? null : Number(entry.workspace_id);
  return events.map((e) => ({ ...e, userId: owner, workspaceId, at, entryId: entry.entry_id }));
}

const BACKLOG = sql<Record<string, never>, { n: string }>(
  `select count(*) as n from audit_entries a, webhook_outbox o
   where a.tx is not null and (a.tx, a.id) > (o.tx, o.entry_id)`,
);

/** The entries not fanned out yet (events without their deliveries), for /metrics. */
export async function outboxBacklog(db: Db): Promise<number> {
  return Number((await db.query(BACKLOG, {}))[0]!.n);
}

/**
 * First tries made inside the fan-out, before its writes (delivery.ts `firstTries`): the deliveries answered 2xx in
 * time are written as delivered, by the fan-out's own insert.
 */
export type FirstTry = (deliveries: ClaimedDelivery[]) => Promise<{
  /** Delivery id → status code of each first try answered 2xx in time. */
  answered: Map<string, number>;
  /** Delivery id → the window the send budget put it off to (not sent, not an attempt). */
  putOff: Map<string, Date>;
  /** Not tried: to hand to the dispatcher once the fan-out committed. */
  skipped: ClaimedDelivery[];
  /** Once the fan-out committed: records the other tries' outcomes (a try still out, as it ends). */
  rest(): Promise<void>;
}>;

export interface FanOut {
  /** The entries taken. */
  taken: number;
  /** The deliveries written, each with its webhook. */
  deliveries: ClaimedDelivery[];
  /** Deliveries for the dispatcher to send, once committed (all of them when the fan-out tried none). */
  handoff: ClaimedDelivery[];
  /** Once committed: records what the fan-out's first tries left to record. */
  rest: (() => Promise<void>) | null;
  /** As many entries as asked: more may be waiting. */
  full: boolean;
  /** Committed entries wait for older transactions, or another process held the outbox: try again shortly. */
  retry: boolean;
}

/**
 * One fan-out of up to `limit` entries, in one transaction: the outbox's row locked, the entries read with their
 * pushes, their events made (in this process), the enabled webhooks listening to them read, then with `firstTry` each delivery
 * tried once, and in one statement the deliveries written (those answered delivered, the others leased until
 * `leaseUntil`) and the outbox moved past the entries. An answer reaches the endpoint before the commit: a fan-out
 * that then fails sends its events again (at least once, under the same ids: outboxDeliveryId).
 */
export async function fanOut(db: Db, limit: number, leaseUntil: Date, firstTry?: FirstTry): Promise<FanOut> {
  return db.transaction(async (tx) => {
    const none = { taken: 0, deliveries: [], handoff: [], rest: null, full: false };
    const [held] = await tx.query(HOLD, {});
    if (!held) return { ...none, retry: true };
    const entries = (await tx.query(ENTRIES, {
      tx: held.tx,
      entryId: held.entry_id,
      xmin: held.xmin,
      limit,
    })) as EntryRow[];
    if (entries.length === 0) return { ...none, retry: held.waiting };
    const events = entries.flatMap(eventsOf);
    const hooks = events.length > 0 ? await enabledWebhooksOf(tx, events) : [];
    const pairs = events.flatMap((event) =>
      hooks.filter((h) => hookListens(h, event) && h.events.includes(event.type)).map((hook) => ({ event, hook })),
    );
    const deliveries: ClaimedDelivery[] = pairs.map(({ event, hook }) => {
      const delivery: DeliveryRow = {
        id: outboxDeliveryId(hook.id, event.entryId, event.type, event.at),
        webhookId: hook.id,
        event: event.type,
        eventId: event.eventId,
        body: null,
        facts: event.facts,
        nameCiphertext: event.nameCiphertext,
        status: 'pending',
        attempts: 0,
        lastStatusCode: null,
        lastError: null,
        nextAttemptAt: leaseUntil,
        deliveredAt: null,
        createdAt: event.at,
        budgetWindow: null,
      };
      return { delivery, hook };
    });
    const tried = firstTry && deliveries.length > 0 ? await firstTry(deliveries) : null;
    const answered = tried?.answered ?? new Map<string, number>();
    const putOff = tried?.putOff ?? new Map<string, Date>();
    const rows = deliveries.map(({ delivery: d }) => ({
      id: d.id,
      webhook_id: d.webhookId,
      event: d.event,
      event_id: d.eventId,
      facts: d.facts,
      name_ciphertext: d.nameCiphertext,
      code: answered.get(d.id) ?? null,
      created_at: d.createdAt,
      put_off: putOff.get(d.id) ?? null,
    }));
    const last = entries[entries.length - 1]!;
    await tx.query(WRITE, {
      rows: JSON.stringify(rows),
      leaseUntil,
      now: new Date(),
      answeredHooks: [
        ...new Set(deliveries.filter((d) => answered.has(d.delivery.id)).map((d) => d.delivery.webhookId)),
      ],
      tx: last.entry_tx,
      entryId: last.entry_id,
    });
    return {
      taken: entries.length,
      deliveries,
      handoff: tried ? tried.skipped : deliveries,
      rest: tried ? tried.rest : null,
      full: entries.length >= limit,
      retry: held.waiting,
    };
  });
}

export interface OutboxLoopOptions {
  run(): Promise<Pick<FanOut, 'taken' | 'handoff' | 'rest' | 'full' | 'retry'>>;
  /** The deliveries of a fan-out that it did not try, for the dispatcher. */
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
  /** Stops, after the fan-out in progress (its deliveries handed off, its tries still out recorded: at most 11 s). */
  stop(): Promise<void>;
}

const MAX_RETRY_MS = 1000;
/** How long stopping waits for the first tries still out. */
const REST_WAIT_MS = 11_000;

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
  /** The fan-outs' first tries still out after their commit, being recorded. */
  const rests = new Set<Promise<void>>();

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
        if (out.handoff.length > 0) handoff(out.handoff);
        if (out.rest) {
          const rest: Promise<void> = out
            .rest()
            .catch(onError)
            .finally(() => rests.delete(rest));
          rests.add(rest);
        }
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
      // A try still out takes at most its 10 s; one not recorded by then is sent again after its lease.
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(rests), new Promise((r) => (wait = setTimeout(r, REST_WAIT_MS)))]);
      clearTimeout(wait);
    },
  };
}
