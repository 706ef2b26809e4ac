import { Migration } from '@mikro-orm/migrations';

/**
 * Requests' emails (issues 24 and 22): one row per message job that a request's move enqueued in its transaction.
 * `created` carries the request's link to the addresses of `notify_emails_to` (counted against the requester's
 * daily limit, with the pushes' links); `fulfilled`, `collected`, `expired` and `revoked` tell the requester (the
 * address is the account's, read when the message is sent, so `recipients` is empty then). Each recipient's outcome
 * is written as the relay answers, so a retry sends only to the ones still waiting. A request keeps the instance's
 * address its create saw (`base_url`), for the links of emails sent later (a sweep has no request to read it from).
 */
export class Migration20261229000000_request_mail extends Migration {
  override name = 'Migration20261229000000_request_mail';

  override up(): void {
    this.addSql(`alter table "requests" add column "base_url" text not null default '';`);
    this.addSql(`create table "request_mail" (
      "id" uuid not null primary key,
      "request_id" uuid not null,
      "kind" varchar(16) not null,
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
      constraint "request_mail_kind_check"
        check ("kind" in ('created', 'fulfilled', 'collected', 'expired', 'revoked')),
      constraint "request_mail_status_check"
        check ("status" in ('pending', 'processing', 'completed', 'partially_failed', 'failed')),
      constraint "request_mail_recipients_check" check (cardinality("recipients") between 0 and 5),
      constraint "request_mail_request_id_foreign" foreign key ("request_id") references "requests" ("id") on delete cascade,
      constraint "request_mail_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null
    );`);
    this.addSql(`create index "request_mail_request_idx" on "request_mail" ("request_id");`);
    this.addSql(`create index "request_mail_user_idx" on "request_mail" ("user_id", "created_at");`);
  }

  override down(): void {
    this.addSql(`drop table "request_mail";`);
    this.addSql(`alter table "requests" drop column "base_url";`);
  }
}
