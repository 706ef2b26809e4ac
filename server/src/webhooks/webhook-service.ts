/**
 * What an owner does with webhooks (the `webhooks` operations and the account page): register (the URL checked for
 * server-side request forgery, at most 10 per account, the secret shown once and kept as an envelope), list, show,
 * delete, rotate the secret (the old one signs too for 24 hours), send a test event, list the deliveries and queue
 * one again (those two limited per account and minute, counted in PostgreSQL: 429 past them). Another account's
 * webhook is answered as an unknown one (404). Each operation acts in a scope: a user's personal webhooks (given as
 * the user's id), or a workspace's (`HookScope`, once the caller's right to manage them was checked: the webhook
 * handlers, http/handlers/webhook-scope.ts).
 */
import type {
  Webhook,
  WebhookDelivery,
  WebhookEvent,
  WebhookEventType,
  WebhookInput,
} from '@secret-push/sdk/generated';
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  minuteOf,
  PAGE_SIZE,
  readReceiptsUnavailable,
  webhookCallRefused,
  type ServerEnv,
  type WebhookCall,
} from '@secret-push/rules';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import { sealEvent } from './push-events.js';
import { secretContext } from './delivery.js';
import { newMessageId, newWebhookSecret } from './signing.js';
import { checkTarget, TargetRefused, type TargetRules } from './targets.js';
import type { DeliveryRow, HookScope, LimitRepository, WebhookRepository, WebhookRow } from './webhook-repository.js';

const MAX_WEBHOOKS = 10;

/** Whose webhooks: a user's personal ones (the user's id), or a scope (HookScope, a workspace's). */
type HookOwner = string | HookScope;
const scopeOf = (owner: HookOwner): HookScope =>
  typeof owner === 'string' ? { userId: owner, workspaceId: null } : owner;
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface WebhookService {
  /** Registers a webhook in the scope (its `workspace_id` field is the handler's to read: the scope says it). */
  create(owner: HookOwner, input: WebhookInput, now?: Date): Promise<Webhook & { secret: string }>;
  list(owner: HookOwner): Promise<Webhook[]>;
  get(owner: HookOwner, id: string): Promise<Webhook>;
  remove(owner: HookOwner, id: string): Promise<Webhook>;
  rotate(
    owner: HookOwner,
    id: string,
    now?: Date,
  ): Promise<Webhook & { secret: string; previous_secret_expires_at: string }>;
  test(owner: HookOwner, id: string, now?: Date): Promise<WebhookDelivery>;
  deliveries(owner: HookOwner, id: string, page: number): Promise<{ items: WebhookDelivery[]; total: number }>;
  retry(owner: HookOwner, id: string, deliveryId: string, now?: Date): Promise<WebhookDelivery>;
  /** Who the webhook `id` belongs to (its creator and workspace), or null: none has this id (or it is no id). */
  ownerOf(id: string): Promise<HookScope | null>;
  /** The account's read-receipt setting (the account page). */
  receipts(userId: string): Promise<boolean>;
  setReceipts(userId: string, on: boolean): Promise<void>;
}

function webhookRecord(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEventType[],
    description: row.description,
    enabled: row.enabled,
    failing_since: row.failingSince?.toISOString() ?? null,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    workspace_id: row.workspaceId,
  };
}

