/**
 * A workspace's requests in the stateful mock (issue 41), through the SDK facade, every answer checked against the
 * contract, by the server's rules (server/src/request/request-workspaces.ts): a member makes one
 * (`createRequest({ …, workspace_id })`); the owner lists it with `activeRequests({ workspaceId })` and revokes it,
 * while it is never in the member's personal list; an auditor may not make one, an outsider neither makes nor lists
 * nor revokes (403); the answer is a push of the workspace (the owner lists it); the workspace's API key makes and
 * lists them without naming it, and never revokes its creator's personal requests.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient, ForbiddenError, type RequestOwner } from '../../src/index.js';
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

async function tokens(list: AsyncIterable<RequestOwner>): Promise<string[]> {
  const out: string[] = [];
  for await (const r of list) out.push(r.url_token);
  return out;
}

describe("stateful mock: a workspace's requests", () => {
  it('members make them, its owner lists and revokes them, outsiders and auditors are refused', async () => {
    const baseUrl = 'http://mock-wsrequests.test';
    const carol = { email: 'carol@example.com', token: 'spt_mock_carol_0000000000000000000000000000' };
    const dave = { email: 'dave@example.com', token: 'spt_mock_dave_00000000000000000000000000000' };
    const mock = createMockServerHandlers({ baseUrl, users: [...defaultMockUsers, carol, dave] });
    server.use(...mock.handlers);
    const as = (token?: string) =>
      createSecretPushClient({ baseUrl, ...(token ? { token } : {}), fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const outsider = as(mock.users[1]!.token);
    const member = as(carol.token);
    const auditor = as(dave.token);
    const { id: workspaceId } = await owner.createWorkspace('Acme');
    for (const [who, role] of [
      [member, 'member'],
      [auditor, 'auditor'],
    ] as const) {
      const invited = await owner.createWorkspaceInvitation(workspaceId, { role });
      await who.acceptWorkspaceInvitation(invited.url!);
    }

    const made = await member.createRequest({ request: 'the staging password', workspace_id: workspaceId });
    expect(await tokens(member.activeRequests())).not.toContain(made.url_token);
    expect(await tokens(member.activeRequests({ workspaceId }))).toEqual([made.url_token]);
    expect(await tokens(owner.activeRequests({ workspaceId }))).toEqual([made.url_token]);
    expect(await tokens(auditor.activeRequests({ workspaceId }))).toEqual([made.url_token]);
    await expect(auditor.createRequest({ request: 'x', workspace_id: workspaceId })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(outsider.createRequest({ request: 'x', workspace_id: workspaceId })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(outsider.activeRequests.page(1, { workspaceId })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(outsider.revokeRequest(made.url_token)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(auditor.revokeRequest(made.url_token)).rejects.toBeInstanceOf(ForbiddenError);

    // The answer is a push of the workspace: its owner lists it among the workspace's pushes.
    const answered = await member.createRequest({ request: 'the VPN key', workspace_id: workspaceId });
    await as().respondToRequest(answered.url_token, { payload: 'vpn-secret' });
    const record = await member.getRequest(answered.url_token);
    const answerToken = record.audience === 'owner' ? record.answer!.url_token : '';
    const listed = await fetch(`${baseUrl}/api/v2/pushes/active?workspace_id=${workspaceId}`, {
      headers: { authorization: `Bearer ${mock.users[0]!.token}` },
    });
    expect(((await listed.json()) as { url_token: string }[]).map((p) => p.url_token)).toContain(answerToken);

    expect((await owner.revokeRequest(made.url_token)).state).toBe('revoked');
    expect(await tokens(owner.expiredRequests({ workspaceId }))).toContain(made.url_token);

    const key = await owner.createApiKey({
      name: 'team',
      scopes: ['requests:read', 'requests:write'],
      workspace_id: workspaceId,
    });
    expect((await owner.listApiKeys({ workspaceId })).map((k) => k.id)).toEqual([key.id]);
    const team = as(key.token);
    const byKey = await team.createRequest({ request: 'from the key' });
    expect(await tokens(team.activeRequests())).toContain(byKey.url_token);
    const personal = await owner.createRequest({ request: 'mine' });
    await expect(team.revokeRequest(personal.url_token)).rejects.toBeInstanceOf(ForbiddenError);
    expect((await team.revokeRequest(byKey.url_token)).state).toBe('revoked');
  });
});
