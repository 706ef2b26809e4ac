/**
 * The admin console's workspaces (issue 41, docs/admin.md) through real HTTP on the real app and database, the
 * workspace made with the generated SDK: who gets in (no session → sign in, not an administrator → 403, pages and
 * actions alike); the list (by name or id, 50 a page, each with owner, members, live pushes, storage against the
 * quota, keys, webhooks and sign-in rules); a workspace's page (members with roles and two-factor, pending
 * invitations, keys by name, webhooks by host, the workspace's trail) and a user's workspaces; no push payload or
 * name, no key token, no invitation link, no webhook signing secret or URL path anywhere; hostile ids, searches and
 * pages answered without a 5xx; each action (revoke a key, remove a member, hand the ownership over, also of a
 * workspace whose owner was deleted) with its refusals (no CSRF token, the owner removed) and its audit rows;
 * the storage page's workspaces.
 */
import { createClient } from '@secret-push/sdk/generated/client';
import {
  createApiKey,
  createPush,
  createWebhook,
  createWorkspace,
  createWorkspaceInvitation,
} from '@secret-push/sdk/generated';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'correct horse battery staple';
const ROOT = 'root@example.org';
const PAYLOAD = 'PAYLOAD-SENTINEL-ws-5e1f';
const NAME = 'NAME-SENTINEL-ws-90ad';
const HOOK_TOKEN = 'HOOKPATH-SENTINEL-77c1';

let app: WebApp;
let root: Visitor;
let client: ReturnType<typeof createClient>;
type Person = { email: string; userId: string; token: string };
const secrets: string[] = [];

beforeAll(async () => {
  app = await startWeb({
    adminEmails: [ROOT],
    webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] },
  });
  client = createClient({ baseUrl: app.baseUrl });
  root = new Visitor(app.baseUrl);
  expect((await root.signUp(ROOT, PASSWORD)).status).toBe(303);
}, 300_000);
afterAll(async () => {
  await app?.stop();
});

const auth = (token: string) => ({
  client,
  auth: (a: { scheme?: string }) => (a.scheme === 'bearer' ? token : undefined),
});

async function person(email: string): Promise<Person> {
  const { userId, token } = await app.core.users.createUser(email);
  return { email, userId, token };
}

function data<T>(answer: { data?: T; error?: unknown; response?: Response }, status = 201): T {
  expect([answer.response?.status, answer.error]).toEqual([status, undefined]);
  return answer.data!;
}

/** A workspace with an admin and a member beside its owner, a live push, a key, a webhook and an invitation. */
async function team(label: string) {
  const owner = await person(`${label}-owner@example.org`);
  const admin = await person(`${label}-admin@example.org`);
  const member = await person(`${label}-member@example.org`);
  const ws = data(await createWorkspace({ ...auth(owner.token), body: { workspace: { name: `Team ${label}` } } }));
  let at = Date.now();
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
  ] as const)
    await app.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, $4)',
      [ws.id, who.userId, role, new Date(++at)],
    );
  const push = data(
    await createPush({
      ...auth(member.token),
      body: { push: { payload: PAYLOAD, name: NAME }, workspace_id: ws.id },
    }),
  );
  const key = data(
    await createApiKey({
      ...auth(owner.token),
      body: { api_key: { name: `${label} deploy key`, scopes: ['pushes:create', 'pushes:read'], workspace_id: ws.id } },
    }),
  );
  const hook = data(
    await createWebhook({
      ...auth(owner.token),
      body: {
        webhook: {
          url: `http://127.0.0.1:9/${HOOK_TOKEN}?t=${HOOK_TOKEN}`,
          events: ['push.expired'],
          workspace_id: ws.id,
        },
      },
    }),
  );
  const invitation = data(
    await createWorkspaceInvitation({
      ...auth(owner.token),
      path: { workspace_id: ws.id },
      body: { invitation: { role: 'member' } },
    }),
  );
  secrets.push(PAYLOAD, NAME, push.url_token, key.token, hook.secret, HOOK_TOKEN, owner.token, member.token);
  if (invitation.url) secrets.push(invitation.url, new URL(invitation.url).pathname.split('/').pop()!);
  return { id: ws.id, owner, admin, member, key, hook, push };
}

/** Posts an action from `v`'s session with the CSRF token of the workspace's page. */
async function act(v: Visitor, id: number, action: string, fields: Record<string, string>): Promise<Response> {
  const { csrf } = await v.page(`/admin/workspaces/${id}`);
  return v.post(`/admin/workspaces/${id}/${action}`, { _csrf: csrf, ...fields });
}

