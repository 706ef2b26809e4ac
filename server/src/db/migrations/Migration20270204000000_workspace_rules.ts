import { Migration } from '@mikro-orm/migrations';

/**
 * A workspace's sign-in rules (issue 41, `updateWorkspace`): the columns `require_two_factor` and `sso_domain` of
 * Migration20270121000000_workspaces start being used, and the workspace's trail records more kinds of entry.
 *
 * - `workspace_audit.action` was checked against the four member changes of Migration20270201000000_workspace_members.
 *   Every feature of a workspace adds entries (its settings changed, a member who joined by their email domain,
 *   invitations, keys, webhooks…), and a check listing them would be rewritten by each, with the risk of one
 *   migration's list dropping another's. The check now keeps the column's form (a lower-case word of up to 32
 *   characters); which actions exist is the code's list (`WORKSPACE_AUDIT_ACTIONS`, server/src/workspace/workspace-audit.ts).
 * - `workspaces.sso_domain` is kept in lower case (the unique constraint then compares domains as DNS does).
 *
 * Nothing that exists changes meaning: every row already satisfies both checks. `down` puts the four-action check
 * back `not valid` (the rows written since keep their place; new writes are checked).
 */
export class Migration20270204000000_workspace_rules extends Migration {
  override name = 'Migration20270204000000_workspace_rules';

  override up(): void {
    this.addSql(`alter table "workspace_audit" drop constraint "workspace_audit_action_check";`);
    this.addSql(
      `alter table "workspace_audit" add constraint "workspace_audit_action_check" check ("action" ~ '^[a-z][a-z_]{0,31}$');`,
    );
    this.addSql(
      `update "workspaces" set "sso_domain" = lower("sso_domain") where "sso_domain" <> lower("sso_domain");`,
    );
    this.addSql(
      `alter table "workspaces" add constraint "workspaces_sso_domain_lower" check ("sso_domain" = lower("sso_domain"));`,
    );
  }

  override down(): void {
    this.addSql(`alter table "workspaces" drop constraint if exists "workspaces_sso_domain_lower";`);
    this.addSql(`alter table "workspace_audit" drop constraint "workspace_audit_action_check";`);
    this.addSql(
      `alter table "workspace_audit" add constraint "workspace_audit_action_check"
        check ("action" in ('role_changed', 'member_removed', 'member_left', 'ownership_transferred')) not valid;`,
    );
  }
}
