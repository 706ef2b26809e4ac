import { Migration } from '@mikro-orm/migrations';

/**
 * Web accounts: a session version per user (bumped on sign-out, which ends every session signed before it) and the
 * failed sign-in attempts that the per-email and per-address limits count on every instance.
 */
export class Migration20260301000000_accounts extends Migration {
  override name = 'Migration20260301000000_accounts';

  override up(): void {
    this.addSql(`alter table "users" add column "session_version" int not null default 1;`);

    this.addSql(`create table "login_attempts" (
      "id" bigserial primary key,
      "email" varchar(320) not null,
      "ip" varchar(255) not null,
      "attempted_at" timestamptz not null
    );`);
    this.addSql(`create index "login_attempts_email_idx" on "login_attempts" ("email", "attempted_at");`);
    this.addSql(`create index "login_attempts_ip_idx" on "login_attempts" ("ip", "attempted_at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "login_attempts";`);
    this.addSql(`alter table "users" drop column "session_version";`);
  }
}
