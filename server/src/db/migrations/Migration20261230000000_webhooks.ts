import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks and read receipts (issue 23): the webhooks an owner registers (their signing secrets as envelopes under
 * the master key, the previous one kept for 24 hours after a rotation), one row per delivery of an event to a
 * webhook (its body as an envelope too, under its event's id, shared by the event's deliveries: it names the push, and the name is encrypted at rest), the account's
 * read-receipt setting and a push's own choice (`notify_owner_on_view`), and `event_owners`: the users whose pushes'
 * events somebody listens to. A view claims in its one statement only when the owner is not listed there; a listed
 * owner's view takes the transaction that also queues the events.
 */
export class Migration20261230000000_webhooks extends Migration {
  override name = 'Migration20261230000000_webhooks';

  override up(): void {
    this.addSql(`create table "webhooks" (
      "id" uuid not null primary key,
      "user_id" uuid not null,
      "url" varchar(2048) not null,
      "events" text[] not null,
      "description" varchar(200) not null default '',
      "secret" text not null,
      "previous_secret" text null,
      "previous_secret_until" timestamptz null,
      "enabled" boolean not null default true,
      "failing_since" timestamptz null,
      "disabled_at" timestamptz null,
      "created_at" timestamptz not null,
      constraint "webhooks_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);
    this.addSql(`create index "webhooks_user_idx" on "webhooks" ("user_id", "created_at");`);
    this.addSql(`create table "webhook_deliveries" (
      "id" varchar(30) not null primary key,
      "webhook_id" uuid not null,
      "event" varchar(40) not null,
      "event_id" uuid not null,
      "body" text not null,
      "status" varchar(10) not null default 'pending',
      "attempts" int not null default 0,
      "last_status_code" int null,
      "last_error" varchar(200) null,
      "next_attempt_at" timestamptz null,
      "delivered_at" timestamptz null,
      "created_at" timestamptz not null,
      constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'delivered', 'failed')),
      constraint "webhook_deliveries_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on delete cascade
    );`);
    this.addSql(
      `create index "webhook_deliveries_webhook_idx" on "webhook_deliveries" ("webhook_id", "created_at" desc);`,
    );
    this.addSql(`create table "event_owners" (
      "user_id" uuid not null primary key,
      constraint "event_owners_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);
    this.addSql(`alter table "users" add column "notify_owner_on_view" boolean not null default false;`);
    this.addSql(`create table "push_receipts" (
      "push_id" uuid not null primary key,
      "on_view" boolean not null,
      "sent_view" boolean not null default false,
      constraint "push_receipts_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade
    );`);
  }

  override down(): void {
    this.addSql(`drop table "push_receipts";`);
    this.addSql(`alter table "users" drop column "notify_owner_on_view";`);
    this.addSql(`drop table "event_owners";`);
    this.addSql(`drop table "webhook_deliveries";`);
    this.addSql(`drop table "webhooks";`);
  }
}
