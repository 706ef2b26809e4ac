/**
 * A workspace's sign-in rules over HTTP with the generated SDK (issue 41, `updateWorkspace`): its owner and admins
 * rename it, require two-factor sign-in of its members, and tie it to their email domain; other members get 403,
 * outsiders 404, a workspace's own key 403, and a refused change changes nothing. With `require_two_factor` on, a
 * member whose account has no two-factor sign-in is refused (403 `two_factor_required`) wherever they act in the
 * workspace, and nothing is made, until they turn it on (through the real two-factor service, with a real TOTP code);
 * the workspace's key keeps working. A person of the tied domain joins the workspace as a member when they sign in
 * by single sign-on (the account step that follows the provider's checks, `singleSignOn.account`), and someone who
 * left is not taken back. Every change leaves its entry in `workspace_audit`.
 */
import { generate } from 'otplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createPush,
  createWorkspace,
  createWorkspaceInvitation,
  leaveWorkspace,
  listActivePushes,
  listWorkspaceMembers,
  listWorkspaces,
  updateWorkspace,
} from '@secret-push/sdk/generated';
import { ctx } from '../domain/helpers.js';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type User = { token: string; email: string; userId: string };

let api: RealApi;
let owner: User;
let admin: User;
let member: User;
let auditor: User;
let outsider: User;

const OIDC = {
  issuer: 'http://127.0.0.1:9/',
  clientId: 'rules-test',
  clientSecret: 'a client secret that is never sent anywhere',
  allowedDomains: ['acme.example', 'corp.example'],
  autoCreate: true,
  only: false,
  providerName: 'Test IdP',
  allowHttp: true,
  emailVerifiedClaim: null,
};

beforeAll(async () => {
  api = await startRealApi({ oidc: OIDC } as never);
  owner = await api.user('owner@acme.example');
  admin = await api.user('admin@acme.example');
  member = await api.user('member@acme.example');
  auditor = await api.user('auditor@acme.example');
  outsider = await api.user('outsider@other.example');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

async function workspace(name = 'Acme'): Promise<number> {
  const id = expectData(
    await createWorkspace({ client: api.client, auth: bearer(owner.token), body: { workspace: { name } } }),
    201,
  ).id;
  for (const [who, role] of [
    [admin, 'admin'],
    [member, 'member'],
    [auditor, 'auditor'],
  ] as const)
    await api.db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())`,
      [id, who.userId, role],
    );
  return id;
}

const update = (who: User, id: number, workspace: Record<string, unknown>) =>
  updateWorkspace({ client: api.client, auth: bearer(who.token), path: { workspace_id: id }, body: { workspace } });

const row = async (id: number) =>
  (
    await api.db.query<{ name: string; require_two_factor: boolean; sso_domain: string | null }>(
      'select name, require_two_factor, sso_domain from workspaces where id = $1',
      [id],
    )
  )[0]!;

const trail = async (id: number) =>
  (
    await api.db.query<{ action: string; subject_email: string }>(
      'select action, subject_email from workspace_audit where workspace_id = $1 order by id',
      [id],
    )
  ).map((r) => `${r.action} ${r.subject_email}`);

/** Turns two-factor sign-in on for the user, as the account page does: begin, then confirm with a real code. */
async function turnOnTwoFactor(user: User): Promise<void> {
  const enrolment = await api.core.web!.twoFactor.begin(user.userId, user.email);
  await api.core.web!.twoFactor.confirm(user.userId, await generate({ secret: enrolment.secret }), '127.0.0.1');
}

describe('updateWorkspace: who may change what', () => {
  it('lets the owner and admins rename it, with an entry in the trail each', async () => {
    const id = await workspace();
    const renamed = expectData(await update(owner, id, { name: '  Acme support  ' }));
    expect(renamed).toMatchObject({ id, name: 'Acme support', role: 'owner', require_two_factor: false });
    expect(renamed.sso_domain).toBeNull();
    expect(expectData(await update(admin, id, { name: 'Acme help' }))).toMatchObject({
      name: 'Acme help',
      role: 'admin',
    });
    expect(await trail(id)).toEqual(['settings_changed owner@acme.example', 'settings_changed admin@acme.example']);
    const listed = expectData(await listWorkspaces({ client: api.client, auth: bearer(member.token) }));
    expect(listed.find((w) => w.id === id)).toMatchObject({ name: 'Acme help', require_two_factor: false });
  });

  it('refuses members and auditors (403), outsiders and unknown ids (404), and the workspace key (403)', async () => {
    const id = await workspace();
    expectError(await update(member, id, { name: 'X' }), 403, 'forbidden');
    expectError(await update(auditor, id, { name: 'X' }), 403, 'forbidden');
    expectError(await update(outsider, id, { name: 'X' }), 404, 'not_found');
    expectError(await update(owner, 2_147_483_000, { name: 'X' }), 404, 'not_found');
    const key = expectData(
      await createApiKey({
        client: api.client,
        auth: bearer(owner.token),
        body: { api_key: { name: 'ws', scopes: ['workspaces:manage', 'pushes:create'], workspace_id: id } },
      }),
      201,
    );
    expectError(await update({ ...owner, token: key.token }, id, { name: 'X' }), 403, 'forbidden');
    expect((await row(id)).name).toBe('Acme');
    expect(await trail(id)).toEqual([]);
  });

  it('answers bad bodies with 400 or 422 on the field, and changes nothing', async () => {
    const id = await workspace();
    expectError(await update(owner, id, {}), 422, 'validation_failed');
    expectError(await update(owner, id, { name: '   ' }), 422, 'validation_failed');
    expectError(await update(owner, id, { name: 'x'.repeat(101) }), 422, 'validation_failed');
    expectError(await update(owner, id, { require_two_factor: 'yes' }), 422, 'validation_failed');
    const bad = expectError(await update(owner, id, { sso_domain: 'not a domain' }), 422, 'validation_failed');
    expect(Object.keys((bad as { errors?: object }).errors ?? {})).toEqual(['sso_domain']);
    const res = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/settings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: '{"name":"no wrapper"}',
    });
    expect(res.status).toBe(400);
    const notJson = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/settings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: '{"workspace":',
    });
    expect([notJson.status, ((await notJson.json()) as { code: string }).code]).toEqual([400, 'invalid_json']);
    const badId = await fetch(`${api.baseUrl}/api/v2/workspaces/abc/settings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: '{"workspace":{"name":"X"}}',
    });
    expect(badId.status).toBe(400);
    expect(await row(id)).toEqual({ name: 'Acme', require_two_factor: false, sso_domain: null });
    expect(await trail(id)).toEqual([]);
  });
});

