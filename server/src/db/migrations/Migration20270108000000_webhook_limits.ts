import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 45, webhooks that amplify traffic: `webhook_limits`, counters in fixed clock windows (a minute), one row per
 * key, shared by every server process (each row is locked by the statement that counts).
 *
 * - `test:<user>`, `redeliver:<user>`: the calls of `testWebhook` and `retryWebhookDelivery` an account made in the
 *   minute `window_start` (webhooks/webhook-repository.ts `countCall`: one statement, refused past the quota without
 *   counting).
 * - `send:<user>`, `to:<address>`: the send budget (webhooks/send-budget.ts), the POSTs one account's webhooks sent in
 *   the window, and those one target address received from every account. `used`: POSTs sent in the window;
 *   `reserved`: the window's slots promised, when it began, to deliveries put off to it; `used_reserved`: those of
 *   them sent; `booked_window` and `booked`: the latest window deliveries were put off to, and how many (every window
 *   between the current one and it is full).
 * - `webhook_send_budget(accounts, addresses, reserved_for, account_quota, address_quota, window, window_seconds)`:
 *   a batch of POSTs asked for in order, each with its account's key and its address's key (null: no budget of that
 *   kind) and the window it was put off to (null: none). Locks the batch's keys in key order, rolls them into the
 *   window, answers per POST null (send now, counted) or the window to wait for (booked at the end of its keys'
 *   queue), and writes the counts. A POST put off before, in its window, may take the window's reserved slots; any
 *   other may not take them. Never more than the quota a window, for either key.
 * - `webhook_deliveries.budget_window`: the window a pending delivery was put off to by the budget (its
 *   `next_attempt_at` too), cleared by its try.
 *
 * The sweeper forgets rows whose window is over and that hold no booking.
 */
export class Migration20270108000000_webhook_limits extends Migration {
  override name = 'Migration20270108000000_webhook_limits';

  override up(): void {
    this.addSql(`create table "webhook_limits" (
      "key" text not null primary key,
      "window_start" timestamptz not null,
      "used" integer not null,
      "reserved" integer not null default 0,
      "used_reserved" integer not null default 0,
      "booked_window" timestamptz null,
      "booked" integer not null default 0
    );`);
    this.addSql(`alter table "webhook_deliveries" add column "budget_window" timestamptz null;`);
    this.addSql(`create function "webhook_send_budget"(p_accounts text[], p_addresses text[],
        p_reserved_for timestamptz[], p_account_quota integer, p_address_quota integer, p_window timestamptz,
        p_window_seconds integer)
      returns timestamptz[] language plpgsql volatile as $$
      declare
        step interval := make_interval(secs => p_window_seconds);
        v_keys text[];
        v_quotas integer[];
        v_used integer[];
        v_reserved integer[];
        v_used_reserved integer[];
        v_booked_at timestamptz[];
        v_booked integer[];
        answer timestamptz[] := array_fill(null::timestamptz, array[cardinality(p_accounts)]);
        pair integer[];
        blocked boolean[];
        k integer;
        was_put_off boolean;
        wait timestamptz;
      begin
        select array_agg(distinct x order by x) into v_keys
          from unnest(p_accounts || p_addresses) x where x is not null;
        if v_keys is null then
          return answer;
        end if;
        insert into webhook_limits (key, window_start, used)
          select x, p_window, 0 from unnest(v_keys) x order by x on conflict (key) do nothing;
        -- Locked in key order; each rolled into the window (never back: a process whose clock is behind counts in
        -- the newer window). Entering a window, its reservations are what was booked for it: all of it when bookings
        -- reach past it.
        with locked as (
          select l.*, case when l.key like 'send:%' then p_account_quota else p_address_quota end as quota
          from webhook_limits l where l.key = any(v_keys) order by l.key for update
        ), rolled as (
          select key, quota,
            case when window_start >= p_window then used else 0 end as used,
            case when window_start >= p_window then reserved
                 when booked_window > p_window then quota
                 when booked_window = p_window then booked else 0 end as reserved,
            case when window_start >= p_window then used_reserved else 0 end as used_reserved,
            case when booked_window > p_window then booked_window end as booked_window,
            case when booked_window > p_window then booked else 0 end as booked
          from locked
        )
        select array_agg(key order by key), array_agg(quota order by key), array_agg(used order by key),
            array_agg(reserved order by key), array_agg(used_reserved order by key),
            array_agg(booked_window order by key), array_agg(booked order by key)
          into v_keys, v_quotas, v_used, v_reserved, v_used_reserved, v_booked_at, v_booked
          from rolled;
        for i in 1 .. cardinality(p_accounts) loop
          pair := array[array_position(v_keys, p_accounts[i]), array_position(v_keys, p_addresses[i])];
          was_put_off := p_reserved_for[i] is not null and p_reserved_for[i] <= p_window;
          -- Full for this POST: the window's quota is used, or (a POST not put off to this window) what is left of it
          -- is reserved for those that were.
          blocked := array[false, false];
          for j in 1 .. 2 loop
            k := pair[j];
            blocked[j] := k is not null and (v_used[k] >= v_quotas[k] or (not was_put_off
              and v_used[k] + greatest(v_reserved[k] - v_used_reserved[k], 0) >= v_quotas[k]));
          end loop;
          if not (blocked[1] or blocked[2]) then
            foreach k in array pair loop
              if k is not null then
                v_used[k] := v_used[k] + 1;
                if was_put_off then
                  v_used_reserved[k] := v_used_reserved[k] + 1;
                end if;
              end if;
            end loop;
          else
            -- Put off: booked at the end of the queue of each key that is full (every window up to its last booking
            -- is), and told the latest of those windows.
            wait := null;
            for j in 1 .. 2 loop
              k := pair[j];
              if blocked[j] then
                if v_booked_at[k] is null then
                  v_booked_at[k] := p_window + step;
                  v_booked[k] := 1;
                elsif v_booked[k] < v_quotas[k] then
                  v_booked[k] := v_booked[k] + 1;
                else
                  v_booked_at[k] := v_booked_at[k] + step;
                  v_booked[k] := 1;
                end if;
                wait := greatest(wait, v_booked_at[k]);
              end if;
            end loop;
            answer[i] := wait;
          end if;
        end loop;
        update webhook_limits l set window_start = greatest(l.window_start, p_window), used = v.used,
            reserved = v.reserved, used_reserved = v.used_reserved, booked_window = v.booked_window, booked = v.booked
          from unnest(v_keys, v_used, v_reserved, v_used_reserved, v_booked_at, v_booked)
            as v(key, used, reserved, used_reserved, booked_window, booked)
          where l.key = v.key;
        return answer;
      end
      $$;`);
  }

  override down(): void {
    this.addSql(
      `drop function if exists "webhook_send_budget"(text[], text[], timestamptz[], integer, integer, timestamptz, integer);`,
    );
    this.addSql(`alter table "webhook_deliveries" drop column "budget_window";`);
    this.addSql(`drop table if exists "webhook_limits";`);
  }
}
