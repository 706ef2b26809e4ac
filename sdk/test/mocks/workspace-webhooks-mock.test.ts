/**
 * A workspace's webhooks in the stateful mock (issue 41), through the SDK facade, every answer checked against the
 * contract: its owner registers one (`workspace_id`) and lists it with `listWebhooks({ workspaceId })`, never in the
 * personal list; another user gets 403 naming the workspace and 404 for its webhook, nothing changed; the
 * workspace's API key (with `webhooks:manage`) lists and registers the workspace's webhooks without naming it and
 * finds no personal webhook. The same rules as the server (server/src/http/handlers/webhook-scope.ts).
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient, ForbiddenError, NotFoundError, ValidationError } from '../../src/index.js';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';

const server = setupServer();
const checker = specCheckingFetch();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

describe("stateful mock: a workspace's webhooks", () => {
  it('its owner and its key manage them; anyone else gets 403 or 404 and nothing changes', async () => {
    const baseUrl = 'http://mock-wshooks.test';
    const mock = createMockServerHandlers({ baseUrl });
    server.use(...mock.handlers);
    const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const other = as(mock.users[1]!.token);
    const { id: workspaceId } = await owner.createWorkspace('Acme');
    const url = 'https://hooks.example.org/team';

    const hook = await owner.createWebhook({ url, events: ['push.created'], workspace_id: workspaceId });
    expect(hook.workspace_id).toBe(workspaceId);
    const personal = await owner.createWebhook({ url, events: ['push.viewed'] });
    expect(personal.workspace_id).toBeNull();
    expect((await owner.listWebhooks({ workspaceId })).map((h) => h.id)).toEqual([hook.id]);
    expect((await owner.listWebhooks()).map((h) => h.id)).toEqual([personal.id]);

    await expect(
      other.createWebhook({ url, events: ['push.created'], workspace_id: workspaceId }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    await expect(other.listWebhooks({ workspaceId })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(other.getWebhook(hook.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.deleteWebhook(hook.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.rotateWebhookSecret(hook.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      owner.createWebhook({ url, events: ['push.created'], workspace_id: 'abc' as unknown as number }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(await owner.listWebhooks({ workspaceId })).toEqual([hook].map(({ secret: _s, ...h }) => h));

    const key = await owner.createApiKey({ name: 'team', scopes: ['webhooks:manage'], workspace_id: workspaceId });
    const team = as(key.token);
    expect((await team.listWebhooks()).map((h) => h.id)).toEqual([hook.id]);
    const byKey = await team.createWebhook({ url, events: ['push.expired'] });
    expect(byKey.workspace_id).toBe(workspaceId);
    await expect(team.getWebhook(personal.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await team.deleteWebhook(hook.id)).id).toBe(hook.id);
    expect((await owner.listWebhooks({ workspaceId })).map((h) => h.id)).toEqual([byKey.id]);
  });
});
