/**
 * A workspace's members in the stateful mock, through the SDK facade, every answer checked against the contract:
 * the list (the owner first), 404 for a user outside the workspace, and the rules the server applies (the same
 * `judgeMemberChange`): the owner neither leaves, nor is removed, nor hands the workspace to themself (422); a member
 * the workspace does not have is 404; a role outside admin, member and auditor is 422. The mock has no invitations
 * yet, so a workspace there has its owner only. Its settings (updateWorkspace): renamed by the owner; the two sign-in
 * rules refused as the server refuses them where no account has two-factor sign-in and no single sign-on is set.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient, NotFoundError, ValidationError } from '../../src/index.js';
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

describe('stateful mock: workspace members', () => {
  it('lists the owner, hides the workspace from others, and keeps the owner', async () => {
    const baseUrl = 'http://mock-members.test';
    const mock = createMockServerHandlers({ baseUrl });
    server.use(...mock.handlers);
    const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const other = as(mock.users[1]!.token);

    const { id } = await owner.createWorkspace('Acme');
    const [me, ...rest] = await owner.listWorkspaceMembers(id);
    expect(rest).toEqual([]);
    expect(me).toMatchObject({ email: mock.users[0]!.email, role: 'owner' });

    await expect(other.listWorkspaceMembers(id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.leaveWorkspace(id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(owner.listWorkspaceMembers(id + 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(owner.leaveWorkspace(id)).rejects.toBeInstanceOf(ValidationError);
    await expect(owner.removeWorkspaceMember(id, me!.user_id)).rejects.toBeInstanceOf(ValidationError);
    await expect(owner.transferWorkspace(id, me!.user_id)).rejects.toBeInstanceOf(ValidationError);
    await expect(owner.updateWorkspaceMember(id, me!.user_id, 'admin')).rejects.toBeInstanceOf(ValidationError);
    const stranger = '0b5e8c3a-2f4d-4a1b-9e7c-6d5f4a3b2c1d';
    await expect(owner.updateWorkspaceMember(id, stranger, 'member')).rejects.toBeInstanceOf(NotFoundError);
    await expect(owner.updateWorkspaceMember(id, stranger, 'owner' as 'admin')).rejects.toBeInstanceOf(ValidationError);
    expect(await owner.listWorkspaceMembers(id)).toEqual([me]);

    // A push made in the workspace names it, by our name and Pro's (issue 41); a personal one names none.
    const inWorkspace = await owner.createPush({ payload: 'team secret', workspace_id: id });
    expect(inWorkspace).toMatchObject({ workspace_id: id, account_id: id });
    const personal = await owner.createPush({ payload: 'mine' });
    expect(personal).not.toHaveProperty('workspace_id');
    expect(personal).not.toHaveProperty('account_id');
  });

  it('renames a workspace for its owner, refuses the rules it cannot keep (422) and outsiders (404)', async () => {
    const baseUrl = 'http://mock-settings.test';
    const mock = createMockServerHandlers({ baseUrl });
    server.use(...mock.handlers);
    const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const other = as(mock.users[1]!.token);
    const { id } = await owner.createWorkspace('Acme');

    const renamed = await owner.updateWorkspace(id, { name: '  Acme support ', require_two_factor: false });
    expect(renamed).toMatchObject({
      id,
      name: 'Acme support',
      role: 'owner',
      require_two_factor: false,
      sso_domain: null,
    });
    expect((await owner.listWorkspaces()).map((w) => w.name)).toEqual(['Acme support']);
    // The mock's accounts have no two-factor sign-in and it has no single sign-on: the server's 422s.
    await expect(owner.updateWorkspace(id, { require_two_factor: true })).rejects.toBeInstanceOf(ValidationError);
    await expect(owner.updateWorkspace(id, { sso_domain: 'example.com' })).rejects.toBeInstanceOf(ValidationError);
    await expect(owner.updateWorkspace(id, {})).rejects.toBeInstanceOf(ValidationError);
    await expect(other.updateWorkspace(id, { name: 'Taken' })).rejects.toBeInstanceOf(NotFoundError);
    expect((await owner.listWorkspaces())[0]).toMatchObject({ name: 'Acme support', require_two_factor: false });
  });
});
