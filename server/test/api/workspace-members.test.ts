/**
 * Managing a workspace's members over HTTP with the generated SDK (issue 41): the list (any member, auditors too),
 * role changes and removals (owner and admins; an admin never touches the owner, the owner's role moves only by a
 * hand-over), leaving (anyone but the owner) and the hand-over (the owner only; exactly one owner after, even when
 * two hand-overs race). Outsiders and a second workspace's owner get 404, members without the role 403, and a
 * refused change changes nothing; each change leaves one row in `workspace_audit`. A removed member's pushes stay.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  createWorkspace,
  leaveWorkspace,
  listWorkspaceMembers,
  removeWorkspaceMember,
  transferWorkspace,
  updateWorkspaceMember,
} from '@secret-push/sdk/generated';
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type Who = WorkspaceRole | 'outsider' | 'otherOwner';
type User = { token: string; email: string; userId: string };

let api: RealApi;
const people = {} as Record<Who, User>;

beforeAll(async () => {
  api = await startRealApi();
  for (const who of ['owner', 'admin', 'member', 'auditor', 'outsider', 'otherOwner'] as const)
    people[who] = await api.user(`members-${who}@example.org`);
  expectData(
    await createWorkspace({
      client: api.client,
      auth: bearer(people.otherOwner.token),
      body: { workspace: { name: 'Other' } },
    }),
    201,
  );
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

/** A fresh workspace with one member of each role (rows as an accepted invitation writes them). */
async function workspace(): Promise<number> {
  const id = expectData(
    await createWorkspace({ client: api.client, auth: bearer(people.owner.token), body: { workspace: { name: 'T' } } }),
    201,
  ).id;
  let joined = Date.now();
  for (const role of ['admin', 'member', 'auditor'] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, $4)',
      [id, people[role].userId, role, new Date(++joined)],
    );
  return id;
}

const roles = async (id: number) =>
  Object.fromEntries(
    (
      await api.db.query<{ user_id: string; role: string }>(
        'select user_id, role from workspace_members where workspace_id = $1',
        [id],
      )
    ).map((r) => [r.user_id, r.role]),
  );

const audit = (id: number) =>
  api.db.query<{ action: string; actor_id: string; subject_id: string; subject_email: string; role: string | null }>(
    'select action, actor_id, subject_id, subject_email, role from workspace_audit where workspace_id = $1 order by id',
    [id],
  );

const as = (who: Who) => ({ client: api.client, auth: bearer(people[who].token) });

