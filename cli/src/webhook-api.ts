/**
 * The webhook operations the CLI needs, through the generated functions (`@secret-push/sdk/generated`) on the
 * client's own generated client: the facade of this SDK version has no webhook methods yet (issue 39 adds them,
 * with the same names: `client.createWebhook(…)` etc. can then replace this file). Failures become the SDK's typed
 * errors, as the facade's would.
 */
import {
  AuthenticationError,
  BadRequestError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  type SecretPushClient,
  SecretPushError,
  ServerError,
  ValidationError,
  type Webhook,
  type WebhookEventType,
} from '@secret-push/sdk';
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  testWebhook,
  type WebhookCreated,
  type WebhookDelivery,
} from '@secret-push/sdk/generated';

interface Result<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

function failure(response: Response, body: unknown): SecretPushError {
  const error = (typeof body === 'object' && body !== null ? body : {}) as {
    error?: string;
    code?: string;
    errors?: Record<string, string[]>;
  };
  const status = response.status;
  const message = `${status}${error.code ? ` ${error.code}` : ''}: ${error.error ?? response.statusText}`;
  const init = { status, code: error.code, body, requestId: response.headers.get('X-Request-Id') ?? undefined };
  if (status === 400) return new BadRequestError(message, init);
  if (status === 401) return new AuthenticationError(message, init);
  if (status === 403) return new ForbiddenError(message, init);
  if (status === 404) return new NotFoundError(message, init);
  if (status === 422) return new ValidationError(message, { ...init, errors: error.errors ?? {} });
  if (status === 429) return new RateLimitError(message, init);
  return new ServerError(message, init);
}

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response) throw new NetworkError('network error: no response from the server', { cause: error });
  if (!response.ok) throw failure(response, error);
  return data as T;
}

export function webhookApi(client: SecretPushClient) {
  const raw = client.raw;
  return {
    createWebhook: (input: { url: string; events: WebhookEventType[]; description?: string }) =>
      unwrap<WebhookCreated>(createWebhook({ client: raw, body: { webhook: input } })),
    listWebhooks: async () => (await unwrap<{ webhooks: Webhook[] }>(listWebhooks({ client: raw }))).webhooks,
    deleteWebhook: (id: string) => unwrap<Webhook>(deleteWebhook({ client: raw, path: { id } })),
    testWebhook: (id: string) => unwrap<WebhookDelivery>(testWebhook({ client: raw, path: { id } })),
  };
}
