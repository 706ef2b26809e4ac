import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook deliveries are sent from their own table (webhooks/dispatcher.ts): a process claims the pending deliveries
 * that are due, oldest first, with `for update skip locked`, and leases each by moving its `next_attempt_at` ahead.
 * This index is that claim's: the pending deliveries by when they are due (delivered and failed ones, the bulk of the
 * table, are not in it).
 */
export class Migration20270101000000_webhook_dispatch extends Migration {
  override name = 'Migration20270101000000_webhook_dispatch';

  override up(): void {
    this.addSql(
      `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`,
    );
  }

  override down(): void {
    this.addSql(`drop index if exists "webhook_deliveries_due_idx";`);
  }
}
