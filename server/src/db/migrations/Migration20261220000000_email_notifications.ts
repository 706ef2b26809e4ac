import { Migration } from '@mikro-orm/migrations';

/**
 * Email notification of a push's link (issue 22): one row per `creation_email_send` audit entry (its recipients,
 * locale, the delivery's status and per-recipient outcome), and the calls of `notifyEmails` per user (the 5-a-minute
 * limit, shared by every instance), and the account emails' requests (sign-up confirmation, password reset). The job queue that delivers them (pg-boss, schema `pgboss`) is installed by the
 * migration step after these (server/src/jobs/queue.ts).
 */
export class Migration20261220000000_email_notifications extends Migration {
  override name = 'Migration20261220000000_email_notifications';

  override up(): void {
    this.addSql(`create table "email_notifications" (
      "id" uuid not null primary key,
      "push_id" uuid not null,
      "audit_entry_id" bigint not null,
      "user_id" uuid null,
      "recipients" text[] not null,
      "locale" varchar(16) null,
      "base_url" text not null,
      "status" varchar(20) not null default 'pending',
      "sent" text[] not null default '{}',
      "refused" text[] not null default '{}',
      "error_message" text null,
      "attempts" int not null default 0,
      "proceed_at" timestamptz null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      constraint "email_notifications_status_check"
        check ("status" in ('pending', 'processing', 'completed', 'partially_failed', 'failed')),
      constraint "email_notifications_recipients_check" check (cardinality("recipients") between 1 and 5),
      constraint "email_notifications_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade,
      constraint "email_notifications_audit_entry_id_foreign" foreign key ("audit_entry_id") references "audit_entries" ("id") on delete cascade,
      constraint "email_notifications_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null
    );`);
    this.addSql(`create index "email_notifications_push_idx" on "email_notifications" ("push_id");`);
    this.addSql(`create index "email_notifications_audit_idx" on "email_notifications" ("audit_entry_id");`);
    this.addSql(`create index "email_notifications_user_idx" on "email_notifications" ("user_id", "created_at");`);
    this.addSql(`create table "notify_calls" (
      "id" bigserial primary key,
      "user_id" uuid not null,
      "called_at" timestamptz not null,
      constraint "notify_calls_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);
    this.addSql(`create index "notify_calls_user_idx" on "notify_calls" ("user_id", "called_at");`);
    // Account emails: what a sign-up or a password reset asked for; the link's token is kept as its SHA-256 only.
    this.addSql(`create table "account_mail_requests" (
      "id" uuid not null primary key,
      "purpose" varchar(10) not null,
      "email" varchar(320) not null,
      "password_hash" text null,
      "base_url" text not null,
      "token_digest" char(64) null,
      "expires_at" timestamptz null,
      "used_at" timestamptz null,
      "created_at" timestamptz not null,
      constraint "account_mail_requests_purpose_check" check ("purpose" in ('signup', 'reset')),
      constraint "account_mail_requests_token_digest_unique" unique ("token_digest")
    );`);
    this.addSql(`create index "account_mail_requests_email_idx" on "account_mail_requests" ("email", "purpose");`);
  }

  override down(): void {
    this.addSql(`drop table "account_mail_requests";`);
    this.addSql(`drop table "notify_calls";`);
    this.addSql(`drop table "email_notifications";`);
  }
}
