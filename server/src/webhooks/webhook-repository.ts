/**
 * Every statement about webhooks (`webhooks`), their deliveries (`webhook_deliveries`), read-receipt choices
 * (`push_receipts`, `users.notify_owner_on_view`) and `event_owners`, the users somebody listens to (a hint the
 * one-statement view reads: listed, a view takes the transaction that queues its events; being listed with nothing
 * to send costs only that transaction), and the limits' counters (`webhook_limits`).
 */
import { sql, type Db } from '../db/sql.js';

export interface WebhookRow {
  id: string;
  userId: string;
  url: string;
  events: string[];
  description: string;
  /** Envelopes under the master key. */
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  enabled: boolean;
  failingSince: Date | null;
  disabledAt: Date | null;
  createdAt: Date;
  /** The workspace it belongs to (its pushes' events), or null: its owner's personal pushes and requests. */
  workspaceId: number | null;
}

/**
 * Whose webhooks an operation acts on: a user's personal ones (`workspaceId` null), or a workspace's (`userId` is
 * then the caller, who made it or manages it).
 */
export interface HookScope {
  userId: string;
  workspaceId: number | null;
}

/**
 * Whether `hook` receives the events of a push or request of `owner` in `workspaceId`: a personal webhook its owner's
 * personal ones only, a workspace's webhook every one of its workspace (whoever made it). The SQL of every fan-out
 * says the same (PERSONAL_HOOKS, WORKSPACE_HOOKS, EVENT_DELIVERY_CTES, outbox.ts `outboxTx`).
 */
export function hookListens(
  hook: Pick<WebhookRow, 'userId' | 'workspaceId'>,
  owner: { userId: string; workspaceId: number | null },
): boolean {
  return owner.workspaceId === null
    ? hook.workspaceId === null && hook.userId === owner.userId
    : hook.workspaceId === owner.workspaceId;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  id: string;
  webhookId: string;
  event: string;
  /** The event's id: the body's envelope is bound to it (every delivery of one event shares the body). */
  eventId: string;
  /**
   * The body as an envelope under the master key (it names the push); null when the statement of a view wrote the
   * delivery: then its `facts` and the push name's envelope (the server puts them together when it sends it).
   */
  body: string | null;
  /** The event as JSON, with an empty `data.name` (`nameCiphertext` holds the name), when `body` is null. */
  facts: string | null;
  /** The push name's envelope (`pushes.name:<push_id>`), with `facts`. */
  nameCiphertext: string | null;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  /** The window the send budget put it off to (send-budget.ts), until its next try; absent or null: none. */
  budgetWindow?: Date | null;
}

const W_COLUMNS =
  'id, user_id, url, events, description, secret, previous_secret, previous_secret_until, enabled, failing_since, disabled_at, created_at, workspace_id';
const D_COLUMNS =
  'id, webhook_id, event, event_id, body, facts, name_ciphertext, status, attempts, last_status_code, last_error, next_attempt_at, delivered_at, created_at, budget_window';

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

function webhookOf(r: Record<string, unknown>): WebhookRow {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    url: String(r.url),
    events: r.events as string[],
    description: String(r.description),
    secret: String(r.secret),
    previousSecret: (r.previous_secret as string | null) ?? null,
    previousSecretUntil: date(r.previous_secret_until),
    enabled: Boolean(r.enabled),
    failingSince: date(r.failing_since),
    disabledAt: date(r.disabled_at),
    createdAt: date(r.created_at)!,
    workspaceId: r.workspace_id === null || r.workspace_id === undefined ? null : Number(r.workspace_id),
  };
}

function deliveryOf(r: Record<string, unknown>): DeliveryRow {
  return {
    id: String(r.id),
    webhookId: String(r.webhook_id),
    event: String(r.event),
    eventId: String(r.event_id),
    body: (r.body as string | null) ?? null,
    facts: (r.facts as string | null) ?? null,
    nameCiphertext: (r.name_ciphertext as string | null) ?? null,
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
    lastError: (r.last_error as string | null) ?? null,
    nextAttemptAt: date(r.next_attempt_at),
    deliveredAt: date(r.delivered_at),
    createdAt: date(r.created_at)!,
    budgetWindow: date(r.budget_window),
  };
}

