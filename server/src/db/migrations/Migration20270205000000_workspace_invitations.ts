import { Migration } from '@mikro-orm/migrations';

/**
 * Invitations to a workspace (issue 41): `workspace_invitations`, one row per invitation, by email (`email` set) or
 * by link (`email` null). The token is never stored: `token_digest` is its SHA-256, set when the invitation is made
 * (by link) or when its mail is sent (by email; null until then). An invitation is pending while `accepted_at` and
 * `revoked_at` are null and `expires_at` is ahead; it is never deleted with its use, so the trail can name it.
 *
 * `workspace_audit` gains `invitation_id`, naming the invitation of the actions `invitation_created`,
 * `invitation_revoked` and `invitation_accepted` (null on the others; the actions are the code's list,
 * `WORKSPACE_AUDIT_ACTIONS`, since Migration20270204000000_workspace_rules); its `subject_email` is the invited
 * address, or '' for an invitation by link until someone accepts it. Nothing that exists changes: existing rows keep their
 * values, and a previous version's process, which never names the new table or column, keeps working.
 */
export class Migration20270205000000_workspace_invitations extends Migration {
  override name = 'Migration20270205000000_workspace_invitations';

  override up(): void {
    this.addSql(`create table "workspace_invitations" (
      "id" uuid primary key,
      "workspace_id" integer not null references "workspaces" ("id") on delete cascade,
      "email" varchar(320) null,
      "role" varchar(16) not null,
      "token_digest" char(64) null,
      "invited_by" uuid null references "users" ("id") on delete set null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      "accepted_at" timestamptz null,
      "accepted_by" uuid null references "users" ("id") on delete set null,
      "revoked_at" timestamptz null,
      constraint "workspace_invitations_role_check" check ("role" in ('admin', 'member', 'auditor'))
    );`);
    this.addSql(
      `create unique index "workspace_invitations_token_digest_key" on "workspace_invitations" ("token_digest");`,
    );
    this
      .addSql(`create index "workspace_invitations_pending_idx" on "workspace_invitations" ("workspace_id", "created_at")
      where "accepted_at" is null and "revoked_at" is null;`);
    this.addSql(`alter table "workspace_audit" add column "invitation_id" uuid null;`);
  }

  override down(): void {
    this.addSql(`delete from "workspace_audit" where "action" like 'invitation_%';`);
    this.addSql(`alter table "workspace_audit" drop column "invitation_id";`);
    this.addSql(`drop table if exists "workspace_invitations";`);
  }
}
