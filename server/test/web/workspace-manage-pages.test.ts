/**
 * A workspace's settings, audit trail and API keys pages (issue 41) over real HTTP, on the real app and database, with
 * the generated SDK reading back what the pages changed: the workspace's page links each section its visitor may
 * open; owners and admins change the name and the sign-in rules (the API's 422 field messages beside the field, in
 * the page's language), read the trail (each entry a sentence, dates by Intl, a page at a time) and make and revoke
 * the workspace's keys (the token shown once, a revocation asked first); auditors read the trail only; members get
 * 403 pages and outsiders 404 pages; forged posts (a member's, no CSRF token, another origin) change nothing; hostile
 * ids and pages never answer 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys, listWorkspaces, updateWorkspaceMember, createPush } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { startWeb, Visitor, type WebApp } from './support.js';
import { PASSWORD, bearer, workspaceCast, type WorkspaceCast } from './workspace-cast.js';

const emailOf = (who: string) => `${who}@manage.example.org`;

let app: WebApp;
let client: ReturnType<typeof createClient>;
let users: WorkspaceCast['users'];
let visitors: WorkspaceCast['visitors'];
let workspaceId: number;
let otherWorkspaceId: number;

beforeAll(async () => {
  app = await startWeb();
  ({ client, users, visitors, workspaceId, otherWorkspaceId } = await workspaceCast(app, {
    domain: 'manage.example.org',
    name: 'Managed team',
    otherName: 'Elsewhere',
    roles: ['admin', 'member', 'auditor'],
  }));
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

const row = async () =>
  (
    await app.db.query<{ name: string; require_two_factor: boolean; sso_domain: string | null }>(
      'select name, require_two_factor, sso_domain from workspaces where id = $1',
      [workspaceId],
    )
  )[0];
const keyCount = async () =>
  (
    await app.db.query<{ n: number }>('select count(*)::int as n from api_keys where workspace_id = $1', [workspaceId])
  )[0]!.n;
const base = () => `/workspaces/${workspaceId}`;

describe('navigation', () => {
  it("links each section the visitor may open from the workspace's page", async () => {
    const links = async (who: string) => {
      const { html } = await visitors[who]!.page(base());
      return ['/settings', '/keys', '/webhooks', '/audit'].filter((s) => html.includes(`href="${base()}${s}"`));
    };
    expect(await links('owner')).toEqual(['/settings', '/keys', '/webhooks', '/audit']);
    expect(await links('admin')).toEqual(['/settings', '/keys', '/webhooks', '/audit']);
    expect(await links('auditor')).toEqual(['/audit']);
    expect(await links('member')).toEqual([]);
  });
});

describe('settings', () => {
  it('renames the workspace through the page, which the API then reads back, and writes the trail', async () => {
    const { html, csrf } = await visitors.admin!.page(`${base()}/settings`);
    expect(html).toContain('value="Managed team"');
    const saved = await visitors.admin!.post(`${base()}/settings`, {
      _csrf: csrf,
      name: 'Managed support',
      sso_domain: '',
    });
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain('The settings are saved.');
    const listed = await listWorkspaces({ client, auth: bearer(users.owner!.token) });
    expect(listed.data!.find((w) => w.id === workspaceId)).toMatchObject({
      name: 'Managed support',
      require_two_factor: false,
      sso_domain: null,
    });
    const trail = await app.db.query<{ action: string; actor_id: string }>(
      'select action, actor_id from workspace_audit where workspace_id = $1 order by id desc limit 1',
      [workspaceId],
    );
    expect(trail).toEqual([{ action: 'settings_changed', actor_id: users.admin!.userId }]);
  });

  it("answers bad input on the page with the API's field messages beside each field, changing nothing", async () => {
    const before = await row();
    const { csrf } = await visitors.owner!.page(`${base()}/settings`);
    const cases: [Record<string, string>, string, string][] = [
      [{ name: '   ' }, 'name', 'must be 1 to 100 characters, not only spaces'],
      [{ name: 'x'.repeat(101) }, 'name', 'must be 1 to 100 characters, not only spaces'],
      [{ sso_domain: 'not a domain' }, 'sso_domain', 'must be a domain name such as example.com'],
      [{ require_two_factor: 'on' }, 'require_two_factor', 'turn on two-factor sign-in for your own account first'],
      [{ sso_domain: 'manage.example.org' }, 'sso_domain', 'this instance has no single sign-on'],
    ];
    for (const [fields, name, message] of cases) {
      const answer = await visitors.owner!.post(`${base()}/settings`, {
        _csrf: csrf,
        name: before!.name,
        sso_domain: '',
        ...fields,
      });
      expect(answer.status, name).toBe(422);
      const html = await answer.text();
      expect(html).toContain(`<p class="field-error" id="${name}-error">${message}`);
      expect(html).toMatch(
        new RegExp(`id="${name}"[^>]*aria-describedby="[^"]*${name}-error"[^>]*aria-invalid="true"`),
      );
    }
    expect(await row()).toEqual(before);
  });

  it("says the API's field messages in the page's language", async () => {
    const german = new Visitor(app.baseUrl);
    await german.signIn(emailOf('owner'), PASSWORD);
    const { csrf, html } = await german.page(`${base()}/settings?locale=de`);
    expect(html).toContain('<html lang="de"');
    const answer = await german.post(`${base()}/settings`, { _csrf: csrf, name: 'x', sso_domain: 'kein domain' });
    expect(answer.status).toBe(422);
    const text = await answer.text();
    expect(text).toContain('Geben Sie einen Domainnamen wie example.com ein.');
    expect(text).not.toContain('must be a domain name');
  });

  it('refuses the settings to members and auditors (403) and outsiders (404), in the page and its form', async () => {
    const before = await row();
    for (const who of ['member', 'auditor']) {
      const page = await visitors[who]!.fetch(`${base()}/settings`);
      expect(page.status, who).toBe(403);
      expect(await page.text()).toContain('Your role in this workspace does not allow this.');
      const { csrf } = await visitors[who]!.page(base());
      const forged = await visitors[who]!.post(`${base()}/settings`, { _csrf: csrf, name: 'Taken over' });
      expect(forged.status, who).toBe(403);
    }
    const { csrf } = await visitors.outsider!.page('/workspaces');
    expect((await visitors.outsider!.fetch(`${base()}/settings`)).status).toBe(404);
    expect((await visitors.outsider!.post(`${base()}/settings`, { _csrf: csrf, name: 'Taken over' })).status).toBe(404);
    const anonymous = await new Visitor(app.baseUrl).fetch(`${base()}/settings`);
    expect(anonymous.status).toBe(302);
    expect(await row()).toEqual(before);
  });

  it('refuses a settings form without its CSRF token or from another origin', async () => {
    const before = await row();
    const { csrf } = await visitors.owner!.page(`${base()}/settings`);
    expect((await visitors.owner!.post(`${base()}/settings`, { name: 'No token' })).status).toBe(403);
    expect(
      (
        await visitors.owner!.post(
          `${base()}/settings`,
          { _csrf: csrf, name: 'Evil' },
          { origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);
    expect(await row()).toEqual(before);
  });
});

describe('audit trail', () => {
  it('says each entry as a sentence with who did it and to whom, newest first, for owners, admins and auditors', async () => {
    await updateWorkspaceMember({
      client,
      auth: bearer(users.owner!.token),
      path: { workspace_id: workspaceId, user_id: users.member!.userId },
      body: { member: { role: 'auditor' } },
    });
    await updateWorkspaceMember({
      client,
      auth: bearer(users.owner!.token),
      path: { workspace_id: workspaceId, user_id: users.member!.userId },
      body: { member: { role: 'member' } },
    });
    for (const who of ['owner', 'admin', 'auditor']) {
      const { response, html } = await visitors[who]!.page(`${base()}/audit`);
      expect(response.status, who).toBe(200);
      const made = html.indexOf(`${emailOf('owner')} made ${emailOf('member')} an auditor.`);
      const back = html.indexOf(`${emailOf('owner')} made ${emailOf('member')} a member.`);
      expect(back).toBeGreaterThan(0);
      expect(made).toBeGreaterThan(back);
      expect(html).toContain(`${emailOf('admin')} changed the name or the sign-in rules of the workspace.`);
      expect(html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[^"]+Z">[^<]*UTC<\/time>/);
    }
    const german = new Visitor(app.baseUrl);
    await german.signIn(emailOf('auditor'), PASSWORD);
    const { html } = await german.page(`${base()}/audit?locale=de`);
    expect(html).toContain(`${emailOf('owner')} hat ${emailOf('member')} zum Mitglied gemacht.`);
    expect(html).not.toContain(' made ');
  });

  it('refuses the trail to members (403) and outsiders (404)', async () => {
    const member = await visitors.member!.fetch(`${base()}/audit`);
    expect(member.status).toBe(403);
    expect(await member.text()).toContain('Your role in this workspace does not allow this.');
    expect((await visitors.outsider!.fetch(`${base()}/audit`)).status).toBe(404);
    expect((await visitors.owner!.fetch(`/workspaces/${otherWorkspaceId}/audit`)).status).toBe(404);
  });

  it('pages by 50, and answers a page that is none with 400, never 5xx', async () => {
    await app.db.query(
      `insert into workspace_audit (workspace_id, action, actor_id, subject_id, subject_email, role, at)
       select $1, 'role_changed', $2, $3, $4, 'member', now() - make_interval(secs => g) from generate_series(1, 60) g`,
      [workspaceId, users.owner!.userId, users.member!.userId, emailOf('member')],
    );
    const first = await visitors.owner!.page(`${base()}/audit`);
    expect(first.html).toContain(`href="${base()}/audit?page=2"`);
    expect(first.html).toMatch(/Page 1 of 2/);
    const second = await visitors.owner!.page(`${base()}/audit?page=2`);
    expect(second.response.status).toBe(200);
    expect(second.html).toContain(`href="${base()}/audit?page=1"`);
    for (const page of ['0', '-1', 'abc', '201', '1e2', '%00', 'x'.repeat(5000)]) {
      const answer = await visitors.owner!.fetch(`${base()}/audit?page=${page}`);
      expect(answer.status, page).toBe(400);
    }
    const twice = await visitors.owner!.fetch(`${base()}/audit?page=1&page=2`);
    expect(twice.status).toBe(400);
  });
});

describe('API keys', () => {
  it('makes a key of the workspace (shown once), which the API lists and which acts for the workspace, then revokes it after asking', async () => {
    const { html, csrf } = await visitors.admin!.page(`${base()}/keys`);
    expect(html).toContain('This workspace has no API keys.');
    const made = await visitors.admin!.fetch(`${base()}/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
      body: new URLSearchParams([
        ['_csrf', csrf],
        ['name', 'Deploy <bot>'],
        ['scopes', 'pushes:create'],
        ['scopes', 'pushes:read'],
        ['expires_in_days', '30'],
      ]).toString(),
    });
    expect(made.status).toBe(201);
    const page = await made.text();
    const token = /id="api-key-token">(spk_[A-Za-z0-9]{36})</.exec(page)?.[1];
    expect(token).toBeDefined();
    expect(page).toContain('Deploy &lt;bot&gt;');
    const listed = await listApiKeys({
      client,
      auth: bearer(users.owner!.token),
      query: { workspace_id: String(workspaceId) },
    });
    expect(listed.data!.api_keys.map((k) => [k.name, k.scopes, k.workspace_id])).toEqual([
      ['Deploy <bot>', ['pushes:create', 'pushes:read'], workspaceId],
    ]);
    const keyId = listed.data!.api_keys[0]!.id;
    // The key acts for the workspace: its push lands there.
    const push = await createPush({ client, auth: bearer(token!), body: { push: { payload: 'from the key' } } });
    expect(push.response?.status).toBe(201);
    expect(push.data).toMatchObject({ workspace_id: workspaceId });
    // Listed again without its token.
    const again = await visitors.owner!.page(`${base()}/keys`);
    expect(again.html).toContain('Deploy &lt;bot&gt;');
    expect(again.html).not.toContain(token!);
    // Revoking asks first, on a page of its own; the key stops at once.
    const ask = await visitors.owner!.page(`${base()}/keys/${keyId}/revoke`);
    expect(ask.response.status).toBe(200);
    expect(ask.html).toContain('Revoke the key “Deploy &lt;bot&gt;”?');
    expect(await keyCount()).toBe(1);
    const revoked = await visitors.owner!.post(`${base()}/keys/${keyId}/revoke`, { _csrf: ask.csrf });
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toContain('The key “Deploy &lt;bot&gt;” is revoked.');
    expect(await keyCount()).toBe(0);
    const dead = await createPush({ client, auth: bearer(token!), body: { push: { payload: 'no more' } } });
    expect(dead.response?.status).toBe(401);
  });

  it('answers bad key input on the page, making nothing', async () => {
    const { csrf } = await visitors.owner!.page(`${base()}/keys`);
    const cases: [[string, string][], string][] = [
      [
        [
          ['name', 'k'],
          ['expires_in_days', '30'],
        ],
        'Choose at least one scope.',
      ],
      [
        [
          ['name', ''],
          ['scopes', 'pushes:read'],
          ['expires_in_days', '30'],
        ],
        'Give the key a name of 1 to 100 characters.',
      ],
      [
        [
          ['name', 'k'],
          ['scopes', 'root'],
          ['expires_in_days', '30'],
        ],
        'Choose scopes from the list.',
      ],
      [
        [
          ['name', 'k'],
          ['scopes', 'pushes:read'],
          ['expires_in_days', '9999'],
        ],
        'Choose when the key expires.',
      ],
    ];
    for (const [pairs, message] of cases) {
      const answer = await visitors.owner!.fetch(`${base()}/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
        body: new URLSearchParams([['_csrf', csrf], ...pairs]).toString(),
      });
      expect(answer.status, message).toBe(422);
      expect(await answer.text()).toContain(message);
    }
    expect(await keyCount()).toBe(0);
  });

  it('refuses the keys to members and auditors (403) and outsiders (404), forged posts included', async () => {
    await app.core.users.keys.create(users.owner!.userId, { name: 'kept', scopes: ['pushes:read'], workspaceId }, null);
    const [kept] = await app.db.query<{ id: string }>('select id from api_keys where workspace_id = $1', [workspaceId]);
    for (const who of ['member', 'auditor']) {
      expect((await visitors[who]!.fetch(`${base()}/keys`)).status, who).toBe(403);
      const { csrf } = await visitors[who]!.page(base());
      const forged = await visitors[who]!.fetch(`${base()}/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
        body: new URLSearchParams([
          ['_csrf', csrf],
          ['name', 'mine'],
          ['scopes', 'pushes:read'],
          ['expires_in_days', '7'],
        ]).toString(),
      });
      expect(forged.status, who).toBe(403);
      expect((await visitors[who]!.post(`${base()}/keys/${kept!.id}/revoke`, { _csrf: csrf })).status, who).toBe(403);
    }
    const { csrf } = await visitors.outsider!.page('/workspaces');
    expect((await visitors.outsider!.fetch(`${base()}/keys`)).status).toBe(404);
    expect((await visitors.outsider!.post(`${base()}/keys/${kept!.id}/revoke`, { _csrf: csrf })).status).toBe(404);
    // The owner, without a CSRF token: refused.
    expect((await visitors.owner!.post(`${base()}/keys/${kept!.id}/revoke`, {})).status).toBe(403);
    expect(await keyCount()).toBe(1);
  });

  it('never answers 5xx to hostile ids, and a key of another workspace is as unknown as none', async () => {
    const { csrf } = await visitors.owner!.page(`${base()}/keys`);
    await app.core.users.keys.create(
      users.outsider!.userId,
      { name: 'theirs', scopes: ['pushes:read'], workspaceId: otherWorkspaceId },
      null,
    );
    const [theirs] = await app.db.query<{ id: string }>('select id from api_keys where workspace_id = $1', [
      otherWorkspaceId,
    ]);
    for (const key of [theirs!.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000', "'%3B--"]) {
      expect((await visitors.owner!.fetch(`${base()}/keys/${key}/revoke`)).status, key).toBe(404);
      expect((await visitors.owner!.post(`${base()}/keys/${key}/revoke`, { _csrf: csrf })).status, key).toBe(404);
    }
    for (const id of ['0', 'abc', '99999999999999999999', `${otherWorkspaceId}`]) {
      for (const section of ['settings', 'keys', 'audit']) {
        const answer = await visitors.owner!.fetch(`/workspaces/${id}/${section}`);
        expect(answer.status, `${id}/${section}`).toBe(404);
      }
    }
    const other = await app.db.query<{ n: number }>('select count(*)::int as n from api_keys where workspace_id = $1', [
      otherWorkspaceId,
    ]);
    expect(other[0]!.n).toBe(1);
  });
});
