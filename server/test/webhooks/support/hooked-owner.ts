/** A new user with one webhook registered through the API (201): the webhook tests' usual start. */
import { createWebhook, type WebhookInput } from '@secret-push/sdk/generated';
import type { RealApi } from '../../api/support/real.js';
import { bearer, expectData } from '../../api/support/sdk.js';

export async function hookedOwner(api: RealApi, email: string, webhook: WebhookInput) {
  const owner = await api.user(email);
  const auth = bearer(owner.token);
  const hook = expectData(await createWebhook({ client: api.client, auth, body: { webhook } }), 201);
  return { owner, auth, hook };
}
