import { Migration } from '@mikro-orm/migrations';

/**
 * A user's language (issue 42): `users.locale`, the BCP 47 tag of one of the catalogues (server/src/i18n/locales.ts),
 * recorded when the user signs in on a page and when they choose a language there (`?locale=`, the language menu).
 * The owner's mails (read receipts, expiry notices, a webhook disabled) and the requester's notices go out in it.
 * Null, every row before this migration: English, as before. A plain nullable column: the rows stay as they are, and
 * a previous version's process, which never names it, keeps working during a rolling upgrade.
 */
export class Migration20270203000000_user_locale extends Migration {
  override name = 'Migration20270203000000_user_locale';

  override up(): void {
    this.addSql(`alter table "users" add column "locale" varchar(35) null;`);
  }

  override down(): void {
    this.addSql(`alter table "users" drop column "locale";`);
  }
}
