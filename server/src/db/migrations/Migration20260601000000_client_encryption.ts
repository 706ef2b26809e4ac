import { Migration } from '@mikro-orm/migrations';

/**
 * End-to-end encrypted pushes (issue 13): the client's marker, `{"scheme":"aes-256-gcm","version":1}`, or null for an
 * ordinary push. The payload, file names and bytes of such a push are the client's envelopes, stored (and encrypted
 * at rest) like any other secret. Existing rows are ordinary pushes (null).
 */
export class Migration20260601000000_client_encryption extends Migration {
  override name = 'Migration20260601000000_client_encryption';

  override up(): void {
    this.addSql(`alter table "pushes" add column "client_encryption" jsonb null;`);
    // Only the schemes the contract defines (a new scheme comes with a migration that widens this).
    this.addSql(`alter table "pushes" add constraint "pushes_client_encryption_check" check (
      "client_encryption" is null or "client_encryption" = '{"scheme": "aes-256-gcm", "version": 1}'::jsonb);`);
  }

  override down(): void {
    this.addSql(`alter table "pushes" drop column "client_encryption";`);
  }
}
