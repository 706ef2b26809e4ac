/**
 * The workspaces' migration (Migration20270121000000_workspaces) on a database that already has users, tokens, API
 * keys, pushes and webhooks: an instance upgraded in place. The data is made through the real server, the schema is
 * then taken back to the previous migration set (the down migration: every `workspace_id` column, table, function
 * and trigger gone, the storage counts as they were), and a server of this version starts on it, migrating up again.
 * Every existing user's pushes, token, key and webhook then work unchanged: the lists, a recipient's view, a key's
 * create, the webhook's delivery of the view, and the storage counts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createPush,
  createWebhook,
  getPush,
  listActivePushes,
  listWebhooks,
  type WebhookEvent,
} from '@secret-push/sdk/generated';
import { openOrm } from '../../src/db/orm.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData } from '../api/support/sdk.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const BEFORE = 'Migration20270120420000_recipient_access';
const SETTINGS = { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [] } };

/** A loopback endpoint that keeps the events it is sent. */
const received: WebhookEvent[] = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as WebhookEvent);
    res.writeHead(204).end();
  });
});

let db: TestDatabase;
let api: RealApi | undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  db = await createTestDatabase('sp_ws_upgrade');
});

afterAll(async () => {
  await api?.stop();
  receiver.closeAllConnections();
  receiver.close();
  await db.drop();
});

async function storageOf(userId: string): Promise<number> {
  const [row] = await db.query<{ bytes: string }>('select bytes from user_storage where user_id = $1', [userId]);
  return Number(row?.bytes ?? 0);
}

describe('the workspaces migration on an existing instance', () => {
  it("keeps every existing user's pushes, token, key and webhook working", async () => {
    // An instance in use: a user with a token, a key, two pushes and a webhook.
    api = await startRealApi(SETTINGS, { db });
    const alice = await api.user('alice-upgrade@example.org');
    const auth = bearer(alice.token);
    const key = expectData(
      await createApiKey({
        client: api.client,
        auth,
        body: { api_key: { name: 'ci', scopes: ['pushes:create', 'pushes:read'] } },
      }),
      201,
    );
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const hook = expectData(
      await createWebhook({ client: api.client, auth, body: { webhook: { url, events: ['push.viewed'] } } }),
      201,
    );
    const byToken = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: 'made with the token' } } }),
      201,
    );
    const byKey = expectData(
      await createPush({ client: api.client, auth: bearer(key.token), body: { push: { payload: 'made with a key' } } }),
      201,
    );
    const heldBefore = await storageOf(alice.userId);
    expect(heldBefore).toBe('made with the token'.length + 'made with a key'.length);
    await api.stop();
    api = undefined;

    // The schema as the previous migration set made it.
    const orm = await openOrm(db.url, { poolMax: 2, noTimeouts: true });
    try {
      await orm.migrator.down({ to: BEFORE });
    } finally {
      await orm.close(true);
    }
    const [gone] = await db.query<{ workspaces: string | null; column: string | null; fn: string | null }>(
      `select to_regclass('workspaces')::text as workspaces,
         (select column_name from information_schema.columns
           where table_name = 'pushes' and column_name = 'workspace_id') as column,
         to_regprocedure('workspace_storage_used(integer, timestamptz, timestamptz, bigint, bigint)')::text as fn`,
    );
    expect(gone).toEqual({ workspaces: null, column: null, fn: null });
    expect(await storageOf(alice.userId)).toBe(heldBefore);

    // This version starts on it and migrates up.
    api = await startRealApi(SETTINGS, { db });
    const [upgraded] = await db.query<{ nulls: string }>(
      'select count(*) as nulls from pushes where workspace_id is null and user_id = $1',
      [alice.userId],
    );
    expect(Number(upgraded!.nulls)).toBe(2);
    expect(await storageOf(alice.userId)).toBe(heldBefore);

    // The token lists both pushes; the key still creates and lists.
    const listed = expectData(await listActivePushes({ client: api.client, auth }));
    expect(listed.map((p) => p.url_token).sort()).toEqual([byToken.url_token, byKey.url_token].sort());
    const third = expectData(
      await createPush({ client: api.client, auth: bearer(key.token), body: { push: { payload: 'after' } } }),
      201,
    );
    const byKeyList = expectData(await listActivePushes({ client: api.client, auth: bearer(key.token) }));
    expect(byKeyList.map((p) => p.url_token)).toContain(third.url_token);
    expect(await storageOf(alice.userId)).toBe(heldBefore + 'after'.length);

    // A recipient reads a push made before the upgrade, and the webhook delivers the view.
    const read = expectData(await getPush({ client: api.client, path: { url_token: byToken.url_token } }));
    expect(read.payload).toBe('made with the token');
    expect(expectData(await listWebhooks({ client: api.client, auth })).webhooks.map((w) => w.id)).toEqual([hook.id]);
    const deadline = Date.now() + 20_000;
    while (!received.some((e) => e.type === 'push.viewed') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(received.map((e) => e.type)).toContain('push.viewed');

    // Nothing of it went to a workspace.
    const [counted] = await db.query<{ n: string }>('select count(*) as n from workspace_storage');
    expect(Number(counted!.n)).toBe(0);
  });
});
