/**
 * What each role of a workspace may do with a push of the workspace that is not their own (issue 41): its owners
 * and admins expire it and read its audit log, its auditors read the audit log, its members and everyone outside get
 * 403 and change nothing; and a second workspace's owner gets nothing of the first. The matrix over every workspace
 * operation (generated from the contract) is ./workspace-role-matrix.test.ts; this covers the push operations that
 * roles widen.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPush, createWorkspace, expirePush, getPushAudit } from '@secret-push/sdk/generated';
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

let api: RealApi;
const people: Record<WorkspaceRole | 'outsider' | 'otherOwner', User> = {} as never;
let workspaceId: number;

/** A push the member makes in the workspace (not deletable by viewers): the push the others act on. */
async function membersPush(): Promise<string> {
  return expectData(
    await createPush({
      client: api.client,
      auth: bearer(people.member.token),
      body: { push: { payload: 'the member’s', deletable_by_viewer: false }, workspace_id: workspaceId },
    }),
    201,
  ).url_token;
}

const status = (result: { response?: Response }) => result.response?.status;

beforeAll(async () => {
  api = await startRealApi();
  for (const who of ['owner', 'admin', 'member', 'auditor', 'outsider', 'otherOwner'] as const)
    people[who] = await api.user(`role-${who}@example.org`);
  workspaceId = expectData(
    await createWorkspace({ client: api.client, auth: bearer(people.owner.token), body: { workspace: { name: 'W' } } }),
    201,
  ).id;
  expectData(
    await createWorkspace({
      client: api.client,
      auth: bearer(people.otherOwner.token),
      body: { workspace: { name: 'Other' } },
    }),
    201,
  );
  // No invitation operation yet (issue 41 item 4): the rows accepting an invitation will write.
  for (const role of ['admin', 'member', 'auditor'] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [workspaceId, people[role].userId, role],
    );
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

describe('roles on a workspace push that is not their own', () => {
  const expected: [keyof typeof people, { expire: number; audit: number }][] = [
    ['owner', { expire: 200, audit: 200 }],
    ['admin', { expire: 200, audit: 200 }],
    ['auditor', { expire: 403, audit: 200 }],
    ['outsider', { expire: 403, audit: 403 }],
    ['otherOwner', { expire: 403, audit: 403 }],
  ];
  for (const [who, want] of expected) {
    it(`${who}: expire ${want.expire}, audit ${want.audit}`, async () => {
      const token = await membersPush();
      const auth = bearer(people[who].token);
      expect(status(await getPushAudit({ client: api.client, auth, path: { url_token: token } }))).toBe(want.audit);
      expect(status(await expirePush({ client: api.client, auth, path: { url_token: token } }))).toBe(want.expire);
      const [row] = await api.db.query<{ expired: boolean }>('select expired from pushes where url_token = $1', [
        token,
      ]);
      expect(row!.expired).toBe(want.expire === 200);
    });
  }

  it("a member: 403 on another member's push, 200 on their own", async () => {
    const admins = expectData(
      await createPush({
        client: api.client,
        auth: bearer(people.admin.token),
        body: { push: { payload: 'the admin’s', deletable_by_viewer: false }, workspace_id: workspaceId },
      }),
      201,
    ).url_token;
    const auth = bearer(people.member.token);
    expect(status(await getPushAudit({ client: api.client, auth, path: { url_token: admins } }))).toBe(403);
    expect(status(await expirePush({ client: api.client, auth, path: { url_token: admins } }))).toBe(403);
    const own = await membersPush();
    expect(status(await expirePush({ client: api.client, auth, path: { url_token: own } }))).toBe(200);
  });

  it('an auditor may not create in the workspace (403), and nothing is made', async () => {
    const refused = await createPush({
      client: api.client,
      auth: bearer(people.auditor.token),
      body: { push: { payload: 'no' }, workspace_id: workspaceId },
    });
    expect(status(refused)).toBe(403);
    const [row] = await api.db.query<{ n: string }>('select count(*) as n from pushes where user_id = $1', [
      people.auditor.userId,
    ]);
    expect(Number(row!.n)).toBe(0);
  });
});
