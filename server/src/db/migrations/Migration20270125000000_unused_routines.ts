import { Migration } from '@mikro-orm/migrations';
import { WEBHOOK_VIEW_EVENTS } from './Migration20270103000000_view_events.js';

/**
 * Drops what no code path calls any more (issue 40), kept until now for the previous version's processes during a
 * rolling upgrade. No version has been released with them, and the server has written neither since:
 *
 * - `webhook_view_events(…)` (Migration20270103000000_view_events): a view's webhook events are its audit entry,
 *   fanned out by the outbox since Migration20270106000000_webhook_outbox (`server/src/webhooks/outbox.ts`).
 * - `iso_time(timestamptz)` (Migration20270102000000_lean_deliveries): only `webhook_view_events` called it.
 * - The trigger `pushes_fill_expire_after_seconds` and its function (Migration20261122120000_durations): it filled
 *   `expire_after_seconds` for an instance that did not write the column yet; every insert of the server writes it
 *   (`push-tables.ts`), and the column stays NOT NULL with its check, so an insert without it now fails loudly.
 *
 * Upgrade note: stop every process of a version older than this one before it runs (a rolling upgrade from a build
 * before the durations or the outbox migrations is not supported). `down` puts the three back as they were.
 */
export class Migration20270125000000_unused_routines extends Migration {
  override name = 'Migration20270125000000_unused_routines';

  override up(): void {
    this.addSql(`drop function if exists "webhook_view_events"(uuid, uuid, int, boolean, text, boolean, int,
      timestamptz, timestamptz, text, timestamptz, text, text, text, timestamptz);`);
    this.addSql(`drop function if exists "iso_time"(timestamptz);`);
    this.addSql(`drop trigger if exists "pushes_fill_expire_after_seconds" on "pushes";`);
    this.addSql(`drop function if exists "pushes_fill_expire_after_seconds"();`);
  }

  override down(): void {
    this.addSql(`create function "pushes_fill_expire_after_seconds"() returns trigger language plpgsql as $$
      begin
        new."expire_after_seconds" := coalesce(new."expire_after_seconds", new."expire_after_days" * 86400);
        return new;
      end $$;`);
    this.addSql(`create trigger "pushes_fill_expire_after_seconds" before insert on "pushes"
      for each row execute function "pushes_fill_expire_after_seconds"();`);
    this.addSql(`create function "iso_time"(t timestamptz) returns text language sql stable strict parallel safe
      return to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');`);
    this.addSql(WEBHOOK_VIEW_EVENTS);
  }
}
