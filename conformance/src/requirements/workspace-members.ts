/**
 * A workspace's members and invitations (issue 41, the TEAM class; run when the version report says
 * `features.workspaces`): what a client of any implementation relies on through the contract. User A owns a second
 * shared workspace, `conformance suite members` (made on the first run against a target and reused after); user B
 * joins it by A's invitation link, is given roles, is handed the workspace and hands it back, is removed or leaves.
 * Each requirement starts from A alone in it (anyone an earlier, broken run left in is removed, every pending
 * invitation revoked) and leaves it so, so that B stays the outsider of the first shared workspace (./workspaces.ts).
 * Every refusal is checked to change nothing: the members with their roles and the pending invitations are read
 * before and after. Invitations by email (TEAM-027) need an instance that mails (`email_auto_dispatch`), B's email
 * and a way to read the mailbox; the others need only both users' tokens.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx, type Res } from '../context.js';

const MEMBERS_NAME = 'conformance suite members';

interface Member {
  user_id: string;
  email: string;
  role: string;
}

interface Invitation {
  id: string;
  email: string | null;
  role: string;
  url?: string;
}

const shared = new WeakMap<Ctx, Promise<number>>();

/** The id of A's members workspace, made on the first run against this target. */
async function membersWorkspace(ctx: Ctx): Promise<number> {
  let found = shared.get(ctx);
  if (!found) {
    found = (async () => {
      const list = await ctx.call('listWorkspaces', { as: 'a' });
      expectStatus(list, 200);
      const mine = (list.body as { id: number; name: string; role: string }[]).find(
        (w) => w.name === MEMBERS_NAME && w.role === 'owner',
      );
      if (mine) return mine.id;
      const made = await ctx.call('createWorkspace', { as: 'a', body: { workspace: { name: MEMBERS_NAME } } });
      expectStatus(made, 201);
      return (made.body as { id: number }).id;
    })();
    shared.set(ctx, found);
  }
  return found;
}

const at = (id: number, extra: Record<string, string> = {}) => ({ workspace_id: String(id), ...extra });

/** The workspace's members as A sees them. */
async function membersOf(ctx: Ctx, id: number): Promise<Member[]> {
  const res = await ctx.call('listWorkspaceMembers', { as: 'a', params: at(id) });
  expectStatus(res, 200);
  expect(Array.isArray(res.body), 'listWorkspaceMembers is not an array');
  return res.body as Member[];
}

/** The members and their roles, in a stable order (what a refusal must leave as it was). */
async function roles(ctx: Ctx, id: number): Promise<string> {
  return (await membersOf(ctx, id))
    .map((m) => `${m.user_id}:${m.role}`)
    .sort()
    .join();
}

/** The pending invitations' ids, as A lists them. */
async function pending(ctx: Ctx, id: number): Promise<Invitation[]> {
  const res = await ctx.call('listWorkspaceInvitations', { as: 'a', params: at(id) });
  expectStatus(res, 200);
  expect(Array.isArray(res.body), 'listWorkspaceInvitations is not an array');
  return res.body as Invitation[];
}

/** A alone in the workspace again, with nothing pending; A's user id. */
async function alone(ctx: Ctx, id: number): Promise<string> {
  for (const invitation of await pending(ctx, id))
    await ctx.call('revokeWorkspaceInvitation', { as: 'a', params: at(id, { invitation_id: invitation.id }) });
  const members = await membersOf(ctx, id);
  const owner = members.find((m) => m.role === 'owner');
  expect(owner, 'the members workspace lists no owner');
  for (const m of members.filter((x) => x !== owner))
    await ctx.call('removeWorkspaceMember', { as: 'a', params: at(id, { user_id: m.user_id }) });
  return owner.user_id;
}

/** A's invitation by link with `role`: 201, the link answered this once. */
async function invite(ctx: Ctx, id: number, role: string): Promise<Invitation & { token: string }> {
  const res = await ctx.call('createWorkspaceInvitation', { as: 'a', params: at(id), body: { invitation: { role } } });
  expectStatus(res, 201);
  const made = res.body as Invitation;
  expectEqual([made.email, made.role], [null, role], 'the invitation by link (email, role)');
  expect(typeof made.url === 'string', 'the invitation by link answers no url');
  const token = decodeURIComponent(new URL(made.url).hash.slice(1));
  expect(token.length > 0, `the invitation's url carries no token in its fragment: ${made.url}`);
  return { ...made, token };
}

