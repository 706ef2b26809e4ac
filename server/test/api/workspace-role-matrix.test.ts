/**
 * The role matrix of issue 41, driven from the contract: every v2 operation that names a workspace (a
 * `workspace_id` parameter, in the path or the query, or a `workspace_id` field of its JSON body, at its top or in
 * the object it wraps: `{"request": {"workspace_id": …}}`), for every role
 * (owner, admin, member, auditor), an outsider, a second workspace's owner, no token at all, and three API keys (the
 * workspace's own key, a member's personal key with every scope, and the personal key of a leaver: an admin who made
 * the workspace's key and was then removed by another admin) answers the status below; a refusal changes nothing (the memberships of both workspaces, the audit trail and the pushes are read
 * before and after), a change changes something. A second workspace's user ids are probed on every path that names
 * a member, by the first workspace's owner: 404, and nothing changes. An operation the contract gains that names a
 * workspace fails this test until its row is written here.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@secret-push/contract';
import { createWorkspace } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData } from './support/sdk.js';

const ACTORS = [
  'owner',
  'admin',
  'member',
  'auditor',
  'outsider',
  'otherOwner',
  'anonymous',
  'workspaceKey',
  'personalKey',
  'leaverKey',
] as const;
type Actor = (typeof ACTORS)[number];
const KEY_ACTORS: ReadonlySet<Actor> = new Set(['workspaceKey', 'personalKey', 'leaverKey']);
type User = { token: string; email: string; userId: string };

/** Every scope an API key may hold: the key columns are refused for who holds them, never for a missing scope. */
const ALL_SCOPES = [
  'pushes:create',
  'pushes:read',
  'pushes:delete',
  'pushes:notify',
  'requests:write',
  'requests:read',
  'webhooks:manage',
  'api_keys:manage',
  'workspaces:read',
  'workspaces:manage',
];

/** What each operation is sent: the subject of a member operation is `target`, a second member. */
interface Probe {
  path: (workspaceId: number, subject: string) => string;
  body?: (workspaceId: number) => unknown;
  /** Makes the subject in the fresh workspace (default: `target`'s user id), e.g. a pending invitation. */
  subject?: (workspaceId: number) => Promise<string>;
  /** The status each actor gets. */
  expect: Record<Actor, number>;
}

const everyMember = { owner: 200, admin: 200, member: 200, auditor: 200 };
const outside = { outsider: 404, otherOwner: 404, anonymous: 401 };
/**
 * The key columns: the workspace's own key (what `requireWorkspaceKeyOperation` allows; anything else 403), the
 * member's personal key with every scope (the member's status: it acts as the member), and the removed leaver's
 * personal key (refused as an outsider is).
 */
const keys = (workspaceKey: number, personalKey: number, leaverKey: number) => ({
  workspaceKey,
  personalKey,
  leaverKey,
});
/** The member operations: a workspace's key does not manage people (403); the leaver is an outsider (404). */
const peopleOnly = (member: number) => keys(403, member, 404);
const members = (id: number) => `/api/v2/workspaces/${id}/members`;