describe('require_two_factor', () => {
  it('needs two-factor sign-in on the account of whoever turns it on', async () => {
    const id = await workspace();
    const refused = expectError(await update(owner, id, { require_two_factor: true }), 422, 'validation_failed');
    expect(Object.keys((refused as { errors?: object }).errors ?? {})).toEqual(['require_two_factor']);
    expect((await row(id)).require_two_factor).toBe(false);
  });

  it('shuts out members without it, and nothing is made, until they turn it on; the workspace key keeps working', async () => {
    const freshOwner = await api.user(`owner-2fa-${Date.now()}@acme.example`);
    const freshMember = await api.user(`member-2fa-${Date.now()}@acme.example`);
    await turnOnTwoFactor(freshOwner);
    const id = expectData(
      await createWorkspace({
        client: api.client,
        auth: bearer(freshOwner.token),
        body: { workspace: { name: '2FA' } },
      }),
      201,
    ).id;
    await api.db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
      [id, freshMember.userId],
    );
    const key = expectData(
      await createApiKey({
        client: api.client,
        auth: bearer(freshOwner.token),
        body: { api_key: { name: 'ws', scopes: ['pushes:create'], workspace_id: id } },
      }),
      201,
    );
    expect(expectData(await update(freshOwner, id, { require_two_factor: true })).require_two_factor).toBe(true);

    const before = await api.db.query('select count(*)::int as n from pushes where workspace_id = $1', [id]);
    const create = (token: string, workspace_id?: number) =>
      createPush({ client: api.client, auth: bearer(token), body: { push: { payload: 'team secret' }, workspace_id } });
    expectError(await create(freshMember.token, id), 403, 'two_factor_required');
    expectError(
      await listActivePushes({
        client: api.client,
        auth: bearer(freshMember.token),
        query: { workspace_id: String(id) },
      }),
      403,
      'two_factor_required',
    );
    expectError(
      await listWorkspaceMembers({ client: api.client, auth: bearer(freshMember.token), path: { workspace_id: id } }),
      403,
      'two_factor_required',
    );
    expect(await api.db.query('select count(*)::int as n from pushes where workspace_id = $1', [id])).toEqual(before);
    // An admin without it may not manage invitations either (a person invites: the rule is theirs too).
    const freshAdmin = await api.user(`admin-2fa-${Date.now()}@acme.example`);
    await api.db.query(
      `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'admin', now())`,
      [id, freshAdmin.userId],
    );
    expectError(
      await createWorkspaceInvitation({
        client: api.client,
        auth: bearer(freshAdmin.token),
        path: { workspace_id: id },
        body: { invitation: { role: 'member' } },
      }),
      403,
      'two_factor_required',
    );
    expect(
      await api.db.query('select count(*)::int as n from workspace_invitations where workspace_id = $1', [id]),
    ).toEqual([{ n: 0 }]);
    // The member's personal space is not the workspace's: it keeps working.
    expectData(await create(freshMember.token), 201);
    // The workspace's own key acts for the workspace, not for a person: unaffected.
    expectData(await create(key.token), 201);

    await turnOnTwoFactor(freshMember);
    expectData(await create(freshMember.token, id), 201);
    // Leaving stays open to a member shut out (here: after the rule, nothing else stands in the way).
    expectData(
      await leaveWorkspace({ client: api.client, auth: bearer(freshMember.token), path: { workspace_id: id } }),
    );
  });
});

