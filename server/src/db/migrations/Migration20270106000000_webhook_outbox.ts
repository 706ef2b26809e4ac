import { Migration } from '@mikro-orm/migrations';

/**
 * The webhooks' outbox: a request's events are its audit entry (webhooks/outbox.ts).
 *
 * A create and a view of an owner with an enabled webhook no longer write delivery rows in their statement. Their
 * `creation` or `view` audit entry, which the same statement writes anyway, is marked instead: `tx` is the writing
 * transaction's id (`pg_current_xact_id()`), and a view's entry keeps the push's count of views after it
 * (`views_used`). A dispatcher turns the marked entries into deliveries afterwards, many in one statement, in the
 * order of `(tx, id)`, and `webhook_outbox` keeps where it is (one row, locked by the process that fans out).
 *
 * An entry is taken only once every transaction that could still write one before it has ended: its `tx` is below
 * the snapshot's `xmin` (PostgreSQL's oldest transaction still running). So an entry that commits late, after later
 * ones were taken, is never passed over: its transaction was running, so `xmin` was at most its `tx`.
 *
 * The partial index holds only the marked entries (owners with webhooks); the other entries are written as before.
 *
 * `webhook_view_events` (Migration20270103000000_view_events) is no longer called by this version, but stays: during a
 * rolling upgrade the previous version's processes still call it (their views write deliveries themselves, which the
 * new ones send as any others). Migration20270125000000_unused_routines drops it.
 */
export class Migration20270106000000_webhook_outbox extends Migration {
  override name = 'Migration20270106000000_webhook_outbox';

  override up(): void {
    this.addSql(`alter table "audit_entries" add column "tx" xid8 null, add column "views_used" int null;`);
    this.addSql(`create index "audit_entries_outbox_idx" on "audit_entries" ("tx", "id") where "tx" is not null;`);
    this.addSql(`create table "webhook_outbox" (
      "id" int primary key check ("id" = 1),
      "tx" xid8 not null,
      "entry_id" bigint not null
    );`);
    this.addSql(`insert into "webhook_outbox" ("id", "tx", "entry_id") values (1, '0', 0);`);
  }

  override down(): void {
    this.addSql(`drop table if exists "webhook_outbox";`);
    this.addSql(`drop index if exists "audit_entries_outbox_idx";`);
    this.addSql(`alter table "audit_entries" drop column "tx", drop column "views_used";`);
  }
}