describe('listWorkspaceMembers', () => {
  it('answers every member, the owner first, to each of its members', async () => {
    const id = await workspace();
    for (const who of ['owner', 'admin', 'member', 'auditor'] as const) {
      const list = expectData(await listWorkspaceMembers({ ...as(who), path: { workspace_id: id } }));
      expect(list.map((m) => [m.email, m.role])).toEqual([
        [people.owner.email, 'owner'],
        [people.admin.email, 'admin'],
        [people.member.email, 'member'],
        [people.auditor.email, 'auditor'],
      ]);
      expect(list[0]!.user_id).toBe(people.owner.userId);
    }
  });

  it('answers 404 alike to an outsider, to another workspace’s owner and for a workspace that does not exist', async () => {
    const id = await workspace();
    expectError(await listWorkspaceMembers({ ...as('outsider'), path: { workspace_id: id } }), 404, 'not_found');
    expectError(await listWorkspaceMembers({ ...as('otherOwner'), path: { workspace_id: id } }), 404, 'not_found');
    expectError(
      await listWorkspaceMembers({ ...as('owner'), path: { workspace_id: 2_000_000_000 } }),
      404,
      'not_found',
    );
  });

  it('answers 401 without a token and 400 for an id that is none', async () => {
    const id = await workspace();
    expect((await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/members`)).status).toBe(401);
    const bad = await fetch(`${api.baseUrl}/api/v2/workspaces/abc/members`, {
      headers: { authorization: `Bearer ${people.owner.token}` },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('invalid_parameter');
  });
});

describe('updateWorkspaceMember', () => {
  it('lets an admin change a member’s role, audited', async () => {
    const id = await workspace();
    const changed = expectData(
      await updateWorkspaceMember({
        ...as('admin'),
        path: { workspace_id: id, user_id: people.member.userId },
        body: { member: { role: 'auditor' } },
      }),
    );
    expect(changed).toMatchObject({ user_id: people.member.userId, email: people.member.email, role: 'auditor' });
    expect((await roles(id))[people.member.userId]).toBe('auditor');
    expect(await audit(id)).toEqual([
      {
        action: 'role_changed',
        actor_id: people.admin.userId,
        subject_id: people.member.userId,
        subject_email: people.member.email,
        role: 'auditor',
      },
    ]);
  });

  const refused: [Who, string, WorkspaceRole | 'owner', number, string][] = [
    ['member', 'auditor', 'admin', 403, 'forbidden'],
    ['auditor', 'member', 'admin', 403, 'forbidden'],
    ['admin', 'owner', 'member', 403, 'forbidden'],
    ['owner', 'owner', 'admin', 422, 'validation_failed'],
    ['owner', 'member', 'owner', 422, 'validation_failed'],
    ['outsider', 'member', 'admin', 404, 'not_found'],
    ['otherOwner', 'member', 'admin', 404, 'not_found'],
  ];
  for (const [who, whom, role, want, code] of refused)
    it(`refuses ${who} making ${whom} ${role} (${want}) and changes nothing`, async () => {
      const id = await workspace();
      const before = await roles(id);
      expectError(
        await updateWorkspaceMember({
          ...as(who),
          path: { workspace_id: id, user_id: people[whom as Who].userId },
          body: { member: { role: role as 'admin' } },
        }),
        want,
        code,
      );
      expect(await roles(id)).toEqual(before);
      expect(await audit(id)).toEqual([]);
    });

  it('answers 404 for a user who is not a member, and 400 for a body without `member`', async () => {
    const id = await workspace();
    expectError(
      await updateWorkspaceMember({
        ...as('owner'),
        path: { workspace_id: id, user_id: people.outsider.userId },
        body: { member: { role: 'admin' } },
      }),
      404,
      'not_found',
    );
    const bare = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/members/${people.member.userId}/role`, {
      method: 'POST',
      headers: { authorization: `Bearer ${people.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'admin' }),
    });
    expect(bare.status).toBe(400);
    expect(await roles(id)).toMatchObject({ [people.member.userId]: 'member' });
  });
});

describe('removeWorkspaceMember and leaveWorkspace', () => {
  it('lets an admin remove a member, whose pushes stay in the workspace', async () => {
    const id = await workspace();
    const made = expectData(
      await createPush({ ...as('member'), body: { push: { payload: 'team secret' }, workspace_id: id } }),
      201,
    );
    expectData(
      await removeWorkspaceMember({ ...as('admin'), path: { workspace_id: id, user_id: people.member.userId } }),
    );
    expect((await roles(id))[people.member.userId]).toBeUndefined();
    const [row] = await api.db.query<{ workspace_id: number }>('select workspace_id from pushes where url_token = $1', [
      made.url_token,
    ]);
    expect(Number(row!.workspace_id)).toBe(id);
    expectError(await listWorkspaceMembers({ ...as('member'), path: { workspace_id: id } }), 404, 'not_found');
    expect((await audit(id)).map((a) => [a.action, a.actor_id, a.subject_id])).toEqual([
      ['member_removed', people.admin.userId, people.member.userId],
    ]);
  });

  const refused: [Who, Who, number, string][] = [
    ['admin', 'owner', 403, 'forbidden'],
    ['owner', 'owner', 422, 'validation_failed'],
    ['member', 'auditor', 403, 'forbidden'],
    ['auditor', 'member', 403, 'forbidden'],
    ['outsider', 'member', 404, 'not_found'],
  ];
  for (const [who, whom, want, code] of refused)
    it(`refuses ${who} removing ${whom} (${want}) and changes nothing`, async () => {
      const id = await workspace();
      const before = await roles(id);
      expectError(
        await removeWorkspaceMember({ ...as(who), path: { workspace_id: id, user_id: people[whom].userId } }),
        want,
        code,
      );
      expect(await roles(id)).toEqual(before);
      expect(await audit(id)).toEqual([]);
    });

  it('lets anyone but the owner leave', async () => {
    const id = await workspace();
    for (const who of ['auditor', 'member', 'admin'] as const) {
      const left = expectData(await leaveWorkspace({ ...as(who), path: { workspace_id: id } }));
      expect(left).toMatchObject({ user_id: people[who].userId, role: who });
    }
    expectError(await leaveWorkspace({ ...as('owner'), path: { workspace_id: id } }), 422, 'validation_failed');
    expectError(await leaveWorkspace({ ...as('outsider'), path: { workspace_id: id } }), 404, 'not_found');
    expect(await roles(id)).toEqual({ [people.owner.userId]: 'owner' });
    expect((await audit(id)).map((a) => a.action)).toEqual(['member_left', 'member_left', 'member_left']);
  });
});

describe('transferWorkspace', () => {
  it('makes a member the owner and the old owner an admin, in one step, audited', async () => {
    const id = await workspace();
    const owner = expectData(
      await transferWorkspace({ ...as('owner'), path: { workspace_id: id, user_id: people.member.userId } }),
    );
    expect(owner).toMatchObject({ user_id: people.member.userId, role: 'owner' });
    expect(await roles(id)).toEqual({
      [people.owner.userId]: 'admin',
      [people.admin.userId]: 'admin',
      [people.member.userId]: 'owner',
      [people.auditor.userId]: 'auditor',
    });
    expect(await audit(id)).toEqual([
      {
        action: 'ownership_transferred',
        actor_id: people.owner.userId,
        subject_id: people.member.userId,
        subject_email: people.member.email,
        role: 'owner',
      },
    ]);
    // The old owner is an admin now: no second hand-over, and the new owner may not be removed by them.
    expectError(
      await transferWorkspace({ ...as('owner'), path: { workspace_id: id, user_id: people.owner.userId } }),
      403,
      'forbidden',
    );
    expectError(
      await removeWorkspaceMember({ ...as('owner'), path: { workspace_id: id, user_id: people.member.userId } }),
      403,
      'forbidden',
    );
  });

  const refused: [Who, Who, number, string][] = [
    ['admin', 'member', 403, 'forbidden'],
    ['member', 'member', 403, 'forbidden'],
    ['owner', 'owner', 422, 'validation_failed'],
    ['owner', 'outsider', 404, 'not_found'],
    ['otherOwner', 'member', 404, 'not_found'],
  ];
  for (const [who, whom, want, code] of refused)
    it(`refuses ${who} handing over to ${whom} (${want}) and changes nothing`, async () => {
      const id = await workspace();
      const before = await roles(id);
      expectError(
        await transferWorkspace({ ...as(who), path: { workspace_id: id, user_id: people[whom].userId } }),
        want,
        code,
      );
      expect(await roles(id)).toEqual(before);
      expect(await audit(id)).toEqual([]);
    });

  it('keeps exactly one owner when two hand-overs race', async () => {
    const id = await workspace();
    const results = await Promise.all(
      (['admin', 'member'] as const).map((to) =>
        transferWorkspace({ ...as('owner'), path: { workspace_id: id, user_id: people[to].userId } }),
      ),
    );
    expect(results.map((r) => r.response?.status).sort()).toEqual([200, 403]);
    const owners = Object.values(await roles(id)).filter((r) => r === 'owner');
    expect(owners).toHaveLength(1);
    expect(await audit(id)).toHaveLength(1);
  });
});
