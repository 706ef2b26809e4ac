import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 41, the admin console (/admin, docs/admin.md):
 *
 * - `users.admin`: the operator flagged the account an administrator (`npm run users -- grant-admin EMAIL`); the
 *   addresses of PWPUSH_ADMIN_EMAILS are administrators too, without a flag.
 * - `users.locked_at`: an administrator locked the account. A locked account cannot sign in, and its API token, its
 *   API keys and its sessions are refused (each check reads the column in the statement it already ran).
 * - `security_events`: failed sign-ins, sign-ins refused past the limit (a lockout, one row a minute per email and
 *   address), sign-ins of locked accounts, wrong second-factor codes, and accounts locked and unlocked; the console
 *   shows the latest. Kept 30 days and at most 100,000 rows (the sweeper trims).
 * - `admin_audit`: every administrator's action (who, what, whom, when, from where), in a table of its own. The
 *   administrator's and the target's emails are copied into the row, so the trail outlives a deleted account.
 */
export class Migration20270115000000_admin_console extends Migration {
  override name = 'Migration20270115000000_admin_console';

  override up(): void {
    this.addSql(`alter table "users" add column "admin" boolean not null default false;`);
    this.addSql(`alter table "users" add column "locked_at" timestamptz null;`);
    this.addSql(`create table "security_events" (
      "id" bigserial primary key,
      "kind" text not null,
      "email" text not null,
      "user_id" uuid null references "users" ("id") on delete set null,
      "ip" text not null,
      "at" timestamptz not null
    );`);
    this.addSql(`create index "security_events_at_idx" on "security_events" ("at");`);
    this.addSql(`create index "security_events_kind_email_idx" on "security_events" ("kind", "email", "ip", "at");`);
    this.addSql(`create table "admin_audit" (
      "id" bigserial primary key,
      "admin_id" uuid null references "users" ("id") on delete set null,
      "admin_email" text not null,
      "action" text not null,
      "target_email" text null,
      "ip" text not null,
      "user_agent" text not null,
      "at" timestamptz not null
    );`);
    this.addSql(`create index "admin_audit_at_idx" on "admin_audit" ("at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "admin_audit";`);
    this.addSql(`drop table if exists "security_events";`);
    this.addSql(`alter table "users" drop column if exists "locked_at";`);
    this.addSql(`alter table "users" drop column if exists "admin";`);
  }
}
