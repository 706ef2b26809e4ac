/**
 * Migration20270204000000_workspace_rules on a database made by the previous migration set, with a workspace, a
 * member and an entry of its trail in it: the entry stays, every action of the code's list (WORKSPACE_AUDIT_ACTIONS)
 * is then accepted and a malformed one refused, `sso_domain` is kept in lower case, and `down` puts the four-action
 * check back without losing the entries written since.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src/core.js';
import { openOrm } from '../../src/db/orm.js';
import { WORKSPACE_AUDIT_ACTIONS } from '../../src/workspace/workspace-audit.js';
import { createTestDatabase, makeSettings } from '../support/db.js';
import { ctx } from './helpers.js';

const db = await createTestDatabase();
const orm = await openOrm(db.url, { poolMax: 2, noTimeouts: true });
afterAll(async () => {
  await orm.close(true);
  await db.drop();
});

const BEFORE = 'Migration20270203000000_user_locale';

const entry = (workspaceId: number, action: string) =>
  db.query(
    `insert into workspace_audit (workspace_id, action, subject_email, at) values ($1, $2, 'x@example.org', now())`,
    [workspaceId, action],
  );

describe('the workspace rules migration, on a database with a workspace and its trail', () => {
  it('keeps the trail, takes every action of the code and only well-formed ones, and is undone by its down', async () => {
    await orm.migrator.up();
    const before = await createCore(makeSettings({ databaseUrl: db.url }));
    const owner = await before.users.createUser('owner@example.org');
    const member = await before.users.createUser('member@example.org');
    const made = await before.workspaces!.create('Acme', ctx(owner.userId));
    await db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
      [made.id, member.userId],
    );
    await before.workspaces!.changeMember(made.id, member.userId, { kind: 'role', role: 'admin' }, ctx(owner.userId));
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    await expect(entry(made.id, 'settings_changed')).rejects.toThrow(/workspace_audit_action_check/);

    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      const kept = await db.query('select action, role from workspace_audit where workspace_id = $1', [made.id]);
      expect(kept).toEqual([{ action: 'role_changed', role: 'admin' }]);
      for (const action of WORKSPACE_AUDIT_ACTIONS) await entry(made.id, action);
      await expect(entry(made.id, 'Settings Changed')).rejects.toThrow(/workspace_audit_action_check/);
      await expect(entry(made.id, 'x'.repeat(33))).rejects.toThrow();
      await expect(
        db.query(`update workspaces set sso_domain = 'ACME.example' where id = $1`, [made.id]),
      ).rejects.toThrow(/workspaces_sso_domain_lower/);
      const listed = await core.workspaces!.list(ctx(member.userId));
      expect(listed).toEqual([expect.objectContaining({ id: made.id, require_two_factor: false, sso_domain: null })]);
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    const after = await db.query<{ n: number }>(
      'select count(*)::int as n from workspace_audit where workspace_id = $1',
      [made.id],
    );
    // Every entry stays, but the invitations': Migration20270205000000_workspace_invitations' down takes them with
    // its table, on the way down to BEFORE.
    const kept = WORKSPACE_AUDIT_ACTIONS.filter((a) => !a.startsWith('invitation_'));
    expect(after[0]!.n).toBe(1 + kept.length);
    await expect(entry(made.id, 'settings_changed')).rejects.toThrow(/workspace_audit_action_check/);
    await entry(made.id, 'member_left');
  });
});

describe("the trail's kinds", () => {
  it("are the contract's WorkspaceAuditEntry.action, each of them (listWorkspaceAudit answers them)", () => {
    const bundled = JSON.parse(
      readFileSync(new URL('../../../openapi/bundled/openapi.json', import.meta.url), 'utf8'),
    ) as {
      components: { schemas: { WorkspaceAuditEntry: { properties: { action: { enum: string[] } } } } };
    };
    expect([...bundled.components.schemas.WorkspaceAuditEntry.properties.action.enum].sort()).toEqual(
      [...WORKSPACE_AUDIT_ACTIONS].sort(),
    );
  });
});
