/**
 * Migration20270211000000_workspace_single_sign_on on a database made by the previous migration set, with a
 * workspace, its owner, a member, a rule and a push in it: every workspace comes up with `require_single_sign_on`
 * off, its other rules and members as they were, and its member still creates and lists in it; `down` drops the
 * column and keeps the rest.
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

const BEFORE = 'Migration20270209000000_admin_workspace_audit';

const hasColumn = async () =>
  (
    await db.query<{ n: number }>(
      `select count(*)::int as n from information_schema.columns
       where table_name = 'workspaces' and column_name = 'require_single_sign_on'`,
    )
  )[0]!.n === 1;

describe('the workspace single sign-on migration, on a database with a workspace in it', () => {
  it('comes up with the rule off for every workspace and everything else kept; down drops the column only', async () => {
    await orm.migrator.up();
    const before = await createCore(makeSettings({ databaseUrl: db.url }));
    const owner = await before.users.createUser('owner@example.org');
    const member = await before.users.createUser('member@example.org');
    const made = await before.workspaces!.create('Acme', ctx(owner.userId));
    await db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
      [made.id, member.userId],
    );
    const push = await before.pushes.create({ payload: 'kept' }, ctx(member.userId), { workspaceId: made.id });
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    expect(await hasColumn()).toBe(false);
    await db.query(`update workspaces set sso_domain = 'example.org' where id = $1`, [made.id]);

    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      expect(await hasColumn()).toBe(true);
      expect(await core.workspaces!.list(ctx(member.userId))).toEqual([
        expect.objectContaining({
          id: made.id,
          role: 'member',
          require_two_factor: false,
          require_single_sign_on: false,
          sso_domain: 'example.org',
        }),
      ]);
      const listed = await core.pushes.list('active', 1, ctx(member.userId), made.id);
      expect(listed.items.map((p) => p.url_token)).toEqual([push.url_token]);
      const again = await core.pushes.create({ payload: 'after' }, ctx(member.userId), { workspaceId: made.id });
      expect(again.workspace_id).toBe(made.id);
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    expect(await hasColumn()).toBe(false);
    const [kept] = await db.query<{ n: number }>('select count(*)::int as n from pushes where workspace_id = $1', [
      made.id,
    ]);
    expect(kept!.n).toBe(2);
  });
});
