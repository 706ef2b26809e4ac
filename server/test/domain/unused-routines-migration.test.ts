/**
 * Migration20270125000000_unused_routines on a database made by the previous migration set, with pushes in it (an
 * instance upgraded in place): the routines no code path calls go (`webhook_view_events`, `iso_time`, the trigger
 * that filled `expire_after_seconds`), the pushes written before are still retrieved, new ones are made, an insert
 * without `expire_after_seconds` is now refused rather than filled, and `down` puts the three back as they were.
 */
import { randomUUID } from 'node:crypto';
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

const BEFORE = 'Migration20270120420000_recipient_access';
const DROPPED = 'Migration20270125000000_unused_routines';

async function routines(): Promise<{ view_events: string | null; iso_time: string | null; fill: string | null }> {
  const [found] = await db.query<{ view_events: string | null; iso_time: string | null; fill: string | null }>(
    `select to_regprocedure('webhook_view_events(uuid, uuid, int, boolean, text, boolean, int, timestamptz,
         timestamptz, text, timestamptz, text, text, text, timestamptz)')::text as view_events,
       to_regprocedure('iso_time(timestamptz)')::text as iso_time,
       (select tgname::text from pg_trigger where tgname = 'pushes_fill_expire_after_seconds') as fill`,
  );
  return found!;
}

/** An insert as a process older than the durations migration wrote it: without `expire_after_seconds`. */
const insertWithoutSeconds = (id: string) =>
  db.query(
    `insert into pushes (id, url_token, kind, payload_ciphertext, passphrase_protected, expire_after_days,
       expire_after_views, deletable_by_viewer, retrieval_step, created_at, updated_at, expires_at, stored_bytes)
     values ($1, $2, 'text', 'x', false, 2, 5, true, false, now(), now(), now() + interval '2 days', 1)`,
    [id, randomUUID()],
  );

describe('dropping the routines nothing calls, on a database with data in it', () => {
  it('keeps the pushes working, refuses an insert that leaned on the trigger, and is undone by its down', async () => {
    await orm.migrator.up({ to: BEFORE });
    expect(await routines()).toEqual({
      view_events: expect.stringContaining('webhook_view_events') as unknown,
      iso_time: 'iso_time(timestamp with time zone)',
      fill: 'pushes_fill_expire_after_seconds',
    });
    // The previous version's data: pushes made through the service (a Core migrates to the newest set, so the
    // pushes are made first and the database is taken back to the previous set, with them in it).
    await orm.migrator.up();
    const before = await createCore(makeSettings({ databaseUrl: db.url }));
    const kept = await before.pushes.create({ payload: 'made before the upgrade', expire_after_views: 3 }, ctx());
    await before.close();
    await orm.migrator.down({ to: BEFORE });
    const legacy = randomUUID();
    await insertWithoutSeconds(legacy);
    const [filled] = await db.query('select expire_after_seconds from pushes where id = $1', [legacy]);
    expect(filled).toEqual({ expire_after_seconds: 2 * 86_400 });

    // The upgrade: a Core runs the pending migration at start.
    const core = await createCore(makeSettings({ databaseUrl: db.url }));
    try {
      expect(await routines()).toEqual({ view_events: null, iso_time: null, fill: null });
      expect((await core.pushes.retrieve(kept.url_token, undefined, ctx())).payload).toBe('made before the upgrade');
      const made = await core.pushes.create({ payload: 'made after', expire_after_views: 2 }, ctx());
      expect((await core.pushes.retrieve(made.url_token, undefined, ctx())).payload).toBe('made after');
      const [row] = await db.query('select expire_after_seconds from pushes where url_token = $1', [made.url_token]);
      expect(row).toEqual({ expire_after_seconds: made.expire_after_seconds });
      await expect(insertWithoutSeconds(randomUUID())).rejects.toMatchObject({ code: '23502' });
    } finally {
      await core.close();
    }

    await orm.migrator.down({ to: BEFORE });
    expect(await routines()).toEqual({
      view_events: expect.stringContaining('webhook_view_events') as unknown,
      iso_time: 'iso_time(timestamp with time zone)',
      fill: 'pushes_fill_expire_after_seconds',
    });
    await orm.migrator.up({ to: DROPPED });
    expect(await routines()).toEqual({ view_events: null, iso_time: null, fill: null });
  });
});
