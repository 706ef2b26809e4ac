import { Migration } from '@mikro-orm/migrations';

/**
 * When an API token was last used (`npm run users -- list`): written by authentication at most once a minute per
 * token and server process, so it costs nothing per request. Null for a token never used (or used before this).
 */
export class Migration20261201000000_token_last_used extends Migration {
  override name = 'Migration20261201000000_token_last_used';

  override up(): void {
    this.addSql(`alter table "api_tokens" add column "last_used_at" timestamptz null;`);
  }

  override down(): void {
    this.addSql(`alter table "api_tokens" drop column "last_used_at";`);
  }
}
