/**
 * The admin console (issue 41) through real HTTP on the real app and database: who gets in (an address of
 * PWPUSH_ADMIN_EMAILS, an account flagged by the CLI) and who does not (no session: sent to sign in; signed in but not
 * an administrator: 403, pages and actions alike); every action (lock, unlock, reset two-factor, delete) with its
 * refusals (no CSRF token, another origin, a session without the second factor, a stale session, the admin's own
 * account, a delete not confirmed) and its audit entry; a locked user's token, key, session and sign-in refused;
 * security events written where they happen; hostile search and paging input answered without a 5xx; no secret's
 * payload, token or setting on any admin page, and none in the logs.
 */
import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'correct horse battery staple';
const ROOT = 'root@example.org';
const PAYLOAD = 'PAYLOAD-SENTINEL-4f1c9e';
const NAME = 'NAME-SENTINEL-77ab';
const PAGES = [
  '/admin',
  '/admin/users',
  '/admin/storage',
  '/admin/queues',
  '/admin/settings',
  '/admin/security',
  '/admin/audit',
];

let app: WebApp;
let root: Visitor;

beforeAll(async () => {
  app = await startWeb({ adminEmails: [ROOT] });
  root = new Visitor(app.baseUrl);
  expect((await root.signUp(ROOT, PASSWORD)).status).toBe(303);
});
afterAll(async () => {
  await app?.stop();
});

const idOf = (email: string) => app.core.users.userIdOf(email);

async function member(email: string): Promise<{ visitor: Visitor; token: string; id: string }> {
  const visitor = new Visitor(app.baseUrl);
  expect((await visitor.signUp(email, PASSWORD)).status).toBe(303);
  const id = await idOf(email);
  const token = await app.core.users.rotateToken(email);
  return { visitor, token, id };
}

/** Posts an admin action from `v`'s session with the CSRF token of the user's page. */
async function act(v: Visitor, id: string, action: string, extra: Record<string, string> = {}): Promise<Response> {
  const { csrf } = await v.page(`/admin/users/${id}`);
  return v.post(`/admin/users/${id}/${action}`, { _csrf: csrf, ...extra });
}

const api = (token: string, path = '/api/v2/pushes/active') =>
  fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe('who may open the console', () => {
  it('sends a visitor without a session to sign in, for every page and every action', async () => {
    const anonymous = new Visitor(app.baseUrl);
    for (const path of [...PAGES, `/admin/users/${await idOf(ROOT)}`]) {
      const answer = await anonymous.fetch(path);
      expect([path, answer.status]).toEqual([path, 302]);
      expect(answer.headers.get('location')).toBe(`/users/sign_in?next=${encodeURIComponent(path)}`);
    }
    const posted = await anonymous.post(`/admin/users/${await idOf(ROOT)}/lock`, { _csrf: 'x' });
    expect(posted.status).toBe(302);
  });

  it('refuses a signed-in user who is not an administrator with 403, and changes nothing', async () => {
    const { visitor } = await member('plain@example.org');
    const target = await member('target-of-plain@example.org');
    for (const path of [...PAGES, `/admin/users/${target.id}`]) {
      const answer = await visitor.fetch(path);
      expect([path, answer.status]).toEqual([path, 403]);
      expect(await answer.text()).toContain('Administrators only');
    }
    const { csrf } = await visitor.page('/users/token');
    expect((await visitor.post(`/admin/users/${target.id}/lock`, { _csrf: csrf })).status).toBe(403);
    expect((await api(target.token)).status).toBe(200);
    // No admin link in its navigation; the administrator's has one.
    expect((await visitor.page('/')).html).not.toContain('href="/admin"');
    expect((await root.page('/')).html).toContain('href="/admin"');
  });

  it('lets in an account flagged by the CLI, until the flag is revoked', async () => {
    const { visitor } = await member('flagged@example.org');
    expect((await visitor.fetch('/admin/users')).status).toBe(403);
    await app.core.admin!.setAdminFlag('flagged@example.org', true);
    expect((await visitor.fetch('/admin/users')).status).toBe(200);
    await app.core.admin!.setAdminFlag('flagged@example.org', false);
    expect((await visitor.fetch('/admin/users')).status).toBe(403);
  });
});

