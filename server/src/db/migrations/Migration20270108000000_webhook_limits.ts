import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 45, webhooks that amplify traffic: `webhook_limits`, counters in fixed clock-minute windows, one row per key,
 * shared by every server process (the row is locked by the statement that counts).
 *
 * - `test:<user>`, `redeliver:<user>`: the calls of `testWebhook` and `retryWebhookDelivery` an account made in the
 *   minute `window_start` (webhooks/webhook-repository.ts `countCall`: one statement, refused past the quota without
 *   counting).
 *
 * The sweeper forgets rows whose window is over.
 */
export class Migration20270108000000_webhook_limits extends Migration {
  override name = 'Migration20270108000000_webhook_limits';

  override up(): void {
    this.addSql(`create table "webhook_limits" (
      "key" text not null primary key,
      "window_start" timestamptz not null,
      "used" integer not null
    );`);
  }

  override down(): void {
    this.addSql(`drop table if exists "webhook_limits";`);
  }
}
