/**
 * Issue 23: the outbox's first tries (webhooks/delivery.ts `firstTries`, outbox.ts `fanOut`). The fan-out tries each
 * delivery before it writes them: one answered 2xx at once is written as delivered by the fan-out's own insert (one
 * write, no rewrite); one answered later is written leased and recorded when it ends, and its webhook is not waited
 * for at the next fan-outs; a failure is recorded after the commit as any try's; and a fan-out that sent but did not
 * commit leaves its events to the next one, which sends them under the same `webhook-id`. A real receiver, every
 * request verified with the `standardwebhooks` package. The API sends nothing itself (`jobWorkers: false`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush } from '@secret-push/sdk/generated';
import { createKeyring } from '../../src/crypto/envelope.js';
import { poolDb } from '../../src/db/sql.js';
import { deliveryAgents, webhookDelivery } from '../../src/webhooks/delivery.js';
import { fanOut, type FirstTry } from '../../src/webhooks/outbox.js';
import { systemResolver } from '../../src/webhooks/targets.js';
import { createWebhookRepository } from '../../src/webhooks/webhook-repository.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { expectData } from '../api/support/sdk.js';
import { hookedOwner } from './support/hooked-owner.js';

interface Received {
  id: string;
  type: string;
}

/** A receiver whose answers (status, delay) the test sets; each request verified with the webhook's secret. */
async function receiver() {
  const got: Received[] = [];
  let answer = { status: 204, delayMs: 0 };
  let secret = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as { type: string };
      got.push({ id: String(req.headers['webhook-id']), type: event.type });
      const { status, delayMs } = answer;
      setTimeout(() => res.writeHead(status).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    answer(status: number, delayMs = 0) {
      answer = { status, delayMs };
    },
    useSecret(s: string) {
      secret = s;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let api: RealApi;
let pool: pg.Pool;
let hooks: Awaited<ReturnType<typeof receiver>>;
const agents = deliveryAgents();

beforeAll(async () => {
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { jobWorkers: false } },
  );
  pool = new pg.Pool({ connectionString: api.db.url, max: 2 });
  hooks = await receiver();
});

afterAll(async () => {
  agents.close();
  await hooks?.close();
  await pool?.end();
  await api?.stop();
});

/** The sending of a process of the test's own, with the API's keys. */
function sender() {
  const db = poolDb(pool);
  return webhookDelivery({
    db,
    repo: createWebhookRepository(db),
    keyring: createKeyring(api.settings.masterKeys),
    mail: null,
    rules: { allowPrivate: true, requireHttps: false, resolve: systemResolver },
    schedule: [1, 1],
    agents,
  });
}

const lease = () => new Date(Date.now() + 60_000);

/** Each delivery row, with whether the transaction that wrote it also moved the outbox (no later rewrite). */
async function rows() {
  return (
    await pool.query<{
      id: string;
      status: string;
      attempts: number;
      last_status_code: number | null;
      delivered_at: Date | null;
      next_attempt_at: Date | null;
      written_with_outbox: boolean;
    }>(
      `select d.id, d.status, d.attempts, d.last_status_code, d.delivered_at, d.next_attempt_at,
         d.xmin = (select o.xmin from webhook_outbox o) as written_with_outbox
       from webhook_deliveries d order by d.created_at`,
    )
  ).rows;
}

async function ownerWithHook(email: string) {
  const { auth, hook } = await hookedOwner(api, email, { url: hooks.url, events: ['push.created'] });
  hooks.useSecret(hook.secret!);
  return auth;
}

it('a delivery answered at once is written once, as delivered, by the fan-out that sent it', async () => {
  const auth = await ownerWithHook('first-try-fast@example.org');
  hooks.answer(204);
  expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'fast' } } }), 201);
  const out = await fanOut(poolDb(pool), 100, lease(), sender().firstTries);
  expect(out.deliveries).toHaveLength(1);
  expect(out.handoff).toEqual([]);
  await out.rest!();
  const [row] = await rows();
  expect(hooks.got).toEqual([{ id: row!.id, type: 'push.created' }]);
  expect(row).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 204, next_attempt_at: null });
  expect(row!.delivered_at).toBeInstanceOf(Date);
  // The row the fan-out inserted is the row as it stays: its transaction also moved the outbox.
  expect(row!.written_with_outbox).toBe(true);
  await pool.query('delete from webhook_deliveries');
  hooks.got.length = 0;
});

