/**
 * The bench's scale mode (BENCH_SCALE, BENCH_SWEEP; scripts/bench.ts runs it): rows loaded straight into the bench
 * database, in one statement per table (generate_series), as a large instance's tables would hold them, so the same
 * scenarios can be measured before and after in one run; and a million pushes due at once for the sweeper.
 *
 * - `loadScale(n)`: n pushes (a quarter owned by the bench user, the busy owner of the `owner` scenarios; a quarter by
 *   n / 200 other users; half anonymous), four in five of them expired (their secrets erased, as the sweeper leaves
 *   them) and the others active for a week; two audit entries each (creation and a view); `user_storage` (its shares) set
 *   to what its triggers would have counted. Loaded as the superuser with `session_replication_role = replica` (no triggers,
 *   no foreign-key checks: the rows are consistent by construction, each column the triggers would set given here),
 *   then analysed.
 * - `loadDue(n)`: n anonymous text pushes already past their time, which the next sweep expires (in its batches).
 * - `dueCount()`: how many pushes are past their time and not yet expired (the sweeper's backlog).
 */
import type pg from 'pg';

/** Rows per statement: a bounded transaction per step, with progress between them. */
const CHUNK = 250_000;

async function inChunks(
  admin: pg.Client,
  total: number,
  what: string,
  statement: (from: number, to: number) => string,
): Promise<void> {
  for (let from = 1; from <= total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK - 1);
    await admin.query(statement(from, to));
    process.stdout.write(`\r  ${what}: ${to.toLocaleString('en')} of ${total.toLocaleString('en')}`);
  }
  process.stdout.write('\n');
}

/** The rows of a large instance (see the file's comment); returns the seconds it took and the database's size. */
export async function loadScale(admin: pg.Client, pushes: number, busyOwner: string) {
  const t0 = performance.now();
  const users = Math.max(1, Math.floor(pushes / 200));
  await admin.query("set session_replication_role = 'replica'");
  await admin.query(
    `insert into users (id, email, created_at, updated_at)
     select gen_random_uuid(), 'scale-' || g || '@example.org', now(), now() from generate_series(1, ${users}) g`,
  );
  await admin.query(
    `create temp table scale_users as select row_number() over (order by id) as n, id from users where email like 'scale-%'`,
  );
  await admin.query('create unique index on scale_users (n)');
  // Push g: owned by the busy owner when g % 4 = 0, by scale user g % users when g % 4 = 1, else anonymous; expired
  // unless g % 5 = 0; created over the last 90 days.
  await inChunks(
    admin,
    pushes,
    'pushes',
    (from, to) => `insert into pushes (id, url_token, kind, user_id, payload_ciphertext, passphrase_protected,
        expire_after_days, expire_after_seconds, expire_after_views, views_used, deletable_by_viewer, retrieval_step, expired, expired_on,
        created_at, updated_at, expires_at, stored_bytes)
      select gen_random_uuid(), 'scale-token-' || g, 'text',
        case when g % 4 = 0 then '${busyOwner}'::uuid
             when g % 4 = 1 then (select id from scale_users where n = 1 + (g / 20) % ${users}) end,
        case when g % 5 = 0 then repeat('x', 60) end, false, 7, 604800, 5, 1, true, false,
        g % 5 <> 0, case when g % 5 <> 0 then created + interval '7 days' end,
        created, created, created + interval '7 days', 60
      from (select g, now() - (g % 7776000) * interval '1 second' - interval '8 days' * (g % 5 <> 0)::int as created
            from generate_series(${from}, ${to}) g) s`,
  );
  await inChunks(
    admin,
    pushes,
    'audit entries',
    (from, to) => `insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
      select p.id, k.kind, '10.0.0.1', 'bench', '', p.user_id, p.created_at
      from pushes p cross join (values ('creation'), ('view')) k(kind)
      where p.url_token in (select 'scale-token-' || g from generate_series(${from}, ${to}) g)`,
  );
  // The user's count in its 16 shares (Migration20270213000000_user_storage_shares): all of it in the first, no grant.
  await admin.query(`insert into user_storage_shares (user_id, stripe, bytes, cap, quota)
    select t.user_id, n, case when n = 0 then t.bytes else 0 end, 0, -1
    from (select user_id, sum(stored_bytes) as bytes from pushes where user_id is not null and not expired
          group by user_id) t, generate_series(0, 15) n
    on conflict (user_id, stripe) do update set bytes = excluded.bytes, cap = 0, quota = -1`);
  await admin.query("set session_replication_role = 'origin'");
  await admin.query('analyze');
  const { rows } = await admin.query<{ size: string }>(
    'select pg_size_pretty(pg_database_size(current_database())) as size',
  );
  return { seconds: (performance.now() - t0) / 1000, users, size: rows[0]!.size };
}

/** `n` anonymous text pushes past their time, not yet expired: the next sweep's work. */
export async function loadDue(admin: pg.Client, n: number): Promise<number> {
  const t0 = performance.now();
  await admin.query("set session_replication_role = 'replica'");
  await inChunks(
    admin,
    n,
    'due pushes',
    (from, to) => `insert into pushes (id, url_token, kind, payload_ciphertext, passphrase_protected, expire_after_days,
        expire_after_seconds, expire_after_views, deletable_by_viewer, retrieval_step, created_at, updated_at, expires_at, stored_bytes)
      select gen_random_uuid(), 'due-token-' || g, 'text', repeat('x', 60), false, 1, 86400, 5, true, false,
        now() - interval '1 day', now() - interval '1 day', now() - interval '1 minute', 60
      from generate_series(${from}, ${to}) g`,
  );
  await admin.query("set session_replication_role = 'origin'");
  await admin.query('analyze pushes');
  return (performance.now() - t0) / 1000;
}

/** The sweeper's backlog: pushes past their time, not yet expired. */
export async function dueCount(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    'select count(*)::int as n from pushes where not expired and expires_at <= now()',
  );
  return rows[0]!.n;
}