/** A delivery in a process's hands (claimed, or handed off by the statement that wrote it) and its webhook (null: deleted meanwhile). */
export type ClaimedDelivery = { delivery: DeliveryRow; hook: WebhookRow | null };

/** The deliveries a statement wrote, as EVENT_DELIVERIES_WRITTEN answers them (null: none). */
export function writtenDeliveries(result: unknown): ClaimedDelivery[] {
  return ((result ?? []) as { d: Record<string, unknown>; w: Record<string, unknown> }[]).map(({ d, w }) => ({
    delivery: deliveryOf(d),
    hook: webhookOf(w),
  }));
}

/**
 * The statement that marks webhooks answering again (`failing_since` cleared), given the parameter holding their ids:
 * the record of successes (`delivered`) and the outbox's fan-out (outbox.ts) end with it.
 */
export const webhooksAnswered = (ids: string) =>
  `update webhooks set failing_since = null where id = any(${ids}::uuid[]) and failing_since is not null`;

const ENABLED_OF = sql<{ userIds: string[]; workspaceIds: number[] }>(
  `select ${W_COLUMNS} from webhooks where enabled
     and ((user_id = any(:userIds::uuid[]) and workspace_id is null) or workspace_id = any(:workspaceIds::int[]))`,
);

/**
 * In `tx`: the enabled webhooks that may listen to these owners' events (the outbox's fan-out, outbox.ts): the
 * personal ones of the owners of personal pushes, and those of the workspaces (`hookListens` picks per event). Not
 * prepared: planned as the table is.
 */
export async function enabledWebhooksOf(
  tx: Db,
  owners: { userId: string; workspaceId: number | null }[],
): Promise<WebhookRow[]> {
  const userIds = [...new Set(owners.filter((o) => o.workspaceId === null).map((o) => o.userId))];
  const workspaceIds = [...new Set(owners.flatMap((o) => (o.workspaceId === null ? [] : [o.workspaceId])))];
  return (await tx.query(ENABLED_OF, { userIds, workspaceIds })).map(webhookOf);
}

type Id = { id: string };
/** One event's deliveries: its body sealed (`body`), or its facts and the name's envelope (DeliveryRow). */
export type DeliveryValues = {
  userId: string;
  /** The workspace of the push or request (its webhooks receive it), or null: the owner's personal webhooks. */
  workspaceId: number | null;
  event: string;
  eventId: string;
  body: string | null;
  facts: string | null;
  nameCiphertext: string | null;
  now: Date;
};

/** The webhooks an event of a personal push or request reaches, and those an event of a workspace's reaches. */
const PERSONAL_HOOKS = 'w.user_id = :userId and w.workspace_id is null';
const WORKSPACE_HOOKS = 'w.workspace_id = :workspaceId::int';

const insertDeliveriesTo = (hooks: string) => `insert into webhook_deliveries
    (id, webhook_id, event, event_id, body, facts, name_ciphertext, status, attempts, next_attempt_at, created_at)
  select 'msg_' || left(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 26),
    w.id, :event, :eventId, :body::text, :facts::text, :nameCiphertext::text, 'pending', 0, :now, :now
  from webhooks w where ${hooks} and w.enabled and :event = any(w.events)`;

/**
 * The CTE that writes events' deliveries inside a statement that changes a push: for the row of the CTE `won` (the
 * push as changed), one delivery per enabled webhook of its owner subscribed to each event given as arrays
 * (`:eventTypes`, `:eventIds`, `:eventFacts`, with the push name's envelope `:eventName`), leased to this process
 * until `:leaseUntil` (`:now` when it does not send). EVENT_DELIVERIES_WRITTEN answers them, with their webhooks:
 * the process sends them from memory once the statement committed (the dispatcher's handoff), without claiming them.
 */
