/**
 * The Pro wire of workspaces (issue 41), driven by the requests the Pro clients send, as their own source builds
 * them (docs/workspaces.md names each file): pwpush-cli 0.16.6 (`GET /api/v2/accounts` at login, then `account_id`
 * beside `push` in JSON and beside `push[…]` in multipart), the Chrome extension (`GET /api/v2/accounts`, then
 * `account_id` in the query and beside `push`, also on the preview), the Raycast extension (`GET /api/v2/workspaces`,
 * a numeric `workspace_id` beside `push`, and as a form field with files) and v1's `/p.json`. Checked by effect: the
 * pushes land in the workspace (its owner lists them, the personal lists do not, a recipient reads them, the
 * workspace's storage counts them), and a caller who is not in the workspace, an anonymous one, and ids that disagree
 * are refused with nothing made. Every answer is checked against the contract.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, listActivePushes, listWorkspaces } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON answers, read field by field
type Json = Record<string, any>;

let api: RealApi;
let owner: { token: string; email: string; userId: string };
let stranger: { token: string; email: string; userId: string };
let member: { token: string; email: string; userId: string };
let workspaceId: number;

async function call(
  path: string,
  init: { method?: string; token?: string; json?: unknown; form?: FormData; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const response = await api.checker.fetch()(`${api.baseUrl}${path}`, {
    method: init.method ?? (init.json !== undefined || init.form ? 'POST' : 'GET'),
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.form,
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function countPushes(): Promise<number> {
  const [row] = await api.db.query<{ n: string }>('select count(*) as n from pushes');
  return Number(row!.n);
}

async function workspaceBytes(): Promise<number> {
  const [row] = await api.db.query<{ bytes: string }>('select bytes from workspace_storage where workspace_id = $1', [
    workspaceId,
  ]);
  return Number(row?.bytes ?? 0);
}

async function recipientReads(urlToken: string): Promise<Json> {
  const got = await call(`/api/v2/pushes/${urlToken}`);
  expect(got.status).toBe(200);
  return got.body;
}

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('ws-owner@example.org');
  stranger = await api.user('ws-stranger@example.org');
  member = await api.user('ws-member@example.org');
  const made = expectData(
    await createWorkspace({ client: api.client, auth: bearer(owner.token), body: { workspace: { name: 'Acme' } } }),
    201,
  );
  expect(made).toMatchObject({ name: 'Acme', role: 'owner' });
  workspaceId = made.id;
  // No invitation operation yet (issue 41 item 4): the member's row is written as accepting one will write it.
  await api.db.query(
    "insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())",
    [workspaceId, member.userId],
  );
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

describe('the version report', () => {
  it('reports workspaces, and accounts on (what pwpush-cli and the Chrome extension read before /accounts)', async () => {
    const version = await call('/api/v2/version');
    expect(version.body.features.workspaces).toEqual({ enabled: true });
    expect(version.body.features.accounts).toEqual({ enabled: true });
  });
});

describe('pwpush-cli 0.16.6 with an account_id', () => {
  it('lists accounts at login as id, name and role, and creates in the chosen one (JSON and multipart)', async () => {
    // config_wizard.fetch_accounts: GET /api/v2/accounts with Bearer only; an array of {id, name, role}.
    const accounts = await call('/api/v2/accounts', { token: owner.token });
    expect(accounts.status).toBe(200);
    expect(accounts.body).toEqual([expect.objectContaining({ id: workspaceId, name: 'Acme', role: 'owner' })]);
    // select_account keeps str(id) in the config; make_request adds it to every POST's data, beside `push`.
    const accountId = String(accounts.body[0]!.id);
    const auth = { 'x-user-email': owner.email, 'x-user-token': owner.token };
    const before = await workspaceBytes();
    const created = await call('/api/v2/pushes', {
      token: owner.token,
      headers: auth,
      json: {
        push: { payload: 'cli in acme', kind: 'text', expire_after_duration: 8, expire_after_views: 3, note: 'n' },
        account_id: accountId,
      },
    });
    expect(created.status).toBe(201);

    // push-file: the same data flattened Rails-style (push[…] fields, account_id as is), one push[files][] part.
    const form = new FormData();
    form.set('push[payload]', 'the key');
    form.set('push[kind]', 'file');
    form.set('push[expire_after_duration]', '6');
    form.set('push[deletable_by_viewer]', 'True');
    form.set('account_id', accountId);
    form.append('push[files][]', new Blob([Buffer.from('ssh-rsa AAAA')]), 'id_rsa.pub');
    const file = await call('/api/v2/pushes', { token: owner.token, form });
    expect(file.status).toBe(201);

    const inWorkspace = expectData(
      await listActivePushes({ client: api.client, auth: bearer(owner.token), query: { workspace_id: accountId } }),
    );
    expect(inWorkspace.map((p) => p.url_token)).toEqual(
      expect.arrayContaining([created.body.url_token, file.body.url_token]),
    );
    const personal = expectData(await listActivePushes({ client: api.client, auth: bearer(owner.token) }));
    expect(personal.map((p) => p.url_token)).not.toContain(created.body.url_token);
    expect((await recipientReads(created.body.url_token)).payload).toBe('cli in acme');
    expect(await workspaceBytes()).toBe(before + 'cli in acme'.length + 'the key'.length + 'ssh-rsa AAAA'.length);
  });
});

describe('the Chrome extension with an account chosen', () => {
  it('sends account_id in the query and the body, and previews with it', async () => {
    const accounts = await call('/api/v2/accounts', { token: member.token });
    expect(accounts.body.map((a: Json) => ({ id: String(a.id), name: String(a.name) }))).toEqual([
      { id: String(workspaceId), name: 'Acme' },
    ]);
    const accountId = String(workspaceId);
    const created = await call(`/api/v2/pushes?account_id=${accountId}`, {
      token: member.token,
      json: {
        push: { payload: 'from the browser', expire_after_views: 5, retrieval_step: false, expire_after_days: 7 },
        account_id: accountId,
      },
    });
    expect(created.status).toBe(201);
    const preview = await call(`/api/v2/pushes/${created.body.url_token}/preview?account_id=${accountId}`, {
      token: member.token,
    });
    expect(preview.body.url).toBe(created.body.html_url);

    // Its owner sees the member's push; the member sees their own there, and not the owner's.
    const ownerSees = expectData(
      await listActivePushes({ client: api.client, auth: bearer(owner.token), query: { account_id: accountId } }),
    );
    expect(ownerSees.map((p) => p.url_token)).toContain(created.body.url_token);
    const memberSees = expectData(
      await listActivePushes({ client: api.client, auth: bearer(member.token), query: { workspace_id: accountId } }),
    );
    expect(memberSees.map((p) => p.url_token)).toEqual([created.body.url_token]);
  });
});

describe('the Raycast extension with a workspace', () => {
  it('reads /workspaces as an array with numeric ids, and sends a numeric workspace_id (JSON and multipart)', async () => {
    const workspaces = expectData(await listWorkspaces({ client: api.client, auth: bearer(owner.token) }));
    expect(workspaces).toEqual([expect.objectContaining({ id: workspaceId, name: 'Acme' })]);
    expect(typeof workspaces[0]!.id).toBe('number');
    expect(typeof workspaces[0]!.created_at).toBe('string');

    const json = await call('/api/v2/pushes', {
      token: owner.token,
      json: {
        push: { payload: 'from raycast', expire_after_duration: 6, expire_after_views: 10, retrieval_step: false },
        workspace_id: workspaces[0]!.id,
      },
    });
    expect(json.status).toBe(201);
    // The created push names its workspace, by Pro's name too (Raycast reads `account_id` from it).
    expect(json.body).toMatchObject({ expire_after_views: 10, workspace_id: workspaceId, account_id: workspaceId });
    const form = new FormData();
    form.append('push[payload]', '');
    form.append('push[kind]', 'file');
    form.append('push[expire_after_duration]', '6');
    form.append('push[deletable_by_viewer]', 'false');
    form.append('workspace_id', String(workspaces[0]!.id));
    form.append('push[files][]', new Blob([Buffer.from('raycast file')]), 'notes.txt');
    const file = await call('/api/v2/pushes', { token: owner.token, form });
    expect(file.status).toBe(201);
    const listed = expectData(
      await listActivePushes({
        client: api.client,
        auth: bearer(owner.token),
        query: { workspace_id: String(workspaceId) },
      }),
    );
    expect(listed.map((p) => p.url_token)).toEqual(expect.arrayContaining([json.body.url_token, file.body.url_token]));
    expect(file.body).toMatchObject({ workspace_id: workspaceId, account_id: workspaceId });
    for (const p of listed) expect(p).toMatchObject({ workspace_id: workspaceId, account_id: workspaceId });
    // A personal push's record is what it was before workspaces: neither field.
    const personal = await call('/api/v2/pushes', { token: owner.token, json: { push: { payload: 'mine alone' } } });
    expect(personal.status).toBe(201);
    expect(personal.body).not.toHaveProperty('workspace_id');
    expect(personal.body).not.toHaveProperty('account_id');
    const mine = expectData(await listActivePushes({ client: api.client, auth: bearer(owner.token) }));
    expect(mine.find((p) => p.url_token === personal.body.url_token)).not.toHaveProperty('account_id');
  });
});

describe('v1 /p.json with an account_id', () => {
  it('makes the push in the workspace, beside or inside the password wrapper', async () => {
    for (const body of [
      { password: { payload: 'v1 beside', expire_after_days: 2 }, account_id: workspaceId },
      { password: { payload: 'v1 inside', expire_after_days: 2, account_id: String(workspaceId) } },
    ]) {
      const created = await call('/p.json', { token: owner.token, json: body });
      expect(created.status).toBe(201);
      const [row] = await api.db.query<{ workspace_id: number | null }>(
        'select workspace_id from pushes where url_token = $1',
        [created.body.url_token],
      );
      expect(row!.workspace_id).toBe(workspaceId);
    }
  });
});

describe('refusals', () => {
  it('refuses a workspace the caller is not in, or that does not exist, with 403, and makes nothing', async () => {
    const before = await countPushes();
    for (const id of [workspaceId, 999_999]) {
      const refused = await call('/api/v2/pushes', {
        token: stranger.token,
        json: { push: { payload: 'not mine' }, workspace_id: id },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('forbidden');
      const listed = await call(`/api/v2/pushes/active?workspace_id=${id}`, { token: stranger.token });
      expect(listed.status).toBe(403);
    }
    expect(expectData(await listWorkspaces({ client: api.client, auth: bearer(stranger.token) }))).toEqual([]);
    expect(await countPushes()).toBe(before);
  });

  it('asks an anonymous caller for a token, and refuses ids that disagree (422), making nothing', async () => {
    const before = await countPushes();
    const anonymous = await call('/api/v2/pushes', { json: { push: { payload: 'x' }, workspace_id: workspaceId } });
    expect(anonymous.status).toBe(401);
    const disagree = await call(`/api/v2/pushes?account_id=${workspaceId + 1}`, {
      token: owner.token,
      json: { push: { payload: 'x' }, workspace_id: workspaceId },
    });
    expect(disagree.status).toBe(422);
    expect(Object.keys(disagree.body.errors)).toEqual(['workspace_id']);
    // An id that is no id, in each place a JSON body may carry one: the same 422 a form field gets (it was a bare 400).
    for (const json of [
      { push: { payload: 'x' }, workspace_id: 'abc' },
      { push: { payload: 'x' }, account_id: 0 },
      { push: { payload: 'x', account_id: '12345678901' } },
      { password: { payload: 'x' }, workspace_id: -1 },
    ]) {
      const bad = await call('/api/v2/pushes', { token: owner.token, json });
      expect([bad.status, bad.body.code, Object.keys(bad.body.errors ?? {})], JSON.stringify(json)).toEqual([
        422,
        'validation_failed',
        ['workspace_id'],
      ]);
      expect(bad.body.error).toMatch(/^workspace_id: (workspace_id|account_id) must be a workspace id$/);
    }
    expect(await countPushes()).toBe(before);
  });

  it('answers a list whose query names two workspaces, or no id, 400 invalid_parameter (a bad query parameter)', async () => {
    for (const query of [`workspace_id=${workspaceId}&account_id=${workspaceId + 1}`, 'account_id=9999999999']) {
      for (const state of ['active', 'expired']) {
        const listed = await call(`/api/v2/pushes/${state}?${query}`, { token: owner.token });
        expect(listed.status).toBe(400);
        expect(listed.body.code).toBe('invalid_parameter');
        expect(listed.body.error).toMatch(/^workspace_id: /);
      }
    }
    const same = await call(`/api/v2/pushes/active?workspace_id=${workspaceId}&account_id=${workspaceId}`, {
      token: owner.token,
    });
    expect(same.status).toBe(200);
  });

  it('keeps a create without an id in the personal space, counted for the user as before', async () => {
    const [before] = await api.db.query<{ bytes: string }>('select bytes from user_storage where user_id = $1', [
      owner.userId,
    ]);
    const personal = await call('/api/v2/pushes', { token: owner.token, json: { push: { payload: 'mine' } } });
    expect(personal.status).toBe(201);
    const [after] = await api.db.query<{ bytes: string }>('select bytes from user_storage where user_id = $1', [
      owner.userId,
    ]);
    expect(Number(after!.bytes)).toBe(Number(before?.bytes ?? 0) + 'mine'.length);
    const [row] = await api.db.query<{ workspace_id: number | null }>(
      'select workspace_id from pushes where url_token = $1',
      [personal.body.url_token],
    );
    expect(row!.workspace_id).toBeNull();
  });

  it('answers 422 for a workspace name of spaces only', async () => {
    expectError(
      await createWorkspace({ client: api.client, auth: bearer(owner.token), body: { workspace: { name: '   ' } } }),
      422,
      'validation_failed',
    );
  });
});
