/**
 * A workspace that requires single sign-on of its members (issue 41, `require_single_sign_on`), with a real OpenID
 * provider (oidc-provider) and real headless Chromium. olga signs in by single sign-on and turns the rule on on the
 * workspace's page. max, a member who signs in with his password, is shut out of the workspace's page (403, the
 * reason and the provider's button, no axe violation) and let in once he signs in by single sign-on from there. Over
 * HTTP with the generated SDK: an API token of a member whose account is linked to the provider acts in the
 * workspace; one of an account never linked is refused (403 `single_sign_on_required`) on lists, creates, the members
 * and the trail, and nothing is made, while leaving stays open to it; the workspace's key is unaffected. An instance
 * without single sign-on refuses to turn the rule on (422), and so does one with it for a caller whose own account is
 * not linked; nothing changes then.
 */
import type { Browser } from 'playwright-core';
import { createClient } from '@secret-push/sdk/generated/client';
import {
  createApiKey,
  createPush,
  leaveWorkspace,
  listActivePushes,
  listWorkspaceAudit,
  listWorkspaceMembers,
  updateWorkspace,
} from '@secret-push/sdk/generated';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './chromium.js';
import { launchChromium, startWeb, type WebApp } from './support.js';
import {
  localContext,
  loginAtProvider,
  signInBySso,
  startOpenIdProvider,
  type OpenIdProvider,
} from './openid-provider.js';

const PASSWORD = 'a long enough password';
const PEOPLE = { olga: 'olga@corp.example', max: 'max@corp.example' };

let idp: OpenIdProvider;
let app: WebApp;
/** The same database without single sign-on. */
let plain: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
let workspaceId = 0;
let max: { userId: string; token: string };
let nina: { userId: string; token: string };

beforeAll(async () => {
  idp = await startOpenIdProvider(PEOPLE);
  app = await startWeb({ oidc: idp.settings });
  plain = await startWeb({}, { db: app.db });
  await idp.serve([app.baseUrl]);
  max = await app.core.users.createUser(PEOPLE.max, PASSWORD);
  nina = await app.core.users.createUser('nina@corp.example', PASSWORD);
  chromium = await launchChromium();
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await plain?.stop();
  await app?.stop();
  await idp?.close();
});

const bearer = (token: string) => (a: { scheme?: string }) => (a.scheme === 'bearer' ? token : undefined);
const workspaceRow = async () =>
  (
    await app.db.query<{ require_single_sign_on: boolean }>(
      'select require_single_sign_on from workspaces where id = $1',
      [workspaceId],
    )
  )[0];
const pushesOfWorkspace = async () =>
  Number(
    (await app.db.query<{ n: string }>('select count(*) as n from pushes where workspace_id = $1', [workspaceId]))[0]!
      .n,
  );