const adminAudit = (id: number) =>
  app.db.query<{ action: string; target_email: string | null; workspace_name: string | null; admin_email: string }>(
    'select action, target_email, workspace_name, admin_email from admin_audit where workspace_id = $1 order by id',
    [id],
  );

const trail = (id: number) =>
  app.db.query<{ action: string; actor_id: string | null; subject_email: string; role: string | null }>(
    'select action, actor_id, subject_email, role from workspace_audit where workspace_id = $1 order by id',
    [id],
  );

const apiStatus = async (token: string) =>
  (await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${token}` } })).status;

function expectNoSecret(html: string) {
  for (const secret of secrets)
    expect([secret.slice(0, 12), html.includes(secret)]).toEqual([secret.slice(0, 12), false]);
}

describe('who may open the workspaces section', () => {
  it('sends a visitor without a session to sign in and refuses a user who is not an administrator', async () => {
    const t = await team('guard');
    const paths = ['/admin/workspaces', `/admin/workspaces/${t.id}`];
    const anonymous = new Visitor(app.baseUrl);
    for (const path of paths) {
      const answer = await anonymous.fetch(path);
      expect([path, answer.status]).toEqual([path, 302]);
      expect(answer.headers.get('location')).toBe(`/users/sign_in?next=${encodeURIComponent(path)}`);
    }
    expect((await anonymous.post(`/admin/workspaces/${t.id}/revoke_key`, { key_id: t.key.id })).status).toBe(302);
    // A signed-in user who is no administrator of the instance.
    const owner = new Visitor(app.baseUrl);
    expect((await owner.signUp('guard-plain@example.org', PASSWORD)).status).toBe(303);
    for (const path of paths) expect([path, (await owner.fetch(path)).status]).toEqual([path, 403]);
    const { csrf } = await owner.page('/users/token');
    const posted = await owner.post(`/admin/workspaces/${t.id}/revoke_key`, { _csrf: csrf, key_id: t.key.id });
    expect(posted.status).toBe(403);
    expect(await apiStatus(t.key.token)).toBe(200);
  });
});

describe('the list and a workspace’s page', () => {
  it('lists workspaces by name or id with their counts, 50 a page', async () => {
    const t = await team('listed');
    await app.db.query("update workspaces set sso_domain = 'listed.example', require_two_factor = true where id = $1", [
      t.id,
    ]);
    const found = await root.page('/admin/workspaces?q=team%20listed');
    expect(found.response.status).toBe(200);
    const row =
      /<tr>\s*<td><a href="\/admin\/workspaces\/\d+">Team listed<\/a>[\s\S]*?<\/tr>/.exec(found.html)?.[0] ?? '';
    expect(row).toContain(t.owner.email);
    expect(row.replace(/\s+/g, ' ')).toMatch(/<td>3<\/td> <td>1<\/td> <td>[^<]+<\/td> <td>1<\/td> <td>1<\/td>/);
    expect(row).toContain('two-factor required');
    expect(row).toContain('SSO: listed.example');
    expect((await root.page(`/admin/workspaces?q=${t.id}`)).html).toContain('Team listed');
    expect((await root.page(`/admin/workspaces?q=%23${t.id}`)).html).toContain('Team listed');
    expectNoSecret(found.html);

    await app.db.query(
      `insert into workspaces (name, created_at, updated_at)
       select 'Crowd ' || lpad(i::text, 2, '0'), now(), now() from generate_series(0, 54) i`,
    );
    const first = await root.page('/admin/workspaces?q=crowd');
    expect(first.html).toContain('Crowd 00');
    expect(first.html).not.toContain('Crowd 50');
    expect(first.html).toContain('Page 1 of 2 (55)');
    const second = await root.page('/admin/workspaces?q=crowd&page=2');
    expect(second.html).toContain('Crowd 54');
    expect(second.html).not.toContain('Crowd 00');
    // `_` and `%` are taken literally.
    expect((await root.page('/admin/workspaces?q=crowd_0')).html).toContain('No workspace matches.');
  });

  it('shows members, invitations, keys, webhooks and the trail, never a secret; the user page lists the workspaces', async () => {
    const t = await team('shown');
    const { html, response } = await root.page(`/admin/workspaces/${t.id}`);
    expect(response.status).toBe(200);
    expect(html).toContain('<h1>Team shown</h1>');
    for (const who of [t.owner, t.admin, t.member]) expect(html).toContain(who.email);
    expect(html).toMatch(/shown-owner@example.org<\/a><\/td>\s*<td>owner<\/td>\s*<td>off<\/td>/);
    expect(html).toContain('anyone with the link');
    expect(html).toContain('shown deploy key');
    expect(html).toContain('<td>127.0.0.1:9</td>');
    expect(html).toContain('invitation_created');
    expectNoSecret(html);
    const user = await root.page(`/admin/users/${t.member.userId}`);
    expect(user.html).toMatch(new RegExp(`<a href="/admin/workspaces/${t.id}">Team shown</a></td><td>member</td>`));
    expectNoSecret(user.html);
    const storage = await root.page('/admin/storage');
    expect(storage.html).toContain(`<a href="/admin/workspaces/${t.id}">Team shown</a>`);
    expectNoSecret(storage.html);
  });

  it('answers hostile ids, searches and pages with a page, a 400 or a 404, never a 5xx', async () => {
    for (const id of ['abc', '0', '-1', '1e3', '2147483648', '99999999999999999999', '%00', '1%27%20or%201=1'])
      expect([id, (await root.fetch(`/admin/workspaces/${id}`)).status]).toEqual([id, 404]);
    expect((await root.fetch('/admin/workspaces/2147483647')).status).toBe(404);
    for (const q of ['%00', '%FF%FE', '%5C%5C%25%5F', "'%20or%201=1--", '<script>alert(1)</script>', '99999999999']) {
      const answer = await root.fetch(`/admin/workspaces?q=${q}`);
      expect([q, answer.status]).toEqual([q, 200]);
      expect(await answer.text()).not.toContain('<script>alert(1)</script>');
    }
    expect((await root.fetch(`/admin/workspaces?q=${'a'.repeat(101)}`)).status).toBe(400);
    expect((await root.fetch(`/admin/workspaces?q=${'a'.repeat(6000)}`)).status).toBeLessThan(500);
    expect((await root.fetch('/admin/workspaces?q=a&q=b')).status).toBe(400);
    for (const page of ['0', 'abc', '10001'])
      expect([page, (await root.fetch(`/admin/workspaces?page=${page}`)).status]).toEqual([page, 400]);
    const t = await team('hostile');
    for (const [action, fields] of [
      ['revoke_key', { key_id: 'not-a-uuid' }],
      ['revoke_key', { key_id: '00000000-0000-0000-0000-000000000000' }],
      ['remove_member', { user_id: "' or 1=1" }],
      ['transfer', { user_id: '00000000-0000-0000-0000-000000000000' }],
      ['unknown', {}],
    ] as const) {
      const answer = await act(root, t.id, action, fields);
      expect([action, answer.status]).toEqual([action, 404]);
    }
    expect(await apiStatus(t.key.token)).toBe(200);
    expect(await adminAudit(t.id)).toEqual([]);
  });
});

describe('actions on a workspace', () => {
  it('revokes a workspace key: it answers 401 at once; audited', async () => {
    const t = await team('revoke');
    expect((await root.post(`/admin/workspaces/${t.id}/revoke_key`, { key_id: t.key.id })).status).toBe(403);
    expect(await apiStatus(t.key.token)).toBe(200);
    const answer = await act(root, t.id, 'revoke_key', { key_id: t.key.id });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/admin/workspaces/${t.id}?done=revoke_key`);
    expect(await apiStatus(t.key.token)).toBe(401);
    expect(await adminAudit(t.id)).toEqual([
      { action: 'workspace_revoke_key', target_email: null, workspace_name: 'Team revoke', admin_email: ROOT },
    ]);
    expect((await root.page('/admin/audit')).html).toContain(`#${t.id} Team revoke`);
  });

  it('removes a member, never the owner; both trails say so', async () => {
    const t = await team('remove');
    const refused = await act(root, t.id, 'remove_member', { user_id: t.owner.userId });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Nothing changed: user_id: the owner is not removed');
    expect(await act(root, t.id, 'remove_member', { user_id: t.member.userId })).toHaveProperty('status', 303);
    const members = await app.db.query<{ user_id: string }>(
      'select user_id from workspace_members where workspace_id = $1',
      [t.id],
    );
    expect(members.map((m) => m.user_id).sort()).toEqual([t.owner.userId, t.admin.userId].sort());
    const rootId = await app.core.users.userIdOf(ROOT);
    expect((await trail(t.id)).at(-1)).toEqual({
      action: 'member_removed',
      actor_id: rootId,
      subject_email: t.member.email,
      role: null,
    });
    expect(await adminAudit(t.id)).toEqual([
      {
        action: 'workspace_remove_member',
        target_email: t.member.email,
        workspace_name: 'Team remove',
        admin_email: ROOT,
      },
    ]);
    // The removed member's push stays the workspace's.
    expect((await root.page(`/admin/workspaces/${t.id}`)).html).toMatch(/<dt>Pushes live<\/dt><dd>1<\/dd>/);
  });

  it('hands the ownership to a member (the old owner an admin after), and gives an owner-less workspace one', async () => {
    const t = await team('transfer');
    const refused = await act(root, t.id, 'transfer', { user_id: t.owner.userId });
    expect(refused.status).toBe(422);
    expect(await act(root, t.id, 'transfer', { user_id: t.member.userId })).toHaveProperty('status', 303);
    const roles = async () =>
      Object.fromEntries(
        (
          await app.db.query<{ user_id: string; role: string }>(
            'select user_id, role from workspace_members where workspace_id = $1',
            [t.id],
          )
        ).map((r) => [r.user_id, r.role]),
      );
    expect(await roles()).toEqual({ [t.owner.userId]: 'admin', [t.admin.userId]: 'admin', [t.member.userId]: 'owner' });
    expect((await trail(t.id)).at(-1)).toMatchObject({ action: 'ownership_transferred', role: 'owner' });

    // The new owner's account is not deleted while they are the workspace's only owner: the page names it.
    expect((await act(root, t.id, 'transfer', { user_id: t.member.userId })).status).toBe(422);
    const { csrf } = await root.page(`/admin/users/${t.member.userId}`);
    const kept = await root.post(`/admin/users/${t.member.userId}/delete`, { _csrf: csrf, confirm: t.member.email });
    expect(kept.status).toBe(422);
    const page = await kept.text();
    expect(page).toContain('Nothing was deleted');
    expect(page).toContain(`(#${t.id})`);
    expect(await app.db.query('select 1 from users where id = $1', [t.member.userId])).toHaveLength(1);
    // A workspace left without an owner (by a deletion of an earlier version) gets one from the console.
    await app.db.query("delete from workspace_members where workspace_id = $1 and role = 'owner'", [t.id]);
    await app.db.query('delete from users where id = $1', [t.member.userId]);
    expect((await root.page(`/admin/workspaces/${t.id}`)).html).toMatch(/<dt>Owner<\/dt><dd><strong>none<\/strong>/);
    expect(await act(root, t.id, 'transfer', { user_id: t.admin.userId })).toHaveProperty('status', 303);
    expect(await roles()).toEqual({ [t.owner.userId]: 'admin', [t.admin.userId]: 'owner' });
    expect((await adminAudit(t.id)).map((a) => [a.action, a.target_email])).toEqual([
      ['workspace_transfer', t.member.email],
      ['workspace_transfer', t.admin.email],
    ]);
  });
});

