/**
 * Deleting a workspace over HTTP with the generated SDK (issue 41, docs/workspaces.md "Deleting a workspace"): the
 * owner alone (an admin, member or auditor 403, a workspace's key 403, an outsider or an unknown id 404, no token
 * 401), with its name as the confirmation (422 otherwise); a refusal changes nothing. A workspace holding a few
 * hundred pushes (text, passphrase, file), a pending request, a key, a webhook with a queued delivery, invitations, a
 * brand and a trail is gone in one call, read back from the database: no row of it is left, its key is refused at
 * once, its pushes' links answer 404, its invitation's token is dead, the owner's personal push is untouched, and the
 * log line says what went without a name or a secret. A create that waited on a deletion's lock gets 403, not a 5xx.
 */
import pg from 'pg';
import { createSecretPushClient } from '@secret-push/sdk';
import {
  acceptWorkspaceInvitation,
  createApiKey,
  createPush,
  createWebhook,
  createWorkspace,
  createWorkspaceInvitation,
  deleteWorkspace,
  expirePush,
  getPush,
  listActivePushes,
  listWorkspaces,
  updateWorkspaceBrand,
} from '@secret-push/sdk/generated';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

let api: RealApi;
let owner: User, admin: User, member: User, auditor: User, outsider: User;
const logged: string[] = [];

beforeAll(async () => {
  const line = (obj: object, msg: string) => logged.push(`${msg} ${JSON.stringify(obj)}`);
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [3600] } },
    { core: { logger: { info: line, warn: line, error: line } } },
  );
  const user = (who: string) => api.user(`wsdel-${who}@example.org`);
  owner = await user('owner');
  admin = await user('admin');
  member = await user('member');
  auditor = await user('auditor');
  outsider = await user('outsider');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

const as = (who: User) => ({ client: api.client, auth: bearer(who.token) });
const NAME = 'Acme «support» 🔐';

/** A fresh workspace of `owner` with an admin, a member and an auditor (the rows an accepted invitation writes). */
async function workspace(name = NAME): Promise<number> {
  const id = expectData(await createWorkspace({ ...as(owner), body: { workspace: { name } } }), 201).id;
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
    [auditor, 'auditor'],
  ] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [id, who.userId, role],
    );
  return id;
}

const remove = (who: User | null, id: number | string, confirm: string) =>
  deleteWorkspace({
    client: api.client,
    ...(who ? { auth: bearer(who.token) } : {}),
    path: { workspace_id: id as number },
    query: { confirm },
  });

const count = async (sql: string, id: number) =>
  Number((await api.db.query<{ n: string }>(`select count(*) as n from ${sql}`, [id]))[0]!.n);

/** Every row a workspace holds, by table. */
async function held(id: number): Promise<Record<string, number>> {
  return {
    workspaces: await count('workspaces where id = $1', id),
    members: await count('workspace_members where workspace_id = $1', id),
    trail: await count('workspace_audit where workspace_id = $1', id),
    invitations: await count('workspace_invitations where workspace_id = $1', id),
    brand: await count('workspace_brands where workspace_id = $1', id),
    storage: await count('workspace_storage where workspace_id = $1', id),
    keys: await count('api_keys where workspace_id = $1', id),
    webhooks: await count('webhooks where workspace_id = $1', id),
    pushes: await count('pushes where workspace_id = $1', id),
    requests: await count('requests where workspace_id = $1', id),
  };
}

