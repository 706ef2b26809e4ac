/**
 * A workspace's rule requiring single sign-on of its members (issue 41, the TEAM class; `updateWorkspace`'s
 * `require_single_sign_on`), as far as a black-box suite can see it: the rule is only turned on by a caller whose own
 * credential single sign-on vouches for, on an instance that has it. The suite's user A holds an API token of an
 * account made without single sign-on, so either way (no single sign-on on the target, or A's account not linked to
 * its provider) turning it on is refused (422 on the field) and the shared workspace keeps it off. A target whose A
 * is linked to its provider turns it on: the suite turns it off again and says the requirement did not run there.
 */
import { define } from '../requirement.js';
import { expect, expectEqual, expectStatus, NotRunHere } from '../context.js';
import { workspace } from './workspaces.js';

interface Rules {
  id: number;
  require_single_sign_on?: unknown;
}

export const workspaceSignInRequirements = define('TEAM', [
  {
    id: 'TEAM-029',
    title:
      'require_single_sign_on is refused (422 on the field) for a caller no single sign-on vouches for; it stays off',
    source: 'spec: schemas/UpdateWorkspaceRequest require_single_sign_on, responses/WorkspaceSettingsUnprocessable',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      const params = { workspace_id: String(id) };
      const turned = await ctx.call('updateWorkspace', {
        as: 'a',
        params,
        body: { workspace: { require_single_sign_on: true } },
      });
      const listed = await ctx.call('listWorkspaces', { as: 'a' });
      expectStatus(listed, 200);
      const now = (listed.body as Rules[]).find((w) => w.id === id)?.require_single_sign_on;
      if (turned.status === 200 && now === true) {
        const off = await ctx.call('updateWorkspace', {
          as: 'a',
          params,
          body: { workspace: { require_single_sign_on: false } },
        });
        expectStatus(off, 200);
        throw new NotRunHere("user A's account is linked to the target's single sign-on: the rule was turned on");
      }
      expectStatus(turned, 422);
      const fields = (turned.body as { errors?: Record<string, unknown> } | undefined)?.errors ?? {};
      expect('require_single_sign_on' in fields, 'the 422 names no require_single_sign_on field in its errors');
      expectEqual(now, false, "the workspace's require_single_sign_on after the refusal");
    },
  },
]);
