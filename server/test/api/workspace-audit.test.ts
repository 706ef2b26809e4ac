/**
 * A workspace's audit trail read back (issue 41; `listWorkspaceAudit`, docs/workspaces.md "Members"), on the real
 * server and database through the generated SDK: each member change (a role, a removal, a departure, a hand-over)
 * is an entry, newest first, with who made it, whom it was about and the role it gave, and nothing secret; its owner,
 * admins and auditors read it, a member gets 403, an outsider, another workspace's owner and an id no workspace has
 * 404; it pages by 50 with Link and X-Total-Count, and a page or id that is none answers 400.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createWorkspace,
  leaveWorkspace,
  listWorkspaceAudit,
  removeWorkspaceMember,
  transferWorkspace,
  updateWorkspaceMember,
} from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

let api: RealApi;
let owner: User, admin: User, member: User, auditor: User, leaver: User, outsider: User, otherOwner: User;
let workspaceId: number;
let otherWorkspaceId: number;

beforeAll(async () => {
  api = await startRealApi();
  const user = (who: string) => api.user(`wsaudit-${who}@example.org`);
  owner = await user('owner');
  admin = await user('admin');
  member = await user('member');
  auditor = await user('auditor');
  leaver = await user('leaver');
  outsider = await user('outsider');
  otherOwner = await user('other-owner');
  const make = async (who: User) =>
    expectData(
      await createWorkspace({ client: api.client, auth: bearer(who.token), body: { workspace: { name: 'T' } } }),
      201,
    ).id;
  workspaceId = await make(owner);
  otherWorkspaceId = await make(otherOwner);
  // No invitation operation yet (issue 41): the rows an accepted invitation will write.
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
    [auditor, 'auditor'],
    [leaver, 'member'],
  ] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [workspaceId, who.userId, role],
    );
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

const read = (who: User, id = workspaceId, page?: number) =>
  listWorkspaceAudit({
    client: api.client,
    auth: bearer(who.token),
    path: { workspace_id: id },
    ...(page === undefined ? {} : { query: { page } }),
  });

describe("a workspace's audit trail", () => {
  it('lists each member change newest first, with its actor, subject and role, for owners, admins and auditors', async () => {
    const path = (who: User) => ({ workspace_id: workspaceId, user_id: who.userId });
    const auth = bearer(owner.token);
    expectData(
      await updateWorkspaceMember({
        client: api.client,
        auth,
        path: path(member),
        body: { member: { role: 'admin' } },
      }),
    );
    expectData(
      await leaveWorkspace({ client: api.client, auth: bearer(leaver.token), path: { workspace_id: workspaceId } }),
    );
    expectData(await removeWorkspaceMember({ client: api.client, auth: bearer(admin.token), path: path(member) }));
    expectData(await transferWorkspace({ client: api.client, auth, path: path(admin) }));

    for (const who of [owner, admin, auditor]) {
      const result = await read(who);
      const { entries } = expectData(result);
      expect(result.response!.headers.get('x-total-count')).toBe('4');
      expect(entries.map((e) => [e.action, e.actor_id, e.subject_id, e.subject_email, e.role])).toEqual([
        ['ownership_transferred', owner.userId, admin.userId, admin.email, 'owner'],
        ['member_removed', admin.userId, member.userId, member.email, null],
        ['member_left', leaver.userId, leaver.userId, leaver.email, null],
        ['role_changed', owner.userId, member.userId, member.email, 'admin'],
      ]);
      expect(entries.map((e) => e.id)).toEqual([...entries.map((e) => e.id)].sort((a, b) => b - a));
      // Never a secret: no token of anyone's.
      const text = JSON.stringify(entries);
      for (const u of [owner, admin, member, auditor, leaver]) expect(text).not.toContain(u.token);
    }
  });

  it('a member gets 403; an outsider, another workspace’s owner and an id no workspace has get 404', async () => {
    // `member` was removed above: re-add a plain member.
    const plain = await api.user('wsaudit-plain@example.org');
    await api.db.query(
      "insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())",
      [workspaceId, plain.userId],
    );
    expectError(await read(plain), 403, 'forbidden');
    expectError(await read(outsider), 404, 'not_found');
    expectError(await read(otherOwner), 404, 'not_found');
    expectError(await read(owner, 2_000_000_000), 404, 'not_found');
    // The other workspace's trail is its own: empty.
    expect(expectData(await read(otherOwner, otherWorkspaceId)).entries).toEqual([]);
    const bad = await fetch(`${api.baseUrl}/api/v2/workspaces/abc/audit`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(bad.status).toBe(400);
    expectError(await read(owner, workspaceId, 0), 400, 'invalid_page');
  });

  it('pages by 50, newest first, with Link and X-Total-Count', async () => {
    const id = otherWorkspaceId;
    await api.db.query(
      `insert into workspace_audit (workspace_id, action, actor_id, subject_id, subject_email, role, at)
       select $1, 'role_changed', $2, $2, 'x@example.org', 'member', now() - make_interval(secs => g)
       from generate_series(1, 53) g`,
      [id, otherOwner.userId],
    );
    const first = await read(otherOwner, id);
    const page1 = expectData(first).entries;
    expect(page1).toHaveLength(50);
    expect(first.response!.headers.get('x-total-count')).toBe('53');
    expect(first.response!.headers.get('link')).toContain('page=2');
    const page2 = expectData(await read(otherOwner, id, 2)).entries;
    expect(page2).toHaveLength(3);
    const times = [...page1, ...page2].map((e) => e.at);
    expect(times).toEqual([...times].sort().reverse());
  });
});