function deliveryRecord(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    event: row.event as WebhookEventType,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    next_attempt_at: row.status === 'pending' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    delivered_at: row.deliveredAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

const notFound = () => new ApiError('not_found', 'No webhook of yours has this id.');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function invalid(field: string, message: string): ApiError {
  return new ApiError('validation_failed', `${field}: ${message}`, { fields: { [field]: [message] } });
}

export interface WebhookServiceDeps {
  db: Db;
  repo: WebhookRepository;
  /** The counters of the calls that send on demand (test events, redeliveries). */
  limits: LimitRepository;
  keyring: Keyring;
  /** Wakes this process's dispatcher (a delivery was committed). */
  wake: () => void;
  rules: TargetRules;
  /** Read receipts are offered (an SMTP relay). */
  receipts: boolean;
  /** Test events and redeliveries an account may ask for a clock minute (0: no limit). */
  callLimits: Record<WebhookCall, number>;
  /** Where the server runs: a refusal of read receipts names the setting, outside production with the line. */
  env?: ServerEnv;
}

export function createWebhookService({
  db,
  repo,
  limits,
  keyring,
  wake,
  rules,
  receipts,
  callLimits,
  env,
}: WebhookServiceDeps): WebhookService {
  async function owned(owner: HookOwner, id: string): Promise<WebhookRow> {
    const row = UUID.test(id) ? await repo.find(id, scopeOf(owner)) : null;
    if (!row) throw notFound();
    return row;
  }

  /** Counts a call that sends on demand (`test`, `redeliver`) in the account's minute; 429 past its limit. */
  async function counted(call: WebhookCall, userId: string, now: Date): Promise<void> {
    const perMinute = callLimits[call];
    if (perMinute === 0) return;
    const window = new Date(minuteOf(now.getTime()));
    if (!(await limits.countCall(`${call}:${userId}`, window, perMinute))) {
      throw webhookCallRefused(call, perMinute, now.getTime());
    }
  }

  return {
    async create(owner, input, now = new Date()) {
      const scope = scopeOf(owner);
      const { userId } = scope;
      const events = [...new Set(input.events)];
      const description = (input.description ?? '').trim();
      try {
        await checkTarget(input.url, rules);
      } catch (error) {
        if (error instanceof TargetRefused) throw invalid('url', error.reason);
        throw error;
      }
      const id = randomUUID();
      const secret = newWebhookSecret();
      const row = await db.transaction(async (tx) => {
        if ((await repo.lockAndCount(tx, scope)) >= MAX_WEBHOOKS) {
          const whose = scope.workspaceId === null ? 'an account' : 'a workspace';
          throw invalid('base', `${whose} may have at most ${MAX_WEBHOOKS} webhooks`);
        }
        const made = await repo.insert(tx, {
          id,
          userId,
          url: input.url,
          events,
          description,
          secret: keyring.encryptText(secret, secretContext(id)),
          now,
          workspaceId: scope.workspaceId,
        });
        // A workspace's webhooks are found by its pushes' views themselves (push/repository/retrieve.ts).
        if (scope.workspaceId === null) await repo.addOwner(tx, userId);
        return made;
      });
      return { ...webhookRecord(row), secret };
    },

    async list(owner) {
      return (await repo.list(scopeOf(owner))).map(webhookRecord);
    },

    async get(owner, id) {
      return webhookRecord(await owned(owner, id));
    },

    async remove(owner, id) {
      const row = UUID.test(id) ? await repo.remove(id, scopeOf(owner)) : null;
      if (!row) throw notFound();
      return webhookRecord(row);
    },

    async rotate(owner, id, now = new Date()) {
      await owned(owner, id);
      const secret = newWebhookSecret();
      const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
      const row = await repo.rotate(id, scopeOf(owner), keyring.encryptText(secret, secretContext(id)), until);
      if (!row) throw notFound();
      return { ...webhookRecord(row), secret, previous_secret_expires_at: until.toISOString() };
    },

    async test(owner, id, now = new Date()) {
      const hook = await owned(owner, id);
      await counted('test', scopeOf(owner).userId, now);
      const deliveryId = newMessageId();
      const { eventId, body } = sealEvent(keyring, {
        type: 'webhook.test',
        timestamp: now.toISOString(),
        data: { webhook_id: hook.id },
      } as WebhookEvent);
      await repo.insertDelivery(db, { id: deliveryId, webhookId: hook.id, event: 'webhook.test', eventId, body, now });
      wake();
      return deliveryRecord((await repo.findDelivery(deliveryId, hook.id))!);
    },

    async deliveries(owner, id, page) {
      const hook = await owned(owner, id);
      const result = await repo.deliveryPage(hook.id, PAGE_SIZE, (page - 1) * PAGE_SIZE);
      return { items: result.items.map(deliveryRecord), total: result.total };
    },

    async retry(owner, id, deliveryId, now = new Date()) {
      const hook = await owned(owner, id);
      const found = /^msg_[A-Za-z0-9]{26}$/.test(deliveryId) ? await repo.findDelivery(deliveryId, hook.id) : null;
      if (!found) throw new ApiError('not_found', 'This webhook has no delivery with this id.');
      await counted('redeliver', scopeOf(owner).userId, now);
      const row = await repo.retryDelivery(db, found.id, now);
      wake();
      return deliveryRecord(row);
    },

    ownerOf: async (id) => (UUID.test(id) ? repo.ownerOf(id) : null),

    receipts: (userId) => repo.accountReceipts(userId),

    async setReceipts(userId, on) {
      if (on && !receipts) throw invalid('notify_owner_on_view', readReceiptsUnavailable(env));
      await repo.setAccountReceipts(userId, on);
    },
  };
}
