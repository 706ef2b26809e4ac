import { Migration } from '@mikro-orm/migrations';

/**
 * Storage quotas (issue 19): each push keeps the bytes of secrets it stores (payload and file contents, as sent), so a
 * user's active pushes can be summed, and anonymous creators' bytes are counted per client address and clock hour.
 */
export class Migration20261202000000_storage_quotas extends Migration {
  override name = 'Migration20261202000000_storage_quotas';

  override up(): void {
    // The default stays: during a rolling deploy, instances from before this migration insert pushes without the
    // column (counted as 0 bytes until they expire) instead of failing.
    this.addSql(`alter table "pushes" add column "stored_bytes" bigint not null default 0;`);
    // Pushes made before: the file bytes they hold, and their payload's ciphertext (a little over the plaintext).
    this.addSql(`update "pushes" p set "stored_bytes" = coalesce(octet_length(p."payload_ciphertext"), 0)
      + coalesce((select sum(f."size") from "push_files" f where f."push_id" = p."id"), 0)
      where not p."expired";`);
    this.addSql(
      `create index "pushes_owner_active_bytes_idx" on "pushes" ("user_id", "expires_at") include ("stored_bytes") where not "expired" and "user_id" is not null;`,
    );

    this.addSql(`create table "storage_windows" (
      "scope" varchar(80) not null,
      "window_start" timestamptz not null,
      "bytes" bigint not null,
      constraint "storage_windows_pkey" primary key ("scope", "window_start")
    );`);
    this.addSql(`create index "storage_windows_start_idx" on "storage_windows" ("window_start");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "storage_windows";`);
    this.addSql(`drop index if exists "pushes_owner_active_bytes_idx";`);
    this.addSql(`alter table "pushes" drop column "stored_bytes";`);
  }
}
