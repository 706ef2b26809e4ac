import { Migration } from '@mikro-orm/migrations';

/**
 * A workspace's brand (issue 42): `workspace_brands`, one row per workspace that set one (none: its recipients see
 * the instance's brand), with the logo's bytes in the database (at most 256 KiB, its kind as its content said, and
 * its ETag), so every server process serves it alike without a shared disk. The workspace's deletion takes it along.
 *
 * A change is audited in the workspace's trail, `workspace_audit`, as `brand_changed` (a kind of the code's list,
 * server/src/workspace/workspace-audit.ts, which the table checks only for its form since
 * Migration20270204000000_workspace_rules). Nothing that exists changes.
 */
export class Migration20270207000000_workspace_brand extends Migration {
  override name = 'Migration20270207000000_workspace_brand';

  override up(): void {
    this.addSql(`create table "workspace_brands" (
      "workspace_id" integer primary key references "workspaces" ("id") on delete cascade,
      "name" varchar(100) null,
      "accent_color" char(7) null,
      "header_color" char(7) null,
      "footer_text" varchar(300) null,
      "imprint_url" varchar(2048) null,
      "privacy_url" varchar(2048) null,
      "logo" bytea null,
      "logo_type" varchar(16) null,
      "logo_etag" varchar(32) null,
      "updated_by" uuid null references "users" ("id") on delete set null,
      "updated_at" timestamptz not null,
      constraint "workspace_brands_logo_check" check (
        ("logo" is null and "logo_type" is null and "logo_etag" is null)
        or ("logo" is not null and octet_length("logo") between 1 and 262144
            and "logo_type" in ('image/png', 'image/jpeg', 'image/webp', 'image/svg+xml') and "logo_etag" is not null)),
      constraint "workspace_brands_color_check" check (
        ("accent_color" is null or "accent_color" ~ '^#[0-9a-f]{6}$')
        and ("header_color" is null or "header_color" ~ '^#[0-9a-f]{6}$'))
    );`);
  }

  override down(): void {
    this.addSql(`drop table if exists "workspace_brands";`);
  }
}
