/**
 * Deleting a workspace (issue 41, the TEAM class; run when the version report says `features.workspaces`): user A
 * makes a fresh workspace and a push in it; user B, an outsider, cannot delete it (404), nor can A with another name
 * as the confirmation (422: the workspace is still listed and its push still opens); with its name, A deletes it
 * (200, the workspace as it was), after which it is in no list, its push's link answers 404 and a second deletion
 * 404. The workspace made is always deleted, so repeated runs do not fill user A's 100 workspaces.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, NotRunHere, unique, type Ctx } from '../context.js';

interface Workspace {
  id: number;
  name: string;
  role: string;
}

async function listed(ctx: Ctx, id: number): Promise<boolean> {
  const res = await ctx.call('listWorkspaces', { as: 'a' });
  expectStatus(res, 200);
  return (res.body as Workspace[]).some((w) => w.id === id);
}

const remove = (ctx: Ctx, id: number, confirm: string, as: 'a' | 'b' = 'a') =>
  ctx.call('deleteWorkspace', { as, params: { workspace_id: String(id) }, query: { confirm } });

export const workspaceDeletionRequirements = define('TEAM', [
  {
    id: 'TEAM-028',
    title:
      'deleteWorkspace: its owner, naming it, deletes it and its pushes (links 404); outsider 404, another name 422',
    source: 'spec: paths/workspaces-{workspace_id}.yaml deleteWorkspace; parameters/WorkspaceNameConfirm',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const mine = await ctx.call('listWorkspaces', { as: 'a' });
      expectStatus(mine, 200);
      if ((mine.body as Workspace[]).filter((w) => w.role === 'owner').length >= 95)
        throw new NotRunHere('user A owns 95 workspaces or more (at most 100 each): run it with a fresh user A');
      const name = unique('Doomed');
      const made = await ctx.call('createWorkspace', { as: 'a', body: { workspace: { name } } });
      expectStatus(made, 201);
      const id = (made.body as Workspace).id;
      let deleted = false;
      try {
        const push = await ctx.call('createPush', {
          as: 'a',
          body: { push: { payload: 'a workspace push the conformance suite deletes' }, workspace_id: id },
        });
        expectStatus(push, 201);
        const token = (push.body as { url_token: string }).url_token;

        const outsider = await remove(ctx, id, name, 'b');
        expectStatus(outsider, 404);
        const wrong = await remove(ctx, id, `${name} (not it)`);
        expectStatus(wrong, 422);
        expectCode(wrong, 'validation_failed');
        expect(await listed(ctx, id), 'the workspace is gone after a deletion refused for its confirmation');
        const opens = await ctx.call('getPush', { as: 'b', params: { url_token: token } });
        expectStatus(opens, 200);

        const done = await remove(ctx, id, name);
        expectStatus(done, 200);
        deleted = true;
        expectEqual((done.body as Workspace).id, id, "the deleted workspace's id");
        expect(!(await listed(ctx, id)), 'listWorkspaces still lists the deleted workspace');
        const gone = await ctx.call('getPush', { as: 'b', params: { url_token: token } });
        expectStatus(gone, 404);
        expectStatus(await remove(ctx, id, name), 404);
      } finally {
        if (!deleted) await remove(ctx, id, name);
      }
    },
  },
]);