export const EVENT_DELIVERY_CTES = `d as (
    insert into webhook_deliveries
      (id, webhook_id, event, event_id, facts, name_ciphertext, status, attempts, next_attempt_at, created_at)
    select 'msg_' || left(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 26),
      w.id, e.event, e.event_id, e.facts, :eventName::text, 'pending', 0, :leaseUntil, :now
    from won join webhooks w on w.enabled and ((won.workspace_id is null and w.user_id = won.user_id
        and w.workspace_id is null) or w.workspace_id = won.workspace_id)
    join unnest(:eventTypes::text[], :eventIds::uuid[], :eventFacts::text[]) as e(event, event_id, facts)
      on e.event = any(w.events)
    returning ${D_COLUMNS}
  )`;
export const EVENT_DELIVERIES_WRITTEN =
  "(select json_agg(json_build_object('d', row_to_json(d), 'w', row_to_json(w))) from d join webhooks w on w.id = d.webhook_id)";

const D_PREFIXED = D_COLUMNS.split(', ')
  .map((c) => `claimed.${c}`)
  .join(', ');
const W_PREFIXED = W_COLUMNS.split(', ')
  .map((c) => `w.${c} as w_${c}`)
  .join(', ');

type Owned = { id: string; userId: string; workspaceId: number | null };
/** A statement's webhook of the scope (HookScope): by its id, then its owner's or its workspace's. */
const IN_SCOPE = `(case when :workspaceId::int is null then user_id = :userId::uuid and workspace_id is null
  else workspace_id = :workspaceId::int end)`;
const insertDeliveriesOnce = (hooks: string) =>
  `${insertDeliveriesTo(hooks)} and not exists (select 1 from webhook_deliveries d
       where d.webhook_id = w.id and d.created_at = :now and d.event_id = :eventId) returning id`;