describe('users: search and paging', () => {
  it('finds users by part of their email, 50 a page, and pages on', async () => {
    for (let i = 0; i < 55; i++) await app.core.users.createUser(`paged-${String(i).padStart(2, '0')}@crowd.example`);
    const first = await root.page('/admin/users?q=crowd.example');
    expect(first.response.status).toBe(200);
    expect(first.html).toContain('paged-00@crowd.example');
    expect(first.html).not.toContain('paged-50@crowd.example');
    expect(first.html).toContain('Page 1 of 2 (55)');
    const second = await root.page('/admin/users?q=crowd.example&page=2');
    expect(second.html).toContain('paged-54@crowd.example');
    expect(second.html).not.toContain('paged-00@crowd.example');
    // `_` and `%` are literal characters of the search, not patterns.
    expect((await root.page('/admin/users?q=paged_0')).html).toContain('No user matches.');
    expect((await root.page('/admin/users?q=%25')).html).toContain('No user matches.');
  });

  it('answers hostile searches and pages with a page or a 400, never a 5xx', async () => {
    const odd = [
      'a'.repeat(321),
      'x'.repeat(6000),
      '%00',
      '%00%00root',
      '%FF%FE',
      '%E2%80%AE%F0%9F%98%80',
      '%5C%5C%25%5F',
      "'%20or%201=1--",
      '<script>alert(1)</script>',
    ];
    for (const q of odd) {
      const answer = await root.fetch(`/admin/users?q=${q}`);
      expect([q.slice(0, 20), answer.status < 500]).toEqual([q.slice(0, 20), true]);
      const body = await answer.text();
      expect(body).not.toContain('<script>alert(1)</script>');
    }
    expect((await root.fetch(`/admin/users?q=${'a'.repeat(321)}`)).status).toBe(400);
    expect((await root.fetch('/admin/users?q=a&q=b')).status).toBe(400);
    // The query parser is Node's simple one: `q[x]` is a parameter of its own, not a nested `q`.
    expect((await root.fetch('/admin/users?q[x]=1')).status).toBe(200);
    for (const page of ['0', '-1', 'abc', '10001', '1e3', '99999999999999999999'])
      expect([page, (await root.fetch(`/admin/users?page=${page}`)).status]).toEqual([page, 400]);
    for (const path of ['/admin/users/not-a-uuid', '/admin/users/00000000-0000-0000-0000-000000000000'])
      expect((await root.fetch(path)).status).toBe(404);
    expect((await root.fetch('/admin/users/%ZZ')).status).toBe(400);
    expect((await root.fetch('/admin/security?page=zz')).status).toBe(400);
  });
});