describe('deleting a workspace in the console', () => {
  it('asks for its name (422 otherwise, nothing deleted), then deletes it with everything and audits it', async () => {
    const t = await team('delete');
    const detail = await root.page(`/admin/workspaces/${t.id}`);
    expect(detail.html).toContain('Delete this workspace');
    const wrong = await act(root, t.id, 'delete', { confirm: 'team delete' });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toContain('Nothing changed');
    expect(await app.db.query('select 1 from workspaces where id = $1', [t.id])).toHaveLength(1);
    const done = await act(root, t.id, 'delete', { confirm: 'Team delete' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/admin/workspaces?done=delete');
    expect((await root.page('/admin/workspaces?done=delete')).html).toContain('The workspace is deleted');
    for (const table of ['workspaces where id', 'workspace_members where workspace_id', 'pushes where workspace_id'])
      expect(await app.db.query(`select 1 from ${table} = $1`, [t.id]), table).toHaveLength(0);
    const keyed = await fetch(`${app.baseUrl}/api/v2/pushes/active`, {
      headers: { authorization: `Bearer ${t.key.token}` },
    });
    expect(keyed.status).toBe(401);
    expect((await fetch(`${app.baseUrl}/api/v2/pushes/${t.push.url_token}`)).status).toBe(404);
    expect(await adminAudit(t.id)).toEqual([
      { action: 'workspace_delete', target_email: null, workspace_name: 'Team delete', admin_email: ROOT },
    ]);
    expect((await root.page(`/admin/workspaces/${t.id}`)).response.status).toBe(404);
  });
});

describe('the logs', () => {
  it('hold none of the secrets and no server error', () => {
    const logs = app.logs.join('\n');
    for (const secret of secrets)
      expect([secret.slice(0, 12), logs.includes(secret)]).toEqual([secret.slice(0, 12), false]);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain('request failed');
  });
});
