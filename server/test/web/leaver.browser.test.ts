/**
 * The leaver scenario of issue 41, end to end in real headless Chromium, through the pages as the people would use
 * them, with a real OpenID provider (oidc-provider) and a real SMTP server (smtp-server) in this process:
 *
 * alice (corp.example, the instance's administrator) signs in by single sign-on, makes the workspace "Acme", ties it
 * to corp.example on its page's sign-in rules, and invites erin (partner.example) by email as an auditor; erin opens
 * the mail's link signed out, signs in by single sign-on and joins. bob (corp.example) signs in by single sign-on and
 * is in the workspace (joined by its domain). alice and bob each make a push in it on the create page; alice makes a
 * workspace key (her token from the token page, then `createApiKey`), bob a personal key on the token page. bob
 * leaves on the workspace's page. Then: the workspace's push list (from its page) shows bob's push to alice; bob's
 * personal key is refused on the workspace's lists and creates (the SDK, real HTTP) and acts in his personal space
 * only (docs/workspaces.md, "A leaver"); the workspace key still creates and lists, bob's pushes included; the admin
 * console shows the workspace, its members and its trail; the workspace's trail has every step.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createClient } from '@secret-push/sdk/generated/client';
import { createApiKey, createPush, listActivePushes, listWorkspaceAudit } from '@secret-push/sdk/generated';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { makeSettings } from '../support/db.js';
import { axeViolations } from './chromium.js';
import { launchChromium, startWeb, type WebApp } from './support.js';
import {
  localContext,
  loginAtProvider,
  signInBySso,
  startOpenIdProvider,
  type OpenIdProvider,
} from './openid-provider.js';

const PEOPLE = { alice: 'alice@corp.example', bob: 'bob@corp.example', erin: 'erin@partner.example' };

let idp: OpenIdProvider;
let mailbox: Mailbox;
let app: WebApp;
let chromium: { browser: Browser; close(): Promise<void> };
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  idp = await startOpenIdProvider(PEOPLE);
  mailbox = await startMailbox();
  app = await startWeb({
    oidc: idp.settings,
    adminEmails: [PEOPLE.alice],
    mail: { ...makeSettings().mail, smtpUrl: mailbox.url, attempts: 3, retrySeconds: 1 },
  });
  await idp.serve([app.baseUrl]);
  chromium = await launchChromium();
}, 600_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await chromium?.close();
  await app?.stop();
  await mailbox?.stop();
  await idp?.close();
});

async function person(): Promise<Page> {
  const context = await localContext(chromium.browser);
  contexts.push(context);
  return context.newPage();
}

/** Makes a push in the workspace on the create page (the "Where the push belongs" chooser); its url token. */
async function pushIn(page: Page, workspace: string, payload: string, name: string): Promise<string> {
  await page.goto(`${app.baseUrl}/`);
  await page.locator('#payload').fill(payload);
  await page.locator('#name').fill(name);
  await page.getByLabel('Where the push belongs').selectOption({ label: workspace });
  await page.getByRole('button', { name: 'Make the secret link' }).click();
  await page.getByRole('heading', { name: 'Your secret link' }).waitFor();
  const link = (await page.locator('#share-link').textContent())!.trim();
  return new URL(link).pathname.split('/')[2]!;
}