describe('require_single_sign_on in Chromium', () => {
  it('olga turns it on; max, signed in with his password, is shut out of the page and let in after single sign-on', async () => {
    const olgaContext = await localContext(chromium.browser);
    const olga = await olgaContext.newPage();
    await signInBySso(olga, app.baseUrl, idp.issuer, 'olga');
    await olga.goto(`${app.baseUrl}/workspaces`);
    await olga.getByLabel('Name').fill('Locked down');
    await olga.getByRole('button', { name: 'Make the workspace' }).click();
    await olga.getByRole('heading', { name: 'Locked down', level: 1 }).waitFor();
    workspaceId = Number(new URL(olga.url()).pathname.split('/').pop());
    for (const who of [max, nina])
      await app.db.query(
        `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
        [workspaceId, who.userId],
      );
    await olga.goto(`${app.baseUrl}/workspaces/${workspaceId}/settings`);
    await olga.getByLabel('Require single sign-on of every member').check();
    await olga.getByRole('button', { name: 'Save the settings' }).click();
    await olga.getByRole('status').filter({ hasText: 'The settings are saved.' }).waitFor();
    expect(await workspaceRow()).toEqual({ require_single_sign_on: true });
    // olga herself stays in: her session began at the provider.
    await olga.reload();
    expect(await olga.getByLabel('Require single sign-on of every member').isChecked()).toBe(true);
    await olgaContext.close();

    const maxContext = await localContext(chromium.browser);
    const page = await maxContext.newPage();
    await page.goto(`${app.baseUrl}/users/sign_in?next=${encodeURIComponent(`/workspaces/${workspaceId}`)}`);
    await page.getByLabel('Email').fill(PEOPLE.max);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);
    await page
      .getByRole('alert')
      .filter({ hasText: "This workspace requires single sign-on: sign in with your organisation's single sign-on" })
      .waitFor();
    expect(await page.getByRole('heading', { name: 'Members' }).count()).toBe(0);
    expect(await page.content()).not.toContain(PEOPLE.olga);
    expect(['the shut-out page', await axeViolations(page)]).toEqual(['the shut-out page', []]);
    const shut = await fetch(`${app.baseUrl}/workspaces/${workspaceId}`, {
      headers: { cookie: (await maxContext.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
    });
    expect(shut.status).toBe(403);

    await page.getByRole('button', { name: 'Sign in with Test IdP' }).click();
    await loginAtProvider(page, idp.issuer, 'max');
    await page.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);
    await page.getByText('Your role here: member.').waitFor();
    expect(await page.getByRole('cell', { name: PEOPLE.olga, exact: true }).count()).toBe(1);
    await maxContext.close();
  }, 300_000);
});

describe('require_single_sign_on over HTTP', () => {
  const client = () => createClient({ baseUrl: app.baseUrl });

  it('lets in the API token of an account linked to the provider, and refuses one never linked; nothing is made', async () => {
    const linked = await listActivePushes({
      client: client(),
      auth: bearer(max.token),
      query: { workspace_id: String(workspaceId) },
    });
    expect(linked.response?.status).toBe(200);
    const made = await createPush({
      client: client(),
      auth: bearer(max.token),
      body: { push: { payload: 'by a linked account' }, workspace_id: workspaceId },
    });
    expect(made.response?.status).toBe(201);

    const before = await pushesOfWorkspace();
    const calls = [
      listActivePushes({ client: client(), auth: bearer(nina.token), query: { workspace_id: String(workspaceId) } }),
      createPush({
        client: client(),
        auth: bearer(nina.token),
        body: { push: { payload: 'not linked' }, workspace_id: workspaceId },
      }),
      listWorkspaceMembers({ client: client(), auth: bearer(nina.token), path: { workspace_id: workspaceId } }),
      listWorkspaceAudit({ client: client(), auth: bearer(nina.token), path: { workspace_id: workspaceId } }),
    ];
    for (const refused of await Promise.all(calls)) {
      expect([refused.response?.status, refused.error?.code]).toEqual([403, 'single_sign_on_required']);
      expect(refused.error?.error).toContain('sign in with');
    }
    expect(await pushesOfWorkspace()).toBe(before);
    // Her personal space is hers as before.
    const personal = await createPush({
      client: client(),
      auth: bearer(nina.token),
      body: { push: { payload: 'mine' } },
    });
    expect(personal.response?.status).toBe(201);
  });

  it("keeps the workspace's own key working, and leaving open to a member it shuts out", async () => {
    const olgaToken = await app.core.users.rotateToken(PEOPLE.olga);
    const key = await createApiKey({
      client: client(),
      auth: bearer(olgaToken),
      body: { api_key: { name: 'locked ci', scopes: ['pushes:create', 'pushes:read'], workspace_id: workspaceId } },
    });
    expect(key.response?.status).toBe(201);
    const byKey = await createPush({
      client: client(),
      auth: bearer(key.data!.token),
      body: { push: { payload: 'ci' } },
    });
    expect([byKey.response?.status, byKey.data?.workspace_id]).toEqual([201, workspaceId]);

    const left = await leaveWorkspace({
      client: client(),
      auth: bearer(nina.token),
      path: { workspace_id: workspaceId },
    });
    expect(left.response?.status).toBe(200);
  });

  it('is refused on an instance without single sign-on, and for a caller whose account is not linked (422)', async () => {
    const owner = await app.core.users.createUser('owner@corp.example', PASSWORD);
    const own = await app.core.workspaces!.create('Password people', {
      actor: { userId: owner.userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
      baseUrl: app.baseUrl,
    });
    for (const [base, reason] of [
      [plain.baseUrl, 'this instance has no single sign-on'],
      [app.baseUrl, 'sign in by single sign-on yourself first'],
    ] as const) {
      const refused = await updateWorkspace({
        client: createClient({ baseUrl: base }),
        auth: bearer(owner.token),
        path: { workspace_id: own.id },
        body: { workspace: { require_single_sign_on: true } },
      });
      expect([refused.response?.status, refused.error?.code]).toEqual([422, 'validation_failed']);
      expect(refused.error?.errors?.require_single_sign_on?.[0]).toContain(reason);
    }
    const [row] = await app.db.query<{ require_single_sign_on: boolean }>(
      'select require_single_sign_on from workspaces where id = $1',
      [own.id],
    );
    expect(row).toEqual({ require_single_sign_on: false });
  });
});