const S = {
  lockUser: sql<{ lockKey: string }>('select pg_advisory_xact_lock(hashtextextended(:lockKey, 0))'),
  countByUser: sql<{ userId: string }, { n: string }>(
    'select count(*) as n from webhooks where user_id = :userId and workspace_id is null',
  ),
  countByWorkspace: sql<{ workspaceId: number }, { n: string }>(
    'select count(*) as n from webhooks where workspace_id = :workspaceId',
  ),
  insert: sql<Record<string, unknown>>(
    `insert into webhooks (id, user_id, url, events, description, secret, enabled, created_at, workspace_id)
     values (:id, :userId, :url, :events::text[], :description, :secret, true, :now, :workspaceId::int)
     returning ${W_COLUMNS}`,
  ),
  listByUser: sql<{ userId: string }>(
    `select ${W_COLUMNS} from webhooks where user_id = :userId and workspace_id is null
     order by created_at desc, id desc`,
  ),
  listByWorkspace: sql<{ workspaceId: number }>(
    `select ${W_COLUMNS} from webhooks where workspace_id = :workspaceId order by created_at desc, id desc`,
  ),
  ownerOf: sql<{ id: string }, { user_id: string; workspace_id: number | null }>(
    'select user_id, workspace_id from webhooks where id = :id',
  ),
  find: sql<Owned>(`select ${W_COLUMNS} from webhooks where id = :id and ${IN_SCOPE}`),
  remove: sql<Owned>(`delete from webhooks where id = :id and ${IN_SCOPE} returning ${W_COLUMNS}`),
  rotate: sql<Owned & { secret: string; until: Date }>(
    `update webhooks set previous_secret = secret, previous_secret_until = :until, secret = :secret
     where id = :id and ${IN_SCOPE} returning ${W_COLUMNS}`,
  ),
  addOwner: sql<{ userId: string }>('insert into event_owners (user_id) values (:userId) on conflict do nothing'),
  dropIdleOwner: sql<{ userId: string }>(
    `delete from event_owners where user_id = :userId
       and not exists (select 1 from webhooks where user_id = :userId and workspace_id is null)
       and not coalesce((select notify_owner_on_view from users where id = :userId), false)
       and not exists (select 1 from push_receipts r join pushes p on p.id = r.push_id
                       where p.user_id = :userId and r.on_view and not p.expired)`,
  ),
  setReceipt: sql<{ pushId: string; onView: boolean }>(
    'insert into push_receipts (push_id, on_view) values (:pushId, :onView) on conflict (push_id) do update set on_view = excluded.on_view',
  ),
  /** Whether the owner wants a receipt for this push (its own choice, else the account's); claims the first view's. */
  receiptWanted: sql<{ pushId: string; userId: string }, { wanted: boolean | null }>(
    `select coalesce((select on_view from push_receipts where push_id = :pushId),
                     (select notify_owner_on_view from users where id = :userId), false) as wanted`,
  ),
  accountReceipts: sql<{ userId: string }, { on: boolean }>(
    'select notify_owner_on_view as on from users where id = :userId',
  ),
  setAccountReceipts: sql<{ userId: string; on: boolean }>(
    'update users set notify_owner_on_view = :on where id = :userId',
  ),
  insertDelivery: sql<{ id: string; webhookId: string; event: string; eventId: string; body: string; now: Date }>(
    `insert into webhook_deliveries (id, webhook_id, event, event_id, body, status, attempts, next_attempt_at, created_at)
     values (:id, :webhookId, :event, :eventId, :body, 'pending', 0, :now, :now)`,
  ),
  /**
   * One event's deliveries, one per enabled webhook of the owner subscribed to it, in one statement (none: nothing
   * written). The ids (`webhook-id`) are `msg_` and 26 hex digits of two random UUIDs (104 random bits).
   */
  insertDeliveries: sql<DeliveryValues, { id: string }>(`${insertDeliveriesTo(PERSONAL_HOOKS)} returning id`, {
    prepare: true,
  }),
  /** The same for an event of a workspace's push or request: one per enabled webhook of the workspace. */
  insertWorkspaceDeliveries: sql<DeliveryValues, { id: string }>(
    `${insertDeliveriesTo(WORKSPACE_HOOKS)} returning id`,
    { prepare: true },
  ),
  /**
   * The same, but none for a webhook that already has the event's delivery (an event fanned out again: its job run
   * again after its transaction committed, push-event-path.ts). The check reads the deliveries' webhook index at the
   * event's own `created_at`.
   */
  insertDeliveriesOnce: sql<DeliveryValues, { id: string }>(insertDeliveriesOnce(PERSONAL_HOOKS)),
  insertWorkspaceDeliveriesOnce: sql<DeliveryValues, { id: string }>(insertDeliveriesOnce(WORKSPACE_HOOKS)),
  deliveryCount: sql<{ webhookId: string }, { n: string }>(
    'select count(*) as n from webhook_deliveries where webhook_id = :webhookId',
  ),
  deliveryPage: sql<{ webhookId: string; limit: number; offset: number }>(
    `select ${D_COLUMNS} from webhook_deliveries where webhook_id = :webhookId
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  findDelivery: sql<{ id: string; webhookId: string }>(
    `select ${D_COLUMNS} from webhook_deliveries where id = :id and webhook_id = :webhookId`,
  ),
  /**
   * The dispatcher's claim: up to `:limit` pending deliveries due by `:now` (oldest first), skipping those another
   * process is claiming, each leased until `:leaseUntil` (its next_attempt_at: a process that dies with it in hand
   * leaves it due again then), with its webhook (null webhook columns: it was deleted).
   */
  claimDue: sql<{ now: Date; leaseUntil: Date; limit: number }>(
    `with due as (
       select id from webhook_deliveries
       where status = 'pending' and next_attempt_at <= :now
       order by next_attempt_at limit :limit
       for update skip locked
     ), claimed as (
       update webhook_deliveries d set next_attempt_at = :leaseUntil from due where d.id = due.id
       returning ${D_COLUMNS.split(', ')
         .map((c) => `d.${c}`)
         .join(', ')}
     )
     select ${D_PREFIXED}, ${W_PREFIXED} from claimed left join webhooks w on w.id = claimed.webhook_id`,
    { prepare: true },
  ),
  /** Handed-off deliveries a stopping process did not start: due now (their lease given up). */
  release: sql<{ ids: string[]; now: Date }>(
    "update webhook_deliveries set next_attempt_at = :now where id = any(:ids::text[]) and status = 'pending'",
  ),
  pendingCount: sql<Record<string, never>, { n: string }>(
    "select count(*) as n from webhook_deliveries where status = 'pending'",
  ),
  /**
   * Successes: each delivery delivered (with its status code) and their webhooks no longer failing, in one statement.
   * Not prepared: planned for each batch, with its ids and the table as it is. A prepared statement's generic plan,
   * kept per connection, could be made while the table was small (a hash join over a sequential scan) and then read
   * the whole table for every batch as it grew, until an ANALYZE (record-plan.test.ts); the planning is one per batch.
   */
  delivered: sql<{ ids: string[]; codes: number[]; webhookIds: string[]; now: Date }>(
    `with done as (
       update webhook_deliveries d set attempts = d.attempts + 1, status = 'delivered', last_status_code = v.code,
         last_error = null, next_attempt_at = null, delivered_at = :now
       from unnest(:ids::text[], :codes::int[]) as v(id, code)
       where d.id = v.id
     )
     ${webhooksAnswered(':webhookIds')}`,
  ),
  retryDelivery: sql<{ id: string; now: Date }>(
    `update webhook_deliveries set status = 'pending', next_attempt_at = :now, budget_window = null where id = :id
     returning ${D_COLUMNS}`,
  ),
  /** Deliveries the send budget put off: due at their window, not an attempt (send-budget.ts). */
  putOff: sql<{ ids: string[]; windows: Date[] }>(
    `update webhook_deliveries d set next_attempt_at = v.at, budget_window = v.at
     from unnest(:ids::text[], :windows::timestamptz[]) as v(id, at)
     where d.id = v.id and d.status = 'pending'`,
  ),
  triedDelivery: sql<{
    id: string;
    status: DeliveryStatus;
    code: number | null;
    error: string | null;
    next: Date | null;
    deliveredAt: Date | null;
  }>(
    `update webhook_deliveries set attempts = attempts + 1, status = :status, last_status_code = :code,
       last_error = :error, next_attempt_at = :next, delivered_at = coalesce(:deliveredAt, delivered_at),
       budget_window = null
     where id = :id`,
  ),
  failing: sql<Id & { now: Date }, { failing_since: Date | string; enabled: boolean }>(
    `update webhooks set failing_since = coalesce(failing_since, :now) where id = :id
     returning failing_since, enabled`,
  ),
  disable: sql<Id & { now: Date }, { user_id: string }>(
    'update webhooks set enabled = false, disabled_at = :now where id = :id and enabled returning user_id',
  ),
  forgetDeliveries: sql<{ before: Date }>(
    "delete from webhook_deliveries where created_at < :before and status <> 'pending'",
  ),
  /**
   * One call counted in its key's clock minute, unless the minute already holds `:quota` (then no row: refused,
   * nothing counted). The row's lock makes two processes' calls count one after the other.
   */
  countCall: sql<{ key: string; window: Date; quota: number }, { used: number }>(
    `insert into webhook_limits as l (key, window_start, used) values (:key, :window, 1)
     on conflict (key) do update set window_start = excluded.window_start,
       used = case when l.window_start = excluded.window_start then l.used + 1 else 1 end
     where l.window_start <> excluded.window_start or l.used < :quota
     returning used`,
  ),
  forgetLimits: sql<{ before: Date }>(
    `delete from webhook_limits
     where window_start < :before and (booked_window is null or booked_window < :before)`,
  ),
};

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;

/** The statements on webhooks in a scope (HookScope): a user's personal ones, or a workspace's. */
function scopedHooks(db: Db) {
  return {
    /**
     * In `tx`: the scope's webhooks counted under its lock (the 10-per-account, and per-workspace, limit on any
     * instance).
     */
    async lockAndCount(tx: Db, { userId, workspaceId }: HookScope): Promise<number> {
      if (workspaceId !== null) {
        await tx.query(S.lockUser, { lockKey: `webhooks:workspace:${workspaceId}` });
        return Number((await tx.query(S.countByWorkspace, { workspaceId }))[0]!.n);
      }
      await tx.query(S.lockUser, { lockKey: `webhooks:${userId}` });
      return Number((await tx.query(S.countByUser, { userId }))[0]!.n);
    },
    async insert(
      tx: Db,
      values: {
        id: string;
        userId: string;
        url: string;
        events: string[];
        description: string;
        secret: string;
        now: Date;
        workspaceId: number | null;
      },
    ): Promise<WebhookRow> {
      return webhookOf((await tx.query(S.insert, values))[0]!);
    },
    async list({ userId, workspaceId }: HookScope): Promise<WebhookRow[]> {
      const rows =
        workspaceId === null
          ? await db.query(S.listByUser, { userId })
          : await db.query(S.listByWorkspace, { workspaceId });
      return rows.map(webhookOf);
    },
    /** Who a webhook belongs to (its creator, and its workspace or null), or null: no webhook has this id. */
    async ownerOf(id: string): Promise<HookScope | null> {
      const [row] = await db.query(S.ownerOf, { id });
      return row
        ? { userId: row.user_id, workspaceId: row.workspace_id === null ? null : Number(row.workspace_id) }
        : null;
    },
    async find(id: string, scope: HookScope): Promise<WebhookRow | null> {
      const [row] = await db.query(S.find, { id, ...scope });
      return row ? webhookOf(row) : null;
    },
    async remove(id: string, scope: HookScope): Promise<WebhookRow | null> {
      return db.transaction(async (tx) => {
        const [row] = await tx.query(S.remove, { id, ...scope });
        if (row) await tx.query(S.dropIdleOwner, { userId: String(row.user_id) });
        return row ? webhookOf(row) : null;
      });
    },
    async rotate(id: string, scope: HookScope, secret: string, until: Date): Promise<WebhookRow | null> {
      const [row] = await db.query(S.rotate, { id, ...scope, secret, until });
      return row ? webhookOf(row) : null;
    },
  };
}

export function createWebhookRepository(db: Db) {
  return {
    ...scopedHooks(db),
    async addOwner(tx: Db, userId: string): Promise<void> {
      await tx.query(S.addOwner, { userId });
    },
    async setReceipt(tx: Db, pushId: string, onView: boolean): Promise<void> {
      await tx.query(S.setReceipt, { pushId, onView });
    },
    async receiptWanted(tx: Db, pushId: string, userId: string): Promise<boolean> {
      return Boolean((await tx.query(S.receiptWanted, { pushId, userId }))[0]?.wanted);
    },
    async accountReceipts(userId: string): Promise<boolean> {
      return Boolean((await db.query(S.accountReceipts, { userId }))[0]?.on);
    },
    async setAccountReceipts(userId: string, on: boolean): Promise<void> {
      await db.transaction(async (tx) => {
        await tx.query(S.setAccountReceipts, { userId, on });
        await tx.query(on ? S.addOwner : S.dropIdleOwner, { userId });
      });
    },
    async insertDelivery(
      tx: Db,
      values: { id: string; webhookId: string; event: string; eventId: string; body: string; now: Date },
    ): Promise<void> {
      await tx.query(S.insertDelivery, values);
    },
    async deliveryPage(
      webhookId: string,
      limit: number,
      offset: number,
    ): Promise<{ items: DeliveryRow[]; total: number }> {
      const [count, rows] = await Promise.all([
        db.query(S.deliveryCount, { webhookId }),
        db.query(S.deliveryPage, { webhookId, limit, offset }),
      ]);
      return { items: rows.map(deliveryOf), total: Number(count[0]!.n) };
    },
    async findDelivery(id: string, webhookId: string): Promise<DeliveryRow | null> {
      const [row] = await db.query(S.findDelivery, { id, webhookId });
      return row ? deliveryOf(row) : null;
    },
    /** The dispatcher's claim (S.claimDue): the deliveries leased until `leaseUntil`, each with its webhook. */
    async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
      return (await db.query(S.claimDue, { now, leaseUntil, limit })).map((row) => ({
        delivery: deliveryOf(row),
        hook:
          row.w_id === null || row.w_id === undefined
            ? null
            : webhookOf(Object.fromEntries(W_COLUMNS.split(', ').map((c) => [c, row[`w_${c}`]]))),
      }));
    },
    /** Gives up the lease of deliveries this process will not send: due at `now`. */
    async release(ids: string[], now: Date): Promise<void> {
      if (ids.length > 0) await db.query(S.release, { ids, now });
    },
    /** Deliveries still to send (due now, later, or in hand), of every webhook. */
    async pendingCount(): Promise<number> {
      return Number((await db.query(S.pendingCount, {}))[0]!.n);
    },
    /** Successes (distinct deliveries), in one statement. */
    async delivered(done: { id: string; webhookId: string; code: number }[], now: Date): Promise<void> {
      if (done.length === 0) return;
      await db.query(S.delivered, {
        ids: done.map((d) => d.id),
        codes: done.map((d) => d.code),
        webhookIds: [...new Set(done.map((d) => d.webhookId))],
        now,
      });
    },
    /**
     * In `tx`: the deliveries of one event to the subscribed webhooks listening to it (the owner's personal ones, or
     * its workspace's: `hookListens`), in one statement; their ids.
     */
    async insertDeliveries(tx: Db, values: DeliveryValues): Promise<string[]> {
      const statement = values.workspaceId === null ? S.insertDeliveries : S.insertWorkspaceDeliveries;
      return (await tx.query(statement, values)).map((r) => r.id);
    },
    async insertDeliveriesOnce(tx: Db, values: DeliveryValues): Promise<string[]> {
      const statement = values.workspaceId === null ? S.insertDeliveriesOnce : S.insertWorkspaceDeliveriesOnce;
      return (await tx.query(statement, values)).map((r) => r.id);
    },
    /** Deliveries the send budget put off, each due at its window (not an attempt). */
    async putOff(deliveries: { id: string; until: Date }[]): Promise<void> {
      if (deliveries.length === 0) return;
      await db.query(S.putOff, { ids: deliveries.map((d) => d.id), windows: deliveries.map((d) => d.until) });
    },
    async retryDelivery(tx: Db, id: string, now: Date): Promise<DeliveryRow> {
      return deliveryOf((await tx.query(S.retryDelivery, { id, now }))[0]!);
    },
    /** One try's outcome. */
    async tried(
      tx: Db,
      id: string,
      outcome: {
        status: DeliveryStatus;
        code: number | null;
        error: string | null;
        next: Date | null;
        deliveredAt: Date | null;
      },
    ): Promise<void> {
      await tx.query(S.triedDelivery, { id, ...outcome });
    },
    /** Marks the webhook failing (since its first failure after a success); when it started failing, and whether on. */
    async failing(webhookId: string, now: Date): Promise<{ since: Date; enabled: boolean } | null> {
      const [row] = await db.query(S.failing, { id: webhookId, now });
      return row ? { since: new Date(row.failing_since), enabled: row.enabled } : null;
    },
    /** Disables a webhook; its owner, or null when it was already disabled (or is gone). */
    async disable(tx: Db, webhookId: string, now: Date): Promise<string | null> {
      return (await tx.query(S.disable, { id: webhookId, now }))[0]?.user_id ?? null;
    },
    async forgetDeliveries(before: Date): Promise<void> {
      await db.query(S.forgetDeliveries, { before });
    },
  };
}

/** The limits' counters (`webhook_limits`): the calls that send on demand, and forgetting past windows. */
export function createLimitRepository(db: Db) {
  return {
    /** Counts a call of `key` in the clock minute `window`: false (nothing counted) when it already holds `quota`. */
    async countCall(key: string, window: Date, quota: number): Promise<boolean> {
      return (await db.query(S.countCall, { key, window, quota })).length > 0;
    },
    /** Forgets the counters whose window began before `before` and that hold no booking from then on. */
    async forget(before: Date): Promise<void> {
      await db.query(S.forgetLimits, { before });
    },
  };
}

export type LimitRepository = ReturnType<typeof createLimitRepository>;
