import { Migration } from '@mikro-orm/migrations';

/** The initial schema: users and tokens, pushes and their files, audit log, passphrase attempts. */
export class Migration20260101000000_initial extends Migration {
  override name = 'Migration20260101000000_initial';

  override up(): void {
    this.addSql(`create table "users" (
      "id" uuid not null primary key,
      "email" varchar(320) not null,
      "password_hash" text null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      constraint "users_email_unique" unique ("email")
    );`);

    this.addSql(`create table "api_tokens" (
      "id" uuid not null primary key,
      "user_id" uuid not null,
      "digest" varchar(64) not null,
      "created_at" timestamptz not null,
      constraint "api_tokens_user_id_unique" unique ("user_id"),
      constraint "api_tokens_digest_unique" unique ("digest"),
      constraint "api_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);

    this.addSql(`create table "pushes" (
      "id" uuid not null primary key,
      "url_token" varchar(64) not null,
      "kind" varchar(8) not null,
      "user_id" uuid null,
      "payload_ciphertext" text null,
      "name_ciphertext" text null,
      "note_ciphertext" text null,
      "passphrase_hash" text null,
      "passphrase_protected" boolean not null,
      "expire_after_days" int not null,
      "expire_after_views" int not null,
      "views_used" int not null default 0,
      "deletable_by_viewer" boolean not null,
      "retrieval_step" boolean not null,
      "expired" boolean not null default false,
      "expired_on" timestamptz null,
      "deleted" boolean not null default false,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      "expires_at" timestamptz not null,
      constraint "pushes_url_token_unique" unique ("url_token"),
      constraint "pushes_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null,
      constraint "pushes_kind_check" check ("kind" in ('text', 'file', 'url', 'qr')),
      constraint "pushes_expire_after_days_check" check ("expire_after_days" >= 1 and "expire_after_days" <= 90),
      constraint "pushes_expire_after_views_check" check ("expire_after_views" >= 1 and "expire_after_views" <= 100),
      -- A view is claimed only while one is left: this makes over-claiming impossible, whatever the code does.
      constraint "pushes_views_used_check" check ("views_used" >= 0 and "views_used" <= "expire_after_views"),
      constraint "pushes_expired_erased" check (not "expired" or ("payload_ciphertext" is null and "passphrase_hash" is null and "note_ciphertext" is null and "expired_on" is not null))
    );`);
    // Owner lists: by user and state; scanned backwards for newest first.
    this.addSql(
      `create index "pushes_owner_list_idx" on "pushes" ("user_id", "expired", "created_at", "id") where "user_id" is not null;`,
    );
    // Sweeper: unexpired pushes by the end of their time.
    this.addSql(`create index "pushes_sweep_idx" on "pushes" ("expires_at") where not "expired";`);
    // Sweeper (file bytes) and purge: expired pushes by expiry time.
    this.addSql(`create index "pushes_expired_on_idx" on "pushes" ("expired_on") where "expired";`);

    this.addSql(`create table "push_files" (
      "id" varchar(32) not null primary key,
      "push_id" uuid not null,
      "position" int not null,
      "filename_ciphertext" text not null,
      "content_type" varchar(255) not null,
      "size" int not null,
      "content" bytea not null,
      "created_at" timestamptz not null,
      constraint "push_files_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade
    );`);
    this.addSql(`create index "push_files_push_idx" on "push_files" ("push_id", "position");`);

    this.addSql(`create table "audit_entries" (
      "id" bigserial primary key,
      "push_id" uuid not null,
      "kind" varchar(32) not null,
      "ip" varchar(255) not null,
      "user_agent" varchar(255) not null,
      "referrer" varchar(255) not null,
      "user_id" uuid null,
      "created_at" timestamptz not null,
      constraint "audit_entries_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade,
      constraint "audit_entries_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null
    );`);
    this.addSql(`create index "audit_entries_push_idx" on "audit_entries" ("push_id", "created_at", "id");`);

    this.addSql(`create table "passphrase_attempts" (
      "id" bigserial primary key,
      "push_id" uuid not null,
      "attempted_at" timestamptz not null,
      constraint "passphrase_attempts_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade
    );`);
    this.addSql(`create index "passphrase_attempts_push_idx" on "passphrase_attempts" ("push_id", "attempted_at");`);
  }

  override down(): void {
    this.addSql('drop table if exists "passphrase_attempts";');
    this.addSql('drop table if exists "audit_entries";');
    this.addSql('drop table if exists "push_files";');
    this.addSql('drop table if exists "pushes";');
    this.addSql('drop table if exists "api_tokens";');
    this.addSql('drop table if exists "users";');
  }
}
