import { Migration } from '@mikro-orm/migrations';

/**
 * Managing a workspace's members (issue 41): `workspace_audit`, the workspace's own trail of who changed whose
 * membership, when. One row per change: a role changed (`role_changed`, with the new role), a member removed
 * (`member_removed`), a member who left (`member_left`), ownership handed over (`ownership_transferred`, the subject
 * the new owner). The instance operator's `admin_audit` is not the place: these are the workspace's own admins'
 * actions, read by the workspace, not by the operator.
 *
 * The actor and the subject stay named after their accounts are deleted (`on delete set null` keeps the row, the
 * email at the time is kept beside). The workspace's deletion takes its trail with it. Nothing that exists changes:
 * the tables of Migration20270121000000_workspaces are left as they are.
 */
export class Migration20270201000000_workspace_members extends Migration {
  override name = 'Migration20270201000000_workspace_members';

  override up(): void {
    this.addSql(`create table "workspace_audit" (
      "id" bigint generated always as identity primary key,
      "workspace_id" integer not null references "workspaces" ("id") on delete cascade,
      "action" varchar(32) not null,
      "actor_id" uuid null references "users" ("id") on delete set null,
      "subject_id" uuid null references "users" ("id") on delete set null,
      "subject_email" varchar(320) not null,
      "role" varchar(16) null,
      "at" timestamptz not null,
      constraint "workspace_audit_action_check"
        check ("action" in ('role_changed', 'member_removed', 'member_left', 'ownership_transferred')),
      constraint "workspace_audit_role_check" check ("role" in ('owner', 'admin', 'member', 'auditor'))
    );`);
    this.addSql(`create index "workspace_audit_workspace_at_idx" on "workspace_audit" ("workspace_id", "at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "workspace_audit";`);
  }
}
