/**
 * Issue 23: the webhooks' outbox (webhooks/outbox.ts). A create's and a view's events are their audit entries,
 * marked by the request's statement, and a fan-out turns them into deliveries. The API here does not fan out
 * (`jobWorkers: false`); the test calls the fan-out itself, on connections of its own:
 * - an entry whose transaction commits after later entries were committed is not passed over: the later ones wait
 *   until it has committed, and then all are fanned out, in the order of their transactions;
 * - two processes fanning out at once make each event's delivery once;
 * - the fan-out reads the marked entries by their index, however many entries the table holds (no scan).
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush, getPush, type WebhookEvent } from '@secret-push/sdk/generated';
import { poolDb } from '../../src/db/sql.js';
import { fanOut } from '../../src/webhooks/outbox.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { expectData } from '../api/support/sdk.js';
import { fanOutNow } from './support/fan-out.js';
import { hookedOwner } from './support/hooked-owner.js';

let api: RealApi;
let pool: pg.Pool;

beforeAll(async () => {
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { jobWorkers: false } },
  );
  pool = new pg.Pool({ connectionString: api.db.url, max: 1 });
});

afterAll(async () => {
  await pool?.end();
  await api?.stop();
});

const events = (out: Awaited<ReturnType<typeof fanOut>>) =>
  out.deliveries.map((d) => JSON.parse(d.delivery.facts!) as WebhookEvent);
const lease = () => new Date(Date.now() + 60_000);

it('an entry committed after later ones is not passed over: they wait for it, then go in transaction order', async () => {
  const { auth } = await hookedOwner(api, 'outbox-late@example.org', {
    url: 'http://127.0.0.1:9/hook',
    events: ['push.created', 'push.viewed'],
  });
  const first = expectData(
    await createPush({ client: api.client, auth, body: { push: { payload: 'a', expire_after_views: 3 } } }),
    201,
  );
  expect(await fanOutNow(api.db.url)).toBe(1);

  // A view of the first push, written by a transaction that stays open (as a request's statement would mark it).
  const late = new pg.Client({ connectionString: api.db.url });
  await late.connect();
  try {
    await late.query('begin');
    await late.query(
      `insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at, tx, views_used)
       values ($1, 'view', '198.51.100.7', 'late viewer', '', null, now(), pg_current_xact_id(), 1)`,
      [first.push_id],
    );
    const second = expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'b' } } }), 201);
    // The second create committed, but its transaction began after the open one: it waits.
    const waiting = await fanOut(poolDb(pool), 100, lease());
    expect(waiting.deliveries).toEqual([]);
    expect(waiting.retry).toBe(true);

    await late.query('commit');
    const out = await fanOut(poolDb(pool), 100, lease());
    expect(out.retry).toBe(false);
    expect(events(out).map((e) => [e.type, 'push_id' in e.data ? e.data.push_id : null])).toEqual([
      ['push.viewed', first.push_id],
      ['push.created', second.push_id],
    ]);
    const viewed = events(out)[0]!.data as { views_remaining: number; viewer: { user_agent: string } };
    expect(viewed.views_remaining).toBe(2);
    expect(viewed.viewer.user_agent).toBe('late viewer');
    expect((await fanOut(poolDb(pool), 100, lease())).deliveries).toEqual([]);
  } finally {
    await late.end();
  }
});

it('two processes fanning out at once make each event one delivery', async () => {
  const { auth, hook } = await hookedOwner(api, 'outbox-two@example.org', {
    url: 'http://127.0.0.1:9/hook',
    events: ['push.created', 'push.viewed', 'push.expired'],
  });
  const tokens: string[] = [];
  for (let i = 0; i < 20; i++) {
    const push = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: `p${i}`, expire_after_views: 1 } } }),
      201,
    );
    tokens.push(push.url_token);
  }
  // Each pushed viewed once, its last view: push.viewed and push.expired.
  for (const token of tokens) expectData(await getPush({ client: api.client, path: { url_token: token } }));

  const side = async () => {
    const own = new pg.Pool({ connectionString: api.db.url, max: 1 });
    const seen: string[] = [];
    try {
      for (;;) {
        const out = await fanOut(poolDb(own), 7, lease());
        seen.push(...out.deliveries.map((d) => d.delivery.id));
        if (!out.full && !out.retry) return seen;
      }
    } finally {
      await own.end();
    }
  };
  const [a, b] = await Promise.all([side(), side()]);
  expect(a.length + b.length).toBe(60);
  expect(new Set([...a, ...b]).size).toBe(60);
  const { rows } = await pool.query<{ event: string; n: string; pushes: string }>(
    `select event, count(*) as n, count(distinct (facts::json -> 'data' ->> 'push_id')) as pushes
     from webhook_deliveries where webhook_id = $1 group by event order by event`,
    [hook.id],
  );
  expect(rows.map((r) => [r.event, Number(r.n), Number(r.pushes)])).toEqual([
    ['push.created', 20, 20],
    ['push.expired', 20, 20],
    ['push.viewed', 20, 20],
  ]);
});

it('reads the marked entries by their index, not by scanning the audit entries', async () => {
  const { auth } = await hookedOwner(api, 'outbox-index@example.org', {
    url: 'http://127.0.0.1:9/hook',
    events: ['push.created'],
  });
  const push = expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'i' } } }), 201);
  // Many entries that are not the outbox's (anonymous pushes' views, say), then one marked entry more.
  await pool.query(
    `insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
     select $1, 'view', '203.0.113.1', 'ua', '', null, now() from generate_series(1, 5000)`,
    [push.push_id],
  );
  expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'j' } } }), 201);
  await pool.query('begin');
  try {
    const out = await fanOut(poolDb(pool), 100, lease());
    expect(out.deliveries).toHaveLength(2);
    const { rows } = await pool.query<{ seq_tup_read: string }>(
      "select seq_tup_read from pg_stat_xact_user_tables where relname = 'audit_entries'",
    );
    expect(Number(rows[0]!.seq_tup_read)).toBeLessThan(100);
  } finally {
    await pool.query('rollback');
  }
});