const accept = (ctx: Ctx, token: string, as: 'a' | 'b' = 'b'): Promise<Res> =>
  ctx.call('acceptWorkspaceInvitation', { as, body: { invitation: { token } } });

/** B joins by A's link with `role`; B's membership as A lists it. */
async function join(ctx: Ctx, id: number, owner: string, role: string): Promise<Member> {
  const res = await accept(ctx, (await invite(ctx, id, role)).token);
  expectStatus(res, 200);
  const b = (await membersOf(ctx, id)).find((m) => m.user_id !== owner);
  expect(b, 'B does not appear in listWorkspaceMembers after accepting');
  return b;
}

/** The workspaces B lists: id → role. */
async function workspacesOfB(ctx: Ctx): Promise<Map<number, string>> {
  const res = await ctx.call('listWorkspaces', { as: 'b' });
  expectStatus(res, 200);
  return new Map((res.body as { id: number; role: string }[]).map((w) => [w.id, w.role]));
}

/** Runs `body` from A alone in the members workspace, and leaves A alone in it again (A its owner). */
async function inMembersWorkspace(ctx: Ctx, body: (id: number, owner: string) => Promise<void>): Promise<void> {
  const id = await membersWorkspace(ctx);
  const owner = await alone(ctx, id);
  try {
    await body(id, owner);
  } finally {
    await restore(ctx, id, owner);
  }
}

/** After a requirement: the ownership back with A (if B holds it), B removed, the pending invitations revoked. */
async function restore(ctx: Ctx, id: number, owner: string): Promise<void> {
  const list = await ctx.call('listWorkspaceMembers', { as: 'a', params: at(id) });
  if (list.status === 200 && !(list.body as Member[]).some((m) => m.user_id === owner && m.role === 'owner'))
    await ctx.call('transferWorkspace', { as: 'b', params: at(id, { user_id: owner }) });
  await alone(ctx, id);
}

/** A refusal: the status, the code, and nothing changed in the members or the pending invitations. */
async function refused(ctx: Ctx, id: number, call: () => Promise<Res>, status: number, code: string): Promise<void> {
  const before = `${await roles(ctx, id)}|${(await pending(ctx, id)).map((i) => i.id).sort()}`;
  const res = await call();
  expectStatus(res, status);
  expectCode(res, code);
  const after = `${await roles(ctx, id)}|${(await pending(ctx, id)).map((i) => i.id).sort()}`;
  expectEqual(after, before, `the members and pending invitations after the refused ${res.operation}`);
}

/** A's invitation by email to `email` with `role`: 201, the address lower-cased, no link in the answer. */
async function inviteByEmail(ctx: Ctx, id: number, email: string, role: string): Promise<Invitation> {
  const res = await ctx.call('createWorkspaceInvitation', {
    as: 'a',
    params: at(id),
    body: { invitation: { role, email } },
  });
  expectStatus(res, 201);
  const made = res.body as Invitation;
  expectEqual([made.email, made.role], [email.toLowerCase(), role], 'the invitation by email (email, role)');
  expect(made.url === undefined, 'the invitation by email answers its link (only the mail may carry it)');
  return made;
}

