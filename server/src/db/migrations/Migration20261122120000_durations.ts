import { Migration } from '@mikro-orm/migrations';

/**
 * Durations to the minute (`expire_after_duration`): a push's exact lifetime in seconds next to its days, which stay
 * the lifetime rounded up to a whole day (so the 1..90 check of the initial migration still holds: a 15-minute push
 * says 1). Existing pushes were made with days, so their lifetime is days × 86,400. An instance that has not been
 * updated yet (a rolling deploy) inserts without the column: a trigger fills it from the days, so its pushes keep
 * working and the NOT NULL and the checks hold for every row. (Migration20270125000000_unused_routines drops that
 * trigger: every insert now writes the column.)
 */
export class Migration20261122120000_durations extends Migration {
  override name = 'Migration20261122120000_durations';

  override up(): void {
    this.addSql(`alter table "pushes" add column "expire_after_seconds" int null;`);
    this.addSql(`update "pushes" set "expire_after_seconds" = "expire_after_days" * 86400;`);
    this.addSql(`create function "pushes_fill_expire_after_seconds"() returns trigger language plpgsql as $$
      begin
        new."expire_after_seconds" := coalesce(new."expire_after_seconds", new."expire_after_days" * 86400);
        return new;
      end $$;`);
    this.addSql(`create trigger "pushes_fill_expire_after_seconds" before insert on "pushes"
      for each row execute function "pushes_fill_expire_after_seconds"();`);
    this.addSql(`alter table "pushes" alter column "expire_after_seconds" set not null;`);
    // 15 minutes to 90 days, and the days are that lifetime rounded up.
    this.addSql(`alter table "pushes" add constraint "pushes_expire_after_seconds_check"
      check ("expire_after_seconds" >= 900 and "expire_after_seconds" <= 7776000
        and "expire_after_days" = ("expire_after_seconds" + 86399) / 86400);`);
  }

  override down(): void {
    this.addSql(`alter table "pushes" drop constraint if exists "pushes_expire_after_seconds_check";`);
    this.addSql(`drop trigger if exists "pushes_fill_expire_after_seconds" on "pushes";`);
    this.addSql(`drop function if exists "pushes_fill_expire_after_seconds"();`);
    this.addSql(`alter table "pushes" drop column "expire_after_seconds";`);
  }
}
