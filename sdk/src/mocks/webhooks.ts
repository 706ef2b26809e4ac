/**
 * Webhooks in the stateful mock, by the server's rules: at most 10 per user, the URL absolute http(s) without
 * credentials, 1 to 11 different events, a `whsec_` secret shown once, a rotation, another user's webhook answered
 * 404, test events and redeliveries limited per account and clock minute (429, `WEBHOOK_CALL_LIMITS`). The mock
 * sends nothing over the network: a test event or a retry is recorded as a `pending` delivery, so an app can show its
 * delivery log. Kept in memory, per mock. A webhook is a user's (personal) or a workspace's (issue 41: at most 10 per
 * workspace, managed by whoever manages the workspace; ./webhook-routes.ts checks who that is).
 */
import type { Webhook, WebhookCreated, WebhookDelivery, WebhookEventType } from '../generated/types.gen.js';
import {
  ApiError,
  minuteOf,
  validationFailed,
  WEBHOOK_CALL_LIMITS,
  WEBHOOK_EVENTS,
  webhookCallRefused,
  type WebhookCall,
} from '@secret-push/rules';

const MAX_WEBHOOKS = 10;
const EVENTS = WEBHOOK_EVENTS;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

interface Stored extends Webhook {
  email: string;
  deliveries: WebhookDelivery[];
}

const bytes = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n));
const newSecret = () => `whsec_${btoa(String.fromCharCode(...bytes(32)))}`;
const newMessageId = () => `msg_${[...bytes(26)].map((b) => BASE62[b % 62]).join('')}`;
const notFound = () => new ApiError('not_found', 'No webhook of yours has this id.');
const record = ({ email: _email, deliveries: _deliveries, ...hook }: Stored): Webhook => hook;

/** Whose webhooks a call acts on: a user's personal ones (`workspaceId` null) or a workspace's. */
export interface MockHookScope {
  email: string;
  workspaceId: number | null;
}

const inScope = (hook: Stored, { email, workspaceId }: MockHookScope) =>
  workspaceId === null ? hook.workspace_id === null && hook.email === email : hook.workspace_id === workspaceId;

/** The new webhook's fields from a request body (400 without `webhook`, else 422 per field). */
function readInput(body: unknown): { url: string; events: WebhookEventType[]; description: string } {
  const input = (body as { webhook?: unknown } | null)?.webhook;
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new ApiError('bad_request', 'The request body must be a JSON object with a "webhook" object.');
  }
  const { url, events, description } = input as Record<string, unknown>;
  const fields: Record<string, string[]> = {};
  let parsed: URL | null;
  try {
    parsed = typeof url === 'string' && url.length <= 2048 ? new URL(url) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol)) {
    fields.url = ['must be an absolute http(s) URL of at most 2048 characters'];
  } else if (parsed.username || parsed.password) fields.url = ['must not hold a user name or password'];
  if (
    !Array.isArray(events) ||
    events.length < 1 ||
    events.length > EVENTS.length ||
    new Set(events).size !== events.length ||
    events.some((e) => !EVENTS.includes(e as WebhookEventType))
  ) {
    fields.events = [`must list 1 to ${EVENTS.length} different events of ${EVENTS.join(', ')}`];
  }
  if (description !== undefined && (typeof description !== 'string' || description.length > 200)) {
    fields.description = ['must be a text of at most 200 characters'];
  }
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
  return { url: url as string, events: events as WebhookEventType[], description: (description as string) ?? '' };
}

export class MockWebhooks {
  private readonly hooks = new Map<string, Stored>();
  /** Test events and redeliveries counted per account and call: the minute and the calls in it. */
  private readonly calls = new Map<string, { minute: number; used: number }>();

  /** Counts a limited call, or throws 429 past its limit (nothing counted then). */
  private count(call: WebhookCall, email: string, now: number): void {
    const key = `${call}:${email}`;
    const minute = minuteOf(now);
    const seen = this.calls.get(key);
    const used = seen?.minute === minute ? seen.used : 0;
    const { perMinute } = WEBHOOK_CALL_LIMITS[call];
    if (used >= perMinute) throw webhookCallRefused(call, perMinute, now);
    this.calls.set(key, { minute, used: used + 1 });
  }

  create(scope: MockHookScope, body: unknown, now: number): WebhookCreated {
    const input = readInput(body);
    if (this.list(scope).length >= MAX_WEBHOOKS) {
      const whose = scope.workspaceId === null ? 'an account' : 'a workspace';
      throw validationFailed({ base: [`${whose} may have at most ${MAX_WEBHOOKS} webhooks`] });
    }
    const hook: Stored = {
      id: globalThis.crypto.randomUUID(),
      ...input,
      enabled: true,
      failing_since: null,
      disabled_at: null,
      created_at: new Date(now).toISOString(),
      workspace_id: scope.workspaceId,
      email: scope.email,
      deliveries: [],
    };
    this.hooks.set(hook.id, hook);
    return { ...record(hook), secret: newSecret() };
  }

  list(scope: MockHookScope): Webhook[] {
    return [...this.hooks.values()]
      .filter((h) => inScope(h, scope))
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .map(record);
  }

  /** Who the webhook `id` belongs to, or null: no webhook has this id. */
  ownerOf(id: string): MockHookScope | null {
    const hook = this.hooks.get(id);
    return hook ? { email: hook.email, workspaceId: hook.workspace_id } : null;
  }

  private owned(scope: MockHookScope, id: string): Stored {
    const hook = this.hooks.get(id);
    if (!hook || !inScope(hook, scope)) throw notFound();
    return hook;
  }

  get(scope: MockHookScope, id: string): Webhook {
    return record(this.owned(scope, id));
  }

  remove(scope: MockHookScope, id: string): Webhook {
    const hook = this.owned(scope, id);
    this.hooks.delete(id);
    return record(hook);
  }

  rotate(scope: MockHookScope, id: string, now: number) {
    const hook = this.owned(scope, id);
    return {
      ...record(hook),
      secret: newSecret(),
      previous_secret_expires_at: new Date(now + 86_400_000).toISOString(),
    };
  }

  test(scope: MockHookScope, id: string, now: number): WebhookDelivery {
    const hook = this.owned(scope, id);
    this.count('test', scope.email, now);
    const at = new Date(now).toISOString();
    const delivery: WebhookDelivery = {
      id: newMessageId(),
      event: 'webhook.test',
      status: 'pending',
      attempts: 0,
      last_status_code: null,
      last_error: null,
      next_attempt_at: at,
      delivered_at: null,
      created_at: at,
    };
    hook.deliveries.unshift(delivery);
    return { ...delivery };
  }

  deliveries(scope: MockHookScope, id: string): WebhookDelivery[] {
    return this.owned(scope, id).deliveries.map((d) => ({ ...d }));
  }

  retry(scope: MockHookScope, id: string, deliveryId: string, now: number): WebhookDelivery {
    const delivery = this.owned(scope, id).deliveries.find((d) => d.id === deliveryId);
    if (!delivery) throw new ApiError('not_found', 'This webhook has no delivery with this id.');
    this.count('redeliver', scope.email, now);
    Object.assign(delivery, { status: 'pending', next_attempt_at: new Date(now).toISOString() });
    return { ...delivery };
  }

  /** A deleted workspace's (deleteWorkspace): they go with it. */
  dropWorkspace(workspaceId: number): void {
    for (const [id, item] of this.hooks) if (item.workspace_id === workspaceId) this.hooks.delete(id);
  }

  reset(): void {
    this.hooks.clear();
    this.calls.clear();
  }
}
