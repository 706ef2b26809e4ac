/**
 * The events a webhook may subscribe to, as the contract lists them (the `WebhookEventType` schema): the server's
 * pages and the stateful mock read them here rather than keeping copies.
 */
import { WebhookEventTypeSchema } from './generated/schemas.gen.js';
import type { WebhookEventType } from './generated/types.gen.js';

/** Every event, in the contract's order. */
export const WEBHOOK_EVENTS: readonly WebhookEventType[] = WebhookEventTypeSchema.enum;

/** The events an owner chooses from on a page (`webhook.test` is sent on request only). */
export const CHOOSABLE_WEBHOOK_EVENTS: readonly WebhookEventType[] = WEBHOOK_EVENTS.filter((e) => e !== 'webhook.test');
