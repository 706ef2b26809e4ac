import { Migration } from '@mikro-orm/migrations';

/**
 * Cheaper webhook deliveries (webhooks/push-events.ts, webhook-repository.ts):
 *
 * - A delivery no longer has a foreign key to its webhook. The key's check ran for every delivery written: a
 *   `for key share` lock on the webhook's row, which many concurrent requests of one owner turned into a multixact.
 *   A statement trigger does what `on delete cascade` did: deleting webhooks (by their owner, or with the user)
 *   deletes their deliveries in the same statement. A delivery written by a statement that began before its webhook's
 *   deletion committed may outlive it; the dispatcher records it failed ("webhook disabled") and it is forgotten with
 *   the old deliveries. Nobody can list it: deliveries are listed by their webhook.
 * - A delivery's body is either an envelope under the master key (`body`: `request.*` and `webhook.test` events) or,
 *   for push events, its facts as JSON (`facts`: the event without the push's name, which is no more than the push's
 *   and the audit's own columns hold in clear) with the name's envelope copied from the push (`name_ciphertext`); the
 *   server puts the two together when it sends it. A view's own statement makes its events' facts in SQL; `iso_time`
 *   writes their times as the server does.
 */
export class Migration20270102000000_lean_deliveries extends Migration {
  override name = 'Migration20270102000000_lean_deliveries';

  override up(): void {
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_webhook_id_foreign";`);
    this.addSql(`create function "webhook_deliveries_forget"() returns trigger language plpgsql as $$
      begin
        delete from webhook_deliveries where webhook_id in (select id from gone);
        return null;
      end
      $$;`);
    this.addSql(`create trigger "webhooks_forget_deliveries" after delete on "webhooks"
      referencing old table as gone for each statement execute function webhook_deliveries_forget();`);
    // A time as JavaScript's toISOString writes it (UTC, milliseconds, Z): the facts' times. A function, since the
    // format's colons would read as parameters in the server's statements (db/sql.ts).
    this.addSql(`create function "iso_time"(t timestamptz) returns text language sql stable strict parallel safe
      return to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');`);
    this.addSql(`alter table "webhook_deliveries" alter column "body" drop not null,
      add column "facts" text null, add column "name_ciphertext" text null,
      add constraint "webhook_deliveries_body_check" check ("body" is not null or "facts" is not null);`);
  }

  override down(): void {
    this.addSql(`delete from "webhook_deliveries" where "body" is null;`);
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_body_check",
      drop column "facts", drop column "name_ciphertext", alter column "body" set not null;`);
    this.addSql(`drop function if exists "iso_time"(timestamptz);`);
    this.addSql(`drop trigger if exists "webhooks_forget_deliveries" on "webhooks";`);
    this.addSql(`drop function if exists "webhook_deliveries_forget"();`);
    this.addSql(
      `delete from "webhook_deliveries" d where not exists (select 1 from "webhooks" w where w.id = d.webhook_id);`,
    );
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_webhook_id_foreign"
      foreign key ("webhook_id") references "webhooks" ("id") on delete cascade;`);
  }
}
