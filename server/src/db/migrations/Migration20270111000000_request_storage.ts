import { Migration } from '@mikro-orm/migrations';

/**
 * Requests count against their requester's storage quota (issue 45): three requests with attachments used to store
 * 15 MiB on an account whose quota was 64 KiB.
 *
 * - `requests.stored_bytes`: what the request's attachments store as sent (their contents), set by the create; the
 *   open requests already stored get the sizes of their files. (The ask's text is not counted, as a push's note is
 *   not: at most 10,000 characters, and the open-request limit bounds how many are kept.)
 * - A request holds its bytes while it is open (`pending`): triggers on `requests` keep `user_storage` (the count a
 *   user's creates read under the user's lock, Migration20261231000000_user_storage_in_statement) as they keep it for
 *   pushes, so a request and a push are counted alike by every writer (a create, an answer, a revocation, an expiry by
 *   a read or by the sweeper, a user's deletion).
 * - A request that is no longer open holds nothing: each move out of `pending` erases its ask and files
 *   (request-repository.ts). The requests already closed are erased here, so that every row obeys the rule (files
 *   kept in an object store lose their rows here; the sweeper's reconcile removes their objects: files/reconcile.ts).
 * - `user_storage_used(user, now, deadline, bytes, quota)`: when a create does not fit without them, it subtracts the
 *   open requests past their time (not yet settled by the sweeper) as it subtracts such pushes, so a refusal is exact;
 *   a create that fits still reads neither (Migration20270104000000_user_storage_fits).
 * - `requests_owner_open_idx`: a user's open requests by expiry, with their bytes: that subtraction, the count of a
 *   user's open requests (`PWPUSH_USER_OPEN_REQUESTS`) and the instant the first of them expires.
 */
export class Migration20270111000000_request_storage extends Migration {
  override name = 'Migration20270111000000_request_storage';

  override up(): void {
    this.addSql(`alter table "requests" add column "stored_bytes" bigint not null default 0;`);
    this.addSql(`update "requests" r set "stored_bytes" =
      coalesce((select sum(f."size") from "request_files" f where f."request_id" = r."id"), 0)
      where r."state" = 'pending';`);
    this.addSql(
      `delete from "request_files" f using "requests" r where r."id" = f."request_id" and r."state" <> 'pending';`,
    );
    this.addSql(
      `update "requests" set "ask_ciphertext" = null where "state" <> 'pending' and "ask_ciphertext" is not null;`,
    );
    this.addSql(
      `create index "requests_owner_open_idx" on "requests" ("user_id", "expires_at") include ("stored_bytes") where "state" = 'pending';`,
    );
    this.addSql(`create function "user_storage_count_requests"() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and old.state = 'pending' then
          update user_storage set bytes = bytes - old.stored_bytes where user_id = old.user_id;
        end if;
        if tg_op in ('INSERT', 'UPDATE') and new.state = 'pending' then
          insert into user_storage (user_id, bytes) values (new.user_id, new.stored_bytes)
            on conflict (user_id) do update set bytes = user_storage.bytes + excluded.bytes;
        end if;
        return null;
      end
      $$;`);
    this.addSql(`create trigger "requests_user_storage_insert" after insert on "requests" for each row
      when (new.state = 'pending') execute function user_storage_count_requests();`);
    this.addSql(`create trigger "requests_user_storage_update" after update on "requests" for each row
      when (old.state is distinct from new.state or old.user_id is distinct from new.user_id
            or old.stored_bytes is distinct from new.stored_bytes) execute function user_storage_count_requests();`);
    this.addSql(`create trigger "requests_user_storage_delete" after delete on "requests" for each row
      when (old.state = 'pending') execute function user_storage_count_requests();`);
    // Under the migrations' lock, before any instance of this version serves: what the triggers would have counted.
    this.addSql(`insert into user_storage (user_id, bytes)
      select user_id, sum(stored_bytes) from requests where state = 'pending' group by user_id
      on conflict (user_id) do update set bytes = user_storage.bytes + excluded.bytes;`);
    this.addSql(userStorageUsed(true));
  }

  override down(): void {
    this.addSql(userStorageUsed(false));
    this.addSql(`drop trigger if exists "requests_user_storage_insert" on "requests";`);
    this.addSql(`drop trigger if exists "requests_user_storage_update" on "requests";`);
    this.addSql(`drop trigger if exists "requests_user_storage_delete" on "requests";`);
    this.addSql(`drop function if exists "user_storage_count_requests"();`);
    this.addSql(`update user_storage u set bytes = bytes - coalesce((select sum(stored_bytes) from requests r
      where r.user_id = u.user_id and r.state = 'pending'), 0);`);
    this.addSql(`drop index if exists "requests_owner_open_idx";`);
    this.addSql(`alter table "requests" drop column "stored_bytes";`);
  }
}

/** `user_storage_used` with the bytes and quota of a create: with the open requests past their time, or (down) without. */
function userStorageUsed(withRequests: boolean): string {
  const requests = withRequests
    ? `execute 'select coalesce(sum(stored_bytes), 0) from requests
                 where user_id = $1 and state = ''pending'' and expires_at <= $2'
          into lapsed_requests using p_user, p_now;`
    : '';
  return `create or replace function "user_storage_used"(p_user uuid, p_now timestamptz, p_deadline timestamptz,
        p_bytes bigint, p_quota bigint)
      returns bigint language plpgsql volatile as $$
      declare
        counted bigint;
        lapsed bigint;
        lapsed_requests bigint := 0;
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
        ${requests}
        return counted - lapsed - lapsed_requests;
      end
      $$;`;
}
