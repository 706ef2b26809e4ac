/**
 * The workspace pages (issue 41) against the real server, its PostgreSQL and a real SMTP server in this process. In
 * real headless Chromium, with the keyboard alone: an owner makes a workspace and an invitation link (copied with
 * the keyboard); a second person opens it signed out, signs in, comes back to the join page, sees the workspace and
 * the role and accepts it; the owner sees them in the member list and changes their role; they leave. An invitation
 * by email is accepted from the mail's link. axe-core (WCAG 2.1 A and AA) finds nothing on any of these pages. Over
 * HTTP: a member sees no management controls and a forged post of each is refused (403, nothing changed); forms
 * without their CSRF token are refused; an outsider gets the 404 page; hostile ids and tokens never answer 5xx; the
 * create form's "Where" chooser puts a push in a workspace, and refuses a workspace the person is not in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { axeViolations, type AxeViolation } from './chromium.js';
import { launchChromium, startWeb, Visitor, type WebApp } from './support.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { makeSettings } from '../support/db.js';

const PASSWORD = 'a long enough password';

let chromium: Awaited<ReturnType<typeof launchChromium>>;
let app: WebApp;
let mailbox: Mailbox;
const ids: Record<string, string> = {};

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startWeb({ mail: { ...makeSettings().mail, smtpUrl: mailbox.url, attempts: 3, retrySeconds: 1 } });
  for (const who of ['owner', 'joiner', 'invitee', 'stranger', 'member', 'boss'])
    ids[who] = (await app.core.users.createUser(`${who}@pages.example.org`, PASSWORD)).userId;
  chromium = await launchChromium();
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
  await mailbox?.stop();
});

const emailOf = (who: string) => `${who}@pages.example.org`;

async function signIn(page: Page, who: string): Promise<void> {
  await page.getByLabel('Email').fill(emailOf(who));
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByLabel('Password').press('Enter');
}

async function audit(findings: Record<string, AxeViolation[]>, page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations.length > 0) findings[name] = violations;
}

async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`${selector} is not reachable with the Tab key`);
}

const members = (workspaceId: number) =>
  app.db.query<{ user_id: string; role: string }>(
    'select user_id, role from workspace_members where workspace_id = $1 order by role, user_id',
    [workspaceId],
  );

const trail = async (workspaceId: number) =>
  (
    await app.db.query<{ action: string }>('select action from workspace_audit where workspace_id = $1 order by id', [
      workspaceId,
    ])
  ).map((r) => r.action);

describe('in Chromium, with the keyboard', () => {
  let owner: BrowserContext;
  let joiner: BrowserContext;

  beforeAll(async () => {
    owner = await chromium.browser.newContext();
    await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    joiner = await chromium.browser.newContext();
  });

  afterAll(async () => {
    await owner?.close();
    await joiner?.close();
  });

  it('invites by link, joins through the join page after signing in, changes the role, and leaves', async () => {
    const findings: Record<string, AxeViolation[]> = {};
    const page = await owner.newPage();
    await page.goto(`${app.baseUrl}/workspaces`);
    await signIn(page, 'owner');
    await page.waitForURL(`${app.baseUrl}/workspaces`);
    await page.getByText('You are in no workspace yet.').waitFor();
    await audit(findings, page, 'my workspaces, none');
    await tabTo(page, '#workspace-name');
    await page.keyboard.type('Acme support');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Acme support', level: 1 }).waitFor();
    const workspaceId = Number(new URL(page.url()).pathname.split('/').pop());
    expect(workspaceId).toBeGreaterThan(0);
    await audit(findings, page, "an owner's workspace page");

    // The invitation by link, with the keyboard: the role and the button, then the link copied.
    await tabTo(page, '#invite-role');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Invite');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your invitation link' }).waitFor();
    await audit(findings, page, 'the invitation link, shown once');
    const link = await page.getByLabel('Invitation link', { exact: true }).inputValue();
    expect(link).toMatch(new RegExp(`^${app.baseUrl}/workspaces/join#[A-Za-z0-9_-]{43}$`));
    await tabTo(page, 'button[data-copy-target="invitation-link"]');
    await page.keyboard.press('Enter');
    await page.locator('#status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    // Listed as pending, never with its link again.
    await page.goto(`${app.baseUrl}/workspaces/${workspaceId}`);
    expect(await page.getByRole('cell', { name: 'anyone with the link', exact: true }).count()).toBe(1);
    expect(await page.content()).not.toContain(new URL(link).hash.slice(1));

    // The second person opens the link signed out: the token leaves the address, waits in the tab, and comes back.
    const theirs = await joiner.newPage();
    const requested: string[] = [];
    theirs.on('request', (r) => void requested.push(r.url() + ' ' + (r.postData() ?? '')));
    await theirs.goto(link);
    await theirs.getByText('Sign in (or make an account) to see and accept this invitation.').waitFor();
    expect(theirs.url()).toBe(`${app.baseUrl}/workspaces/join`);
    await audit(findings, theirs, 'the join page, signed out');
    await tabTo(theirs, '#join-sign-in');
    await theirs.keyboard.press('Enter');
    await theirs.getByLabel('Password').waitFor();
    await signIn(theirs, 'joiner');
    await theirs.getByRole('button', { name: 'Join “Acme support”' }).waitFor();
    expect(await theirs.locator('main').textContent()).toContain('You are invited to join “Acme support” as a member.');
    await audit(findings, theirs, 'the invitation offered');
    // The token went in a form's body only, never in an address.
    const token = new URL(link).hash.slice(1);
    expect(requested.filter((r) => r.split(' ')[0]!.includes(token))).toEqual([]);
    expect(app.logs.filter((line) => line.includes(token))).toEqual([]);
    await tabTo(theirs, '#join-accept');
    await theirs.keyboard.press('Enter');
    await theirs.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);
    await theirs.getByText('Your role here: member.').waitFor();
    await audit(findings, theirs, "a member's workspace page");
    expect(await theirs.locator('#invite-role').count()).toBe(0);
    expect(await theirs.locator('form[action$="/role"]').count()).toBe(0);

    // The owner sees them and makes them an admin.
    await page.goto(`${app.baseUrl}/workspaces/${workspaceId}`);
    await page.getByRole('cell', { name: emailOf('joiner'), exact: true }).waitFor();
    await page.getByLabel(`Role of ${emailOf('joiner')}`).selectOption('admin');
    await page.getByLabel(`Role of ${emailOf('joiner')}`).press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);
    expect(await members(workspaceId)).toEqual(expect.arrayContaining([{ user_id: ids.joiner, role: 'admin' }]));
    await theirs.reload();
    await theirs.getByText('Your role here: admin.').waitFor();

    // The owner may not leave (the API's refusal, said on the page); the admin leaves.
    await page.getByRole('button', { name: 'Leave' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'The owner cannot leave: hand the workspace over to another member first.' })
      .waitFor();
    await audit(findings, page, "the owner's leaving refused");
    await theirs.getByRole('button', { name: 'Leave' }).click();
    await theirs.waitForURL(`${app.baseUrl}/workspaces`);
    await theirs.getByText('You are in no workspace yet.').waitFor();
    expect(await members(workspaceId)).toEqual([{ user_id: ids.owner, role: 'owner' }]);
    expect(await trail(workspaceId)).toEqual([
      'invitation_created',
      'invitation_accepted',
      'role_changed',
      'member_left',
    ]);
    expect(findings).toEqual({});
  }, 300_000);

  it('accepts an invitation by email from the link in the mail; another person gets a page that says why not', async () => {
    const findings: Record<string, AxeViolation[]> = {};
    const page = await owner.newPage();
    await page.goto(`${app.baseUrl}/workspaces`);
    await page.getByLabel('Name').fill('Mailed team');
    await page.getByRole('button', { name: 'Make the workspace' }).click();
    await page.getByRole('heading', { name: 'Mailed team', level: 1 }).waitFor();
    const workspaceId = Number(new URL(page.url()).pathname.split('/').pop());
    const before = mailbox.messages.length;
    await page.getByLabel('Email address (optional)').fill(emailOf('invitee'));
    await page.getByLabel('Role of the new member').selectOption('auditor');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByText(`The invitation was mailed to ${emailOf('invitee')}.`).waitFor();
    const mail = (await mailbox.waitFor(before + 1, 30_000)).at(-1)!;
    expect(mail.parsed.to).toMatchObject({ text: emailOf('invitee') });
    const link = /https?:\/\/\S+\/workspaces\/join#[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')?.[0];
    expect(link).toBeDefined();

    // Someone else holding the link: refused, and the invitation stays.
    const strangerContext = await chromium.browser.newContext();
    const stranger = await strangerContext.newPage();
    await stranger.goto(`${app.baseUrl}/users/sign_in`);
    await signIn(stranger, 'stranger');
    await stranger.waitForURL(`${app.baseUrl}/`);
    await stranger.goto(link!);
    await stranger
      .getByRole('alert')
      .filter({ hasText: 'This invitation was sent to another email address.' })
      .waitFor();
    await audit(findings, stranger, 'an invitation of another person');
    await strangerContext.close();

    const inviteeContext = await chromium.browser.newContext();
    const invitee = await inviteeContext.newPage();
    await invitee.goto(link!);
    await invitee.getByRole('link', { name: 'Sign in' }).first().waitFor();
    await invitee.locator('#join-sign-in').click();
    await signIn(invitee, 'invitee');
    await invitee.getByRole('button', { name: 'Join “Mailed team”' }).click();
    await invitee.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);
    await invitee.getByText('Your role here: auditor.').waitFor();
    // Used is used: the same link again says so.
    await invitee.goto(link!);
    await invitee.getByText('You are already in “Mailed team” (your role: auditor).').waitFor();
    await inviteeContext.close();
    expect(await members(workspaceId)).toEqual(expect.arrayContaining([{ user_id: ids.invitee, role: 'auditor' }]));
    expect(findings).toEqual({});
  }, 300_000);
});

describe('over HTTP', () => {
  let workspaceId: number;
  let member: Visitor;
  let boss: Visitor;
  let outsider: Visitor;

  const state = async () => ({
    members: await members(workspaceId),
    invitations: await app.db.query(
      'select id, revoked_at, accepted_at from workspace_invitations where workspace_id = $1 order by id',
      [workspaceId],
    ),
    trail: await trail(workspaceId),
  });

  beforeAll(async () => {
    boss = new Visitor(app.baseUrl);
    expect((await boss.signIn(emailOf('boss'), PASSWORD)).status).toBe(303);
    const { csrf } = await boss.page('/workspaces');
    const made = await boss.post('/workspaces', { _csrf: csrf, name: 'Forgery target' });
    expect(made.status).toBe(303);
    workspaceId = Number(made.headers.get('location')!.split('/').pop());
    await app.db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
      [workspaceId, ids.member],
    );
    // A pending invitation for the member to try to revoke.
    const page = await boss.page(`/workspaces/${workspaceId}`);
    expect(
      (
        await boss.post(`/workspaces/${workspaceId}/invitations`, {
          _csrf: page.csrf,
          role: 'member',
          expires_in_days: '7',
        })
      ).status,
    ).toBe(201);
    member = new Visitor(app.baseUrl);
    expect((await member.signIn(emailOf('member'), PASSWORD)).status).toBe(303);
    outsider = new Visitor(app.baseUrl);
    expect((await outsider.signIn(emailOf('stranger'), PASSWORD)).status).toBe(303);
  }, 120_000);

  it('shows a member no management controls and refuses each forged post with 403, changing nothing', async () => {
    const { html, csrf, response } = await member.page(`/workspaces/${workspaceId}`);
    expect(response.status).toBe(200);
    expect(html).toContain(emailOf('boss'));
    for (const control of [
      '/role"',
      '/remove"',
      '/ownership"',
      `/workspaces/${workspaceId}/invitations"`,
      '/revoke"',
      '/delete"',
    ])
      expect(html).not.toContain(control);
    const [invitation] = await app.db.query<{ id: string }>(
      'select id from workspace_invitations where workspace_id = $1',
      [workspaceId],
    );
    const before = await state();
    const forged: [string, Record<string, string>][] = [
      [`/workspaces/${workspaceId}/members/${ids.boss}/role`, { role: 'admin' }],
      [`/workspaces/${workspaceId}/members/${ids.boss}/remove`, {}],
      [`/workspaces/${workspaceId}/members/${ids.boss}/ownership`, {}],
      [`/workspaces/${workspaceId}/invitations`, { role: 'admin', expires_in_days: '7' }],
      [`/workspaces/${workspaceId}/invitations/${invitation!.id}/revoke`, {}],
      [`/workspaces/${workspaceId}/delete`, { confirm: 'Forgery target' }],
    ];
    for (const [path, fields] of forged) {
      const answer = await member.post(path, { _csrf: csrf, ...fields });
      expect(answer.status, path).toBe(403);
      expect(await answer.text()).toContain('Your role in this workspace does not allow this.');
    }
    expect(await state()).toEqual(before);
  });

  it('lets the owner delete the workspace with its name typed again; another name changes nothing', async () => {
    const { csrf } = await boss.page('/workspaces');
    const made = await boss.post('/workspaces', { _csrf: csrf, name: 'Soon gone' });
    const id = Number(made.headers.get('location')!.split('/').pop());
    const page = await boss.page(`/workspaces/${id}`);
    expect(page.html).toContain(`action="/workspaces/${id}/delete"`);
    expect(page.html).toContain('Type the workspace&#39;s name to confirm');
    for (const wrong of ['soon gone', 'Soon gone ', ''])
      expect((await boss.post(`/workspaces/${id}/delete`, { _csrf: page.csrf, confirm: wrong })).status).toBe(422);
    const refused = await boss.post(`/workspaces/${id}/delete`, { _csrf: page.csrf, confirm: 'Soon' });
    expect(await refused.text()).toContain('Nothing was deleted: type the workspace&#39;s name exactly as it is.');
    expect(await app.db.query('select 1 from workspaces where id = $1', [id])).toHaveLength(1);
    const done = await boss.post(`/workspaces/${id}/delete`, { _csrf: page.csrf, confirm: 'Soon gone' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/workspaces');
    expect(await app.db.query('select 1 from workspaces where id = $1', [id])).toHaveLength(0);
    expect((await boss.page(`/workspaces/${id}`)).response.status).toBe(404);
  });

  it('refuses a form without its CSRF token or from another origin, changing nothing', async () => {
    const before = await state();
    const { csrf } = await boss.page(`/workspaces/${workspaceId}`);
    const path = `/workspaces/${workspaceId}/members/${ids.member}/role`;
    expect((await boss.post(path, { role: 'admin' })).status).toBe(403);
    expect((await boss.post(path, { _csrf: 'forged', role: 'admin' })).status).toBe(403);
    expect((await boss.post(path, { _csrf: csrf, role: 'admin' }, { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect((await boss.post('/workspaces', { name: 'no token' })).status).toBe(403);
    expect(await state()).toEqual(before);
  });

  it('gives an outsider the 404 page for the workspace and its forms; the signed-out are sent to sign in', async () => {
    const before = await state();
    const { csrf } = await outsider.page('/workspaces');
    const page = await outsider.fetch(`/workspaces/${workspaceId}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('You are not a member of a workspace with this address.');
    expect((await outsider.post(`/workspaces/${workspaceId}/leave`, { _csrf: csrf })).status).toBe(404);
    expect(
      (await outsider.post(`/workspaces/${workspaceId}/members/${ids.member}/remove`, { _csrf: csrf })).status,
    ).toBe(404);
    const anonymous = new Visitor(app.baseUrl);
    const redirected = await anonymous.fetch(`/workspaces/${workspaceId}`);
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get('location')).toBe(
      `/users/sign_in?next=${encodeURIComponent(`/workspaces/${workspaceId}`)}`,
    );
    expect(await state()).toEqual(before);
  });

  it('never answers 5xx to hostile ids and tokens', async () => {
    const { csrf } = await boss.page('/workspaces');
    const gets = ['0', '-1', 'abc', '1e3', '99999999999999999999', '%00', '1%2F2', 'join%2Fx', `${workspaceId}.0`];
    for (const id of gets) {
      const answer = await boss.fetch(`/workspaces/${id}`);
      expect(answer.status, id).toBeGreaterThanOrEqual(400);
      expect(answer.status, id).toBeLessThan(500);
    }
    const posts: [string, Record<string, string>][] = [
      [`/workspaces/${workspaceId}/members/not-a-uuid/role`, { role: 'admin' }],
      [`/workspaces/${workspaceId}/members/${ids.member}/role`, { role: 'owner' }],
      [`/workspaces/${workspaceId}/members/${ids.member}/role`, { role: 'x'.repeat(5000) }],
      [`/workspaces/${workspaceId}/members/00000000-0000-4000-8000-000000000000/remove`, {}],
      [`/workspaces/${workspaceId}/invitations/'%3B--/revoke`, {}],
      [`/workspaces/${workspaceId}/invitations`, { role: 'member', expires_in_days: '365' }],
      [`/workspaces/${workspaceId}/invitations`, { role: 'member', expires_in_days: '7', email: 'not an address' }],
      [`/workspaces/${workspaceId}/invitations`, { role: 'member', expires_in_days: '7', email: 'a@'.repeat(400) }],
      ['/workspaces', { name: '' }],
      ['/workspaces', { name: 'x'.repeat(101) }],
      ['/workspaces/join', { token: '' }],
      ['/workspaces/join', { token: 'x'.repeat(43) }],
      ['/workspaces/join', { token: 'ü'.repeat(43) }],
      ['/workspaces/join', { token: 'x'.repeat(100_000) }],
      ['/workspaces/join/accept', { token: '../../etc/passwd' }],
      ['/workspaces/join/accept', { token: 'A'.repeat(43) }],
    ];
    for (const [path, fields] of posts) {
      const answer = await boss.post(path, { _csrf: csrf, ...fields });
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.status, path).toBeLessThan(500);
    }
    const unknown = await boss.post('/workspaces/join/accept', { _csrf: csrf, token: 'A'.repeat(43) });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('This invitation is not valid any more');
  });

  it('puts a push made with the "Where" chooser in the workspace, and refuses one the person is not in', async () => {
    const { html, csrf } = await member.page('/');
    expect(html).toContain('Where the push belongs');
    expect(html).toContain(`<option value="${workspaceId}">Forgery target</option>`);
    const form = (fields: Record<string, string>) => {
      const body = new FormData();
      for (const [k, v] of Object.entries({ _csrf: csrf, kind: 'text', payload: 'in the workspace', ...fields }))
        body.set(k, v);
      return body;
    };
    const made = await member.fetch('/', {
      method: 'POST',
      headers: { origin: app.baseUrl },
      body: form({ workspace_id: String(workspaceId) }),
    });
    expect(made.status).toBe(201);
    const rows = await app.db.query<{ workspace_id: number | null }>(
      'select workspace_id from pushes where user_id = $1',
      [ids.member],
    );
    expect(rows.map((r) => Number(r.workspace_id))).toEqual([workspaceId]);
    const other = await app.db.query<{ id: number }>("select id from workspaces where name = 'Acme support' limit 1");
    const refused = await member.fetch('/', {
      method: 'POST',
      headers: { origin: app.baseUrl },
      body: form({ workspace_id: String(other[0]?.id ?? 999_999) }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('Your role in this workspace does not allow this.');
    const personal = await member.fetch('/', {
      method: 'POST',
      headers: { origin: app.baseUrl },
      body: form({ workspace_id: '' }),
    });
    expect(personal.status).toBe(201);
    const after = await app.db.query<{ n: number }>(
      'select count(*)::int as n from pushes where user_id = $1 and workspace_id is null',
      [ids.member],
    );
    expect(after[0]!.n).toBe(1);
  });
});
