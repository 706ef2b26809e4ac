/**
 * A workspace's requests (issue 41; docs/workspaces.md, "A workspace's requests"), end to end: the real app on a
 * throwaway PostgreSQL, called through the SDK's client (the generated SDK underneath), and a real HTTP receiver on
 * loopback whose deliveries are verified with `standardwebhooks`. Any member but an auditor makes a request in the
 * workspace (`request.workspace_id`); auditors, outsiders, another workspace's owner and unknown ids get 403 and nothing
 * is written. Its owner, admins and auditors list every request of it, a member their own; the personal lists leave
 * them out. Its owner and admins revoke any, its creator their own while still in it. The answer is a push of the
 * workspace (its admins see it, its webhook gets the events), counted against the workspace's storage, not the
 * requester's. A workspace's API key acts there without naming it, never on its creator's personal requests. A request
 * outlives its creator's removal.
 */
import { createSecretPushClient, SecretPushError, type SecretPushClient } from '@secret-push/sdk';
import { createApiKey, createWebhook, createWorkspace, getPush, type WebhookEvent } from '@secret-push/sdk/generated';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

let api: RealApi;
let hooks: Receiver;
let owner: User, admin: User, member: User, member2: User, auditor: User, outsider: User, otherOwner: User;
let workspaceId: number;
let otherWorkspaceId: number;

beforeAll(async () => {
  hooks = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { queue: { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 } } },
  );
  const user = (who: string) => api.user(`wsreq-${who}@example.org`);
  owner = await user('owner');
  admin = await user('admin');
  member = await user('member');
  member2 = await user('member2');
  auditor = await user('auditor');
  outsider = await user('outsider');
  otherOwner = await user('other-owner');
  workspaceId = await workspaceOf(owner, 'Team');
  otherWorkspaceId = await workspaceOf(otherOwner, 'Other');
  // The rows an accepted invitation writes.
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
    [member2, 'member'],
    [auditor, 'auditor'],
  ] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [workspaceId, who.userId, role],
    );
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
  await hooks?.stop();
});

async function workspaceOf(who: User, name: string): Promise<number> {
  const made = await createWorkspace({ client: api.client, auth: bearer(who.token), body: { workspace: { name } } });
  return expectData(made, 201).id;
}

const client = (token?: string): SecretPushClient =>
  createSecretPushClient({ baseUrl: api.baseUrl, ...(token ? { token } : {}), maxRetries: 0 });

const ask = (who: User, workspace?: number | string, extra: Record<string, unknown> = {}) =>
  client(who.token).createRequest({
    request: 'the staging password, please',
    ...extra,
    ...(workspace === undefined ? {} : { workspace_id: workspace as number }),
  });

async function tokens(list: AsyncIterable<{ url_token: string }>): Promise<string[]> {
  const out: string[] = [];
  for await (const r of list) out.push(r.url_token);
  return out;
}

async function requestCount(): Promise<number> {
  return Number((await api.db.query<{ n: string }>('select count(*) as n from requests'))[0]!.n);
}

async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string }> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecretPushError);
  return { status: (error as SecretPushError).status!, code: (error as SecretPushError).code! };
}

describe("making a workspace's request", () => {
  it('any member but an auditor makes one; it is the workspace’s, not in their personal list', async () => {
    for (const who of [owner, admin, member]) {
      const made = await ask(who, workspaceId);
      const [row] = await api.db.query<{ workspace_id: number; user_id: string }>(
        'select workspace_id, user_id from requests where url_token = $1',
        [made.url_token],
      );
      expect(row).toEqual({ workspace_id: workspaceId, user_id: who.userId });
      expect(await tokens(client(who.token).activeRequests())).not.toContain(made.url_token);
    }
    // As digits, as a form sends it.
    const digits = await ask(member, String(workspaceId));
    expect(await tokens(client(member.token).activeRequests({ workspaceId }))).toContain(digits.url_token);
  });

  it('an auditor, an outsider, another workspace’s owner and an unknown id get 403; nothing is made', async () => {
    const before = await requestCount();
    for (const [who, id] of [
      [auditor, workspaceId],
      [outsider, workspaceId],
      [otherOwner, workspaceId],
      [member, otherWorkspaceId],
      [owner, 2147483000],
    ] as const)
      expect(await refusal(ask(who, id))).toEqual({ status: 403, code: 'forbidden' });
    expect(await refusal(ask(member, 'abc'))).toMatchObject({ status: 422 });
    expect(await requestCount()).toBe(before);
  });
});

