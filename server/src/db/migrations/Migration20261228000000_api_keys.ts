import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 25, API keys: several per account, each with a name, its scopes, an optional expiry and its last use
 * (written at most once a minute per key and server process). Stored like the account token: only the SHA-256 digest
 * of the token, never the token. Revoking deletes the row, so the next lookup of its digest finds nothing. The CHECK
 * keeps the scopes to a non-empty list of at most 8 (the contract's list is checked by the service).
 */
export class Migration20261228000000_api_keys extends Migration {
  override name = 'Migration20261228000000_api_keys';

  override up(): void {
    this.addSql(`create table "api_keys" (
      "id" uuid not null primary key,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "name" varchar(100) not null,
      "digest" varchar(64) not null,
      "scopes" text[] not null check (cardinality("scopes") between 1 and 8),
      "created_at" timestamptz not null,
      "expires_at" timestamptz null,
      "last_used_at" timestamptz null,
      constraint "api_keys_digest_unique" unique ("digest")
    );`);
    this.addSql(`create index "api_keys_user_idx" on "api_keys" ("user_id", "created_at");`);
  }

  override down(): void {
    this.addSql('drop table if exists "api_keys";');
  }
}
