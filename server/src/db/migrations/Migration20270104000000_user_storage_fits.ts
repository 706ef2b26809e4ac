import { Migration } from '@mikro-orm/migrations';

/**
 * `user_storage_used` with the bytes a create needs and the quota: the pushes past their time but not flagged yet are
 * looked for only when the create does not fit without subtracting them.
 *
 * Its PL/pgSQL query for those pushes was planned once per connection, as PL/pgSQL plans are. A plan made while
 * `pushes` was small could read the owner's list index (`user_id`, `expired`, …) and filter on `expires_at`: every
 * create by a user then read all of the user's active pushes, more with each one, until an ANALYZE replanned it. The
 * bench measured it: the index read 9.6 million entries in 6,186 creates of one user, and that user's create
 * statement went from 1.0 to 4.0 ms over three rounds (with the lock's waits aside).
 *
 * - `user_storage_used(user, now, deadline, bytes, quota)`: the user's lock, then the counter. When the counter plus
 *   `bytes` fits in `quota`, that is the answer: those pushes can only make more room, and the create fits anyway.
 *   Otherwise it subtracts them, as before, through `execute` (a plan made for the table as it is now). So a create
 *   that fits runs no query on `pushes`, and the reading that refuses is exact.
 *   The answer a create that fits reports (its `RateLimit` remaining) still counts the pushes that lapsed since the
 *   sweeper's last run (at most `PWPUSH_SWEEP_INTERVAL_SECONDS`, 60 s at most): it errs low, never high.
 * - `user_storage_used(user, now, deadline)`: the exact reading (a request's answer, in its transaction), the same with
 *   nothing to fit.
 */
export class Migration20270104000000_user_storage_fits extends Migration {
  override name = 'Migration20270104000000_user_storage_fits';

  override up(): void {
    this.addSql(`create function "user_storage_used"(p_user uuid, p_now timestamptz, p_deadline timestamptz,
        p_bytes bigint, p_quota bigint)
      returns bigint language plpgsql volatile as $$
      declare
        counted bigint;
        lapsed bigint;
      begin
        insert into user_storage (user_id, bytes) values (p_user, 0) on conflict (user_id) do nothing;
        select bytes into counted from user_storage where user_id = p_user for update;
        -- The lock may have come after the request's deadline: then nothing may be written (null).
        if clock_timestamp() >= p_deadline then
          return null;
        end if;
        if p_bytes is not null and counted + p_bytes <= p_quota then
          return counted;
        end if;
        execute 'select coalesce(sum(stored_bytes), 0) from pushes
                 where user_id = $1 and not expired and expires_at <= $2'
          into lapsed using p_user, p_now;
        return counted - lapsed;
      end
      $$;`);
    this.addSql(`create or replace function "user_storage_used"(p_user uuid, p_now timestamptz, p_deadline timestamptz)
      returns bigint language plpgsql volatile as $$
      begin
        return user_storage_used(p_user, p_now, p_deadline, null, null);
      end
      $$;`);
  }

  override down(): void {
    this.addSql(`drop function if exists "user_storage_used"(uuid, timestamptz, timestamptz, bigint, bigint);`);
    this.addSql(`create or replace function "user_storage_used"(p_user uuid, p_now timestamptz, p_deadline timestamptz)
      returns bigint language plpgsql volatile as $$
      declare
        counted bigint;
        lapsed bigint;
      begin
        insert into user_storage (user_id, bytes) values (p_user, 0) on conflict (user_id) do nothing;
        select bytes into counted from user_storage where user_id = p_user for update;
        -- The lock may have come after the request's deadline: then nothing may be written (null).
        if clock_timestamp() >= p_deadline then
          return null;
        end if;
        select coalesce(sum(stored_bytes), 0) into lapsed from pushes
          where user_id = p_user and not expired and expires_at <= p_now;
        return counted - lapsed;
      end
      $$;`);
  }
}