describe("listing and revoking a workspace's requests", () => {
  it('owners, admins and auditors see every one, a member their own; outsiders 403', async () => {
    const mine = await ask(member, workspaceId);
    const theirs = await ask(member2, workspaceId);
    for (const who of [owner, admin, auditor]) {
      const seen = await tokens(client(who.token).activeRequests({ workspaceId }));
      expect(seen).toEqual(expect.arrayContaining([mine.url_token, theirs.url_token]));
    }
    const own = await tokens(client(member.token).activeRequests({ workspaceId }));
    expect(own).toContain(mine.url_token);
    expect(own).not.toContain(theirs.url_token);
    for (const who of [outsider, otherOwner])
      expect(await refusal(client(who.token).activeRequests.page(1, { workspaceId }))).toEqual({
        status: 403,
        code: 'forbidden',
      });
  });

  it('its owner and admins revoke any, a creator their own; another member and an auditor get 403', async () => {
    const a = await ask(member, workspaceId);
    const b = await ask(member, workspaceId);
    const c = await ask(member, workspaceId);
    for (const who of [member2, auditor, outsider])
      expect(await refusal(client(who.token).revokeRequest(a.url_token))).toEqual({ status: 403, code: 'forbidden' });
    expect((await client(admin.token).revokeRequest(a.url_token)).state).toBe('revoked');
    expect((await client(owner.token).revokeRequest(b.url_token)).state).toBe('revoked');
    expect((await client(member.token).revokeRequest(c.url_token)).state).toBe('revoked');
    const expired = await tokens(client(admin.token).expiredRequests({ workspaceId }));
    expect(expired).toEqual(expect.arrayContaining([a.url_token, b.url_token, c.url_token]));
  });
});

