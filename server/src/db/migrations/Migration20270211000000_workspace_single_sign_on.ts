import { Migration } from '@mikro-orm/migrations';

/**
 * A workspace's rule requiring single sign-on of its members (issue 41, `updateWorkspace`'s
 * `require_single_sign_on`): one column, off for every workspace that exists, so nothing that works today stops
 * working. Who it lets in is decided where the membership is read (server/src/workspace/workspace-repository.ts).
 */
export class Migration20270211000000_workspace_single_sign_on extends Migration {
  override name = 'Migration20270211000000_workspace_single_sign_on';

  override up(): void {
    this.addSql(`alter table "workspaces" add column "require_single_sign_on" boolean not null default false;`);
  }

  override down(): void {
    this.addSql(`alter table "workspaces" drop column if exists "require_single_sign_on";`);
  }
}