describe('lock and unlock', () => {
  it('locks a user: sign-in, token, API key and session refused; unlock gives them back; both audited', async () => {
    const bob = await member('bob@example.org');
    const { token: key } = await app.core.users.keys.create(
      bob.id,
      { name: 'ci', scopes: ['pushes:read'], expiresAt: null },
      null,
    );
    expect((await api(bob.token)).status).toBe(200);
    expect((await api(key)).status).toBe(200);
    expect((await bob.visitor.fetch('/pushes/active')).status).toBe(200);

    // Refused without the CSRF token, and from another origin: nothing locked.
    expect((await root.post(`/admin/users/${bob.id}/lock`, {})).status).toBe(403);
    const { csrf } = await root.page(`/admin/users/${bob.id}`);
    const cross = await root.post(`/admin/users/${bob.id}/lock`, { _csrf: csrf }, { origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    expect((await api(bob.token)).status).toBe(200);

    const locked = await act(root, bob.id, 'lock');
    expect([locked.status, locked.headers.get('location')]).toEqual([303, `/admin/users/${bob.id}?done=lock`]);
    expect((await root.page(`/admin/users/${bob.id}?done=lock`)).html).toContain('The account is locked');
    expect((await api(bob.token)).status).toBe(401);
    expect((await api(key)).status).toBe(401);
    // The legacy pair too.
    const pair = await fetch(`${app.baseUrl}/api/v2/pushes/active`, {
      headers: { 'x-user-email': 'bob@example.org', 'x-user-token': bob.token },
    });
    expect(pair.status).toBe(401);
    expect((await bob.visitor.fetch('/pushes/active')).status).toBe(302);
    const again = new Visitor(app.baseUrl);
    const signIn = await again.signIn('bob@example.org', PASSWORD);
    expect(signIn.status).toBe(403);
    expect(await signIn.text()).toContain('This account is locked');

    const security = await root.page('/admin/security');
    expect(security.html).toContain('account_locked');
    expect(security.html).toContain('sign_in_locked_account');
    expect(security.html).toMatch(/<li>bob@example\.org, locked/);

    expect((await act(root, bob.id, 'unlock')).status).toBe(303);
    expect((await api(bob.token)).status).toBe(200);
    expect((await api(key)).status).toBe(200);
    expect((await again.signIn('bob@example.org', PASSWORD)).status).toBe(303);

    const audit = await app.db.query<{ admin_email: string; action: string; target_email: string; ip: string }>(
      "select admin_email, action, target_email, ip from admin_audit where target_email = 'bob@example.org' order by id",
    );
    expect(audit.map((a) => [a.admin_email, a.action, a.target_email])).toEqual([
      [ROOT, 'lock', 'bob@example.org'],
      [ROOT, 'unlock', 'bob@example.org'],
    ]);
    expect(audit[0]!.ip).toMatch(/127\.0\.0\.1/);
    const page = await root.page('/admin/audit');
    expect(page.html).toMatch(/root@example\.org<\/td><td><code>lock<\/code><\/td><td>bob@example\.org/);
  });

  it('refuses an administrator acting on their own account', async () => {
    const self = await idOf(ROOT);
    expect((await root.page(`/admin/users/${self}`)).html).toContain('This is your own account');
    const { csrf } = await root.page(`/admin/users/${self}`);
    for (const action of ['lock', 'delete', 'reset_two_factor'])
      expect((await root.post(`/admin/users/${self}/${action}`, { _csrf: csrf, confirm: ROOT })).status).toBe(400);
    expect((await root.fetch('/admin/users')).status).toBe(200);
  });

  it('answers an unknown action or user with 404, and records nothing', async () => {
    const before = await app.db.query('select id from admin_audit');
    const carol = await member('carol-404@example.org');
    const { csrf } = await root.page(`/admin/users/${carol.id}`);
    expect((await root.post(`/admin/users/${carol.id}/promote`, { _csrf: csrf })).status).toBe(404);
    expect((await root.post('/admin/users/00000000-0000-4000-8000-000000000000/lock', { _csrf: csrf })).status).toBe(
      404,
    );
    expect((await app.db.query('select id from admin_audit')).length).toBe(before.length);
  });
});

describe('reset two-factor and delete', () => {
  it('resets a user’s second factor and ends their sessions', async () => {
    const dora = await member('dora@example.org');
    const enrolment = await app.core.web!.twoFactor.begin(dora.id, 'dora@example.org');
    await app.core.web!.twoFactor.confirm(dora.id, await generate({ secret: enrolment.secret }), '127.0.0.1');
    expect((await root.page(`/admin/users/${dora.id}`)).html).toContain('Reset two-factor sign-in');
    expect((await act(root, dora.id, 'reset_two_factor')).status).toBe(303);
    expect((await app.core.web!.twoFactor.status(dora.id)).enabled).toBe(false);
    expect((await dora.visitor.fetch('/pushes/active')).status).toBe(302);
  });

  it('deletes a user only when the email is typed, with every push, and audits it', async () => {
    const erin = await member('erin@example.org');
    const made = await fetch(`${app.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${erin.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: PAYLOAD, name: NAME } }),
    });
    expect(made.status).toBe(201);
    const unconfirmed = await act(root, erin.id, 'delete', { confirm: 'someone@else.example' });
    expect(unconfirmed.status).toBe(422);
    expect(await unconfirmed.text()).toContain('Nothing was deleted');
    expect((await api(erin.token)).status).toBe(200);

    const deleted = await act(root, erin.id, 'delete', { confirm: ' ERIN@example.org ' });
    expect([deleted.status, deleted.headers.get('location')]).toEqual([303, '/admin/users?done=delete']);
    expect((await app.db.query("select id from users where email = 'erin@example.org'")).length).toBe(0);
    expect((await app.db.query('select id from pushes where user_id = $1', [erin.id])).length).toBe(0);
    expect((await api(erin.token)).status).toBe(401);
    expect(
      (await app.db.query("select action from admin_audit where target_email = 'erin@example.org'")).map(
        (r) => (r as { action: string }).action,
      ),
    ).toEqual(['delete']);
  });
});

describe('the session an action needs', () => {
  it('refuses an action from a session that did not use the account’s second factor', async () => {
    const admin2 = await member('admin-totp@example.org');
    await app.core.admin!.setAdminFlag('admin-totp@example.org', true);
    const target = await member('target-totp@example.org');
    // The factor turned on after this session began: the session signed in with a password alone.
    const enrolment = await app.core.web!.twoFactor.begin(admin2.id, 'admin-totp@example.org');
    await app.core.web!.twoFactor.confirm(admin2.id, await generate({ secret: enrolment.secret }), '127.0.0.1');
    expect((await admin2.visitor.fetch('/admin/users')).status).toBe(200);
    const refused = await act(admin2.visitor, target.id, 'lock');
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('this session did not use it');
    expect((await api(target.token)).status).toBe(200);
  });

  it('refuses an action from a session that began more than an hour ago', async () => {
    const target = await member('target-stale@example.org');
    const key = createHmac('sha256', app.settings.signingSecret).update('secret-push web session v1').digest();
    const rootId = await idOf(ROOT);
    const [row] = await app.db.query<{ session_version: number }>('select session_version from users where id = $1', [
      rootId,
    ]);
    const stale = new Visitor(app.baseUrl);
    const iat = Math.floor(Date.now() / 1000) - 2 * 3600;
    stale.cookies.set(
      'sp_session',
      jwt.sign({ sv: row!.session_version, f: 'password', iat }, key, {
        algorithm: 'HS256',
        subject: rootId,
        audience: 'secret-push-web',
        expiresIn: 24 * 3600,
      }),
    );
    expect((await stale.fetch('/admin/users')).status).toBe(200);
    const refused = await act(stale, target.id, 'lock');
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('more than an hour ago');
    expect((await api(target.token)).status).toBe(200);
  });
});

describe('what the console shows', () => {
  it('writes failed sign-ins and lockouts as security events, a lockout once a minute', async () => {
    await member('frank@example.org');
    const guesser = new Visitor(app.baseUrl);
    for (let i = 0; i < 8; i++) await guesser.signIn('frank@example.org', `wrong password ${i}`);
    const rows = await app.db.query<{ kind: string; n: string }>(
      "select kind, count(*) as n from security_events where email = 'frank@example.org' group by kind order by kind",
    );
    expect(rows.map((r) => [r.kind, Number(r.n)])).toEqual([
      ['sign_in_failed', 5],
      ['sign_in_throttled', 1],
    ]);
    const page = await root.page('/admin/security');
    expect(page.html).toContain('sign_in_throttled');
    expect(page.html).toContain('frank@example.org');
  });

  it('shows storage, queues and settings, with no secret, no payload and no push token on any page', async () => {
    const gina = await member('gina@example.org');
    const made = await fetch(`${app.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gina.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: PAYLOAD, name: NAME, note: NAME } }),
    });
    const { url_token: urlToken } = (await made.json()) as { url_token: string };
    const storage = await root.page('/admin/storage');
    expect(storage.html).toContain('gina@example.org');
    expect(storage.html).toMatch(/Active pushes<\/dt><dd>\d+/);
    expect((await root.page('/admin/queues')).html).toContain('Webhook deliveries');
    const settings = await root.page('/admin/settings');
    expect(settings.html).toContain('<code>signingSecret</code></td><td><em>set</em>');
    expect(settings.html).toMatch(/<code>masterKeys<\/code><\/td><td><em>set \(key ids: /);
    const secrets = [
      PAYLOAD,
      NAME,
      urlToken,
      gina.token,
      app.settings.signingSecret.toString('base64'),
      app.settings.signingSecret.toString('hex'),
      ...app.settings.masterKeys.flatMap((k) => [k.key.toString('base64'), k.key.toString('hex')]),
    ];
    for (const path of [...PAGES, `/admin/users/${gina.id}`, '/admin/users?q=gina']) {
      const { response, html } = await root.page(path);
      expect([path, response.status]).toEqual([path, 200]);
      for (const secret of secrets) expect([path, html.includes(secret)]).toEqual([path, false]);
    }
  });

  it('wrote no password, token, payload or CSRF token to the logs', async () => {
    const logs = app.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [PASSWORD, PAYLOAD, NAME, ...root.cookies.values()]) expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(/"status":5\d\d/);
  });
});
