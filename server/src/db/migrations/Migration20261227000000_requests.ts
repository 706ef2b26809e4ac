import { Migration } from '@mikro-orm/migrations';

/**
 * Requests (issue 24): a requester asks someone to send a secret. A request, the files attached to its ask and its
 * audit log; a push made from an answer is marked (`answers_request`) so that its first retrieval moves the request
 * to `collected` without a look-up for every other push.
 */
export class Migration20261227000000_requests extends Migration {
  override name = 'Migration20261227000000_requests';

  override up(): void {
    this.addSql(`create table "requests" (
      "id" uuid not null,
      "url_token" varchar(64) not null,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "state" varchar(16) not null,
      "ask_ciphertext" text null,
      "name_ciphertext" text null,
      "note_ciphertext" text null,
      "notify_emails_to" varchar(2048) not null default '',
      "notify_emails_to_locale" varchar(16) not null default '',
      "expire_after_days" int not null,
      "expire_after_seconds" int not null,
      "expire_after_views" int not null,
      "deletable_by_viewer" boolean not null,
      "retrieval_step" boolean not null,
      "public_key" jsonb null,
      "answer_push_id" uuid null references "pushes" ("id") on delete set null,
      "answer_url_token" varchar(64) null,
      "sealed_key" varchar(120) null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      "expires_at" timestamptz not null,
      "fulfilled_at" timestamptz null,
      "collected_at" timestamptz null,
      "closed_at" timestamptz null,
      constraint "requests_pkey" primary key ("id"),
      constraint "requests_url_token_key" unique ("url_token"),
      constraint "requests_state_check" check ("state" in ('pending', 'fulfilled', 'collected', 'expired', 'revoked'))
    );`);
    this.addSql(`create index "requests_owner_idx" on "requests" ("user_id", "created_at" desc);`);
    this.addSql(`create index "requests_pending_expiry_idx" on "requests" ("expires_at") where "state" = 'pending';`);
    this.addSql(
      `create index "requests_answer_idx" on "requests" ("answer_push_id") where "answer_push_id" is not null;`,
    );

    this.addSql(`create table "request_files" (
      "id" varchar(32) not null,
      "request_id" uuid not null references "requests" ("id") on delete cascade,
      "position" int not null,
      "filename_ciphertext" text not null,
      "content_type" varchar(255) not null,
      "size" int not null,
      "content" bytea not null,
      constraint "request_files_pkey" primary key ("id")
    );`);
    this.addSql(`create index "request_files_request_idx" on "request_files" ("request_id", "position");`);

    this.addSql(`create table "request_audit_entries" (
      "id" bigserial not null,
      "request_id" uuid not null references "requests" ("id") on delete cascade,
      "kind" varchar(16) not null,
      "ip" varchar(255) not null default '',
      "user_agent" varchar(255) not null default '',
      "referrer" varchar(255) not null default '',
      "user_id" uuid null,
      "created_at" timestamptz not null,
      constraint "request_audit_entries_pkey" primary key ("id")
    );`);
    this.addSql(
      `create index "request_audit_entries_request_idx" on "request_audit_entries" ("request_id", "created_at", "id");`,
    );

    // The default stays: instances from before this migration insert pushes without the column during a rolling deploy.
    this.addSql(`alter table "pushes" add column "answers_request" boolean not null default false;`);
  }

  override down(): void {
    this.addSql(`alter table "pushes" drop column "answers_request";`);
    this.addSql(`drop table if exists "request_audit_entries";`);
    this.addSql(`drop table if exists "request_files";`);
    this.addSql(`drop table if exists "requests";`);
  }
}
