/**
 * The user storage counter's migration on a database that already has users and pushes (an instance upgraded in
 * place): it counts each user's unexpired pushes (past their time or not: the quota's reading subtracts those), none
 * for a user without pushes, nothing for anonymous pushes; and it goes down again.
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

const BEFORE = 'Migration20261230000000_webhooks';
const COUNTER = 'Migration20261231000000_user_storage_in_statement';

async function addPush(userId: string | null, bytes: number, state: { expired?: boolean; pastTime?: boolean } = {}) {
  const now = new Date();
  const expiresAt = new Date(now.getTime() + (state.pastTime ? -60_000 : 86_400_000));
  await db.query(
    `insert into pushes (id, url_token, kind, user_id, payload_ciphertext, passphrase_protected, expire_after_days,
       expire_after_views, deletable_by_viewer, retrieval_step, created_at, updated_at, expires_at, stored_bytes, expired,
       expired_on)
     values ($1, $2, 'text', $3, case when $7::boolean then null else 'x' end, false, 1, 5, true, false, $4, $4, $5, $6, $7,
       case when $7 then $4::timestamptz end)`,
    [randomUUID(), randomUUID(), userId, now, expiresAt, bytes, state.expired ?? false],
  );
}

describe('the user storage counter, migrated onto existing data', () => {
  it('counts what each user holds, and is undone by its down migration', async () => {
    await orm.migrator.up({ to: BEFORE });
    const [alice, bob] = [randomUUID(), randomUUID()];
    for (const [id, email] of [
      [alice, 'alice@example.org'],
      [bob, 'bob@example.org'],
    ]) {
      await db.query('insert into users (id, email, created_at, updated_at) values ($1, $2, now(), now())', [
        id,
        email,
      ]);
    }
    await addPush(alice, 100);
    await addPush(alice, 50, { pastTime: true });
    await addPush(alice, 70, { expired: true });
    await addPush(null, 1000);

    await orm.migrator.up({ to: COUNTER });
    const counted = await db.query<{ user_id: string; bytes: string }>('select user_id, bytes from user_storage');
    expect(Object.fromEntries(counted.map((r) => [r.user_id, Number(r.bytes)]))).toEqual({ [alice]: 150, [bob]: 0 });
    const [used] = await db.query<{ used: string }>(
      "select user_storage_used($1, now(), now() + interval '1 minute') as used",
      [alice],
    );
    expect(Number(used!.used)).toBe(100);

    await orm.migrator.down({ to: BEFORE });
    const [gone] = await db.query<{ table: string | null; fn: string | null }>(
      `select to_regclass('user_storage')::text as table,
         to_regprocedure('user_storage_used(uuid, timestamptz, timestamptz)')::text as fn`,
    );
    expect(gone).toEqual({ table: null, fn: null });
    // The pushes are still writable without the triggers.
    await addPush(alice, 10);
  });
});
