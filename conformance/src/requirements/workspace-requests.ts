/**
 * A workspace's requests (issue 41, the TEAM class; run when the version report says both `features.workspaces` and
 * `features.requests`): user A, the owner of the shared `conformance suite` workspace (./workspaces.ts), asks for a
 * secret in it (`request.workspace_id`); `listActiveRequests?workspace_id=` lists it and A's personal list does not;
 * user B, an outsider, can neither ask in the workspace nor list its requests (403), nor revoke A's (403). Each
 * request made is revoked again.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, type Ctx } from '../context.js';
import { workspace } from './workspaces.js';

interface Made {
  url_token: string;
  state?: string;
}

/** The url_tokens of the first page of A's active requests (the personal list, or the workspace's with `query`). */
async function activeTokens(ctx: Ctx, query: Record<string, string> = {}): Promise<string[]> {
  const res = await ctx.call('listActiveRequests', { as: 'a', query });
  expectStatus(res, 200);
  expect(Array.isArray(res.body), 'listActiveRequests is not an array');
  return (res.body as Made[]).map((r) => r.url_token);
}

/** Makes a request of A's workspace `id`, runs `body`, then revokes it. */
async function withWorkspaceRequest(ctx: Ctx, id: number, body: (made: Made) => Promise<void>): Promise<void> {
  const made = await ctx.call('createRequest', {
    as: 'a',
    body: { request: { request: 'the conformance suite asks for a test value', workspace_id: id } },
  });
  expectStatus(made, 201);
  const request = made.body as Made;
  try {
    await body(request);
  } finally {
    await ctx.call('revokeRequest', { as: 'a', params: { url_token: request.url_token } });
  }
}

export const workspaceRequestRequirements = define('TEAM', [
  {
    id: 'TEAM-017',
    title: "createRequest with workspace_id makes the workspace's request: listed by workspace_id, not personally",
    source: 'spec: schemas/RequestInput workspace_id; paths/requests-active.yaml listActiveRequests workspace_id',
    needs: ['workspaces', 'requests', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      await withWorkspaceRequest(ctx, id, async (request) => {
        expect(
          (await activeTokens(ctx, { workspace_id: String(id) })).includes(request.url_token),
          `listActiveRequests?workspace_id=${id} does not list the workspace's request just made`,
        );
        expect(
          !(await activeTokens(ctx)).includes(request.url_token),
          "the workspace's request is in A's personal listActiveRequests",
        );
      });
    },
  },
  {
    id: 'TEAM-018',
    title: "An outsider can't ask in a workspace, list its requests or revoke one (403); the request stays pending",
    source: 'spec: schemas/RequestInput workspace_id (403 forbidden); paths/requests-{url_token}.yaml revokeRequest',
    needs: ['workspaces', 'requests', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      await withWorkspaceRequest(ctx, id, async (request) => {
        const made = await ctx.call('createRequest', {
          as: 'b',
          body: { request: { request: 'an outsider asks', workspace_id: id } },
        });
        expectStatus(made, 403);
        expectCode(made, 'forbidden');
        const list = await ctx.call('listActiveRequests', { as: 'b', query: { workspace_id: String(id) } });
        expectStatus(list, 403);
        expectCode(list, 'forbidden');
        const revoked = await ctx.call('revokeRequest', { as: 'b', params: { url_token: request.url_token } });
        expectStatus(revoked, 403);
        const listed = await ctx.call('listActiveRequests', { as: 'a', query: { workspace_id: String(id) } });
        expectStatus(listed, 200);
        const still = (listed.body as Made[]).find((r) => r.url_token === request.url_token);
        expectEqual(still?.state, 'pending', "the workspace's request after the outsider's calls");
      });
    },
  },
]);