it('an answer later than the wait: written leased, recorded as it ends; its webhook is not waited for again', async () => {
  const auth = await ownerWithHook('first-try-slow@example.org');
  hooks.answer(204, 600);
  const sending = sender();
  expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'slow' } } }), 201);
  const started = Date.now();
  const out = await fanOut(poolDb(pool), 100, lease(), sending.firstTries);
  // The fan-out waited about 200 ms for the answer, not 600.
  expect(Date.now() - started).toBeLessThan(550);
  // For a second after a wait ran out, no fan-out waits for any webhook, not even one never seen slow.
  const other = await hookedOwner(api, 'first-try-other@example.org', {
    url: 'http://127.0.0.1:9/closed',
    events: ['push.created'],
  });
  expectData(await createPush({ client: api.client, auth: other.auth, body: { push: { payload: 'x' } } }), 201);
  const meanwhile = await fanOut(poolDb(pool), 100, lease(), sending.firstTries);
  expect(meanwhile.deliveries).toHaveLength(1);
  expect(meanwhile.handoff).toEqual(meanwhile.deliveries);
  await pool.query('delete from webhook_deliveries where webhook_id = $1', [other.hook.id]);
  const [leased] = await rows();
  expect(leased).toMatchObject({ status: 'pending', attempts: 0 });
  expect(leased!.next_attempt_at!.getTime()).toBeGreaterThan(Date.now() + 50_000);
  await out.rest!();
  const [done] = await rows();
  expect(done).toMatchObject({ id: leased!.id, status: 'delivered', attempts: 1, last_status_code: 204 });
  expect(hooks.got).toEqual([{ id: leased!.id, type: 'push.created' }]);

  // The next fan-out does not try that webhook's delivery: it is written leased and handed to the dispatcher.
  expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'slow 2' } } }), 201);
  const next = await fanOut(poolDb(pool), 100, lease(), sending.firstTries);
  expect(next.handoff.map((d) => d.delivery.id)).toEqual(next.deliveries.map((d) => d.delivery.id));
  await next.rest!();
  expect(hooks.got).toHaveLength(1);
  await sending.send(next.handoff);
  expect(hooks.got.map((g) => g.id)).toEqual([leased!.id, next.deliveries[0]!.delivery.id]);
  await pool.query('delete from webhook_deliveries');
  hooks.got.length = 0;
});

it('a first try that fails is recorded after the commit, due again after the schedule', async () => {
  const auth = await ownerWithHook('first-try-500@example.org');
  hooks.answer(500);
  expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'refused' } } }), 201);
  const out = await fanOut(poolDb(pool), 100, lease(), sender().firstTries);
  expect((await rows())[0]).toMatchObject({ status: 'pending', attempts: 0 });
  const before = Date.now();
  await out.rest!();
  const [row] = await rows();
  expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, delivered_at: null });
  expect(row!.next_attempt_at!.getTime()).toBeGreaterThanOrEqual(before);
  expect(row!.next_attempt_at!.getTime()).toBeLessThan(before + 5_000);
  await pool.query('delete from webhook_deliveries');
  hooks.got.length = 0;
});

it('a fan-out that sent and did not commit: the next one sends its events again, under the same webhook-id', async () => {
  const auth = await ownerWithHook('first-try-crash@example.org');
  hooks.answer(204);
  const sending = sender();
  expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'again' } } }), 201);
  const dies: FirstTry = async (deliveries) => {
    await sending.firstTries(deliveries);
    throw new Error('the process died before its commit');
  };
  await expect(fanOut(poolDb(pool), 100, lease(), dies)).rejects.toThrow('died');
  expect(await rows()).toEqual([]);
  expect(hooks.got).toHaveLength(1);
  const out = await fanOut(poolDb(pool), 100, lease(), sending.firstTries);
  await out.rest!();
  const [row] = await rows();
  expect(hooks.got.map((g) => g.id)).toEqual([row!.id, row!.id]);
  expect(row).toMatchObject({ status: 'delivered', attempts: 1 });
});
