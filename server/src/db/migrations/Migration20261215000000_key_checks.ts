import { Migration } from '@mikro-orm/migrations';

/**
 * One envelope per master key that has served this database, sealing a fixed text: at start-up the server proves
 * that a configured key opens what the database holds (server/src/crypto/key-check.ts) before it serves anything.
 */
export class Migration20261215000000_key_checks extends Migration {
  override name = 'Migration20261215000000_key_checks';

  override up(): void {
    this.addSql(`create table "key_checks" (
      "key_id" text not null primary key,
      "envelope" text not null,
      "created_at" timestamptz not null default now()
    );`);
  }

  override down(): void {
    this.addSql(`drop table "key_checks";`);
  }
}