describe('sso_domain', () => {
  it('ties only the caller’s own email domain, one workspace per domain, one the instance’s sign-on allows', async () => {
    const id = await workspace();
    const other = await workspace('Other');
    expectError(await update(owner, id, { sso_domain: 'corp.example' }), 422, 'validation_failed');
    expectError(await update(outsider, id, { sso_domain: 'other.example' }), 404, 'not_found');
    const tied = expectData(await update(owner, id, { sso_domain: 'ACME.example' }));
    expect(tied.sso_domain).toBe('acme.example');
    const taken = expectError(await update(owner, other, { sso_domain: 'acme.example' }), 422, 'validation_failed');
    expect((taken as { errors?: Record<string, string[]> }).errors?.sso_domain).toEqual([
      'another workspace is tied to this domain',
    ]);
    expect((await row(other)).sso_domain).toBeNull();
    expect(expectData(await update(owner, id, { sso_domain: null })).sso_domain).toBeNull();
  });

  it('takes a person of the domain in at their single sign-on, once, and never takes back one who left', async () => {
    const id = await workspace('Domain');
    expectData(await update(owner, id, { sso_domain: 'acme.example' }));
    const sso = api.core.web!.singleSignOn!;
    const now = new Date();
    const dana = await sso.account({ issuer: OIDC.issuer, subject: 'dana', email: 'dana@acme.example' }, now);
    await sso.account({ issuer: OIDC.issuer, subject: 'erin', email: 'erin@corp.example' }, now);
    const members = async () =>
      expectData(
        await listWorkspaceMembers({ client: api.client, auth: bearer(owner.token), path: { workspace_id: id } }),
      ).map((m) => `${m.email} ${m.role}`);
    expect(await members()).toContain('dana@acme.example member');
    expect(await members()).not.toContain('erin@corp.example member');
    // A second sign-in changes nothing.
    await sso.account({ issuer: OIDC.issuer, subject: 'dana', email: 'dana@acme.example' }, new Date());
    expect((await members()).filter((m) => m.startsWith('dana@'))).toHaveLength(1);
    expect(await trail(id)).toContain('member_joined_by_domain dana@acme.example');

    // dana leaves; her next sign-in does not bring her back.
    await api.core.workspaces!.changeMember(id, '', { kind: 'leave' }, ctx(dana.userId));
    await sso.account({ issuer: OIDC.issuer, subject: 'dana', email: 'dana@acme.example' }, new Date());
    expect(await members()).not.toContain('dana@acme.example member');
    expect(await trail(id)).toContain('member_left dana@acme.example');
  });
});
