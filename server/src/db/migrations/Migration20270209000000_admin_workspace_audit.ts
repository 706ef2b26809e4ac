import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 41, the admin console's workspaces section (docs/admin.md): an administrator's action on a workspace (an
 * ownership handed over, a member removed, a key revoked, the workspace deleted) names the workspace in its
 * `admin_audit` row. `workspace_id` has no foreign key and the name is copied, so the trail outlives a deleted
 * workspace, as it outlives a deleted account (`target_email`).
 */
export class Migration20270209000000_admin_workspace_audit extends Migration {
  override name = 'Migration20270209000000_admin_workspace_audit';

  override up(): void {
    this.addSql(`alter table "admin_audit" add column "workspace_id" integer null;`);
    this.addSql(`alter table "admin_audit" add column "workspace_name" text null;`);
  }

  override down(): void {
    this.addSql(`alter table "admin_audit" drop column if exists "workspace_name";`);
    this.addSql(`alter table "admin_audit" drop column if exists "workspace_id";`);
  }
}
