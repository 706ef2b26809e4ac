/**
 * The user storage shares' migration (Migration20270213000000_user_storage_shares) on a database that already has
 * users and pushes counted in `user_storage` (an instance upgraded in place): each counted user gets 16 shares holding
 * the count (the view `user_storage` sums them to what the table held), the triggers count on the shares, the quota's
 * readings answer as before; and its down migration gives back the table with the same counts and triggers that write it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openOrm } from '../../src/db/orm.js';
import { createTestDatabase } from '../support/db.js';

const db = await createTestDatabase();
const orm = await openOrm(db.url, { poolMax: 2, noTimeouts: true });
afterAll(async () => {
  await orm.close(true);
  await db.drop();
});

const BEFORE = 'Migration20270211000000_workspace_single_sign_on';
const SHARES = 'Migration20270213000000_user_storage_shares';

async function addPush(userId: string | null, bytes: number, state: { expired?: boolean; pastTime?: boolean } = {}) {
  const now = new Date();
  const expiresAt = new Date(now.getTime() + (state.pastTime ? -60_000 : 86_400_000));
  const id = randomUUID();
  await db.query(
    `insert into pushes (id, url_token, kind, user_id, payload_ciphertext, passphrase_protected, expire_after_days, expire_after_seconds,
       expire_after_views, deletable_by_viewer, retrieval_step, created_at, updated_at, expires_at, stored_bytes, expired,
       expired_on)
     values ($1, $2, 'text', $3, case when $7::boolean then null else 'x' end, false, 1, 86400, 5, true, false, $4, $4, $5, $6, $7,
       case when $7 then $4::timestamptz end)`,
    [id, randomUUID(), userId, now, expiresAt, bytes, state.expired ?? false],
  );
  return id;
}

const counts = async () =>
  Object.fromEntries(
    (await db.query<{ user_id: string; bytes: string }>('select user_id, bytes from user_storage')).map((r) => [
      r.user_id,
      Number(r.bytes),
    ]),
  );

describe('the user storage shares, migrated onto existing data', () => {
  it('keeps every count (shares summed by the view), counts on the shares, and is undone by its down migration', async () => {
    await orm.migrator.up({ to: BEFORE });
    const [alice, bob, carol] = [randomUUID(), randomUUID(), randomUUID()];
    for (const [id, email] of [
      [alice, 'alice@example.org'],
      [bob, 'bob@example.org'],
      [carol, 'carol@example.org'],
    ]) {
      await db.query('insert into users (id, email, created_at, updated_at) values ($1, $2, now(), now())', [
        id,
        email,
      ]);
    }
    await addPush(alice, 100);
    const gone = await addPush(alice, 40);
    await addPush(alice, 50, { pastTime: true });
    await addPush(alice, 70, { expired: true });
    await addPush(bob, 30);
    await addPush(null, 1000);
    const before = await counts();
    expect(before[alice]).toBe(190);
    expect(before[bob]).toBe(30);

    await orm.migrator.up({ to: SHARES });
    expect(await counts()).toEqual(before);
    const shares = await db.query<{ user_id: string; n: string; quota: string }>(
      'select user_id, count(*) as n, max(quota) as quota from user_storage_shares group by user_id',
    );
    expect(shares.every((s) => Number(s.n) === 16 && Number(s.quota) === -1)).toBe(true);
    // The triggers count on the shares: a create, a delete, a first push of a user with no count yet.
    await addPush(alice, 5);
    await db.query('delete from pushes where id = $1', [gone]);
    await addPush(carol, 7);
    expect(await counts()).toEqual({ ...before, [alice]: 155, [carol]: 7 });
    // The exact reading subtracts the lapsed push; given bytes that fit, it grants the free bytes to the 16 shares.
    const used = (bytes: number | null, quota: number | null) =>
      db
        .query<{ used: string }>("select user_storage_used($1, now(), now() + interval '1 minute', $2, $3) as used", [
          alice,
          bytes,
          quota,
        ])
        .then(([row]) => Number(row!.used));
    expect(await used(null, null)).toBe(105);
    expect(await used(10, 1000)).toBe(155);
    const [grant] = await db.query<{ caps: string; quotas: string }>(
      'select sum(cap) as caps, count(distinct quota) as quotas from user_storage_shares where user_id = $1',
      [alice],
    );
    expect({ caps: Number(grant!.caps), quotas: Number(grant!.quotas) }).toEqual({ caps: 1000, quotas: 1 });
    // A take under another quota finds nothing granted: -1 (the create runs again under all the shares).
    const [take] = await db.query<{ used: string }>(
      "select user_storage_take($1, now() + interval '1 minute', 10, 2000) as used",
      [alice],
    );
    expect(Number(take!.used)).toBe(-1);

    await orm.migrator.down({ to: BEFORE });
    expect(await counts()).toEqual({ ...before, [alice]: 155, [carol]: 7 });
    const [table] = await db.query<{ kind: string; shares: string | null; take: string | null }>(
      `select relkind as kind, to_regclass('user_storage_shares')::text as shares,
         to_regprocedure('user_storage_take(uuid, timestamptz, bigint, bigint)')::text as take
       from pg_class where relname = 'user_storage'`,
    );
    expect(table).toEqual({ kind: 'r', shares: null, take: null });
    await addPush(bob, 3);
    expect((await counts())[bob]).toBe(33);
    await orm.migrator.up();
    expect((await counts())[bob]).toBe(33);
  });
});
