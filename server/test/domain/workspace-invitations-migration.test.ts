/**
 * Migration20270205000000_workspace_invitations on a database made by the previous migration set, with a workspace,
 * its members, a trail of member changes and a push in it (an instance upgraded in place): everything stays as it
 * was, the old trail rows keep their actions (their `invitation_id` null), invitations work at once and are audited,
 * and `down` takes the invitations (and their trail rows) away and leaves the rest alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src/core.js';
import { openOrm } from '../../src/db/orm.js';
import { createTestDatabase, makeSettings } from '../support/db.js';
import { ctx } from './helpers.js';

const db = await createTestDatabase();
const orm = await openOrm(db.url, { poolMax: 2, noTimeouts: true });
afterAll(async () => {
  await orm.close(true);
  await db.drop();
});

const BEFORE = 'Migration20270204000000_workspace_rules';

const table = async () =>
  (await db.query<{ t: string | null }>(`select to_regclass('workspace_invitations')::text as t`))[0]!.t;
const trail = (id: number) =>
  db.query<{ action: string; role: string | null }>(
    'select action, role from workspace_audit where workspace_id = $1 order by id',
    [id],
  );

describe('invitations, on a database with workspaces and their trail in it', () => {
  it('keeps the members, trail and pushes, serves invitations at once, and is undone by its down', async () => {
    await orm.migrator.up();
    const before = await createCore(makeSettings({ databaseUrl: db.url }));
    const owner = await before.users.createUser('owner@example.org');
    const member = await before.users.createUser('member@example.org');
    const joiner = await before.users.createUser('joiner@example.org');
    const made = await before.workspaces!.create('Acme', ctx(owner.userId));
    await db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
      [made.id, member.userId],
    );
    await before.workspaces!.changeMember(made.id, member.userId, { kind: 'role', role: 'admin' }, ctx(owner.userId));
    const push = await before.pushes.create({ payload: 'kept', workspace_id: made.id }, ctx(member.userId));
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    expect(await table()).toBeNull();
    expect(await trail(made.id)).toEqual([{ action: 'role_changed', role: 'admin' }]);

    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      expect(await table()).toBe('workspace_invitations');
      expect(await trail(made.id)).toEqual([{ action: 'role_changed', role: 'admin' }]);
      const [old] = await db.query<{ invitation_id: string | null }>(
        'select invitation_id from workspace_audit where workspace_id = $1',
        [made.id],
      );
      expect(old!.invitation_id).toBeNull();
      const members = await core.workspaces!.members(made.id, ctx(member.userId));
      expect(members.map((m) => [m.email, m.role])).toEqual([
        ['owner@example.org', 'owner'],
        ['member@example.org', 'admin'],
      ]);
      expect((await core.pushes.retrieve(push.url_token, undefined, ctx())).payload).toBe('kept');

      const invitation = await core.invitations!.create(made.id, { role: 'auditor' }, ctx(member.userId));
      const joined = await core.invitations!.accept(new URL(invitation.url!).hash.slice(1), ctx(joiner.userId));
      expect(joined).toMatchObject({ id: made.id, name: 'Acme', role: 'auditor' });
      expect(await trail(made.id)).toEqual([
        { action: 'role_changed', role: 'admin' },
        { action: 'invitation_created', role: 'auditor' },
        { action: 'invitation_accepted', role: 'auditor' },
      ]);
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    expect(await table()).toBeNull();
    expect(await trail(made.id)).toEqual([{ action: 'role_changed', role: 'admin' }]);
    const [kept] = await db.query('select role from workspace_members where workspace_id = $1 and user_id = $2', [
      made.id,
      joiner.userId,
    ]);
    expect(kept).toEqual({ role: 'auditor' });
  });
});
