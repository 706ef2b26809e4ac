/**
 * What an owner does with webhooks (the `webhooks` operations and the account page): register (the URL checked for
 * server-side request forgery, at most 10 per account, the secret shown once and kept as an envelope), list, show,
 * delete, rotate the secret (the old one signs too for 24 hours), send a test event, list the deliveries and queue
 * one again (those two limited per account and minute, counted in PostgreSQL: 429 past them). Another account's
 * webhook is answered as an unknown one (404).
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
import type { DeliveryRow, LimitRepository, WebhookRepository, WebhookRow } from './webhook-repository.js';

const MAX_WEBHOOKS = 10;
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface WebhookService {
  create(userId: string, input: WebhookInput, now?: Date): Promise<Webhook & { secret: string }>;
  list(userId: string): Promise<Webhook[]>;
  get(userId: string, id: string): Promise<Webhook>;
  remove(userId: string, id: string): Promise<Webhook>;
  rotate(
    userId: string,
    id: string,
    now?: Date,
  ): Promise<Webhook & { secret: string; previous_secret_expires_at: string }>;
  test(userId: string, id: string, now?: Date): Promise<WebhookDelivery>;
  deliveries(userId: string, id: string, page: number): Promise<{ items: WebhookDelivery[]; total: number }>;
  retry(userId: string, id: string, deliveryId: string, now?: Date): Promise<WebhookDelivery>;
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
  async function owned(userId: string, id: string): Promise<WebhookRow> {
    const row = UUID.test(id) ? await repo.find(id, userId) : null;
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
    async create(userId, input, now = new Date()) {
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
        if ((await repo.lockAndCount(tx, userId)) >= MAX_WEBHOOKS) {
          throw invalid('base', `an account may have at most ${MAX_WEBHOOKS} webhooks`);
        }
        const made = await repo.insert(tx, {
          id,
          userId,
          url: input.url,
          events,
          description,
          secret: keyring.encryptText(secret, secretContext(id)),
          now,
        });
        await repo.addOwner(tx, userId);
        return made;
      });
      return { ...webhookRecord(row), secret };
    },

    async list(userId) {
      return (await repo.list(userId)).map(webhookRecord);
    },

    async get(userId, id) {
      return webhookRecord(await owned(userId, id));
    },

    async remove(userId, id) {
      const row = UUID.test(id) ? await repo.remove(id, userId) : null;
      if (!row) throw notFound();
      return webhookRecord(row);
    },

    async rotate(userId, id, now = new Date()) {
      await owned(userId, id);
      const secret = newWebhookSecret();
      const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
      const row = await repo.rotate(id, userId, keyring.encryptText(secret, secretContext(id)), until);
      if (!row) throw notFound();
      return { ...webhookRecord(row), secret, previous_secret_expires_at: until.toISOString() };
    },

    async test(userId, id, now = new Date()) {
      const hook = await owned(userId, id);
      await counted('test', userId, now);
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

    async deliveries(userId, id, page) {
      const hook = await owned(userId, id);
      const result = await repo.deliveryPage(hook.id, PAGE_SIZE, (page - 1) * PAGE_SIZE);
      return { items: result.items.map(deliveryRecord), total: result.total };
    },

    async retry(userId, id, deliveryId, now = new Date()) {
      const hook = await owned(userId, id);
      const found = /^msg_[A-Za-z0-9]{26}$/.test(deliveryId) ? await repo.findDelivery(deliveryId, hook.id) : null;
      if (!found) throw new ApiError('not_found', 'This webhook has no delivery with this id.');
      await counted('redeliver', userId, now);
      const row = await repo.retryDelivery(db, found.id, now);
      wake();
      return deliveryRecord(row);
    },

    receipts: (userId) => repo.accountReceipts(userId),

    async setReceipts(userId, on) {
      if (on && !receipts) throw invalid('notify_owner_on_view', readReceiptsUnavailable(env));
      await repo.setAccountReceipts(userId, on);
    },
  };
}
