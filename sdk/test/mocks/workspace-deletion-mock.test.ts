/**
 * Deleting a workspace in the stateful mock, through the SDK facade, every answer checked against the contract: by
 * the server's rules (`mayDeleteWorkspace`, `confirmsDeletion` of @secret-push/rules), its owner alone with its
 * name (an admin or member 403, an outsider 404, a workspace's key 403, another name 422; nothing changes on a
 * refusal), and everything it held goes with it: its pushes' links answer 404, its key is refused, its webhooks,
 * requests and invitations are gone, and the owner's personal push stays.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  createSecretPushClient,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../src/index.js';
import { createMockServerHandlers, defaultMockUsers } from '../../src/mocks/index.js';
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

describe('stateful mock: deleting a workspace', () => {
  it('lets the owner alone delete it, with its name, and takes everything it held', async () => {
    const baseUrl = 'http://mock-deletion.test';
    const carol = { email: 'carol@example.com', token: 'spt_mock_carol_0000000000000000000000000000' };
    const mock = createMockServerHandlers({ baseUrl, users: [...defaultMockUsers, carol] });
    server.use(...mock.handlers);
    const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const member = as(mock.users[1]!.token);
    const outsider = as(carol.token);

    const { id } = await owner.createWorkspace('Acme');
    const invitation = await owner.createWorkspaceInvitation(id, { role: 'member' });
    await member.acceptWorkspaceInvitation(invitation.url!);
    const pending = await owner.createWorkspaceInvitation(id, { role: 'member' });
    const pushed = await member.createPush({ payload: 'team secret', workspace_id: id });
    const personal = await owner.createPush({ payload: 'mine' });
    const key = await owner.createApiKey({
      name: 'team',
      scopes: ['pushes:read', 'workspaces:manage'],
      workspace_id: id,
    });
    await owner.createWebhook({ url: 'https://hooks.example.org/team', events: ['push.created'], workspace_id: id });
    const asked = await owner.createRequest({ request: 'the VPN password', workspace_id: id });

    await expect(member.deleteWorkspace(id, 'Acme')).rejects.toBeInstanceOf(ForbiddenError);
    await expect(outsider.deleteWorkspace(id, 'Acme')).rejects.toBeInstanceOf(NotFoundError);
    await expect(owner.deleteWorkspace(id + 1, 'Acme')).rejects.toBeInstanceOf(NotFoundError);
    await expect(as(key.token).deleteWorkspace(id, 'Acme')).rejects.toBeInstanceOf(ForbiddenError);
    for (const wrong of ['acme', 'Acme ', 'Other'])
      await expect(owner.deleteWorkspace(id, wrong)).rejects.toBeInstanceOf(ValidationError);
    expect((await owner.listWorkspaces()).map((w) => w.id)).toEqual([id]);
    expect((await owner.retrievePush(pushed.url_token)).payload).toBe('team secret');

    expect(await owner.deleteWorkspace(id, 'Acme')).toMatchObject({ id, name: 'Acme', role: 'owner' });
    expect(await owner.listWorkspaces()).toEqual([]);
    expect(await member.listWorkspaces()).toEqual([]);
    await expect(outsider.retrievePush(pushed.url_token)).rejects.toBeInstanceOf(NotFoundError);
    await expect(as(key.token).listWorkspaces()).rejects.toBeInstanceOf(AuthenticationError);
    expect(await owner.listWebhooks()).toEqual([]);
    await expect(owner.getRequest(asked.url_token)).rejects.toBeInstanceOf(NotFoundError);
    await expect(outsider.acceptWorkspaceInvitation(pending.url!)).rejects.toBeInstanceOf(NotFoundError);
    await expect(owner.deleteWorkspace(id, 'Acme')).rejects.toBeInstanceOf(NotFoundError);
    expect((await outsider.retrievePush(personal.url_token)).payload).toBe('mine');
  });
});