describe('a leaver, end to end in Chromium', () => {
  it('invite, join by the SSO domain, create, leave: the pushes stay, the personal key is dead there, the workspace key works, the console and the trail show it', async () => {
    const client = createClient({ baseUrl: app.baseUrl });
    const bearer = (token: string) => (a: { scheme?: string }) => (a.scheme === 'bearer' ? token : undefined);

    // alice: single sign-on, a workspace, its domain, an invitation by email.
    const alice = await person();
    await signInBySso(alice, app.baseUrl, idp.issuer, 'alice');
    await alice.goto(`${app.baseUrl}/workspaces`);
    await alice.getByLabel('Name').fill('Acme');
    await alice.getByRole('button', { name: 'Make the workspace' }).click();
    await alice.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    const workspaceId = Number(new URL(alice.url()).pathname.split('/').pop());
    // The workspace's settings page, from the workspace's sections.
    await alice.getByRole('navigation', { name: 'Sections of “Acme”' }).getByRole('link', { name: 'Settings' }).click();
    await alice.getByLabel('Email domain for single sign-on (optional)').fill('corp.example');
    await alice.getByRole('button', { name: 'Save the settings' }).click();
    await alice.getByRole('status').filter({ hasText: 'The settings are saved.' }).waitFor();
    expect(await alice.getByLabel('Email domain for single sign-on (optional)').inputValue()).toBe('corp.example');
    expect(['the sign-in rules saved', await axeViolations(alice)]).toEqual(['the sign-in rules saved', []]);
    await alice.goto(`${app.baseUrl}/workspaces/${workspaceId}`);
    const mails = mailbox.messages.length;
    await alice.getByLabel('Email address (optional)').fill(PEOPLE.erin);
    await alice.getByLabel('Role of the new member').selectOption('auditor');
    await alice.getByRole('button', { name: 'Invite', exact: true }).click();
    await alice.getByText(`The invitation was mailed to ${PEOPLE.erin}.`).waitFor();
    const mail = (await mailbox.waitFor(mails + 1, 30_000)).at(-1)!;
    expect(mail.to).toEqual([PEOPLE.erin]);
    const link = /https?:\/\/\S+\/workspaces\/join#[A-Za-z0-9_-]{43}/.exec(mail.parsed.text ?? '')?.[0];
    expect(link).toBeDefined();

    // erin opens the mail's link signed out, signs in by single sign-on from the join page, and joins.
    const erin = await person();
    await erin.goto(link!);
    await erin.locator('#join-sign-in').click();
    await erin.getByRole('button', { name: 'Sign in with Test IdP' }).click();
    await loginAtProvider(erin, idp.issuer, 'erin');
    await erin.getByRole('button', { name: 'Join “Acme”' }).click();
    await erin.waitForURL(`${app.baseUrl}/workspaces/${workspaceId}`);
    await erin.getByText('Your role here: auditor.').waitFor();

    // bob signs in by single sign-on and is in the workspace: its domain is his.
    const bob = await person();
    await signInBySso(bob, app.baseUrl, idp.issuer, 'bob');
    await bob.goto(`${app.baseUrl}/workspaces`);
    await bob.getByRole('link', { name: 'Acme' }).click();
    await bob.getByText('Your role here: member.').waitFor();

    // Both make a push in the workspace on the create page.
    const alicePush = await pushIn(alice, 'Acme', 'the staging database password', 'alice: staging db');
    const bobPush = await pushIn(bob, 'Acme', 'the customer VPN secret', 'bob: customer vpn');

    // alice's workspace key (her account token from the token page, then createApiKey); bob's personal key.
    await alice.goto(`${app.baseUrl}/users/token`);
    await alice.getByRole('button', { name: 'Make a token' }).click();
    const aliceToken = (await alice.locator('#api-token').textContent())!.trim();
    const workspaceKey = (
      await createApiKey({
        client,
        auth: bearer(aliceToken),
        body: { api_key: { name: 'acme ci', scopes: ['pushes:create', 'pushes:read'], workspace_id: workspaceId } },
      })
    ).data!.token;
    await bob.goto(`${app.baseUrl}/users/token`);
    await bob.locator('#key-name').fill('bob laptop');
    await bob.locator('input[name="scopes"][value="pushes:create"]').check();
    await bob.locator('input[name="scopes"][value="pushes:read"]').check();
    await bob.getByRole('button', { name: 'Make a key' }).click();
    const bobKey = (await bob.locator('#api-key-token').textContent())!.trim();
    const bobsList = await listActivePushes({
      client,
      auth: bearer(bobKey),
      query: { workspace_id: String(workspaceId) },
    });
    expect(bobsList.response?.status).toBe(200);
    expect(bobsList.data!.map((p) => p.url_token)).toEqual([bobPush]);

    // bob leaves, on the workspace's page.
    await bob.goto(`${app.baseUrl}/workspaces/${workspaceId}`);
    await bob.getByRole('button', { name: 'Leave' }).click();
    await bob.waitForURL(`${app.baseUrl}/workspaces`);
    await bob.getByText('You are in no workspace yet.').waitFor();
    await bob.goto(`${app.baseUrl}/workspaces/${workspaceId}`);
    expect(await bob.getByRole('heading', { name: 'Acme' }).count()).toBe(0);

    // alice sees bob's push in the workspace's list, from its page.
    await alice.goto(`${app.baseUrl}/workspaces/${workspaceId}`);
    await alice.getByRole('link', { name: "The workspace's pushes" }).click();
    await alice.getByText('The pushes of “Acme”.').waitFor();
    const listed = await alice.locator('main table').textContent();
    expect(listed).toContain('bob: customer vpn');
    expect(listed).toContain('alice: staging db');
    expect(await alice.locator(`a[href="/pushes/${bobPush}/audit"]`).count()).toBe(1);
    expect(["the workspace's pushes", await axeViolations(alice)]).toEqual(["the workspace's pushes", []]);

    // bob's personal key is dead in the workspace: its lists and creates refuse it, nothing is made.
    const refusedList = await listActivePushes({
      client,
      auth: bearer(bobKey),
      query: { workspace_id: String(workspaceId) },
    });
    expect([refusedList.response?.status, refusedList.error?.code]).toEqual([403, 'forbidden']);
    const refusedCreate = await createPush({
      client,
      auth: bearer(bobKey),
      body: { push: { payload: 'after leaving' }, workspace_id: workspaceId },
    });
    expect([refusedCreate.response?.status, refusedCreate.error?.code]).toEqual([403, 'forbidden']);
    const personal = await listActivePushes({ client, auth: bearer(bobKey) });
    expect(personal.data).toEqual([]);

    // The workspace key still creates in the workspace and lists every push of it, bob's included.
    const byKey = await createPush({ client, auth: bearer(workspaceKey), body: { push: { payload: 'rotated' } } });
    expect([byKey.response?.status, byKey.data?.workspace_id]).toEqual([201, workspaceId]);
    const all = await listActivePushes({ client, auth: bearer(workspaceKey) });
    expect(all.data!.map((p) => p.url_token).sort()).toEqual([alicePush, bobPush, byKey.data!.url_token].sort());

    // The admin console: the workspace, its members (bob no more) and its trail.
    await alice.goto(`${app.baseUrl}/admin`);
    await alice.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Workspaces' }).click();
    await alice.getByLabel('Name contains, or id').fill('Acme');
    await alice.getByLabel('Name contains, or id').press('Enter');
    await alice.getByRole('link', { name: 'Acme' }).click();
    await alice.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    const console = (await alice.locator('main').textContent()) ?? '';
    for (const seen of [PEOPLE.alice, PEOPLE.erin, 'acme ci', 'member_left', 'member_joined_by_domain'])
      expect(console).toContain(seen);
    expect(console).not.toContain('the customer VPN secret');

    // The workspace's trail, read back with alice's token: every step, oldest last.
    const trail = await listWorkspaceAudit({ client, auth: bearer(aliceToken), path: { workspace_id: workspaceId } });
    expect(trail.data!.entries.map((e) => [e.action, e.subject_email]).reverse()).toEqual([
      ['settings_changed', PEOPLE.alice],
      ['invitation_created', PEOPLE.erin],
      ['invitation_accepted', PEOPLE.erin],
      ['member_joined_by_domain', PEOPLE.bob],
      ['member_left', PEOPLE.bob],
    ]);
  }, 300_000);
});
