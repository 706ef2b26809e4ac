import { Migration } from '@mikro-orm/migrations';
import {
  PUSH_COUNT_BY_WORKSPACE,
  REQUEST_COUNT_BY_WORKSPACE,
  userStorageUsed,
} from './Migration20270121000000_workspaces.js';

/** How many shares a user's storage count is kept in (a connection writes the one its backend's pid picks). */
const SHARES = 16;
/** The share a connection writes: its backend's, so a statement's lock and its triggers' counts land on one row. */
const OWN = `(pg_backend_pid() % ${SHARES})::smallint`;

/**
 * A user's storage count off one hot row (issue 44): 16 connections creating for one user queued on the user's
 * `user_storage` row, locked by each create until its commit's WAL flush, so a busy owner's creates ran one at a time.
 *
 * - `user_storage_shares`: per user, 16 rows (`stripe` 0–15), all made at once. Each holds part of the count
 *   (`bytes`: the triggers on `pushes` and `requests` add and take a row's bytes on the share of the connection that
 *   writes it, `pg_backend_pid() % 16`) and part of the quota (`cap`, granted under `quota`; -1: none granted).
 *   `user_storage` becomes a view, the sum of the shares per user, for its readers.
 * - Invariant: when a share's `quota` is Q, every share's is Q, the caps sum to at most Q, and each share's bytes stay
 *   within its cap. So a create whose bytes fit in its own share's cap fits the quota, whatever the others do at the
 *   same time: `user_storage_take` locks that share only (16 connections spread over 16 rows) and answers -1 when
 *   the create does not fit there (or no quota is granted); the create then runs again with `user_storage_used`.
 * - `user_storage_used` (the exact reading, as before) locks all 16 shares in stripe order, so it waits for every
 *   create in flight and counts them all; then, given bytes that fit the quota, it grants the free bytes anew, a 16th
 *   to each share (the create's own bytes to its own share), else withdraws the grant (`quota` -1) until a reading
 *   that fits: the user's creates then go that way, one at a time as before. A take that found its share lacking has
 *   committed (or rolled back) before it runs, so it holds no share while waiting for all of them.
 * Workspaces keep one `workspace_storage` row each, as before.
 */
export class Migration20270213000000_user_storage_shares extends Migration {
  override name = 'Migration20270213000000_user_storage_shares';

  override up(): void {
    this.addSql(`create table "user_storage_shares" (
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "stripe" smallint not null,
      "bytes" bigint not null default 0,
      "cap" bigint not null default 0,
      "quota" bigint not null default -1,
      primary key ("user_id", "stripe")
    );`);
    this.addSql(`insert into user_storage_shares (user_id, stripe, bytes)
      select s.user_id, n, case when n = 0 then s.bytes else 0 end from user_storage s, generate_series(0, ${SHARES - 1}) n;`);
    this.addSql(`drop table "user_storage";`);
    this.addSql(`create view "user_storage" as
      select user_id, sum(bytes)::bigint as bytes from user_storage_shares group by user_id;`);
    this.addSql(`create function "user_storage_shares_for"(p_user uuid) returns void language sql as $$
      insert into user_storage_shares (user_id, stripe)
        select p_user, n from generate_series(0, ${SHARES - 1}) n on conflict do nothing;
      $$;`);
    this.addSql(`create function "user_storage_add"(p_user uuid, p_bytes bigint) returns void language plpgsql as $$
      begin
        update user_storage_shares set bytes = bytes + p_bytes where user_id = p_user and stripe = ${OWN};
        -- Shares are made all at once: none yet (a user's first count) makes them; a take never needs to.
        if not found and p_bytes > 0 then
          perform user_storage_shares_for(p_user);
          update user_storage_shares set bytes = bytes + p_bytes where user_id = p_user and stripe = ${OWN};
        end if;
      end
      $$;`);
    this.addSql(PUSH_COUNT_BY_SHARE);
    this.addSql(REQUEST_COUNT_BY_SHARE);
    this.addSql(USER_STORAGE_USED);
    this.addSql(USER_STORAGE_TAKE);
  }