describe('who may delete a workspace', () => {
  it('refuses an admin, a member and an auditor (403), an outsider and an unknown id (404), no token (401)', async () => {
    const id = await workspace();
    const before = await held(id);
    for (const who of [admin, member, auditor]) expectError(await remove(who, id, NAME), 403, 'forbidden');
    expectError(await remove(outsider, id, NAME), 404, 'not_found');
    expectError(await remove(owner, 2_000_000_000, NAME), 404, 'not_found');
    expectError(await remove(null, id, NAME), 401, 'authentication_required');
    expect(await held(id)).toEqual(before);
  });

  it("refuses the workspace's own API key (403), whatever its scopes", async () => {
    const id = await workspace();
    const key = expectData(
      await createApiKey({
        ...as(owner),
        body: { api_key: { name: 'team', scopes: ['workspaces:manage', 'workspaces:read'], workspace_id: id } },
      }),
      201,
    );
    expectError(await remove({ ...owner, token: key.token }, id, NAME), 403, 'forbidden');
    expect((await held(id)).workspaces).toBe(1);
  });

  it("asks for the workspace's name exactly: another is 422 on confirm, a missing or over-long one 400", async () => {
    const id = await workspace();
    const before = await held(id);
    for (const wrong of ['Acme', NAME.toUpperCase(), ` ${NAME}`, `${NAME} `, 'x'.repeat(1000)]) {
      const refused = expectError(await remove(owner, id, wrong), 422, 'validation_failed');
      expect(refused.errors).toHaveProperty('confirm');
    }
    expectError(await remove(owner, id, 'x'.repeat(1001)), 400, 'invalid_parameter');
    const missing = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { code: string }).code).toBe('invalid_parameter');
    expect(await held(id)).toEqual(before);
  });

  it('answers hostile ids with 400 and never a 5xx', async () => {
    for (const bad of ['abc', '0', '-1', '99999999999', '1e3', '%00']) {
      const res = await fetch(`${api.baseUrl}/api/v2/workspaces/${bad}?confirm=x`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(res.status, bad).toBeLessThan(500);
      expect([400, 404], bad).toContain(res.status);
    }
  });
});

