import { Migration } from '@mikro-orm/migrations';

/**
 * A user's storage quota counted inside the create's own statement, in constant time (push-repository.ts).
 *
 * - `user_storage` holds, per user, the bytes of the user's pushes that are not flagged expired. Triggers on `pushes`
 *   keep it so for every writer (a create, the view that expires a push, an expiry by request or by time, the sweeper,
 *   a purge or a user's deletion): the sum that a create used to compute over all the user's active pushes, which grew
 *   with them and was computed under the user's lock.
 * - `user_storage_used(user, now)` takes the user's row lock (`for update`: the user's creates are counted one after
 *   the other on any instance), then subtracts the pushes already past their time but not yet flagged (few: the
 *   sweeper flags them), so it answers what the sum over active pushes answered; null when the lock came after the
 *   request's deadline (the create then writes nothing: see db/deadlines.ts). It is VOLATILE, so each of its
 *   queries takes a fresh snapshot after the lock is granted: it sees every create that held the lock before it and
 *   committed, which a snapshot taken at the start of the calling statement would not. The lock is held until the
 *   create commits, with no round trip to the client in between (the transaction path held it across three).
 */
export class Migration20261231000000_user_storage_in_statement extends Migration {
  override name = 'Migration20261231000000_user_storage_in_statement';

  override up(): void {
    this.addSql(`create table "user_storage" (
      "user_id" uuid not null primary key,
      "bytes" bigint not null default 0,
      constraint "user_storage_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);
    this.addSql(`create function "user_storage_count"() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and old.user_id is not null and not old.expired then
          update user_storage set bytes = bytes - old.stored_bytes where user_id = old.user_id;
        end if;
        if tg_op in ('INSERT', 'UPDATE') and new.user_id is not null and not new.expired then
          insert into user_storage (user_id, bytes) values (new.user_id, new.stored_bytes)
            on conflict (user_id) do update set bytes = user_storage.bytes + excluded.bytes;
        end if;
        return null;
      end
      $$;`);
    this.addSql(`create trigger "pushes_user_storage_insert" after insert on "pushes" for each row
      when (new.user_id is not null and not new.expired) execute function user_storage_count();`);
    this.addSql(`create trigger "pushes_user_storage_update" after update on "pushes" for each row
      when (old.user_id is distinct from new.user_id or old.expired is distinct from new.expired
            or old.stored_bytes is distinct from new.stored_bytes) execute function user_storage_count();`);
    this.addSql(`create trigger "pushes_user_storage_delete" after delete on "pushes" for each row
      when (old.user_id is not null and not old.expired) execute function user_storage_count();`);
    // Under the migrations' lock, before any instance of this version serves: what the triggers would have counted.
    this.addSql(`insert into user_storage (user_id, bytes)
      select id, coalesce((select sum(stored_bytes) from pushes p where p.user_id = u.id and not p.expired), 0)
      from users u;`);
    this.addSql(`create function "user_storage_used"(p_user uuid, p_now timestamptz, p_deadline timestamptz)
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

  override down(): void {
    this.addSql(`drop function if exists "user_storage_used"(uuid, timestamptz, timestamptz);`);
    this.addSql(`drop trigger if exists "pushes_user_storage_insert" on "pushes";`);
    this.addSql(`drop trigger if exists "pushes_user_storage_update" on "pushes";`);
    this.addSql(`drop trigger if exists "pushes_user_storage_delete" on "pushes";`);
    this.addSql(`drop function if exists "user_storage_count"();`);
    this.addSql(`drop table if exists "user_storage";`);
  }
}
