/**
 * Workspaces (issue 41), gated on the version report's `features.workspaces`: the Pro wire the existing clients speak
 * (Raycast's `GET /api/v2/workspaces` and top-level `workspace_id`, pwpush-cli's and the Chrome extension's
 * `GET /api/v2/accounts` and `account_id`, beside `push`, inside it or in the query), and what a workspace keeps to
 * itself: its pushes are listed by naming it and never in the personal list, a create without an id stays personal,
 * and an outsider can neither create in it, list it, nor expire its pushes.
 *
 * User A owns the workspace; user B is an outsider. TEAM-001 makes a fresh workspace; the others share one named
 * `conformance suite` (found in A's list, made once), so that a target is not filled with workspaces by repeated runs
 * (a user owns at most 100).
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, NotRunHere, unique, type Ctx, type Res } from '../context.js';

const SHARED_NAME = 'conformance suite';

interface Workspace {
  id: number;
  name: string;
  role: string;
}

/** A's workspaces (a bare array, as the Pro clients read it). */
async function workspacesOf(ctx: Ctx, operation: 'listWorkspaces' | 'listAccounts'): Promise<Workspace[]> {
  const res = await ctx.call(operation, { as: 'a' });
  expectStatus(res, 200);
  expect(Array.isArray(res.body), `${operation} is not a bare array (the Pro clients read one)`);
  return res.body as Workspace[];
}

const shared = new WeakMap<Ctx, Promise<number>>();

/** The id of A's shared workspace, made on the first run against this target. */
export function workspace(ctx: Ctx): Promise<number> {
  let found = shared.get(ctx);
  if (!found) {
    found = (async () => {
      const mine = (await workspacesOf(ctx, 'listWorkspaces')).find(
        (w) => w.name === SHARED_NAME && w.role === 'owner',
      );
      if (mine) return mine.id;
      const made = await ctx.call('createWorkspace', { as: 'a', body: { workspace: { name: SHARED_NAME } } });
      expectStatus(made, 201);
      return (made.body as Workspace).id;
    })();
    shared.set(ctx, found);
  }
  return found;
}

/** Creates a text push as A with `extra` beside `push` and `inPush` inside it (and `query` in the query). */
function create(
  ctx: Ctx,
  extra: Record<string, unknown>,
  inPush: Record<string, unknown> = {},
  query: Record<string, string> = {},
  as: 'a' | 'b' | 'anon' = 'a',
): Promise<Res> {
  return ctx.call('createPush', {
    as,
    query,
    body: { push: { payload: `s3cret ${unique('team')}`, expire_after_views: 5, ...inPush }, ...extra },
  });
}

/** The url_tokens of A's first page of active pushes: the personal list, or the workspace's with `query`. */
async function listed(ctx: Ctx, query: Record<string, string | number> = {}, as: 'a' | 'b' = 'a'): Promise<string[]> {
  const res = await ctx.call('listActivePushes', { as, query });
  expectStatus(res, 200);
  expect(Array.isArray(res.body), 'listActivePushes is not an array');
  return (res.body as { url_token: string }[]).map((p) => p.url_token);
}

async function created(res: Res): Promise<string> {
  expectStatus(res, 201);
  return (res.body as { url_token: string }).url_token;
}

/** A push's url_token is in the workspace's list (named by `workspace_id` or `account_id`) and not in the personal one. */
async function expectInWorkspace(ctx: Ctx, urlToken: string, id: number, by: 'workspace_id' | 'account_id') {
  expect(
    (await listed(ctx, { [by]: String(id) })).includes(urlToken),
    `the push made in workspace ${id} is not in listActivePushes?${by}=${id}`,
  );
  expect(
    !(await listed(ctx)).includes(urlToken),
    `the push made in workspace ${id} is in the personal list (no workspace_id)`,
  );
}

/** How many active pushes the workspace lists (its first page's length and X-Total-Count). */
async function counted(ctx: Ctx, id: number): Promise<string> {
  const res = await ctx.call('listActivePushes', { as: 'a', query: { workspace_id: String(id) } });
  expectStatus(res, 200);
  return `${res.headers.get('x-total-count')}/${(res.body as unknown[]).length}`;
}