describe('deleting a workspace', () => {
  it('takes every row it holds, in bounded statements, and leaves the owner personal space alone', async () => {
    const id = await workspace();
    const owners = createSecretPushClient({ baseUrl: api.baseUrl, token: owner.token, maxRetries: 0 });
    // A few hundred pushes, by several members, some with a passphrase, one with a file, some expired already.
    const tokens: string[] = [];
    for (let batch = 0; batch < 15; batch++)
      tokens.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const by = [owner, admin, member][i % 3]!;
            const made = await createPush({
              ...as(by),
              body: {
                push: { payload: `secret ${batch}-${i}`, ...(i % 5 === 0 ? { passphrase: 'open sesame' } : {}) },
                workspace_id: id,
              } as never,
            });
            return expectData(made, 201).url_token;
          }),
        )),
      );
    const file = expectData(
      await createPush({
        ...as(member),
        body: {
          push: {
            kind: 'file',
            files: [
              { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('file secret').toString('base64') },
            ],
          },
          workspace_id: id,
        } as never,
      }),
      201,
    ).url_token;
    for (const token of tokens.slice(0, 10)) expectData(await expirePush({ ...as(admin), path: { url_token: token } }));
    const personal = expectData(await createPush({ ...as(owner), body: { push: { payload: 'mine' } } }), 201);
    const request = await owners.createRequest({ request: 'the VPN password', workspace_id: id });
    const key = expectData(
      await createApiKey({
        ...as(owner),
        body: { api_key: { name: 'team', scopes: ['pushes:read', 'pushes:create'], workspace_id: id } },
      }),
      201,
    );
    expectData(await listActivePushes({ client: api.client, auth: bearer(key.token) }));
    expectData(
      await createWebhook({
        ...as(owner),
        body: { webhook: { url: 'http://127.0.0.1:9/team', events: ['push.created'], workspace_id: id } },
      }),
      201,
    );
    expectData(
      await createPush({ ...as(member), body: { push: { payload: 'hooked' }, workspace_id: id } as never }),
      201,
    );
    const invitation = expectData(
      await createWorkspaceInvitation({
        ...as(owner),
        path: { workspace_id: id },
        body: { invitation: { role: 'member' } },
      }),
      201,
    );
    expectData(
      await updateWorkspaceBrand({ ...as(owner), path: { workspace_id: id }, body: { brand: { name: 'Acme' } } }),
    );
    const pushIds = (await api.db.query<{ id: string }>('select id from pushes where workspace_id = $1', [id])).map(
      (r) => r.id,
    );
    expect(pushIds.length).toBeGreaterThanOrEqual(300);
    const before = await held(id);
    expect(before.webhooks).toBe(1);
    // The push's delivery row is written by the event path after the create's answer: wait for it.
    await vi.waitFor(
      async () =>
        expect(
          await count('webhook_deliveries d join webhooks w on w.id = d.webhook_id where w.workspace_id = $1', id),
        ).toBeGreaterThan(0),
      { timeout: 15_000, interval: 50 },
    );
    logged.length = 0;

    const deleted = expectData(await remove(owner, id, NAME));
    expect(deleted).toMatchObject({ id, name: NAME, role: 'owner' });

    expect(await held(id)).toEqual(Object.fromEntries(Object.keys(before).map((table) => [table, 0])));
    const rowsOf = async (table: string) =>
      Number(
        (
          await api.db.query<{ n: string }>(`select count(*) as n from ${table} where push_id = any($1::uuid[])`, [
            pushIds,
          ])
        )[0]!.n,
      );
    for (const table of ['push_files', 'audit_entries', 'passphrase_attempts', 'push_access_codes'])
      expect(await rowsOf(table), table).toBe(0);
    expect(await count('requests where url_token = $1::text', request.url_token as never)).toBe(0);
    // The key is refused at once; the pushes' links answer as a purged push's; the invitation's token is dead.
    expectError(await listActivePushes({ client: api.client, auth: bearer(key.token) }), 401, 'invalid_token');
    for (const token of [tokens[0]!, tokens[200]!, file])
      expectError(await getPush({ client: api.client, path: { url_token: token } }), 404, 'not_found');
    const link = invitation.url!;
    expectError(
      await acceptWorkspaceInvitation({
        ...as(outsider),
        body: { invitation: { token: link.slice(link.indexOf('#') + 1) } },
      }),
      404,
      'not_found',
    );
    // Nothing of anyone else's: the owner's personal push still opens, the members are still users.
    expect(expectData(await getPush({ ...as(outsider), path: { url_token: personal.url_token } })).payload).toBe(
      'mine',
    );
    for (const who of [owner, admin, member, auditor])
      expect(expectData(await listWorkspaces(as(who))).some((w) => w.id === id)).toBe(false);
    // Logged after the commit: ids and counts, no name, no payload, no token.
    const line = logged.find((l) => l.startsWith('workspace deleted'));
    expect(line).toBeDefined();
    expect(line).toContain(`"workspace_id":${id}`);
    expect(line).toContain(`"pushes":${pushIds.length}`);
    for (const secret of [NAME, 'Acme', 'secret', key.token, owner.token]) expect(line).not.toContain(secret);
  }, 120_000);

  it('answers 403 to a create that waited for a deletion in progress, and writes nothing', async () => {
    const id = await workspace('Racing');
    const pushCount = async () => Number((await api.db.query<{ n: string }>('select count(*) as n from pushes'))[0]!.n);
    const before = await pushCount();
    // The deletion's hold on the workspace's row, on a connection of its own (as deleteWorkspace holds it).
    const deleter = new pg.Client({ connectionString: api.db.url });
    await deleter.connect();
    try {
      await deleter.query('begin');
      await deleter.query('select id from workspaces where id = $1 for update', [id]);
      const create = createPush({ ...as(member), body: { push: { payload: 'racing secret' }, workspace_id: id } });
      // The create passed the membership check and waits on the row (its foreign key's check) before it goes on.
      for (let waiting = false; !waiting;) {
        const [row] = await api.db.query<{ n: string }>(
          "select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%pushes%'",
        );
        waiting = Number(row!.n) > 0;
        if (!waiting) await new Promise((r) => setTimeout(r, 20));
      }
      await deleter.query('delete from workspaces where id = $1', [id]);
      await deleter.query('commit');
      const answer = await create;
      expect(answer.response!.status).toBe(403);
      expect((answer.error as { code?: string }).code).toBe('forbidden');
    } finally {
      await deleter.end();
    }
    expect(await pushCount()).toBe(before);
  });

  it('deletes a workspace that holds nothing but its owner', async () => {
    const id = expectData(await createWorkspace({ ...as(outsider), body: { workspace: { name: 'Solo' } } }), 201).id;
    expect(expectData(await remove(outsider, id, 'Solo')).id).toBe(id);
    expect((await held(id)).workspaces).toBe(0);
    expectError(await remove(outsider, id, 'Solo'), 404, 'not_found');
  });
});
