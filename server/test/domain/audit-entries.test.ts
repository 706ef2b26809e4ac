/**
 * Audit entries without a foreign key to their push (Migration20270105000000_audit_entries_unkeyed): a push's entries
 * go with it whoever deletes it; an entry for a push that is gone is not written (no error, nothing left behind); and
 * an entry written for a push while a delete of it is under way is deleted with it: the entry's statement locks the
 * push's row, so the delete waits for its commit, and its trigger then sees the entry.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { poolDb } from '../../src/db/sql.js';
import { createPushRepository, type AuditActor } from '../../src/push/push-repository.js';
import { createMigratedDatabase } from '../support/db.js';

const db = await createMigratedDatabase();
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
afterAll(async () => {
  await pool.end();
  await db.drop();
});

const by: AuditActor = { userId: null, ip: '192.0.2.7', userAgent: 'test', referrer: '' };
const later = () => new Date(Date.now() + 60_000);

async function addPush(): Promise<string> {
  const id = randomUUID();
  await db.query(
    `insert into pushes (id, url_token, kind, payload_ciphertext, passphrase_protected, expire_after_days,
       expire_after_seconds, expire_after_views, deletable_by_viewer, retrieval_step, created_at, updated_at,
       expires_at, stored_bytes)
     values ($1, $2, 'text', 'x', false, 1, 86400, 5, true, false, now(), now(), now() + interval '1 day', 1)`,
    [id, randomUUID()],
  );
  return id;
}

const entries = async (pushId: string) =>
  (await db.query<{ kind: string }>('select kind from audit_entries where push_id = $1 order by id', [pushId])).map(
    (r) => r.kind,
  );

it("deletes a push's entries with it, whatever the statement that deletes pushes", async () => {
  const repo = createPushRepository(poolDb(pool));
  const [a, b, kept] = [await addPush(), await addPush(), await addPush()];
  for (const id of [a, b, kept]) {
    await repo.recordAudit(id, 'view', by, new Date(), later());
    await repo.recordFailedView(id, by, new Date(), 60_000, later());
  }
  expect(await entries(a)).toEqual(['view', 'failed_view']);
  await db.query('delete from pushes where id = any($1::uuid[])', [[a, b]]);
  expect([await entries(a), await entries(b), await entries(kept)]).toEqual([[], [], ['view', 'failed_view']]);
});

it('writes no entry for a push that is gone, and answers no error', async () => {
  const repo = createPushRepository(poolDb(pool));
  const gone = randomUUID();
  await repo.recordAudit(gone, 'view', by, new Date(), later());
  await repo.recordFailedView(gone, by, new Date(), 60_000, later());
  expect(await entries(gone)).toEqual([]);
});

it('an entry committed while a delete of its push waits is deleted with the push: no entry outlives its push', async () => {
  const id = await addPush();
  let deleted = false;
  let deleting: Promise<unknown> | undefined;
  // The entry's statement in a transaction still open (a request's own transaction) while another deletes the push.
  await poolDb(pool).transaction(async (tx) => {
    await createPushRepository(tx).recordAudit(id, 'view', by, new Date(), later());
    deleting = db.query('delete from pushes where id = $1', [id]).then(() => (deleted = true));
    await new Promise((r) => setTimeout(r, 300));
    // The delete waits for the entry's lock on the push's row.
    expect(deleted).toBe(false);
  });
  await deleting;
  expect(await entries(id)).toEqual([]);
  expect(await db.query('select 1 from pushes where id = $1', [id])).toEqual([]);
});
