/**
 * Migration20270201000000_workspace_members on a database made by the previous migration set, with a workspace,
 * its members and a push in it (an instance upgraded in place): the members and the push stay as they were, the
 * workspace's trail starts empty and records the first change, and `down` takes the trail away and leaves the
 * workspace alone.
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

const BEFORE = 'Migration20270125000000_unused_routines';

const trail = async () =>
  (await db.query<{ t: string | null }>(`select to_regclass('workspace_audit')::text as t`))[0]!.t;

describe('the workspace audit trail, on a database with workspaces in it', () => {
  it('keeps the members and pushes, starts an empty trail, and is undone by its down', async () => {
    // The previous version's data, made through the services, then the database taken back to the previous set.
    await orm.migrator.up();
    const before = await createCore(makeSettings({ databaseUrl: db.url }));
    const owner = await before.users.createUser('owner@example.org');
    const member = await before.users.createUser('member@example.org');
    const made = await before.workspaces!.create('Acme', ctx(owner.userId));
    await db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
      [made.id, member.userId],
    );
    const push = await before.pushes.create({ payload: 'kept', workspace_id: made.id }, ctx(member.userId));
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    expect(await trail()).toBeNull();

    // The upgrade: a Core runs the pending migration at start.
    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      expect(await trail()).toBe('workspace_audit');
      const members = await core.workspaces!.members(made.id, ctx(member.userId));
      expect(members.map((m) => [m.email, m.role])).toEqual([
        ['owner@example.org', 'owner'],
        ['member@example.org', 'member'],
      ]);
      expect((await core.pushes.retrieve(push.url_token, undefined, ctx())).payload).toBe('kept');
      await core.workspaces!.changeMember(made.id, member.userId, { kind: 'role', role: 'admin' }, ctx(owner.userId));
      const rows = await db.query('select action, role from workspace_audit where workspace_id = $1', [made.id]);
      expect(rows).toEqual([{ action: 'role_changed', role: 'admin' }]);
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    expect(await trail()).toBeNull();
    const [kept] = await db.query('select role from workspace_members where workspace_id = $1 and user_id = $2', [
      made.id,
      member.userId,
    ]);
    expect(kept).toEqual({ role: 'admin' });
  });
});
