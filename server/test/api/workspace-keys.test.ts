/**
 * API keys of a workspace (issue 41) on the real server and database, through the generated SDK: who may make,
 * list and revoke them (owner and admins; members, outsiders, another workspace's owner and unknown ids get 403 or
 * 404 and nothing is written); what such a key does (creates and lists in its workspace without naming it, expires
 * and audits its pushes, and nothing in its creator's personal space, another workspace or a personal-space
 * operation); and the leaver: when its creator's membership ends the workspace's key keeps working, while the
 * creator's personal key stops acting there at once and the pushes it made stay in the workspace.
 *
 * The membership ends as a leaver's does: the owner removes them (`removeWorkspaceMember`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createPush,
  createWebhook,
  createWorkspace,
  expirePush,
  getPushAudit,
  listActivePushes,
  removeWorkspaceMember,
  listApiKeys,
  listWorkspaces,
  revokeApiKey,
  type ApiKeyScope,
} from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError, status } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

const SCOPES: ApiKeyScope[] = [
  'pushes:create',
  'pushes:read',
  'pushes:delete',
  'webhooks:manage',
  'api_keys:manage',
  'workspaces:read',
];

let api: RealApi;
let owner: User, admin: User, member: User, outsider: User, otherOwner: User;
let workspaceId: number;
let otherWorkspaceId: number;

async function keyCount(): Promise<number> {
  const [row] = await api.db.query<{ n: string }>('select count(*) as n from api_keys');
  return Number(row!.n);
}

function makeKey(token: string, workspace?: number | string | null) {
  return createApiKey({
    client: api.client,
    auth: bearer(token),
    body: {
      api_key: {
        name: 'team key',
        scopes: SCOPES,
        ...(workspace === undefined ? {} : { workspace_id: workspace as number }),
      },
    },
  });
}

async function workspaceKey(token: string, workspace: number): Promise<{ id: string; token: string }> {
  const made = expectData(await makeKey(token, workspace), 201);
  expect(made.workspace_id).toBe(workspace);
  return { id: made.id, token: made.token };
}

async function push(token: string, workspace?: number): Promise<string> {
  return expectData(
    await createPush({
      client: api.client,
      auth: bearer(token),
      body: {
        push: { payload: 'team secret', deletable_by_viewer: false },
        ...(workspace ? { workspace_id: workspace } : {}),
      },
    }),
    201,
  ).url_token;
}

async function workspaceOf(urlToken: string): Promise<number | null> {
  const [row] = await api.db.query<{ workspace_id: number | null }>(
    'select workspace_id from pushes where url_token = $1',
    [urlToken],
  );
  return row!.workspace_id === null ? null : Number(row!.workspace_id);
}

async function activeTokens(token: string, workspace?: number): Promise<string[]> {
  const list = expectData(
    await listActivePushes({
      client: api.client,
      auth: bearer(token),
      query: workspace ? { workspace_id: String(workspace) } : {},
    }),
  );
  return list.map((p) => p.url_token);
}

beforeAll(async () => {
  api = await startRealApi({ webhooks: { enabled: true, allowPrivate: false, retrySchedule: [1, 1] } });
  const user = (who: string) => api.user(`wskeys-${who}@example.org`);
  owner = await user('owner');
  admin = await user('admin');
  member = await user('member');
  outsider = await user('outsider');
  otherOwner = await user('other-owner');
  workspaceId = expectData(
    await createWorkspace({ client: api.client, auth: bearer(owner.token), body: { workspace: { name: 'Team' } } }),
    201,
  ).id;
  otherWorkspaceId = expectData(
    await createWorkspace({
      client: api.client,
      auth: bearer(otherOwner.token),
      body: { workspace: { name: 'Other' } },
    }),
    201,
  ).id;
  // No invitation operation yet (issue 41): the rows an accepted invitation will write.
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
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

describe('making a workspace key', () => {
  it('its owner and admins make one; it is listed as the workspace’s, not in their personal list', async () => {
    const byOwner = await workspaceKey(owner.token, workspaceId);
    const byAdmin = await workspaceKey(admin.token, workspaceId);
    const listed = expectData(
      await listApiKeys({
        client: api.client,
        auth: bearer(owner.token),
        query: { workspace_id: String(workspaceId) },
      }),
    ).api_keys.map((k) => k.id);
    expect(listed).toEqual(expect.arrayContaining([byOwner.id, byAdmin.id]));
    const personal = expectData(await listApiKeys({ client: api.client, auth: bearer(admin.token) })).api_keys;
    expect(personal.map((k) => k.id)).not.toContain(byAdmin.id);
    expect(personal.every((k) => k.workspace_id === null)).toBe(true);
  });

  it('a member, an outsider, another workspace’s owner and an unknown id get 403 and nothing is written', async () => {
    const before = await keyCount();
    expectError(await makeKey(member.token, workspaceId), 403, 'forbidden');
    expectError(await makeKey(outsider.token, workspaceId), 403, 'forbidden');
    expectError(await makeKey(otherOwner.token, workspaceId), 403, 'forbidden');
    expectError(await makeKey(owner.token, otherWorkspaceId), 403, 'forbidden');
    expectError(await makeKey(owner.token, 2_000_000_000), 403, 'forbidden');
    expect(await keyCount()).toBe(before);
  });

  it('an id that is no workspace id answers 422 on workspace_id; digits are an id', async () => {
    const before = await keyCount();
    for (const bad of ['abc', 0, -1, 1.5, '01', 3_000_000_000]) {
      const refused = expectError(await makeKey(owner.token, bad), 422, 'validation_failed');
      expect(Object.keys(refused.errors ?? {})).toEqual(['workspace_id']);
    }
    expect(await keyCount()).toBe(before);
    const made = expectData(await makeKey(owner.token, String(workspaceId)), 201);
    expect(made.workspace_id).toBe(workspaceId);
  });

  it('members, outsiders and another workspace’s owner neither list nor revoke its keys', async () => {
    const key = await workspaceKey(owner.token, workspaceId);
    for (const who of [member, outsider, otherOwner]) {
      const auth = bearer(who.token);
      expectError(
        await listApiKeys({ client: api.client, auth, query: { workspace_id: String(workspaceId) } }),
        403,
        'forbidden',
      );
      expectError(await revokeApiKey({ client: api.client, auth, path: { id: key.id } }), 404, 'not_found');
    }
    expectError(
      await listApiKeys({ client: api.client, auth: bearer(owner.token), query: { workspace_id: 'x1' } }),
      400,
      'invalid_parameter',
    );
    // Still there, and still working.
    expect(await activeTokens(key.token)).toBeDefined();
  });
});

describe('what a workspace key does', () => {
  it('creates in its workspace without naming it, and lists every push of it', async () => {
    const key = await workspaceKey(owner.token, workspaceId);
    const byKey = await push(key.token);
    expect(await workspaceOf(byKey)).toBe(workspaceId);
    const byMember = await push(member.token, workspaceId);
    const listed = await activeTokens(key.token);
    expect(listed).toEqual(expect.arrayContaining([byKey, byMember]));
    expect(await activeTokens(key.token, workspaceId)).toEqual(listed);
    // Its workspace's pushes it governs: the member's push it audits and expires.
    expectData(await getPushAudit({ client: api.client, auth: bearer(key.token), path: { url_token: byMember } }));
    expectData(await expirePush({ client: api.client, auth: bearer(key.token), path: { url_token: byMember } }));
    const workspaces = expectData(await listWorkspaces({ client: api.client, auth: bearer(key.token) }));
    expect(workspaces.map((w) => w.id)).toEqual([workspaceId]);
  });

  it('does nothing in its creator’s personal space, another workspace or a personal-space operation', async () => {
    const key = await workspaceKey(owner.token, workspaceId);
    const personal = await push(owner.token);
    const auth = bearer(key.token);
    expect(await activeTokens(key.token)).not.toContain(personal);
    expectError(await getPushAudit({ client: api.client, auth, path: { url_token: personal } }), 403, 'forbidden');
    expectError(await expirePush({ client: api.client, auth, path: { url_token: personal } }), 403, 'forbidden');
    const [row] = await api.db.query<{ expired: boolean }>('select expired from pushes where url_token = $1', [
      personal,
    ]);
    expect(row!.expired).toBe(false);
    const pushes = await api.db.query('select 1 from pushes');
    expectError(
      await createPush({
        client: api.client,
        auth,
        body: { push: { payload: 'elsewhere' }, workspace_id: otherWorkspaceId },
      }),
      403,
      'forbidden',
    );
    expect((await api.db.query('select 1 from pushes')).length).toBe(pushes.length);
    expectError(
      await listActivePushes({ client: api.client, auth, query: { workspace_id: String(otherWorkspaceId) } }),
      403,
      'forbidden',
    );
    const hooks = await api.db.query('select 1 from webhooks');
    expectError(
      await createWebhook({
        client: api.client,
        auth,
        body: {
          webhook: { url: 'https://hooks.example.org/x', events: ['push.created'], workspace_id: otherWorkspaceId },
        },
      }),
      403,
      'forbidden',
    );
    expect((await api.db.query('select 1 from webhooks')).length).toBe(hooks.length);
    expectError(
      await listApiKeys({ client: api.client, auth, query: { workspace_id: String(otherWorkspaceId) } }),
      403,
      'forbidden',
    );
  });

  it('makes keys of its own workspace only, and lists and revokes its workspace’s keys', async () => {
    const key = await workspaceKey(owner.token, workspaceId);
    const child = expectData(await makeKey(key.token), 201);
    expect(child.workspace_id).toBe(workspaceId);
    expectError(await makeKey(key.token, otherWorkspaceId), 403, 'forbidden');
    const listed = expectData(await listApiKeys({ client: api.client, auth: bearer(key.token) })).api_keys;
    expect(listed.map((k) => k.id)).toEqual(expect.arrayContaining([key.id, child.id]));
    expect(listed.every((k) => k.workspace_id === workspaceId)).toBe(true);
    // Not its creator's personal keys.
    const personal = expectData(await makeKey(owner.token), 201);
    expectError(
      await revokeApiKey({ client: api.client, auth: bearer(key.token), path: { id: personal.id } }),
      404,
      'not_found',
    );
    expectData(await revokeApiKey({ client: api.client, auth: bearer(key.token), path: { id: child.id } }));
    expectError(await listApiKeys({ client: api.client, auth: bearer(child.token) }), 401, 'invalid_token');
  });
});

describe('a leaver', () => {
  it('the workspace’s key keeps working; their personal key stops acting there at once; their pushes stay', async () => {
    const leaver = await api.user('wskeys-leaver@example.org');
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [workspaceId, leaver.userId, 'admin'],
    );
    const teamKey = await workspaceKey(leaver.token, workspaceId);
    const personalKey = expectData(await makeKey(leaver.token), 201);
    const made = await push(personalKey.token, workspaceId);
    expect(await workspaceOf(made)).toBe(workspaceId);
    expect(await activeTokens(personalKey.token, workspaceId)).toContain(made);

    expectData(
      await removeWorkspaceMember({
        client: api.client,
        auth: bearer(owner.token),
        path: { workspace_id: workspaceId, user_id: leaver.userId },
      }),
    );

    const auth = bearer(personalKey.token);
    expectError(
      await createPush({ client: api.client, auth, body: { push: { payload: 'after' }, workspace_id: workspaceId } }),
      403,
      'forbidden',
    );
    expectError(
      await listActivePushes({ client: api.client, auth, query: { workspace_id: String(workspaceId) } }),
      403,
      'forbidden',
    );
    expectError(
      await listApiKeys({ client: api.client, auth, query: { workspace_id: String(workspaceId) } }),
      403,
      'forbidden',
    );
    // The personal key still works in the leaver's own space.
    expect(await workspaceOf(await push(personalKey.token))).toBeNull();

    // The workspace's key works on, and the push the personal key made is still the workspace's.
    const after = await push(teamKey.token);
    expect(await workspaceOf(after)).toBe(workspaceId);
    expect(await workspaceOf(made)).toBe(workspaceId);
    expect(await activeTokens(teamKey.token)).toEqual(expect.arrayContaining([made, after]));
    expect(await activeTokens(owner.token, workspaceId)).toEqual(expect.arrayContaining([made, after]));

    // Its creator, no longer a member, cannot revoke it; the owner can, and it stops at once.
    expectError(
      await revokeApiKey({ client: api.client, auth: bearer(leaver.token), path: { id: teamKey.id } }),
      404,
      'not_found',
    );
    const revoked = expectData(
      await revokeApiKey({ client: api.client, auth: bearer(owner.token), path: { id: teamKey.id } }),
    );
    expect(revoked.workspace_id).toBe(workspaceId);
    expect(status(await listActivePushes({ client: api.client, auth: bearer(teamKey.token) }))).toBe(401);
  });
});
