import { Migration } from '@mikro-orm/migrations';

/**
 * File bytes in an object store (PWPUSH_FILE_STORAGE=s3://…, server/src/files/): a file's row keeps its bytes in
 * `content` (PostgreSQL, as before) or names the object that holds them in `object_key`, never both and never
 * neither. The partial indexes serve the sweeper's reconcile, which walks the rows in the store's key order (binary,
 * hence `collate "C"`) beside the store's own listing.
 */
export class Migration20270110000000_file_objects extends Migration {
  override name = 'Migration20270110000000_file_objects';

  override up(): void {
    for (const table of ['push_files', 'request_files']) {
      this.addSql(`alter table "${table}" alter column "content" drop not null, add column "object_key" text null;`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_bytes_check" check (("content" is null) <> ("object_key" is null));`,
      );
      this.addSql(
        `create index "${table}_object_key_idx" on "${table}" ("object_key" collate "C") where "object_key" is not null;`,
      );
    }
  }

  override down(): void {
    for (const table of ['push_files', 'request_files']) {
      this.addSql(`drop index if exists "${table}_object_key_idx";`);
      this.addSql(`alter table "${table}" drop constraint "${table}_bytes_check", drop column "object_key";`);
      this.addSql(`alter table "${table}" alter column "content" set not null;`);
    }
  }
}
