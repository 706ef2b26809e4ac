/**
 * Migration20270203000000_user_locale on a database made by the previous migration set, with users and their pushes
 * in it (an instance upgraded in place): every user's `locale` is null after it (English, as before), the accounts
 * and their pushes still work, a language is then recorded and read back with the session's user, and `down` drops
 * the column again with the users kept.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src/core.js';
import { openOrm } from '../../src/db/orm.js';
import { createTestDatabase, makeSettings } from '../support/db.js';
import { ctx } from './helpers.js';

const db = await createTestDatabase();
const orm = await openOrm(db.url, { poolMax: 2, noTimeouts: true });
afterAll(async () => {
  await orm.close(true);
  await db.drop();
});

const BEFORE = 'Migration20270125000000_unused_routines';
const ADDED = 'Migration20270203000000_user_locale';

async function hasColumn(): Promise<boolean> {
  const rows = await db.query(
    `select 1 from information_schema.columns where table_name = 'users' and column_name = 'locale'`,
  );
  return rows.length === 1;
}

describe("a user's language, added to a database with data in it", () => {
  it('leaves every user null (English), keeps accounts and pushes working, and is undone by its down', async () => {
    // The previous version's data: users and a push made through the services, then the database taken back to the
    // previous set with them in it (a Core migrates to the newest set at start).
    await orm.migrator.up();
    const before = await createCore(makeSettings({ databaseUrl: db.url }));
    const ana = await before.users.createUser('ana-before@example.org', 'violet-harbour-71-quartz');
    const ben = await before.users.createUser('ben-before@example.org');
    const kept = await before.pushes.create(
      { payload: 'made before the upgrade', expire_after_views: 3 },
      ctx(ana.userId),
    );
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    expect(await hasColumn()).toBe(false);
    const [{ n }] = (await db.query<{ n: string }>('select count(*) as n from users')) as [{ n: string }];
    expect(Number(n)).toBe(2);

    // The upgrade: a Core runs the pending migration at start.
    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      expect(await hasColumn()).toBe(true);
      expect(await db.query('select email, locale from users order by email')).toEqual([
        { email: 'ana-before@example.org', locale: null },
        { email: 'ben-before@example.org', locale: null },
      ]);
      expect((await core.pushes.retrieve(kept.url_token, undefined, ctx())).payload).toBe('made before the upgrade');
      const signedIn = await core.web!.accounts.signIn(
        'ana-before@example.org',
        'violet-harbour-71-quartz',
        '127.0.0.1',
      );
      expect(signedIn.locale).toBeUndefined();
      await core.web!.accounts.rememberLocale(ana.userId, 'pt-BR');
      const session = await core.web!.accounts.sessionUser(signedIn.userId, signedIn.sessionVersion);
      expect(session?.locale).toBe('pt-BR');
      expect(await db.query('select email, locale from users order by email')).toEqual([
        { email: 'ana-before@example.org', locale: 'pt-BR' },
        { email: 'ben-before@example.org', locale: null },
      ]);
      expect(ben.userId).toBeTruthy();
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    expect(await hasColumn()).toBe(false);
    expect(await db.query('select email from users order by email')).toEqual([
      { email: 'ana-before@example.org' },
      { email: 'ben-before@example.org' },
    ]);
    await orm.migrator.up({ to: ADDED });
    expect(await hasColumn()).toBe(true);
  });
});
