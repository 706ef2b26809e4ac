/**
 * The webhook methods of the client (issue 39: the facade covers every operation a user has): register, list, read,
 * delete, rotate the secret, send a test event, read the delivery log, and send a delivery again. Built on the
 * client's one sender (timeouts, typed errors, retries of the safe calls) in ./client.ts. Receiving a delivery is
 * ./webhooks.ts (`verifyWebhook`).
 */
import {
  createWebhook as genCreateWebhook,
  deleteWebhook as genDeleteWebhook,
  getWebhook as genGetWebhook,
  listWebhookDeliveries as genListWebhookDeliveries,
  listWebhooks as genListWebhooks,
  retryWebhookDelivery as genRetryWebhookDelivery,
  rotateWebhookSecret as genRotateWebhookSecret,
  testWebhook as genTestWebhook,
} from './generated/sdk.gen.js';
import type {
  Webhook,
  WebhookCreated,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookInput,
  WebhookList,
  WebhookRotated,
} from './generated/types.gen.js';
import { iteratePages, type Page, pageFromResponse } from './pagination.js';
import type { GeneratedCall, PagedList, RequestOptions, Retry } from './calls.js';

type Send = <T>(
  call: GeneratedCall,
  opts: RequestOptions | undefined,
  retry: Retry,
) => Promise<{ data: T; response: Response }>;

export interface WebhookMethods {
  /**
   * Registers an HTTPS endpoint for `events` of the caller's pushes and requests (at most 10 per account). The result's
   * `secret` (`whsec_…`) is shown this once: give it to `verifyWebhook` at the receiver. Not retried automatically (a
   * retry could register a second webhook). With `workspace_id` (its owner or an admin), a workspace's webhook: the
   * events of every push made in that workspace, by any member.
   */
  createWebhook(input: WebhookInput, options?: RequestOptions): Promise<WebhookCreated>;
  /**
   * The caller's personal webhooks, newest first, never their secrets; with `workspaceId`, that workspace's (for its
   * owner and admins).
   */
  listWebhooks(options?: RequestOptions & { workspaceId?: number }): Promise<Webhook[]>;
  /** One of the caller's webhooks, or of a workspace they manage (404 `NotFoundError` for anyone else's). */
  getWebhook(id: string, options?: RequestOptions): Promise<Webhook>;
  /** Deletes a webhook at once with its delivery log; answers it as it was. */
  deleteWebhook(id: string, options?: RequestOptions): Promise<Webhook>;
  /**
   * A new signing secret, shown this once; the old one still signs for 24 hours (`previous_secret_expires_at`), so
   * a receiver can switch without losing deliveries. Not retried automatically (a retry would rotate again).
   */
  rotateWebhookSecret(id: string, options?: RequestOptions): Promise<WebhookRotated>;
  /** Queues a signed `webhook.test` event to the endpoint (202); answers its delivery. Not retried automatically. */
  testWebhook(id: string, options?: RequestOptions): Promise<WebhookDelivery>;
  /** The webhook's delivery log, newest first, over all pages; `webhookDeliveries.page(id, n)` reads one page. */
  webhookDeliveries: PagedList<WebhookDelivery, [webhookId: string]>;
  /** Sends a delivery again now, with the same `webhook-id`; answers it. Not retried automatically. */
  retryWebhookDelivery(webhookId: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery>;
}

export function webhookMethods(send: Send, baseUrl: string): WebhookMethods {
  const deliveriesPage = async (id: string, n: number, opts?: RequestOptions): Promise<Page<WebhookDelivery>> => {
    const { data, response } = await send<WebhookDeliveryList>(
      (x) => genListWebhookDeliveries({ ...x, path: { id }, query: { page: n } }),
      opts,
      'safe',
    );
    return pageFromResponse(data.deliveries, n, response.headers, baseUrl);
  };
  return {
    async createWebhook(input, opts) {
      return (await send<WebhookCreated>((x) => genCreateWebhook({ ...x, body: { webhook: input } }), opts, 'never'))
        .data;
    },
    async listWebhooks(opts) {
      const { workspaceId, ...rest } = opts ?? {};
      const query = workspaceId === undefined ? undefined : { workspace_id: String(workspaceId) };
      return (await send<WebhookList>((x) => genListWebhooks({ ...x, query }), rest, 'safe')).data.webhooks;
    },
    async getWebhook(id, opts) {
      return (await send<Webhook>((x) => genGetWebhook({ ...x, path: { id } }), opts, 'safe')).data;
    },
    async deleteWebhook(id, opts) {
      // Retried on 429/503 like a read: deleting twice deletes once (a repeat after a lost answer is a 404).
      return (await send<Webhook>((x) => genDeleteWebhook({ ...x, path: { id } }), opts, 'safe')).data;
    },
    async rotateWebhookSecret(id, opts) {
      return (await send<WebhookRotated>((x) => genRotateWebhookSecret({ ...x, path: { id } }), opts, 'never')).data;
    },
    async testWebhook(id, opts) {
      return (await send<WebhookDelivery>((x) => genTestWebhook({ ...x, path: { id } }), opts, 'never')).data;
    },
    webhookDeliveries: Object.assign(
      (id: string, opts?: RequestOptions) => iteratePages((n) => deliveriesPage(id, n, opts)),
      { page: deliveriesPage },
    ),
    async retryWebhookDelivery(webhookId, deliveryId, opts) {
      return (
        await send<WebhookDelivery>(
          (x) => genRetryWebhookDelivery({ ...x, path: { id: webhookId, delivery_id: deliveryId } }),
          opts,
          'never',
        )
      ).data;
    },
  };
}
