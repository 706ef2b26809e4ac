/**
 * Migration20270207000000_workspace_brand on a database made by the previous migration set, with a workspace, its
 * members, a push in it and a trail entry (an instance upgraded in place): all stay as they were, the workspace has
 * no brand until one is set, a brand change is audited beside the member changes, and `down` takes the brands away
 * and leaves the rest alone.
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

const BEFORE = 'Migration20270205000000_workspace_invitations';

const table = async () =>
  (await db.query<{ t: string | null }>(`select to_regclass('workspace_brands')::text as t`))[0]!.t;

describe('the workspace brand, on a database with workspaces in it', () => {
  it('keeps members, pushes and the trail, starts without a brand, and is undone by its down', async () => {
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
    await before.workspaces!.changeMember(made.id, member.userId, { kind: 'role', role: 'admin' }, ctx(owner.userId));
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    expect(await table()).toBeNull();

    // The upgrade: a Core runs the pending migration at start.
    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      expect(await table()).toBe('workspace_brands');
      expect(await core.workspaceBrands!.get(made.id, ctx(member.userId))).toMatchObject({
        configured: false,
        logo: null,
      });
      expect((await core.pushes.retrieve(push.url_token, undefined, ctx())).payload).toBe('kept');
      const set = await core.workspaceBrands!.update(
        made.id,
        { brand: { name: 'Acme IT', accent_color: '#0b5cad' } },
        ctx(member.userId),
      );
      expect(set).toMatchObject({ configured: true, name: 'Acme IT', accent_color: '#0b5cad' });
      const rows = await db.query(
        'select action, role, subject_email from workspace_audit where workspace_id = $1 order by id',
        [made.id],
      );
      expect(rows).toEqual([
        { action: 'role_changed', role: 'admin', subject_email: 'member@example.org' },
        { action: 'brand_changed', role: null, subject_email: 'member@example.org' },
      ]);
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    expect(await table()).toBeNull();
    // The trail keeps its entries (the table checks only their form).
    expect(await db.query('select action from workspace_audit where workspace_id = $1 order by id', [made.id])).toEqual(
      [{ action: 'role_changed' }, { action: 'brand_changed' }],
    );
    const [kept] = await db.query('select role from workspace_members where workspace_id = $1 and user_id = $2', [
      made.id,
      member.userId,
    ]);
    expect(kept).toEqual({ role: 'admin' });
  });
});