describe("a workspace's request answered", () => {
  it('the answer is a push of the workspace: its admins see it, its webhook gets the events, its storage counts it', async () => {
    const hook = expectData(
      await createWebhook({
        client: api.client,
        auth: bearer(admin.token),
        body: {
          webhook: {
            url: hooks.url,
            events: ['push.viewed', 'request.created', 'request.fulfilled'],
            workspace_id: workspaceId,
          },
        },
      }),
      201,
    );
    const userBytes = async () =>
      Number(
        (
          await api.db.query<{ b: string }>(
            'select coalesce(sum(bytes), 0) as b from user_storage where user_id = $1',
            [member.userId],
          )
        )[0]!.b,
      );
    const workspaceBytes = async () =>
      Number(
        (
          await api.db.query<{ b: string }>(
            'select coalesce(sum(bytes), 0) as b from workspace_storage where workspace_id = $1',
            [workspaceId],
          )
        )[0]!.b,
      );
    const [userBefore, workspaceBefore] = [await userBytes(), await workspaceBytes()];
    const request = await ask(member, workspaceId);
    await client().respondToRequest(request.url_token, { payload: 'hunter2-ws' });
    const answered = await client(member.token).getRequest(request.url_token);
    expect(answered.audience === 'owner' && answered.state).toBe('fulfilled');
    const answerToken = answered.audience === 'owner' ? answered.answer!.url_token : '';
    const [push] = await api.db.query<{ id: string; workspace_id: number; user_id: string; stored_bytes: string }>(
      'select id, workspace_id, user_id, stored_bytes from pushes where url_token = $1',
      [answerToken],
    );
    expect(push).toMatchObject({ workspace_id: workspaceId, user_id: member.userId });
    // Counted against the workspace's storage, not the requester's.
    expect(await workspaceBytes()).toBe(workspaceBefore + Number(push!.stored_bytes));
    expect(await userBytes()).toBe(userBefore);
    // The workspace's admins see the answer among its pushes.
    const seen: string[] = [];
    for await (const p of client(admin.token).activePushes()) seen.push(p.url_token);
    expect(seen).not.toContain(answerToken);
    const listed = await fetch(`${api.baseUrl}/api/v2/pushes/active?workspace_id=${workspaceId}`, {
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(((await listed.json()) as { url_token: string }[]).map((p) => p.url_token)).toContain(answerToken);
    // Someone the requester hands the link to opens the answer: the workspace's webhook got the request's events and
    // the answer's view, signed (an answer's push sends no push.created, personal or not: request.fulfilled says it).
    const opened = await getPush({ client: api.client, path: { url_token: answerToken } });
    expect(expectData(opened).payload).toBe('hunter2-ws');
    const events = await waitFor(() => verifiedEvents(hook.secret), 3);
    const text = events.map((e) => JSON.stringify(e));
    expect(events.map((e) => e.type).sort()).toEqual(['push.viewed', 'request.created', 'request.fulfilled']);
    expect(text.join('\n')).not.toContain('hunter2-ws');
    expect(text.some((t) => t.includes(push!.id))).toBe(true);
  });
});

function verifiedEvents(secret: string): WebhookEvent[] {
  return hooks.received
    .filter((r) => r.status < 300)
    .flatMap((r) => {
      try {
        return [hooks.verify(secret, r) as WebhookEvent];
      } catch {
        return [];
      }
    });
}

async function waitFor(read: () => WebhookEvent[], count: number): Promise<WebhookEvent[]> {
  const end = Date.now() + 30_000;
  for (;;) {
    const got = read();
    if (got.length >= count || Date.now() > end) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a workspace's API key and a leaver", () => {
  it('a workspace’s key makes and lists them without naming it; never revokes its creator’s personal ones', async () => {
    const made = expectData(
      await createApiKey({
        client: api.client,
        auth: bearer(admin.token),
        body: {
          api_key: { name: 'team requests', scopes: ['requests:read', 'requests:write'], workspace_id: workspaceId },
        },
      }),
      201,
    );
    // The facade lists the workspace's keys by `workspaceId`; the admin's personal list leaves it out.
    expect((await client(admin.token).listApiKeys({ workspaceId })).map((k) => k.id)).toContain(made.id);
    expect((await client(admin.token).listApiKeys()).map((k) => k.id)).not.toContain(made.id);
    const key = client(made.token);
    const byKey = await key.createRequest({ request: 'the VPN secret' });
    const [row] = await api.db.query<{ workspace_id: number }>(
      'select workspace_id from requests where url_token = $1',
      [byKey.url_token],
    );
    expect(row!.workspace_id).toBe(workspaceId);
    const byMember = await ask(member, workspaceId);
    expect(await tokens(key.activeRequests())).toEqual(expect.arrayContaining([byKey.url_token, byMember.url_token]));
    const personal = await ask(admin);
    expect(await refusal(key.revokeRequest(personal.url_token))).toEqual({ status: 403, code: 'forbidden' });
    expect(await refusal(key.createRequest({ request: 'x', workspace_id: otherWorkspaceId }))).toEqual({
      status: 403,
      code: 'forbidden',
    });
    expect((await key.revokeRequest(byMember.url_token)).state).toBe('revoked');
  });

  it('a request outlives its creator’s removal: its admins still see and revoke it, the creator no longer does', async () => {
    const leaver = await api.user('wsreq-leaver@example.org');
    await api.db.query(
      "insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())",
      [workspaceId, leaver.userId],
    );
    const request = await ask(leaver, workspaceId);
    await client(admin.token).removeWorkspaceMember(workspaceId, leaver.userId);
    expect(await tokens(client(admin.token).activeRequests({ workspaceId }))).toContain(request.url_token);
    expect(await tokens(client(leaver.token).activeRequests())).not.toContain(request.url_token);
    expect(await refusal(client(leaver.token).revokeRequest(request.url_token))).toEqual({
      status: 403,
      code: 'forbidden',
    });
    expect((await client(admin.token).revokeRequest(request.url_token)).state).toBe('revoked');
  });
});