const PROBES: Record<string, Probe> = {
  listWorkspaceMembers: { path: (id) => members(id), expect: { ...everyMember, ...outside, ...peopleOnly(200) } },
  updateWorkspaceMember: {
    path: (id, subject) => `${members(id)}/${subject}/role`,
    body: () => ({ member: { role: 'auditor' } }),
    expect: { owner: 200, admin: 200, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  removeWorkspaceMember: {
    path: (id, subject) => `${members(id)}/${subject}`,
    expect: { owner: 200, admin: 200, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  leaveWorkspace: {
    path: (id) => `/api/v2/workspaces/${id}/leave`,
    expect: { owner: 422, admin: 200, member: 200, auditor: 200, ...outside, ...peopleOnly(200) },
  },
  updateWorkspace: {
    path: (id) => `/api/v2/workspaces/${id}/settings`,
    body: () => ({ workspace: { name: 'Renamed' } }),
    expect: { owner: 200, admin: 200, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  // Deleting a workspace (docs/workspaces.md): its owner alone, with its name ('M') as the confirmation.
  deleteWorkspace: {
    path: (id) => `/api/v2/workspaces/${id}?confirm=M`,
    expect: { owner: 200, admin: 403, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  transferWorkspace: {
    path: (id, subject) => `${members(id)}/${subject}/ownership`,
    expect: { owner: 200, admin: 403, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  // The workspace's audit trail: its owner, admins and auditors; a member 403; anyone else 404, as the members' list.
  listWorkspaceAudit: {
    path: (id) => `/api/v2/workspaces/${id}/audit`,
    expect: { owner: 200, admin: 200, member: 403, auditor: 200, ...outside, ...peopleOnly(403) },
  },
  // The Pro wire: a workspace the caller is not in answers 403 there (docs/workspaces.md), as Pro's clients expect.
  listActivePushes: {
    path: (id) => `/api/v2/pushes/active?workspace_id=${id}`,
    expect: { ...everyMember, outsider: 403, otherOwner: 403, anonymous: 401, ...keys(200, 200, 403) },
  },
  listExpiredPushes: {
    path: (id) => `/api/v2/pushes/expired?workspace_id=${id}`,
    expect: { ...everyMember, outsider: 403, otherOwner: 403, anonymous: 401, ...keys(200, 200, 403) },
  },
  // A workspace's API keys (docs/api-keys.md): its owner and admins list them; anyone else 403, as on the Pro wire.
  listApiKeys: {
    path: (id) => `/api/v2/api_keys?workspace_id=${id}`,
    expect: {
      owner: 200,
      admin: 200,
      member: 403,
      auditor: 403,
      outsider: 403,
      otherOwner: 403,
      anonymous: 401,
      ...keys(200, 403, 403),
    },
  },
  // A workspace's brand (docs/branding.md): any member reads it, its owner and admins set it.
  getWorkspaceBrand: {
    path: (id) => `/api/v2/workspaces/${id}/brand`,
    expect: { ...everyMember, ...outside, ...peopleOnly(200) },
  },
  updateWorkspaceBrand: {
    path: (id) => `/api/v2/workspaces/${id}/brand`,
    body: () => ({ brand: { name: 'Matrix', accent_color: '#0b5cad' } }),
    expect: { owner: 200, admin: 200, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  // A workspace's webhooks (docs/workspaces.md): its owner and admins list them; anyone else 403, as listApiKeys.
  listWebhooks: {
    path: (id) => `/api/v2/webhooks?workspace_id=${id}`,
    expect: {
      owner: 200,
      admin: 200,
      member: 403,
      auditor: 403,
      outsider: 403,
      otherOwner: 403,
      anonymous: 401,
      ...keys(200, 403, 403),
    },
  },
  // Invitations (docs/workspaces.md): its owner and admins; members without the role 403, outsiders 404.
  createWorkspaceInvitation: {
    path: (id) => `/api/v2/workspaces/${id}/invitations`,
    body: () => ({ invitation: { role: 'member' } }),
    expect: { owner: 201, admin: 201, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  listWorkspaceInvitations: {
    path: (id) => `/api/v2/workspaces/${id}/invitations`,
    expect: { owner: 200, admin: 200, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  revokeWorkspaceInvitation: {
    path: (id, subject) => `/api/v2/workspaces/${id}/invitations/${subject}`,
    subject: (id) => pendingInvitation(id),
    expect: { owner: 200, admin: 200, member: 403, auditor: 403, ...outside, ...peopleOnly(403) },
  },
  // A workspace's requests (docs/workspaces.md): any member but an auditor makes one; anyone else 403, as createPush.
  createRequest: {
    path: () => '/api/v2/requests',
    body: (id) => ({ request: { request: 'matrix', workspace_id: id } }),
    expect: {
      owner: 201,
      admin: 201,
      member: 201,
      auditor: 403,
      outsider: 403,
      otherOwner: 403,
      anonymous: 401,
      ...keys(201, 201, 403),
    },
  },
  listActiveRequests: {
    path: (id) => `/api/v2/requests/active?workspace_id=${id}`,
    expect: { ...everyMember, outsider: 403, otherOwner: 403, anonymous: 401, ...keys(200, 200, 403) },
  },
  listExpiredRequests: {
    path: (id) => `/api/v2/requests/expired?workspace_id=${id}`,
    expect: { ...everyMember, outsider: 403, otherOwner: 403, anonymous: 401, ...keys(200, 200, 403) },
  },
  // A workspace's API keys and webhooks are made by its owner and admins; anyone else 403, as createPush answers.
  createApiKey: {
    path: () => '/api/v2/api_keys',
    body: (id) => ({ api_key: { name: 'matrix', scopes: ['pushes:create'], workspace_id: id } }),
    expect: {
      owner: 201,
      admin: 201,
      member: 403,
      auditor: 403,
      outsider: 403,
      otherOwner: 403,
      anonymous: 401,
      ...keys(201, 403, 403),
    },
  },
  createWebhook: {
    path: () => '/api/v2/webhooks',
    body: (id) => ({
      webhook: { url: 'http://127.0.0.1:9/matrix', events: ['push.created'], workspace_id: id },
    }),
    expect: {
      owner: 201,
      admin: 201,
      member: 403,
      auditor: 403,
      outsider: 403,
      otherOwner: 403,
      anonymous: 401,
      ...keys(201, 403, 403),
    },
  },
  createPush: {
    path: () => '/api/v2/pushes',
    body: (id) => ({ push: { payload: 'matrix' }, workspace_id: id }),
    expect: {
      owner: 201,
      admin: 201,
      member: 201,
      auditor: 403,
      outsider: 403,
      otherOwner: 403,
      anonymous: 401,
      ...keys(201, 201, 403),
    },
  },
};

/** The v2 operations that name a workspace, read from the bundled contract. */
function workspaceOperations(): { operationId: string; method: string }[] {
  const c = contract();
  const namesWorkspace = (operationId: string, requestBody: unknown) => {
    if (c.parameters(operationId).some((p) => p.name === 'workspace_id')) return true;
    const media = c.deref<{ content?: Record<string, { schema?: unknown }> }>(requestBody ?? {}).content;
    const schema = c.deref<{ properties?: Record<string, unknown> }>(media?.['application/json']?.schema ?? {});
    const wrapped = Object.values(schema.properties ?? {}).map((p) => c.deref<{ properties?: object }>(p).properties);
    return [schema.properties, ...wrapped].some((properties) => 'workspace_id' in (properties ?? {}));
  };
  return c
    .operations()
    .filter((op) => namesWorkspace(op.operationId, op.object.requestBody))
    .map((op) => ({ operationId: op.operationId, method: op.method.toUpperCase() }));
}

let api: RealApi;
type Person = 'owner' | 'admin' | 'member' | 'auditor' | 'target' | 'outsider' | 'otherOwner' | 'leaver';
const people = {} as Record<Person, User>;
let otherWorkspace: number;
/** The personal keys (every scope) of the member and of the leaver, made once: they name no workspace. */
const personalKeys = {} as Record<'member' | 'leaver', string>;

beforeAll(async () => {
  // Private addresses allowed: createWebhook's rows register a loopback URL (no delivery is awaited).
  api = await startRealApi({ webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1] } });
  for (const who of ['owner', 'admin', 'member', 'auditor', 'target', 'outsider', 'otherOwner', 'leaver'] as const)
    people[who] = await api.user(`matrix-${who}@example.org`);
  otherWorkspace = await workspaceOf('otherOwner');
  personalKeys.member = await apiKey(people.member.token, null);
  personalKeys.leaver = await apiKey(people.leaver.token, null);
});

/** The fresh workspaces of the tests, taken away after each: a user owns at most 100, and the matrix makes more. */
const made: number[] = [];

afterEach(async () => {
  expect(api.checker.violations).toEqual([]);
  const ids = made.splice(0);
  if (ids.length === 0) return;
  // A workspace holding pushes or requests is not deleted by accident (`on delete restrict`): they go first.
  await api.db.query('delete from pushes where workspace_id = any($1)', [ids]);
  await api.db.query('delete from requests where workspace_id = any($1)', [ids]);
  await api.db.query('delete from api_keys where workspace_id = any($1)', [ids]);
  await api.db.query('delete from workspaces where id = any($1)', [ids]);
});

afterAll(async () => {
  await api?.stop();
});

async function workspaceOf(owner: 'owner' | 'otherOwner'): Promise<number> {
  return expectData(
    await createWorkspace({
      client: api.client,
      auth: bearer(people[owner].token),
      body: { workspace: { name: 'M' } },
    }),
    201,
  ).id;
}

/** A fresh workspace with one member of each role, and `target` a second member (rows as an invitation writes). */
async function workspace(): Promise<number> {
  const id = await workspaceOf('owner');
  made.push(id);
  const roles = [
    ['admin', 'admin'],
    ['member', 'member'],
    ['auditor', 'auditor'],
    ['target', 'member'],
  ] as const;
  // One statement for the four rows (a round trip each before).
  await api.db.query(
    'insert into workspace_members (workspace_id, user_id, role, created_at) select $1, u, r, now() from unnest($2::uuid[], $3::text[]) as m(u, r)',
    [id, roles.map(([who]) => people[who].userId), roles.map(([, role]) => role)],
  );
  return id;
}

/** A new API key with every scope, made with `token`: the workspace's (`workspaceId`) or a personal one (null). */
async function apiKey(token: string, workspaceId: number | null): Promise<string> {
  const response = await fetch(`${api.baseUrl}/api/v2/api_keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      api_key: { name: 'matrix', scopes: ALL_SCOPES, ...(workspaceId === null ? {} : { workspace_id: workspaceId }) },
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

/**
 * The leaver's story, before a key column's request: the leaver joins the workspace as an admin, makes the
 * workspace's key, and is removed by the admin (their personal key then acts nowhere in it; the workspace's key
 * keeps working). Answers the workspace's key.
 */
async function leaverLeaves(id: number): Promise<string> {
  await api.db.query(
    'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
    [id, people.leaver.userId, 'admin'],
  );
  const workspaceKey = await apiKey(people.leaver.token, id);
  const removed = await fetch(`${api.baseUrl}${members(id)}/${people.leaver.userId}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${people.admin.token}` },
  });
  expect(removed.status).toBe(200);
  return workspaceKey;
}

/** A pending invitation by link in the workspace, made by its owner; its id. */
async function pendingInvitation(id: number): Promise<string> {
  const response = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/invitations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${people.owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ invitation: { role: 'member' } }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

/** Everything a workspace operation could change, in both workspaces. */
async function state(ids: number[]): Promise<unknown> {
  const q = (text: string) => api.db.query(text, [ids]);
  // The nine reads at once (the request before has been answered; nothing writes while they run).
  const [workspaces, members, audit, brands, invitations, pushes, webhooks, requests, keys] = await Promise.all([
    q('select id, name, require_two_factor, sso_domain, updated_at from workspaces where id = any($1) order by 1'),
    q('select workspace_id, user_id, role from workspace_members where workspace_id = any($1) order by 1, 2'),
    q('select count(*)::int as n from workspace_audit where workspace_id = any($1)'),
    q('select workspace_id, name, accent_color from workspace_brands where workspace_id = any($1)'),
    q('select id, accepted_at, revoked_at from workspace_invitations where workspace_id = any($1) order by id'),
    q(
      'select workspace_id, count(*)::int as n, bool_or(expired) as x from pushes where workspace_id = any($1) group by 1 order by 1',
    ),
    q('select workspace_id, count(*)::int as n from webhooks where workspace_id = any($1) group by 1 order by 1'),
    q('select workspace_id, count(*)::int as n from requests where workspace_id = any($1) group by 1 order by 1'),
    q('select workspace_id, count(*)::int as n from api_keys where workspace_id = any($1) group by 1 order by 1'),
  ]);
  return { workspaces, members, audit, brands, invitations, pushes, webhooks, requests, keys };
}

/** The credential each actor sends (none for `anonymous`); `workspaceKey` is the fresh workspace's key. */
function credentialOf(who: Actor, workspaceKey?: string): string | undefined {
  switch (who) {
    case 'anonymous':
      return undefined;
    case 'workspaceKey':
      return workspaceKey;
    case 'personalKey':
      return personalKeys.member;
    case 'leaverKey':
      return personalKeys.leaver;
    default:
      return people[who].token;
  }
}

async function send(method: string, path: string, who: Actor, body: unknown, workspaceKey?: string): Promise<number> {
  const headers: Record<string, string> = {};
  const credential = credentialOf(who, workspaceKey);
  if (credential !== undefined) headers.authorization = `Bearer ${credential}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('the workspace role matrix, from the contract', () => {
  const operations = workspaceOperations();

  it('has a row for every operation that names a workspace', () => {
    expect(operations.map((o) => o.operationId).sort()).toEqual(Object.keys(PROBES).sort());
  });

  for (const { operationId, method } of operations) {
    const probe = PROBES[operationId];
    if (!probe) continue;
    for (const who of ACTORS) {
      const want = probe.expect[who];
      it(`${operationId} as ${who}: ${want}`, async () => {
        const id = await workspace();
        const workspaceKey = KEY_ACTORS.has(who) ? await leaverLeaves(id) : undefined;
        const subject = probe.subject ? await probe.subject(id) : people.target.userId;
        const before = await state([id, otherWorkspace]);
        const status = await send(method, probe.path(id, subject), who, probe.body?.(id), workspaceKey);
        expect(status).toBe(want);
        const after = await state([id, otherWorkspace]);
        if (status >= 400 || method === 'GET') expect(after).toEqual(before);
        else expect(after).not.toEqual(before);
      });
    }
  }

  it("refuses the owner deleting the second workspace by its id (404), and a workspace's own key (403)", async () => {
    const id = await workspace();
    const before = await state([id, otherWorkspace]);
    expect(await send('DELETE', `/api/v2/workspaces/${otherWorkspace}?confirm=M`, 'owner', undefined)).toBe(404);
    const key = await fetch(`${api.baseUrl}/api/v2/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${people.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: { name: 'k', scopes: ['workspaces:manage'], workspace_id: id } }),
    });
    const { token } = (await key.json()) as { token: string };
    const keyed = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}?confirm=M`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(keyed.status).toBe(403);
    const after = (await state([id, otherWorkspace])) as { keys: unknown };
    expect({ ...after, keys: (before as { keys: unknown }).keys }).toEqual(before);
  });

  it("probes the second workspace's user ids on every member path: 404, nothing changed", async () => {
    const id = await workspace();
    const stranger = people.otherOwner.userId;
    for (const { operationId, method } of operations) {
      const probe = PROBES[operationId]!;
      if (!probe.path(id, '{user}').includes('{user}')) continue;
      const before = await state([id, otherWorkspace]);
      expect(await send(method, probe.path(id, stranger), 'owner', probe.body?.(id)), operationId).toBe(404);
      expect(await state([id, otherWorkspace])).toEqual(before);
    }
  });
});
