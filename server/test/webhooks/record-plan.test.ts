/**
 * The statement that records a batch's successes (WebhookRepository.delivered) reads only the deliveries it records,
 * however the delivery table has grown since the connection first ran it. A prepared statement's generic plan is kept
 * per connection: one made while the table was a page or two read it whole (a hash join over a sequential scan), and
 * went on doing so as the table grew, until an ANALYZE replanned it (the bench, whose tables are never analyzed in a
 * run, saw 72 batches read 63,671 rows). The check is PostgreSQL's own count of the rows the transaction read by
 * sequential scan (`pg_stat_xact_user_tables`).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { poolDb, sql } from '../../src/db/sql.js';
import { createWebhookRepository } from '../../src/webhooks/webhook-repository.js';
import { createMigratedDatabase } from '../support/db.js';

const db = await createMigratedDatabase();
// One connection: the one whose plans are kept.
const pool = new pg.Pool({ connectionString: db.url, max: 1 });
afterAll(async () => {
  await pool.end();
  await db.drop();
});

const SEQ_READ = sql<Record<string, never>, { seq_tup_read: string }>(
  "select seq_tup_read from pg_stat_xact_user_tables where relname = 'webhook_deliveries'",
);

async function addDeliveries(webhookId: string, count: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `insert into webhook_deliveries (id, webhook_id, event, event_id, facts, status, attempts, next_attempt_at, created_at)
     select 'msg_' || left(md5(random()::text) || md5(random()::text), 26), $1, 'push.created', gen_random_uuid(),
       '{}', 'pending', 0, now(), now()
     from generate_series(1, $2) returning id`,
    [webhookId, count],
  );
  return rows.map((r) => r.id);
}

it('records a batch by reading its own deliveries only, after the table grew under a plan made when it was small', async () => {
  const userId = randomUUID();
  const webhookId = randomUUID();
  await db.query(
    "insert into users (id, email, created_at, updated_at) values ($1, 'plan@example.org', now(), now())",
    [userId],
  );
  await db.query(
    `insert into webhooks (id, user_id, url, events, description, secret, enabled, created_at)
     values ($1, $2, 'https://example.org/hook', '{push.created}', '', 'x', true, now())`,
    [webhookId, userId],
  );
  const repo = createWebhookRepository(poolDb(pool));
  // Ten batches while the table holds a handful of rows: a prepared statement's generic plan is made by the sixth.
  for (const id of await addDeliveries(webhookId, 10)) {
    await repo.delivered([{ id, webhookId, code: 204 }], new Date());
  }
  const [last] = await addDeliveries(webhookId, 3000);
  const read = await poolDb(pool).transaction(async (tx) => {
    await createWebhookRepository(tx).delivered([{ id: last!, webhookId, code: 204 }], new Date());
    return Number((await tx.query(SEQ_READ, {}))[0]?.seq_tup_read ?? 0);
  });
  expect(read).toBeLessThan(100);
  const [recorded] = await db.query<{ status: string; n: string }>(
    "select count(*) filter (where status = 'delivered') as n from webhook_deliveries",
  );
  expect(Number(recorded!.n)).toBe(11);
});
