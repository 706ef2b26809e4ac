/**
 * A workspace's invitations in the stateful mock, through the SDK facade, every answer checked against the contract:
 * a link invitation answered with its link once, listed without it, accepted by another user (who then lists the
 * workspace with the invitation's role), single use, idempotent for a member; revoked ones and tokens of the wrong
 * shape refused; invitations by email accepted only by their address; who may invite (the same `judgeInvitation` as
 * the server).
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient, ForbiddenError, NotFoundError, ValidationError } from '../../src/index.js';
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

describe('stateful mock: workspace invitations', () => {
  it('invites by link, lets another user join once, and refuses what the server refuses', async () => {
    const baseUrl = 'http://mock-invitations.test';
    const carol = { email: 'carol@example.com', token: 'spt_mock_carol_0000000000000000000000000000' };
    const mock = createMockServerHandlers({ baseUrl, users: [...defaultMockUsers, carol] });
    server.use(...mock.handlers);
    const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const joiner = as(mock.users[1]!.token);

    const { id } = await owner.createWorkspace('Acme');
    const made = await owner.createWorkspaceInvitation(id, { role: 'auditor', expires_in_days: 2 });
    expect(made).toMatchObject({ workspace_id: id, email: null, role: 'auditor', invited_by: mock.users[0]!.email });
    expect(made.url).toMatch(/^http:\/\/mock-invitations\.test\/workspaces\/join#[A-Za-z0-9_-]{43}$/);
    const { url, ...listed } = made;
    expect(await owner.listWorkspaceInvitations(id)).toEqual([listed]);
    await expect(joiner.listWorkspaceInvitations(id)).rejects.toBeInstanceOf(NotFoundError);

    expect(await joiner.acceptWorkspaceInvitation(url!)).toMatchObject({ id, name: 'Acme', role: 'auditor' });
    expect((await joiner.listWorkspaces()).map((w) => [w.id, w.role])).toEqual([[id, 'auditor']]);
    expect(await joiner.acceptWorkspaceInvitation(url!)).toMatchObject({ id, role: 'auditor' });
    expect(await owner.listWorkspaceInvitations(id)).toEqual([]);
    // An auditor may not invite or list; the owner role is never given.
    await expect(joiner.createWorkspaceInvitation(id, { role: 'member' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(joiner.listWorkspaceInvitations(id)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(owner.createWorkspaceInvitation(id, { role: 'owner' as 'admin' })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(owner.createWorkspaceInvitation(id, { role: 'member', expires_in_days: 31 })).rejects.toBeInstanceOf(
      ValidationError,
    );

    const revoked = await owner.createWorkspaceInvitation(id, { role: 'member' });
    expect((await owner.revokeWorkspaceInvitation(id, revoked.id)).id).toBe(revoked.id);
    await expect(owner.revokeWorkspaceInvitation(id, revoked.id)).rejects.toBeInstanceOf(NotFoundError);
    const third = as(carol.token);
    await expect(third.acceptWorkspaceInvitation(revoked.url!)).rejects.toBeInstanceOf(NotFoundError);
    await expect(third.acceptWorkspaceInvitation('short')).rejects.toBeInstanceOf(ValidationError);

    const byEmail = await owner.createWorkspaceInvitation(id, { role: 'member', email: 'Someone@Example.org' });
    expect(byEmail).toMatchObject({ email: 'someone@example.org' });
    expect(byEmail.url).toBeUndefined();
    expect((await owner.listWorkspaceInvitations(id)).map((i) => i.email)).toEqual(['someone@example.org']);
  });
});
