import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 45, security:
 *
 * - `users.email_confirmed_at`: when the account's owner proved the address (a sign-up link opened, a reset link
 *   used, the single sign-on provider's verified email), or the operator made the account (`npm run users -- create`).
 *   Null: nobody proved it. An account made by a sign-up without email (no SMTP relay) starts so, and single sign-on
 *   never links such an account as it is: the provider's verified email proves the address, and the account is
 *   claimed with every credential set before that proof removed (account/claim.ts).
 *   Existing accounts: those linked to a provider, and those without a password (made by single sign-on or by the
 *   operator), are proven; a password account made before this migration may have come from a sign-up without email,
 *   so it is not (its first proof, by the provider or by a reset link, claims it).
 * - `api_keys.parent_id`: the key whose credential made this one (null: made by the account itself, on the token
 *   page or with the account token). Deleting a key deletes the keys it made, and theirs (the foreign key cascades),
 *   so a revoked key's children stop working with it; a child never expires later than its parent.
 * - `account_mail_requests.ip`: the client address (as the per-address limits key it) that asked for a sign-up or
 *   reset mail. An anonymous caller may have at most so many such mails sent to one address, and ask for at most so
 *   many from one client address, an hour (account/account-mail.ts); the two indexes serve those counts. Rows from
 *   before have none, and count for their address only.
 */
export class Migration20270107000000_proven_emails extends Migration {
  override name = 'Migration20270107000000_proven_emails';

  override up(): void {
    this.addSql(`alter table "users" add column "email_confirmed_at" timestamptz null;`);
    this.addSql(`update "users" u set "email_confirmed_at" = u."created_at"
      where u."password_hash" is null or exists (select 1 from "user_identities" i where i."user_id" = u."id");`);
    this.addSql(`alter table "api_keys"
      add column "parent_id" uuid null references "api_keys" ("id") on delete cascade;`);
    this.addSql(`create index "api_keys_parent_idx" on "api_keys" ("parent_id") where "parent_id" is not null;`);
    this.addSql(`alter table "account_mail_requests" add column "ip" varchar(255) null;`);
    this.addSql(
      `create index "account_mail_requests_recent_email_idx" on "account_mail_requests" ("email", "created_at");`,
    );
    this.addSql(`create index "account_mail_requests_recent_ip_idx" on "account_mail_requests" ("ip", "created_at");`);
  }

  override down(): void {
    this.addSql(`drop index if exists "account_mail_requests_recent_ip_idx";`);
    this.addSql(`drop index if exists "account_mail_requests_recent_email_idx";`);
    this.addSql(`alter table "account_mail_requests" drop column "ip";`);
    this.addSql(`drop index if exists "api_keys_parent_idx";`);
    this.addSql(`alter table "api_keys" drop column "parent_id";`);
    this.addSql(`alter table "users" drop column "email_confirmed_at";`);
  }
}
