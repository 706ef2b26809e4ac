/**
 * The start-up key check (server/src/crypto/key-check.ts) on a real database: a database from before the check
 * (pushes, no key_checks rows) is proven by one stored secret; afterwards by the rows each current key leaves.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src/core.js';
import { MasterKeyMismatch } from '../../src/crypto/key-check.js';
import { createMigratedDatabase, createTestDatabase, makeSettings, TEST_KEY_A, TEST_KEY_B } from '../support/db.js';
import { ctx } from './helpers.js';

const db = await createMigratedDatabase('sp_keycheck');
afterAll(() => db.drop());

const start = (keys: (typeof TEST_KEY_A)[], warnings: string[] = []) =>
  createCore(makeSettings({ databaseUrl: db.url, masterKeys: keys }), {
    logger: { info: () => {}, warn: (obj, msg) => warnings.push(`${msg} ${JSON.stringify(obj)}`), error: () => {} },
  });
const keyIds = async () =>
  (await db.query<{ key_id: string }>('select key_id from key_checks order by key_id')).map((r) => r.key_id);

describe('the start-up key check', () => {
  it('proves the keys against stored secrets, then against the rows of the keys that served, and refuses a wrong key', async () => {
    const first = await start([TEST_KEY_A]);
    const made = await first.pushes.create({ payload: 'under A', note: 'note A' }, ctx());
    await first.close();
    expect(await keyIds()).toEqual(['a']);

    // A database from before the check: no rows, one push. A wrong key is refused, naming no key material.
    await db.query('delete from key_checks');
    const refused = await start([TEST_KEY_B]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(MasterKeyMismatch);
    const message = (refused as Error).message;
    expect(message).toMatch(/PWPUSH_MASTER_KEY .*PWPUSH_MASTER_KEY_PREVIOUS/s);
    expect(message).toMatch(/configured key ids: b; the database's data is under key ids: a/);
    expect(message).toContain('`npm run key`');
    for (const key of [TEST_KEY_A.key, TEST_KEY_B.key]) {
      expect(message).not.toContain(key.toString('hex'));
      expect(message).not.toContain(key.toString('base64'));
    }
    expect(message).not.toContain('under A');
    expect(await keyIds()).toEqual([]);

    // The right key passes on the stored secret and leaves its row; a rotation adds the new key's.
    await (await start([TEST_KEY_A])).close();
    expect(await keyIds()).toEqual(['a']);
    const rotated = await start([TEST_KEY_B, TEST_KEY_A]);
    expect((await rotated.pushes.retrieve(made.url_token, undefined, ctx())).payload).toBe('under A');
    await rotated.close();
    expect(await keyIds()).toEqual(['a', 'b']);

    // B alone starts (its row opens) and warns that data under "a" cannot be read; A alone starts too.
    const warnings: string[] = [];
    await (await start([TEST_KEY_B], warnings)).close();
    expect(warnings.find((w) => /master key ids cannot be read/.test(w))).toMatch(/"key_ids":\["a"\]/);
    await (await start([TEST_KEY_A])).close();

    // A key neither row opens is refused, even with the rows present.
    const other = { id: 'c', key: Buffer.alloc(32, 0xc3) };
    await expect(start([other])).rejects.toThrow(/configured key ids: c; the database's data is under key ids: a, b/);
    // A key with a known id but other bytes is refused too.
    await expect(start([{ id: 'a', key: other.key }])).rejects.toBeInstanceOf(MasterKeyMismatch);
  });

  it('starts on an empty database with any key', async () => {
    const empty = await createTestDatabase('sp_keycheck_empty');
    try {
      const core = await createCore(makeSettings({ databaseUrl: empty.url, masterKeys: [TEST_KEY_B] }));
      await core.close();
      expect(await empty.query('select key_id from key_checks')).toEqual([{ key_id: 'b' }]);
    } finally {
      await empty.drop();
    }
  });
});
