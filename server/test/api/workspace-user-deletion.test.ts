/**
 * What a user's deletion does to their workspaces (issue 41, docs/admin.md "Deleting a user"), through the admin
 * service's `deleteUser`, the one path of the admin console and `npm run users -- delete`, on the real server:
 * refused (422, naming the workspaces, nothing changed) while the user is the only owner of a workspace with other
 * members; once it is handed over, the pushes they made in it stay the workspace's (listed by its new owner, opening
 * for their recipients, expired by an admin, their creator gone) while their personal pushes go; a workspace they
 * were the only member of is deleted with them, every row of it.
 */
import {
  createPush,
  createWorkspace,
  expirePush,
  getPush,
  listActivePushes,
  transferWorkspace,
} from '@secret-push/sdk/generated';
import { ApiError } from '@secret-push/rules';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

let api: RealApi;
let leaver: User, admin: User, reader: User;

beforeAll(async () => {
  api = await startRealApi();
  leaver = await api.user('wsuserdel-leaver@example.org');
  admin = await api.user('wsuserdel-admin@example.org');
  reader = await api.user('wsuserdel-reader@example.org');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

const as = (who: User) => ({ client: api.client, auth: bearer(who.token) });

async function workspaceOf(who: User, name: string): Promise<number> {
  return expectData(await createWorkspace({ ...as(who), body: { workspace: { name } } }), 201).id;
}

const push = async (who: User, payload: string, workspaceId?: number) =>
  expectData(
    await createPush({
      ...as(who),
      body: { push: { payload }, ...(workspaceId ? { workspace_id: workspaceId } : {}) } as never,
    }),
    201,
  ).url_token;

const rows = async (sql: string, params: unknown[]) => api.db.query<Record<string, unknown>>(sql, params);

describe("a user's deletion and their workspaces", () => {
  it('is refused while they are the only owner of a workspace with other members, and changes nothing', async () => {
    const shared = await workspaceOf(leaver, 'Shared team');
    const other = await workspaceOf(leaver, 'Second team');
    for (const id of [shared, other])
      await api.db.query(
        "insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'admin', now())",
        [id, admin.userId],
      );
    const mine = await push(leaver, 'personal');
    const refused = await api.core.admin!.deleteUser(leaver.userId, 'test').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(422);
    expect((refused as ApiError).message).toContain('Shared team');
    expect((refused as ApiError).message).toContain('Second team');
    // Nothing changed: the account is not locked, its token works, its push opens, both workspaces are whole.
    const [user] = await rows('select locked_at from users where id = $1', [leaver.userId]);
    expect(user!.locked_at).toBeNull();
    expect(expectData(await getPush({ ...as(leaver), path: { url_token: mine } })).payload).toBe('personal');
    expect(await rows('select 1 from workspace_members where user_id = $1', [leaver.userId])).toHaveLength(2);
    // Handed over (and the second deleted through the API's path would do too): the deletion goes ahead.
    for (const id of [shared, other])
      expectData(await transferWorkspace({ ...as(leaver), path: { workspace_id: id, user_id: admin.userId } }));
  });

  it('keeps their pushes of a workspace that lives on, deletes their personal ones and the workspace they were alone in', async () => {
    const team = await workspaceOf(admin, 'Lives on');
    await api.db.query(
      "insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())",
      [team, leaver.userId],
    );
    const teamPushes = [await push(leaver, 'team secret 1', team), await push(leaver, 'team secret 2', team)];
    const solo = await workspaceOf(leaver, 'Just me');
    const soloPush = await push(leaver, 'solo secret', solo);
    const personal = await push(leaver, 'personal secret');

    const result = await api.core.admin!.deleteUser(leaver.userId, 'test');
    expect(result.workspaces).toBe(1);
    expect(await rows('select 1 from users where id = $1', [leaver.userId])).toHaveLength(0);

    // The team's pushes stay the team's, without a creator: listed by its owner, opening for their recipients.
    const kept = await rows('select url_token, user_id, workspace_id from pushes where url_token = any($1)', [
      teamPushes,
    ]);
    expect(kept).toHaveLength(2);
    for (const row of kept) expect(row).toMatchObject({ user_id: null, workspace_id: team });
    const listed = expectData(await listActivePushes({ ...as(admin), query: { workspace_id: String(team) } })).map(
      (p) => p.url_token,
    );
    expect(listed).toEqual(expect.arrayContaining(teamPushes));
    expect(expectData(await getPush({ ...as(reader), path: { url_token: teamPushes[0]! } })).payload).toBe(
      'team secret 1',
    );
    expect(expectData(await expirePush({ ...as(admin), path: { url_token: teamPushes[1]! } })).expired).toBe(true);
    // The personal push and the workspace the user was alone in are gone, every row of it.
    expectError(await getPush({ ...as(reader), path: { url_token: personal } }), 404, 'not_found');
    expectError(await getPush({ ...as(reader), path: { url_token: soloPush } }), 404, 'not_found');
    for (const table of ['workspaces where id', 'workspace_members where workspace_id', 'pushes where workspace_id'])
      expect(await rows(`select 1 from ${table} = $1`, [solo]), table).toHaveLength(0);
    expect(await rows('select 1 from workspaces where id = $1', [team])).toHaveLength(1);
  });
});
