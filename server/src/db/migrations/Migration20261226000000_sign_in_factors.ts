import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 25, sign-in: the second factor of password accounts and the link to a single sign-on provider.
 *
 * - `users.totp_secret`: the TOTP secret as an envelope under the master key (crypto/envelope.ts, bound to the user
 *   by its additional data); `totp_enabled_at` null while the enrolment is not confirmed; `totp_last_step`, the time
 *   step of the last code accepted, so that a code is never accepted twice.
 * - `recovery_codes`: SHA-256 digests of the ten single-use codes, never the codes.
 * - `totp_attempts`: failed (or in-flight) second-factor attempts per user and per address, counted like
 *   `login_attempts`.
 * - `user_identities`: a user's subject at a provider (issuer + sub), kept after the first sign-in.
 *
 * The application role owns the tables it makes here, as with every migration: no grants to add.
 */
export class Migration20261226000000_sign_in_factors extends Migration {
  override name = 'Migration20261226000000_sign_in_factors';

  override up(): void {
    this.addSql(`alter table "users" add column "totp_secret" text null,
      add column "totp_enabled_at" timestamptz null,
      add column "totp_last_step" bigint null;`);

    this.addSql(`create table "recovery_codes" (
      "id" bigserial primary key,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "digest" varchar(64) not null,
      "used_at" timestamptz null
    );`);
    this.addSql(`create unique index "recovery_codes_user_digest_idx" on "recovery_codes" ("user_id", "digest");`);

    this.addSql(`create table "totp_attempts" (
      "id" bigserial primary key,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "ip" varchar(255) not null,
      "attempted_at" timestamptz not null
    );`);
    this.addSql(`create index "totp_attempts_user_idx" on "totp_attempts" ("user_id", "attempted_at");`);
    this.addSql(`create index "totp_attempts_ip_idx" on "totp_attempts" ("ip", "attempted_at");`);

    this.addSql(`create table "user_identities" (
      "id" bigserial primary key,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "issuer" text not null,
      "subject" varchar(255) not null,
      "created_at" timestamptz not null,
      "last_sign_in_at" timestamptz not null
    );`);
    this.addSql(`create unique index "user_identities_issuer_subject_idx" on "user_identities" ("issuer", "subject");`);
    this.addSql(`create index "user_identities_user_idx" on "user_identities" ("user_id");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "user_identities";`);
    this.addSql(`drop table if exists "totp_attempts";`);
    this.addSql(`drop table if exists "recovery_codes";`);
    this.addSql(
      `alter table "users" drop column "totp_secret", drop column "totp_enabled_at", drop column "totp_last_step";`,
    );
  }
}
