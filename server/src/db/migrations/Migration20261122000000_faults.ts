import { Migration } from '@mikro-orm/migrations';

/**
 * Faults lose nothing (issue 10): passphrase attempts say whether they failed (only failures count against a push; an
 * attempt in progress only holds a place while it is checked), and idempotency keys make a retried create safe.
 */
export class Migration20261122000000_faults extends Migration {
  override name = 'Migration20261122000000_faults';

  override up(): void {
    // Rows left by the old scheme are failures (a correct attempt removed its row).
    this.addSql(`alter table "passphrase_attempts" add column "failed" boolean not null default true;`);
    this.addSql(`alter table "passphrase_attempts" alter column "failed" drop default;`);

    this.addSql(`create table "idempotency_keys" (
      "scope" varchar(80) not null,
      "key_digest" varchar(64) not null,
      "fingerprint" varchar(64) not null,
      "state" varchar(12) not null,
      "push_id" uuid null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      constraint "idempotency_keys_pkey" primary key ("scope", "key_digest"),
      constraint "idempotency_keys_state_check" check ("state" in ('in_flight', 'done')),
      constraint "idempotency_keys_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade
    );`);
    this.addSql(`create index "idempotency_keys_expires_idx" on "idempotency_keys" ("expires_at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "idempotency_keys";`);
    this.addSql(`alter table "passphrase_attempts" drop column "failed";`);
  }
}
