import { Migration } from '@mikro-orm/migrations';

/**
 * Who may open a push (issue 42).
 *
 * - `pushes.allowed_networks`: the CIDR ranges a retrieval must come from (normalized by the shared rules; empty:
 *   any), and `pushes.recipient_emails`: the addresses that may open it (empty: anyone with the link). Both are
 *   bounded by the contract (20 and 5) and checked before anything is stored.
 * - `push_access_codes`: one row per `requestAccessCode`, whether or not a code was sent (`code_hash` null when the
 *   address is not one of the push's), so that the limits per push and per client address count every request. A
 *   code is kept only as a scrypt hash, is good until `expires_at`, and is used once (`used_at`). Rows go with
 *   their push, and the sweeper deletes those older than a day.
 */
export class Migration20270120420000_recipient_access extends Migration {
  override name = 'Migration20270120420000_recipient_access';

  override up(): void {
    this.addSql(`alter table "pushes" add column "allowed_networks" text[] not null default '{}',
      add column "recipient_emails" text[] not null default '{}';`);
    this.addSql(`alter table "pushes" add constraint "pushes_recipient_access_bounds"
      check (cardinality("allowed_networks") <= 20 and cardinality("recipient_emails") <= 5);`);
    this.addSql(`create table "push_access_codes" (
      "id" bigserial primary key,
      "push_id" uuid not null,
      "client_scope" text not null,
      "code_hash" text null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      "used_at" timestamptz null,
      constraint "push_access_codes_push_id_foreign" foreign key ("push_id") references "pushes" ("id") on delete cascade
    );`);
    this.addSql(`create index "push_access_codes_push_idx" on "push_access_codes" ("push_id", "created_at");`);
    this.addSql(`create index "push_access_codes_client_idx" on "push_access_codes" ("client_scope", "created_at");`);
  }

  override down(): void {
    this.addSql('drop table if exists "push_access_codes";');
    this.addSql(`alter table "pushes" drop constraint "pushes_recipient_access_bounds",
      drop column "allowed_networks", drop column "recipient_emails";`);
  }
}
