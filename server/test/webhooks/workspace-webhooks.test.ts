/**
 * A workspace's webhooks (issue 41; docs/workspaces.md, "A workspace's webhooks"), end to end: the real app on a
 * throwaway PostgreSQL, called through the generated SDK, and real HTTP receivers on loopback whose every delivery is
 * verified with the `standardwebhooks` package. Its owner and admins register one (`webhook.workspace_id`); members,
 * auditors, outsiders, another workspace's owner and unknown ids get 403 and nothing is written. It receives the
 * events of every push made in the workspace, by any member (a create, a view, a wrong passphrase, a view by a
 * passphrase, an expiry by the workspace's owner), while personal webhooks receive only their owner's personal pushes. Its owner and admins
 * (and the workspace's API key) manage it; anyone else finds no such webhook (404, nothing changed). It survives its
 * creator's removal from the workspace.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createPush,
  createWebhook,
  createWorkspace,
  deleteWebhook,
  expirePush,
  getPush,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  removeWorkspaceMember,
  rotateWebhookSecret,
  testWebhook,
  type WebhookEvent,
  type WebhookInput,
} from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

type User = { token: string; email: string; userId: string };

const EVENTS = ['push.created', 'push.viewed', 'push.failed_passphrase', 'push.expired', 'push.deleted'] as const;

let api: RealApi;
let team: Receiver;
let personal: Receiver;
let owner: User, admin: User, member: User, auditor: User, outsider: User, otherOwner: User;
let workspaceId: number;
let otherWorkspaceId: number;

beforeAll(async () => {
  team = await startReceiver();
  personal = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } },
    { core: { queue: { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 } } },
  );
  const user = (who: string) => api.user(`wshooks-${who}@example.org`);
  owner = await user('owner');
  admin = await user('admin');
  member = await user('member');
  auditor = await user('auditor');
  outsider = await user('outsider');
  otherOwner = await user('other-owner');
  workspaceId = await workspaceOf(owner, 'Team');
  otherWorkspaceId = await workspaceOf(otherOwner, 'Other');
  // No invitation operation yet (issue 41): the rows an accepted invitation will write.
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
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
  await team?.stop();
  await personal?.stop();
});

async function workspaceOf(who: User, name: string): Promise<number> {
  const made = await createWorkspace({ client: api.client, auth: bearer(who.token), body: { workspace: { name } } });
  return expectData(made, 201).id;
}

function register(
  who: User | string,
  webhook: Omit<Partial<WebhookInput>, 'workspace_id'> & { workspace_id?: unknown },
) {
  return createWebhook({
    client: api.client,
    auth: bearer(typeof who === 'string' ? who : who.token),
    body: { webhook: { url: team.url, events: [...EVENTS], ...webhook } as WebhookInput },
  });
}

async function hookCount(): Promise<number> {
  return Number((await api.db.query<{ n: string }>('select count(*) as n from webhooks'))[0]!.n);
}

async function push(who: User, workspace: number | null, extra: Record<string, unknown> = {}) {
  const body = {
    push: { payload: 'team secret 7f3a', name: 'Team Wi-Fi', ...extra },
    ...(workspace === null ? {} : { workspace_id: workspace }),
  };
  return expectData(await createPush({ client: api.client, auth: bearer(who.token), body }), 201);
}

/** The verified events of `pushId` a receiver got for a webhook (by its secret), waiting until there are `count`. */
async function eventsOf(receiver: Receiver, secret: string, pushId: string, count: number): Promise<WebhookEvent[]> {
  const end = Date.now() + 30_000;
  for (;;) {
    const mine = receiver.received
      .filter((r) => r.status < 300)
      .flatMap((r) => {
        try {
          return [receiver.verify(secret, r) as WebhookEvent];
        } catch {
          return []; // Another webhook's delivery (another secret).
        }
      })
      .filter((e) => 'push_id' in e.data && e.data.push_id === pushId);
    if (mine.length >= count || Date.now() > end) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every body a receiver got that names `pushId` (whatever webhook it was for). */
const bodiesNaming = (receiver: Receiver, pushId: string) =>
  receiver.received.filter((r) => r.body.includes(pushId)).map((r) => r.body);

describe("registering a workspace's webhook", () => {
  it('its owner and admins register one; it is listed as the workspace’s, not in their personal list', async () => {
    const byOwner = expectData(await register(owner, { workspace_id: workspaceId }), 201);
    const byAdmin = expectData(await register(admin, { workspace_id: String(workspaceId) }), 201);
    expect([byOwner.workspace_id, byAdmin.workspace_id]).toEqual([workspaceId, workspaceId]);
    for (const who of [owner, admin]) {
      const listed = expectData(
        await listWebhooks({
          client: api.client,
          auth: bearer(who.token),
          query: { workspace_id: String(workspaceId) },
        }),
      ).webhooks.map((h) => h.id);
      expect(listed).toEqual(expect.arrayContaining([byOwner.id, byAdmin.id]));
      const own = expectData(await listWebhooks({ client: api.client, auth: bearer(who.token) })).webhooks;
      expect(own.map((h) => h.id)).not.toContain(byOwner.id);
      expect(own.every((h) => h.workspace_id === null)).toBe(true);
    }
    for (const hook of [byOwner, byAdmin])
      expectData(await deleteWebhook({ client: api.client, auth: bearer(owner.token), path: { id: hook.id } }));
  });

  it('a member, an auditor, an outsider, another workspace’s owner and unknown ids get 403; nothing is written', async () => {
    const before = await hookCount();
    for (const who of [member, auditor, outsider, otherOwner])
      expectError(await register(who, { workspace_id: workspaceId }), 403, 'forbidden');
    expectError(await register(owner, { workspace_id: otherWorkspaceId }), 403, 'forbidden');
    expectError(await register(owner, { workspace_id: 2_000_000_000 }), 403, 'forbidden');
    for (const who of [member, auditor, outsider]) {
      const query = { workspace_id: String(workspaceId) };
      expectError(await listWebhooks({ client: api.client, auth: bearer(who.token), query }), 403, 'forbidden');
    }
    expect(await hookCount()).toBe(before);
  });

  it('an id that is no workspace id: 422 on workspace_id (a list: 400 invalid_parameter), nothing written', async () => {
    const before = await hookCount();
    for (const bad of ['abc', 0, -1, 1.5, '01', 3_000_000_000, { id: 1 }]) {
      const refused = expectError(await register(owner, { workspace_id: bad }), 422, 'validation_failed');
      expect(Object.keys(refused.errors ?? {})).toEqual(['workspace_id']);
    }
    expectError(
      await listWebhooks({ client: api.client, auth: bearer(owner.token), query: { workspace_id: 'x1' } }),
      400,
      'invalid_parameter',
    );
    expect(await hookCount()).toBe(before);
  });
});

describe("a workspace's webhook receives the workspace's pushes, and only those", () => {
  it("every member's pushes in the workspace reach it; personal webhooks get only their owner's personal pushes", async () => {
    const teamHook = expectData(await register(admin, { workspace_id: workspaceId }), 201);
    const memberHook = expectData(
      await createWebhook({
        client: api.client,
        auth: bearer(member.token),
        body: { webhook: { url: personal.url, events: [...EVENTS] } },
      }),
      201,
    );
    expect(memberHook.workspace_id).toBeNull();

    // A member's push in the workspace, viewed to its last view: created, viewed, expired to the team's webhook.
    const viewed = await push(member, workspaceId, { expire_after_views: 1 });
    expect(expectData(await getPush({ client: api.client, path: { url_token: viewed.url_token } })).payload).toBe(
      'team secret 7f3a',
    );
    const events = await eventsOf(team, teamHook.secret, viewed.push_id!, 3);
    expect(events.map((e) => e.type).sort()).toEqual(['push.created', 'push.expired', 'push.viewed']);
    expect(events.find((e) => e.type === 'push.viewed')!.data).toMatchObject({ name: 'Team Wi-Fi' });

    // A passphrase push: a wrong passphrase, then the right one (the view's own transaction), then the owner expires
    // another (the workspace's owner expires a member's push).
    const guarded = await push(member, workspaceId, { passphrase: 'open sesame', expire_after_views: 2 });
    const path = { url_token: guarded.url_token };
    expectError(
      await getPush({ client: api.client, path, headers: { 'X-Passphrase': 'wrong' } }),
      401,
      'passphrase_incorrect',
    );
    expectData(await getPush({ client: api.client, path, headers: { 'X-Passphrase': 'open sesame' } }));
    const expired = await push(member, workspaceId);
    expectData(
      await expirePush({ client: api.client, auth: bearer(owner.token), path: { url_token: expired.url_token } }),
    );
    const guardedEvents = await eventsOf(team, teamHook.secret, guarded.push_id!, 3);
    expect(guardedEvents.map((e) => e.type).sort()).toEqual(['push.created', 'push.failed_passphrase', 'push.viewed']);
    const expiredEvents = await eventsOf(team, teamHook.secret, expired.push_id!, 2);
    expect(expiredEvents.map((e) => e.type).sort()).toEqual(['push.created', 'push.deleted']);
    // The workspace's owner, not the push's owner nor a viewer, deleted it: said so.
    expect(expiredEvents.find((e) => e.type === 'push.deleted')!.data).toMatchObject({ deleted_by: 'workspace_admin' });
    // The member deleting their own workspace push is its owner.
    const ownDeleted = await push(member, workspaceId);
    expectData(
      await expirePush({ client: api.client, auth: bearer(member.token), path: { url_token: ownDeleted.url_token } }),
    );
    const ownDeletedEvents = await eventsOf(team, teamHook.secret, ownDeleted.push_id!, 2);
    expect(ownDeletedEvents.find((e) => e.type === 'push.deleted')!.data).toMatchObject({ deleted_by: 'owner' });

    // The member's personal push reaches the member's personal webhook, not the team's.
    const own = await push(member, null);
    expect((await eventsOf(personal, memberHook.secret, own.push_id!, 1)).map((e) => e.type)).toEqual(['push.created']);
    // Everything has been fanned out by now (the personal event came after them): nothing crossed over.
    for (const id of [viewed.push_id!, guarded.push_id!, expired.push_id!])
      expect(bodiesNaming(personal, id)).toEqual([]);
    expect(bodiesNaming(team, own.push_id!)).toEqual([]);
    // No body holds the payload, the passphrase or a token.
    for (const body of team.received.map((r) => r.body)) {
      expect(body).not.toContain('team secret 7f3a');
      expect(body).not.toContain('open sesame');
      expect(body).not.toMatch(/"(url_token|payload|passphrase|html_url|json_url)":/);
    }
    for (const [who, hook] of [
      [admin, teamHook],
      [member, memberHook],
    ] as const)
      expectData(await deleteWebhook({ client: api.client, auth: bearer(who.token), path: { id: hook.id } }));
  });
});

describe("managing a workspace's webhook", () => {
  it('its owner and admins (and its key) manage it; members, auditors, outsiders and other owners find none', async () => {
    const hook = expectData(await register(owner, { workspace_id: workspaceId, description: 'team' }), 201);
    const path = { id: hook.id };
    const rowOf = async () =>
      (await api.db.query('select secret, previous_secret from webhooks where id = $1', [hook.id]))[0];
    const deliveries = async () =>
      Number(
        (
          await api.db.query<{ n: string }>('select count(*) as n from webhook_deliveries where webhook_id = $1', [
            hook.id,
          ])
        )[0]!.n,
      );
    for (const who of [member, auditor, outsider, otherOwner]) {
      const auth = bearer(who.token);
      const before = [await rowOf(), await deliveries()];
      expectError(await getWebhook({ client: api.client, auth, path }), 404, 'not_found');
      expectError(await rotateWebhookSecret({ client: api.client, auth, path }), 404, 'not_found');
      expectError(await testWebhook({ client: api.client, auth, path }), 404, 'not_found');
      expectError(await listWebhookDeliveries({ client: api.client, auth, path }), 404, 'not_found');
      expectError(await deleteWebhook({ client: api.client, auth, path }), 404, 'not_found');
      expect([await rowOf(), await deliveries()]).toEqual(before);
    }
    const auth = bearer(admin.token);
    expect(expectData(await getWebhook({ client: api.client, auth, path })).workspace_id).toBe(workspaceId);
    const rotated = expectData(await rotateWebhookSecret({ client: api.client, auth, path }));
    expect(rotated.secret).not.toBe(hook.secret);
    const sent = expectData(await testWebhook({ client: api.client, auth, path }), 202);
    const log = expectData(await listWebhookDeliveries({ client: api.client, auth, path })).deliveries;
    expect(log.map((d) => d.id)).toContain(sent.id);

    // The workspace's key with webhooks:manage: its workspace's webhooks without naming it, never a personal one.
    const key = expectData(
      await createApiKey({
        client: api.client,
        auth: bearer(owner.token),
        body: { api_key: { name: 'team hooks', scopes: ['webhooks:manage'], workspace_id: workspaceId } },
      }),
      201,
    );
    const keyAuth = bearer(key.token);
    const listed = expectData(await listWebhooks({ client: api.client, auth: keyAuth })).webhooks;
    expect(listed.map((h) => h.id)).toContain(hook.id);
    const byKey = expectData(await register(key.token, {}), 201);
    expect(byKey.workspace_id).toBe(workspaceId);
    const ownersOwn = expectData(
      await createWebhook({
        client: api.client,
        auth: bearer(owner.token),
        body: { webhook: { url: personal.url, events: ['push.created'] } },
      }),
      201,
    );
    expectError(await getWebhook({ client: api.client, auth: keyAuth, path: { id: ownersOwn.id } }), 404, 'not_found');
    expectError(
      await deleteWebhook({ client: api.client, auth: keyAuth, path: { id: ownersOwn.id } }),
      404,
      'not_found',
    );
    // Another workspace's owner: the workspace's webhooks are unknown (404), and naming it is refused (403).
    expectError(
      await listWebhooks({
        client: api.client,
        auth: bearer(otherOwner.token),
        query: { workspace_id: String(workspaceId) },
      }),
      403,
      'forbidden',
    );
    // A malformed id is refused before anyone's webhook is looked for.
    expectError(await getWebhook({ client: api.client, auth, path: { id: 'not-a-uuid' } }), 400, 'invalid_parameter');

    for (const id of [hook.id, byKey.id])
      expectData(await deleteWebhook({ client: api.client, auth: keyAuth, path: { id } }));
    expectData(await deleteWebhook({ client: api.client, auth: bearer(owner.token), path: { id: ownersOwn.id } }));
  });
});

describe('its creator leaving', () => {
  it('keeps the webhook working for the workspace; the creator no longer sees it', async () => {
    const leaver = await api.user('wshooks-leaver@example.org');
    await api.db.query(
      "insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'admin', now())",
      [workspaceId, leaver.userId],
    );
    const hook = expectData(await register(leaver, { workspace_id: workspaceId }), 201);
    expectData(
      await removeWorkspaceMember({
        client: api.client,
        auth: bearer(owner.token),
        path: { workspace_id: workspaceId, user_id: leaver.userId },
      }),
    );
    expectError(
      await getWebhook({ client: api.client, auth: bearer(leaver.token), path: { id: hook.id } }),
      404,
      'not_found',
    );
    const listed = expectData(
      await listWebhooks({
        client: api.client,
        auth: bearer(owner.token),
        query: { workspace_id: String(workspaceId) },
      }),
    ).webhooks;
    expect(listed.map((h) => h.id)).toContain(hook.id);
    const made = await push(member, workspaceId);
    expect((await eventsOf(team, hook.secret, made.push_id!, 1)).map((e) => e.type)).toEqual(['push.created']);
    expectData(await deleteWebhook({ client: api.client, auth: bearer(admin.token), path: { id: hook.id } }));
  });
});