  override down(): void {
    this.addSql(`drop function if exists "user_storage_take"(uuid, timestamptz, bigint, bigint);`);
    this.addSql(`drop view "user_storage";`);
    this.addSql(`create table "user_storage" (
      "user_id" uuid not null primary key,
      "bytes" bigint not null default 0,
      constraint "user_storage_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);
    this.addSql(`insert into user_storage (user_id, bytes)
      select user_id, sum(bytes) from user_storage_shares group by user_id;`);
    this.addSql(PUSH_COUNT_BY_WORKSPACE);
    this.addSql(REQUEST_COUNT_BY_WORKSPACE);
    this.addSql(userStorageUsed('and workspace_id is null'));
    this.addSql(`drop function if exists "user_storage_add"(uuid, bigint);`);
    this.addSql(`drop function if exists "user_storage_shares_for"(uuid);`);
    this.addSql(`drop table "user_storage_shares";`);
  }
}

/** Adds or takes a row's bytes from its workspace's count, else from its user's (the connection's share). */
const countOf = (row: 'old' | 'new', sign: '+' | '-') =>
  sign === '-'
    ? `if ${row}.workspace_id is not null then
           update workspace_storage set bytes = bytes - ${row}.stored_bytes where workspace_id = ${row}.workspace_id;
         else
           perform user_storage_add(${row}.user_id, -${row}.stored_bytes);
         end if;`
    : `if ${row}.workspace_id is not null then
           insert into workspace_storage (workspace_id, bytes) values (${row}.workspace_id, ${row}.stored_bytes)
             on conflict (workspace_id) do update set bytes = workspace_storage.bytes + excluded.bytes;
         else
           perform user_storage_add(${row}.user_id, ${row}.stored_bytes);
         end if;`;

const PUSH_COUNT_BY_SHARE = `create or replace function "user_storage_count"() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and (old.user_id is not null or old.workspace_id is not null)
           and not old.expired then
          ${countOf('old', '-')}
        end if;
        if tg_op in ('INSERT', 'UPDATE') and (new.user_id is not null or new.workspace_id is not null)
           and not new.expired then
          ${countOf('new', '+')}
        end if;
        return null;
      end
      $$;`;

const REQUEST_COUNT_BY_SHARE = `create or replace function "user_storage_count_requests"() returns trigger
      language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and old.state = 'pending' then
          ${countOf('old', '-')}
        end if;
        if tg_op in ('INSERT', 'UPDATE') and new.state = 'pending' then
          ${countOf('new', '+')}
        end if;
        return null;
      end
      $$;`;

/**
 * The exact reading under all of a user's shares (their locks in stripe order, so two readings never deadlock), then
 * the grant: the free bytes a 16th to each share when `p_bytes` fits the quota, else none (every share's `quota` -1).
 * The lapsed pushes and open requests (past their time, not yet settled by the sweeper) are read only when the create
 * does not fit without them, as before. Null when the locks came after the request's deadline.
 */
const USER_STORAGE_USED = `create or replace function "user_storage_used"(p_user uuid, p_now timestamptz,
        p_deadline timestamptz, p_bytes bigint, p_quota bigint)
      returns bigint language plpgsql volatile as $$
      declare
        counted bigint;
        free bigint;
        own smallint := ${OWN};
        lapsed bigint;
        lapsed_requests bigint;
      begin
        perform user_storage_shares_for(p_user);
        select count(*) into counted from (
          select 1 from user_storage_shares where user_id = p_user order by stripe for update
        ) locked;
        -- The locks may have come after the request's deadline: then nothing may be written (null).
        if clock_timestamp() >= p_deadline then
          return null;
        end if;
        select coalesce(sum(bytes), 0) into counted from user_storage_shares where user_id = p_user;
        if p_bytes is not null and counted + p_bytes <= p_quota then
          free := p_quota - counted - p_bytes;
          update user_storage_shares set quota = p_quota,
            cap = bytes + free / ${SHARES} + case when stripe = own then p_bytes + free % ${SHARES} else 0 end
            where user_id = p_user;
          return counted;
        end if;
        update user_storage_shares set quota = -1 where user_id = p_user and quota <> -1;
        execute 'select coalesce(sum(stored_bytes), 0) from pushes
                 where user_id = $1 and not expired and expires_at <= $2 and workspace_id is null'
          into lapsed using p_user, p_now;
        execute 'select coalesce(sum(stored_bytes), 0) from requests
                 where user_id = $1 and state = ''pending'' and expires_at <= $2 and workspace_id is null'
          into lapsed_requests using p_user, p_now;
        return counted - lapsed - lapsed_requests;
      end
      $$;`;

/**
 * A create's bytes taken from its own share of the user's quota: that share's lock, then the count (every share's
 * bytes, read after the lock). -1 when they do not fit there (the create then runs with `user_storage_used`), null
 * when the lock came after the request's deadline.
 */
const USER_STORAGE_TAKE = `create function "user_storage_take"(p_user uuid, p_deadline timestamptz, p_bytes bigint,
        p_quota bigint)
      returns bigint language plpgsql volatile as $$
      declare
        fits boolean;
        counted bigint;
      begin
        select quota = p_quota and bytes + p_bytes <= cap into fits from user_storage_shares
          where user_id = p_user and stripe = ${OWN} for update;
        if clock_timestamp() >= p_deadline then
          return null;
        end if;
        if fits is not true then
          return -1;
        end if;
        select coalesce(sum(bytes), 0) into counted from user_storage_shares where user_id = p_user;
        if counted + p_bytes > p_quota then
          return -1;
        end if;
        return counted;
      end
      $$;`;
