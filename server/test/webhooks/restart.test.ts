/**
 * Issue 23: a restart loses no event. The API (this process) only queues: a push's events are its audit entries,
 * marked for the outbox (webhooks/outbox.ts) by the statements of its create and its view. A separate server process (a child) takes the first delivery and is killed (SIGKILL) while the
 * receiver holds the request unanswered; a new process, started after, delivers every queued event, the one in
 * flight again with the same webhook-id (once the dead process's lease on it, 12 s here, has lapsed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush, getPush, listWebhookDeliveries, type WebhookEvent } from '@secret-push/sdk/generated';
import { repoRoot } from '../../src/config/settings.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { expectData } from '../api/support/sdk.js';
import { TEST_KEY_A } from '../support/db.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { hookedOwner } from './support/hooked-owner.js';

// A server process that only sends in the background (shared with the email restart test).
const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'mail', 'support', 'mail-worker.ts');

let api: RealApi;
let receiver: Receiver;
const children: ChildProcess[] = [];

function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--conditions=@secret-push/source', '--import', 'tsx', WORKER], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PWPUSH_ENV: 'test',
      DATABASE_URL: api.db.url,
      PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
      PWPUSH_WEBHOOKS_ALLOW_PRIVATE: 'true',
      PWPUSH_WEBHOOK_RETRY_SCHEDULE: '1s,1s',
      PWPUSH_LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      output += c.toString();
      if (output.includes('ready')) resolve(child);
    });
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}): ${output}`)));
  });
}

beforeAll(async () => {
  receiver = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { jobWorkers: false, queue: { heartbeatSeconds: 10, monitorIntervalSeconds: 1 } } },
  );
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await api?.stop();
  await receiver?.stop();
});

it('a process killed with events queued and one in flight: every event is delivered after the restart', async () => {
  const { auth, hook } = await hookedOwner(api, 'hook-restart@example.org', {
    url: receiver.url,
    events: ['push.created', 'push.viewed'],
  });
  const push = expectData(await createPush({ client: api.client, auth, body: { push: { payload: 'r' } } }), 201);
  expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
  // Queued: the two events are the push's audit entries, marked for the outbox; no process has fanned them out.
  const queued = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } }));
  expect(queued.deliveries).toEqual([]);
  const client = new pg.Client({ connectionString: api.db.url });
  await client.connect();
  try {
    const marked = await client.query<{ kind: string }>(
      'select kind from audit_entries where push_id = $1 and tx is not null order by id',
      [push.push_id],
    );
    expect(marked.rows.map((r) => r.kind)).toEqual(['creation', 'view']);
  } finally {
    await client.end();
  }

  receiver.hold(true);
  const first = await startWorker();
  const [inFlight] = await receiver.waitFor(1, 30_000); // the first process is sending; nobody answers
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  receiver.hold(false);

  await startWorker();
  const end = Date.now() + 60_000;
  let delivered: WebhookEvent[] = [];
  while (Date.now() < end) {
    delivered = receiver.received
      .filter((r) => r.status === 200)
      .map((r) => receiver.verify(hook.secret, r) as WebhookEvent);
    if (delivered.length >= 2) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(delivered.map((e) => e.type).sort()).toEqual(['push.created', 'push.viewed']);
  const ok = receiver.received.filter((r) => r.status === 200).map((r) => r.headers['webhook-id']);
  expect(ok).toContain(inFlight!.headers['webhook-id']);
  const log = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } }));
  expect(log.deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered']);
}, 120_000);