export const workspaceRequirements = define('TEAM', [
  {
    id: 'TEAM-001',
    title:
      'createWorkspace makes a workspace its maker owns; listWorkspaces and listAccounts list it alike, a bare array',
    source: 'spec: paths/workspaces.yaml (listWorkspaces, createWorkspace), paths/accounts.yaml; schemas/Workspace',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      const before = await workspacesOf(ctx, 'listWorkspaces');
      if (before.filter((w) => w.role === 'owner').length >= 90)
        throw new NotRunHere(`user A owns ${before.length} workspaces (at most 100 each): run it with a fresh user A`);
      const name = unique('Acme');
      const made = await ctx.call('createWorkspace', { as: 'a', body: { workspace: { name } } });
      expectStatus(made, 201);
      const ws = made.body as Workspace;
      expect(Number.isInteger(ws.id) && ws.id >= 1, `the workspace's id is ${JSON.stringify(ws.id)}, not an integer`);
      expectEqual([ws.name, ws.role], [name, 'owner'], 'the created workspace (name, role)');
      for (const operation of ['listWorkspaces', 'listAccounts'] as const) {
        const entry = (await workspacesOf(ctx, operation)).find((w) => w.id === ws.id);
        expect(entry, `${operation} does not list the workspace just made (id ${ws.id})`);
        expectEqual([entry.name, entry.role], [name, 'owner'], `${operation}'s entry (name, role)`);
      }
    },
  },
  {
    id: 'TEAM-002',
    title:
      'A create with a top-level workspace_id (a number: Raycast, CIPP) lands in the workspace, not the personal list',
    source: 'spec: schemas/CreatePushRequest workspace_id (Raycast and CIPP send {push, workspace_id})',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      const token = await created(await create(ctx, { workspace_id: id }));
      await expectInWorkspace(ctx, token, id, 'workspace_id');
    },
  },
  {
    id: 'TEAM-003',
    title:
      "Pro's account_id as digits, inside push or in the query (pwpush-cli, Chrome extension), names the workspace",
    source: 'spec: schemas/PushInput account_id; parameters/WorkspaceIdQuery; schemas/WorkspaceRef',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      const inside = await created(await create(ctx, {}, { account_id: String(id) }));
      await expectInWorkspace(ctx, inside, id, 'account_id');
      const inQuery = await created(await create(ctx, { account_id: String(id) }, {}, { account_id: String(id) }));
      await expectInWorkspace(ctx, inQuery, id, 'workspace_id');
    },
  },
  {
    id: 'TEAM-004',
    title: 'A create naming no workspace stays in the personal space: in the personal list, not in the workspace’s',
    source: 'spec: schemas/WorkspaceRef (absent: the caller’s personal space, as always)',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      const token = await created(await create(ctx, {}));
      expect((await listed(ctx)).includes(token), 'a push made without workspace_id is not in the personal list');
      expect(
        !(await listed(ctx, { workspace_id: String(id) })).includes(token),
        `a push made without workspace_id is in workspace ${id}'s list`,
      );
    },
  },
  {
    id: 'TEAM-005',
    title: 'Two places naming different workspaces → 422 on workspace_id, and nothing is made in either',
    source: 'spec: paths/pushes.yaml (every place given must name the same workspace, else 422 on workspace_id)',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      const before = await counted(ctx, id);
      const personal = (await listed(ctx)).join();
      const res = await create(ctx, { workspace_id: id }, { account_id: String(id + 1) });
      expectStatus(res, 422);
      expectCode(res, 'validation_failed');
      expect(
        Object.keys((res.body as { errors?: object }).errors ?? {}).includes('workspace_id'),
        `the 422 names no error on workspace_id${res.text ? `: ${res.text.slice(0, 200)}` : ''}`,
      );
      expectEqual(await counted(ctx, id), before, "the workspace's count after the refused create");
      expectEqual((await listed(ctx)).join(), personal, 'the personal list after the refused create');
    },
  },
  {
    id: 'TEAM-006',
    title:
      'An outsider naming a workspace, or an id no workspace has, is refused 403 forbidden: nothing made or listed',
    source: 'spec: schemas/WorkspaceRef (not a member, or no such workspace: 403 forbidden, nothing made)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      const before = await counted(ctx, id);
      for (const [as, target] of [
        ['b', id],
        ['a', 2_147_483_000],
      ] as const) {
        const made = await create(ctx, { workspace_id: target }, {}, {}, as);
        expectStatus(made, 403);
        expectCode(made, 'forbidden');
        const list = await ctx.call('listActivePushes', { as, query: { workspace_id: String(target) } });
        expectStatus(list, 403);
        expectCode(list, 'forbidden');
      }
      expectEqual(await counted(ctx, id), before, "the workspace's count after the outsider's create");
      const b = await ctx.call('listWorkspaces', { as: 'b' });
      expectStatus(b, 200);
      expect(
        Array.isArray(b.body) && !(b.body as Workspace[]).some((w) => w.id === id),
        `user B's listWorkspaces shows A's workspace ${id}`,
      );
    },
  },
  {
    id: 'TEAM-007',
    title: 'An outsider cannot expire a workspace’s push or read its audit log (403); the push stays active',
    source: 'spec: paths/pushes-{url_token}.yaml expirePush 403; paths/pushes-{url_token}-audit.yaml 403',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      // Not deletable by a viewer: anyone with the link may expire a push that is (the reference's rule).
      const token = await created(await create(ctx, { workspace_id: id }, { deletable_by_viewer: false }));
      for (const operation of ['expirePush', 'getPushAudit']) {
        const res = await ctx.call(operation, { as: 'b', params: { url_token: token } });
        expectStatus(res, 403);
      }
      const look = await ctx.call('previewPush', { as: 'a', params: { url_token: token } });
      expectStatus(look, 200);
      expect((await listed(ctx, { workspace_id: String(id) })).includes(token), 'the push left the workspace list');
      const still = await ctx.call('getPushAudit', { as: 'a', params: { url_token: token } });
      expectStatus(still, 200);
      expect(
        !(still.body as { logs: { kind: string }[] }).logs.some((l) => l.kind === 'expire'),
        'the audit log of the push has an expire entry after the refused expiry',
      );
    },
  },
  {
    id: 'TEAM-008',
    title: 'A workspace id without a token → 401, and nothing is made',
    source: 'spec: schemas/WorkspaceRef; paths/pushes.yaml createPush 401',
    needs: ['workspaces', 'token', 'anonymous'],
    async run(ctx) {
      const id = await workspace(ctx);
      const before = await counted(ctx, id);
      const res = await create(ctx, { workspace_id: id }, {}, {}, 'anon');
      expectStatus(res, 401);
      expectEqual(await counted(ctx, id), before, "the workspace's count after the anonymous create");
    },
  },
  {
    id: 'TEAM-009',
    title:
      'A list naming no id (workspace_id=abc, 0) → 400 invalid_parameter; a create naming one → 422 on workspace_id',
    source: 'spec: parameters/WorkspaceIdQuery, schemas/WorkspaceRef (digits, 1 to 2147483647)',
    needs: ['workspaces', 'token'],
    async run(ctx) {
      for (const bad of ['abc', '0']) {
        const res = await ctx.call('listActivePushes', { as: 'a', query: { workspace_id: bad } });
        expectStatus(res, 400);
        expectCode(res, 'invalid_parameter');
      }
      const before = await counted(ctx, await workspace(ctx));
      for (const [beside, inside] of [
        [{ workspace_id: 'abc' }, {}],
        [{}, { account_id: 0 }],
      ]) {
        const res = await create(ctx, beside!, inside);
        expectStatus(res, 422);
        expectCode(res, 'validation_failed');
        expect(
          Object.keys((res.body as { errors?: object }).errors ?? {}).includes('workspace_id'),
          `the 422 names no error on workspace_id: ${res.text.slice(0, 200)}`,
        );
      }
      expectEqual(await counted(ctx, await workspace(ctx)), before, "the workspace's count after the refused creates");
    },
  },
  {
    id: 'TEAM-010',
    title: 'listWorkspaceMembers shows a member the owner first; an outsider or an id no workspace has gets 404',
    source: 'spec: paths/workspaces-{workspace_id}-members.yaml (listWorkspaceMembers; 404 alike, ids not probed)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      const res = await ctx.call('listWorkspaceMembers', { as: 'a', params: { workspace_id: String(id) } });
      expectStatus(res, 200);
      const members = res.body as { email: string; role: string }[];
      expect(Array.isArray(members) && members.length >= 1, 'listWorkspaceMembers is not a list with its owner');
      expectEqual(members[0]!.role, 'owner', "the first member's role");
      if (ctx.options.email)
        expectEqual(members[0]!.email.toLowerCase(), ctx.options.email.toLowerCase(), "the owner's email");
      for (const [as, target] of [
        ['b', id],
        ['a', 2_147_483_000],
      ] as const) {
        const refused = await ctx.call('listWorkspaceMembers', { as, params: { workspace_id: String(target) } });
        expectStatus(refused, 404);
        expectCode(refused, 'not_found');
      }
    },
  },
  {
    id: 'TEAM-011',
    title: 'The owner cannot leave (422); an outsider cannot leave or remove the owner (404); the owner stays',
    source: 'spec: paths/workspaces-{workspace_id}-leave.yaml, workspaces-{workspace_id}-members-{user_id}.yaml',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      const params = { workspace_id: String(id) };
      const owner = async () => {
        const res = await ctx.call('listWorkspaceMembers', { as: 'a', params });
        expectStatus(res, 200);
        return (res.body as { user_id: string; role: string }[])[0]!;
      };
      const before = await owner();
      expectEqual(before.role, 'owner', "the first member's role");
      const leaves = await ctx.call('leaveWorkspace', { as: 'a', params });
      expectStatus(leaves, 422);
      for (const [operation, extra] of [
        ['leaveWorkspace', {}],
        ['removeWorkspaceMember', { user_id: before.user_id }],
      ] as const) {
        const res = await ctx.call(operation, { as: 'b', params: { ...params, ...extra } });
        expectStatus(res, 404);
      }
      expectEqual(await owner(), before, 'the owner after the refused changes');
    },
  },
  {
    id: 'TEAM-012',
    title: "updateWorkspace: the owner's change answers the workspace with its sign-in rules; an outsider's is 404",
    source: 'spec: paths/workspaces-{workspace_id}-settings.yaml, components/schemas/Workspace.yaml',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      const params = { workspace_id: String(id) };
      // The shared workspace keeps its name (later runs find it by it): the owner sets it again, rules unchanged.
      const own = await ctx.call('updateWorkspace', {
        as: 'a',
        params,
        body: { workspace: { name: SHARED_NAME, require_two_factor: false } },
      });
      expectStatus(own, 200);
      const answered = own.body as Workspace & { require_two_factor?: unknown; sso_domain?: unknown };
      expectEqual([answered.id, answered.name, answered.role], [id, SHARED_NAME, 'owner'], 'the answer');
      expectEqual(answered.require_two_factor, false, 'require_two_factor');
      expect(
        answered.sso_domain === null || typeof answered.sso_domain === 'string',
        'sso_domain is neither null nor a string',
      );
      const outsider = await ctx.call('updateWorkspace', {
        as: 'b',
        params,
        body: { workspace: { name: `taken over ${unique('team')}` } },
      });
      expectStatus(outsider, 404);
      const mine = (await workspacesOf(ctx, 'listWorkspaces')).find((w) => w.id === id);
      expectEqual(mine?.name, SHARED_NAME, "the workspace's name after the outsider's change");
    },
  },
  {
    id: 'TEAM-013',
    title:
      "A workspace's brand refuses a light accent and a javascript: link (422 per field), keeps it, hides it (404)",
    source: 'spec: paths/workspaces-{workspace_id}-brand.yaml (updateWorkspaceBrand 422; getWorkspaceBrand 404 alike)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const params = { workspace_id: String(await workspace(ctx)) };
      const set = await ctx.call('updateWorkspaceBrand', {
        as: 'a',
        params,
        body: { brand: { name: 'Conformance', accent_color: '#0B5CAD', imprint_url: 'https://example.org/imprint' } },
      });
      expectStatus(set, 200);
      expectEqual((set.body as { accent_color: string }).accent_color, '#0b5cad', 'the stored accent colour');
      const read = async () => {
        const res = await ctx.call('getWorkspaceBrand', { as: 'a', params });
        expectStatus(res, 200);
        return res.body;
      };
      const before = await read();
      for (const [field, value] of [
        ['accent_color', '#77bbff'],
        ['imprint_url', 'javascript:alert(1)'],
      ] as const) {
        const refused = await ctx.call('updateWorkspaceBrand', {
          as: 'a',
          params,
          body: { brand: { [field]: value } },
        });
        expectStatus(refused, 422);
        expectCode(refused, 'validation_failed');
        expect(
          Object.keys((refused.body as { errors?: object }).errors ?? {}).includes(field),
          `the 422 names no error on ${field}: ${refused.text.slice(0, 200)}`,
        );
      }
      expectEqual(await read(), before, 'the brand after the refused changes');
      for (const operation of ['getWorkspaceBrand', 'updateWorkspaceBrand'] as const) {
        const outsider = await ctx.call(operation, {
          as: 'b',
          params,
          ...(operation === 'updateWorkspaceBrand' ? { body: { brand: { name: 'Hijacked' } } } : {}),
        });
        expectStatus(outsider, 404);
      }
      expectEqual(await read(), before, "the brand after the outsider's change");
    },
  },
]);