/** The token of the newest invitation link mailed to `address` after `seen` messages (waiting at most a minute). */
async function mailedToken(ctx: Ctx, address: string, seen: number): Promise<string> {
  const end = Date.now() + 60_000;
  for (;;) {
    const messages = await ctx.options.mailbox!(address);
    const links = messages
      .slice(seen)
      .map((m) => /\/workspaces\/join#([A-Za-z0-9_-]+)/.exec(`${m.text ?? ''}\n${m.html ?? ''}`)?.[1])
      .filter((token): token is string => Boolean(token));
    if (links.length > 0) return links[links.length - 1]!;
    expect(Date.now() < end, `no invitation link reached ${address} within a minute`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A text push B makes in the workspace; its url_token. */
async function pushOfB(ctx: Ctx, id: number): Promise<string> {
  const res = await ctx.call('createPush', {
    as: 'b',
    body: { push: { payload: `s3cret ${unique('team')}`, deletable_by_viewer: false }, workspace_id: id },
  });
  expectStatus(res, 201);
  return (res.body as { url_token: string }).url_token;
}

/** The url_tokens of the workspace's active pushes as A lists them. */
async function listedByA(ctx: Ctx, id: number): Promise<string[]> {
  const res = await ctx.call('listActivePushes', { as: 'a', query: { workspace_id: String(id) } });
  expectStatus(res, 200);
  return (res.body as { url_token: string }[]).map((p) => p.url_token);
}

/** B, no longer a member: cannot list the workspace's pushes or create in it (403), nor read its members (404). */
async function expectOut(ctx: Ctx, id: number, token: string): Promise<void> {
  const list = await ctx.call('listActivePushes', { as: 'b', query: { workspace_id: String(id) } });
  expectStatus(list, 403);
  expectCode(list, 'forbidden');
  const made = await ctx.call('createPush', {
    as: 'b',
    body: { push: { payload: `s3cret ${unique('team')}` }, workspace_id: id },
  });
  expectStatus(made, 403);
  expectCode(made, 'forbidden');
  const members = await ctx.call('listWorkspaceMembers', { as: 'b', params: at(id) });
  expectStatus(members, 404);
  expect(!(await workspacesOfB(ctx)).has(id), "B's listWorkspaces still shows the workspace B is out of");
  expect((await listedByA(ctx, id)).includes(token), "B's push left the workspace with B");
  await ctx.call('expirePush', { as: 'a', params: { url_token: token } });
}

export const workspaceMemberRequirements = define('TEAM', [
  {
    id: 'TEAM-019',
    title: 'An invitation by link: its url once, listed pending, accepted by B with its role; then used (404)',
    source: 'spec: paths/workspaces-{workspace_id}-invitations.yaml, paths/invitations-accept.yaml (single use)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const invitation = await invite(ctx, id, 'member');
        const listed = (await pending(ctx, id)).find((i) => i.id === invitation.id);
        expect(listed, 'listWorkspaceInvitations does not list the invitation just made');
        expect(listed.url === undefined, 'listWorkspaceInvitations shows the link again (it is answered once)');
        const res = await accept(ctx, invitation.token);
        expectStatus(res, 200);
        const joined = res.body as { id: number; role: string };
        expectEqual([joined.id, joined.role], [id, 'member'], 'the accepted workspace (id, role)');
        expectEqual((await workspacesOfB(ctx)).get(id), 'member', "B's role in B's listWorkspaces");
        const b = (await membersOf(ctx, id)).find((m) => m.user_id !== owner);
        expectEqual(b?.role, 'member', "B's role in listWorkspaceMembers");
        if (ctx.options.emailB) expectEqual(b?.email.toLowerCase(), ctx.options.emailB.toLowerCase(), "B's email");
        expect(!(await pending(ctx, id)).some((i) => i.id === invitation.id), 'the accepted invitation is pending');
        const removed = await ctx.call('removeWorkspaceMember', { as: 'a', params: at(id, { user_id: b!.user_id }) });
        expectStatus(removed, 200);
        await refused(ctx, id, () => accept(ctx, invitation.token), 404, 'not_found');
        expect(!(await workspacesOfB(ctx)).has(id), 'B is in the workspace again by a used invitation');
      });
    },
  },
  {
    id: 'TEAM-020',
    title: 'A revoked invitation leaves the pending list and its token is refused (404); revoking it again is 404',
    source: 'spec: paths/workspaces-{workspace_id}-invitations-{invitation_id}.yaml, paths/invitations-accept.yaml',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id) => {
        const invitation = await invite(ctx, id, 'admin');
        const params = at(id, { invitation_id: invitation.id });
        const revoked = await ctx.call('revokeWorkspaceInvitation', { as: 'a', params });
        expectStatus(revoked, 200);
        expectEqual((revoked.body as Invitation).id, invitation.id, "the revoked invitation's id");
        expect(!(await pending(ctx, id)).some((i) => i.id === invitation.id), 'the revoked invitation is pending');
        await refused(ctx, id, () => accept(ctx, invitation.token), 404, 'not_found');
        expect(!(await workspacesOfB(ctx)).has(id), 'B joined by a revoked invitation');
        await refused(ctx, id, () => ctx.call('revokeWorkspaceInvitation', { as: 'a', params }), 404, 'not_found');
      });
    },
  },
  {
    id: 'TEAM-021',
    title: "The owner sets a member's role (listed as set); a member cannot (403), nor remove anyone; nothing changes",
    source: 'spec: paths/workspaces-{workspace_id}-members-{user_id}-role.yaml (updateWorkspaceMember 200, 403)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const b = await join(ctx, id, owner, 'member');
        const subject = at(id, { user_id: b.user_id });
        for (const role of ['admin', 'auditor', 'member']) {
          const set = await ctx.call('updateWorkspaceMember', { as: 'a', params: subject, body: { member: { role } } });
          expectStatus(set, 200);
          expectEqual((set.body as Member).role, role, "updateWorkspaceMember's answer");
          expectEqual((await membersOf(ctx, id)).find((m) => m.user_id === b.user_id)?.role, role, "B's role");
        }
        const self = () =>
          ctx.call('updateWorkspaceMember', { as: 'b', params: subject, body: { member: { role: 'admin' } } });
        await refused(ctx, id, self, 403, 'forbidden');
        const remove = () => ctx.call('removeWorkspaceMember', { as: 'b', params: at(id, { user_id: owner }) });
        await refused(ctx, id, remove, 403, 'forbidden');
      });
    },
  },
  {
    id: 'TEAM-022',
    title: "The owner's role moves only by a hand-over: its change or removal is 422, an admin's 403; it stays owner",
    source: 'spec: paths/workspaces-{workspace_id}-members-{user_id}-role.yaml, …-members-{user_id}.yaml (403, 422)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const b = await join(ctx, id, owner, 'admin');
        const ownerParams = at(id, { user_id: owner });
        const demote = (as: 'a' | 'b') => () =>
          ctx.call('updateWorkspaceMember', { as, params: ownerParams, body: { member: { role: 'admin' } } });
        const remove = (as: 'a' | 'b') => () => ctx.call('removeWorkspaceMember', { as, params: ownerParams });
        await refused(ctx, id, demote('a'), 422, 'validation_failed');
        await refused(ctx, id, remove('a'), 422, 'validation_failed');
        await refused(ctx, id, demote('b'), 403, 'forbidden');
        await refused(ctx, id, remove('b'), 403, 'forbidden');
        const toOwner = () =>
          ctx.call('updateWorkspaceMember', {
            as: 'a',
            params: at(id, { user_id: b.user_id }),
            body: { member: { role: 'owner' } },
          });
        await refused(ctx, id, toOwner, 422, 'validation_failed');
        expectEqual((await membersOf(ctx, id)).find((m) => m.user_id === owner)?.role, 'owner', "A's role");
      });
    },
  },
  {
    id: 'TEAM-023',
    title: "A removed member no longer lists the workspace's pushes, creates in it (403) or sees it; its push stays",
    source:
      'spec: paths/workspaces-{workspace_id}-members-{user_id}.yaml (removeWorkspaceMember); schemas/WorkspaceRef',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const b = await join(ctx, id, owner, 'member');
        const token = await pushOfB(ctx, id);
        const params = at(id, { user_id: b.user_id });
        const removed = await ctx.call('removeWorkspaceMember', { as: 'a', params });
        expectStatus(removed, 200);
        expect(
          (await membersOf(ctx, id)).every((m) => m.user_id !== b.user_id),
          'B is still listed after removal',
        );
        await expectOut(ctx, id, token);
        await refused(ctx, id, () => ctx.call('removeWorkspaceMember', { as: 'a', params }), 404, 'not_found');
      });
    },
  },
  {
    id: 'TEAM-024',
    title: "A member who leaves no longer lists the workspace's pushes, creates in it (403) or sees it; its push stays",
    source: 'spec: paths/workspaces-{workspace_id}-leave.yaml (leaveWorkspace); schemas/WorkspaceRef',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        await join(ctx, id, owner, 'member');
        const token = await pushOfB(ctx, id);
        const left = await ctx.call('leaveWorkspace', { as: 'b', params: at(id) });
        expectStatus(left, 200);
        expectEqual((await membersOf(ctx, id)).length, 1, 'the members after B left (A alone)');
        await expectOut(ctx, id, token);
        await refused(ctx, id, () => ctx.call('leaveWorkspace', { as: 'b', params: at(id) }), 404, 'not_found');
      });
    },
  },
  {
    id: 'TEAM-025',
    title: 'The owner hands the workspace over: the member is owner, the old owner admin (who cannot hand it on, 403)',
    source: 'spec: paths/workspaces-{workspace_id}-members-{user_id}-ownership.yaml (transferWorkspace 200, 403, 422)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const b = await join(ctx, id, owner, 'member');
        const toSelf = () => ctx.call('transferWorkspace', { as: 'a', params: at(id, { user_id: owner }) });
        await refused(ctx, id, toSelf, 422, 'validation_failed');
        const handed = await ctx.call('transferWorkspace', { as: 'a', params: at(id, { user_id: b.user_id }) });
        expectStatus(handed, 200);
        const after = await membersOf(ctx, id);
        expectEqual(
          [after.find((m) => m.user_id === b.user_id)?.role, after.find((m) => m.user_id === owner)?.role],
          ['owner', 'admin'],
          'the roles of B and A after the hand-over',
        );
        expectEqual((await workspacesOfB(ctx)).get(id), 'owner', "B's role in B's listWorkspaces");
        const again = () => ctx.call('transferWorkspace', { as: 'a', params: at(id, { user_id: owner }) });
        await refused(ctx, id, again, 403, 'forbidden');
        const back = await ctx.call('transferWorkspace', { as: 'b', params: at(id, { user_id: owner }) });
        expectStatus(back, 200);
        expectEqual((await membersOf(ctx, id)).find((m) => m.user_id === owner)?.role, 'owner', "A's role back");
      });
    },
  },
  {
    id: 'TEAM-026',
    title: "A member cannot invite, list or revoke invitations (403), an outsider neither (404); A's stays pending",
    source: 'spec: paths/workspaces-{workspace_id}-invitations.yaml, …-invitations-{invitation_id}.yaml (403, 404)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const b = await join(ctx, id, owner, 'member');
        const kept = await invite(ctx, id, 'member');
        const calls = () => [
          () =>
            ctx.call('createWorkspaceInvitation', { as: 'b', params: at(id), body: { invitation: { role: 'admin' } } }),
          () => ctx.call('listWorkspaceInvitations', { as: 'b', params: at(id) }),
          () => ctx.call('revokeWorkspaceInvitation', { as: 'b', params: at(id, { invitation_id: kept.id }) }),
        ];
        for (const call of calls()) await refused(ctx, id, call, 403, 'forbidden');
        const removed = await ctx.call('removeWorkspaceMember', { as: 'a', params: at(id, { user_id: b.user_id }) });
        expectStatus(removed, 200);
        for (const call of calls()) await refused(ctx, id, call, 404, 'not_found');
        expect(
          (await pending(ctx, id)).some((i) => i.id === kept.id),
          "A's invitation is no longer pending",
        );
      });
    },
  },
  {
    id: 'TEAM-027',
    title: 'An invitation by email is listed with its address; only its addressee accepts it (another account 403)',
    source:
      'spec: schemas/WorkspaceInvitation (email: only that verified address accepts), paths/invitations-accept.yaml',
    // Run where the instance says it mails (email_auto_dispatch), B's address is known and its mailbox readable.
    needs: ['workspaces', 'token', 'tokenB', 'emailDispatch', 'emailB', 'mailbox'],
    async run(ctx) {
      await inMembersWorkspace(ctx, async (id, owner) => {
        const emailB = ctx.options.emailB!;
        const other = `${unique('invitee')}@${ctx.options.mailDomain ?? 'example.com'}`.toLowerCase();
        const seenB = (await ctx.options.mailbox!(emailB)).length;
        const toOther = await inviteByEmail(ctx, id, other, 'member');
        const toB = await inviteByEmail(ctx, id, emailB, 'admin');
        const listed = await pending(ctx, id);
        for (const made of [toOther, toB]) {
          const entry = listed.find((i) => i.id === made.id);
          expectEqual(
            [entry?.email, entry?.url],
            [made.email, undefined],
            'the listed invitation by email (email, url)',
          );
        }
        const otherToken = await mailedToken(ctx, other, 0);
        await refused(ctx, id, () => accept(ctx, otherToken), 403, 'forbidden');
        const res = await accept(ctx, await mailedToken(ctx, emailB, seenB));
        expectStatus(res, 200);
        expectEqual((res.body as { role: string }).role, 'admin', "the accepted workspace's role");
        const b = (await membersOf(ctx, id)).find((m) => m.user_id !== owner);
        expectEqual([b?.email.toLowerCase(), b?.role], [emailB.toLowerCase(), 'admin'], 'B in listWorkspaceMembers');
        expect(
          (await pending(ctx, id)).some((i) => i.id === toOther.id),
          "the other address's invitation left",
        );
      });
    },
  },
]);
