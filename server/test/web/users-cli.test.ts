/**
 * `npm run users` end to end, on the database a running app uses: a user made on the CLI with a password signs in
 * on the page (headless Chromium); `list` shows when the token was last used; `revoke` makes its calls answer 401;
 * `delete` expires and erases the user's pushes (a recipient's link answers 404, the records, files and audit logs
 * are gone) and ends its web session. The commands run as `runUsersCli` (the compiled `npm run users` runs it too:
 * server/test/domain/cli-and-embedded.test.ts), with the password on a stream as it comes on standard input.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { generate } from 'otplib';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPassword, runUsersCli } from '../../src/cli/users.js';
import { TEST_KEY_A } from '../support/db.js';
import { launchChromium } from './chromium.js';
import { startWeb, Visitor, type WebApp } from './support.js';

const EMAIL = 'ops-cli@example.org';
const PASSWORD = 'correct horse battery staple';

let web: WebApp;
let env: NodeJS.ProcessEnv;
let dataDir: string;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let browser: BrowserContext;

async function users(args: string[], password = '') {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runUsersCli(
    args,
    (l) => out.push(l),
    (l) => err.push(l),
    env,
    () => readPassword(Readable.from([`${password}\n`])),
  );
  return { code, out, err, last: out[out.length - 1] ?? '' };
}

const api = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${web.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });

beforeAll(async () => {
  web = await startWeb();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'sp-users-cli-'));
  env = {
    DATABASE_URL: web.db.url,
    PWPUSH_DATA_DIR: dataDir,
    PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
  };
  chromium = await launchChromium();
  browser = await chromium.browser.newContext();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await chromium?.close();
  await web?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run users', () => {
  let token: string;

  it('creates a user and sets its password from standard input; the user signs in on the page (Chromium)', async () => {
    const created = await users(['create', EMAIL]);
    expect(created.code).toBe(0);
    token = created.last;
    expect(token).toMatch(/^spt_/);
    const set = await users(['set-password', EMAIL], PASSWORD);
    expect(set).toMatchObject({ code: 0, err: [] });
    expect(set.last).toContain(`password set for ${EMAIL}`);
    expect(set.out.join('\n')).not.toContain(PASSWORD);

    const page = await browser.newPage();
    await page.goto(`${web.baseUrl}/users/sign_in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${web.baseUrl}/`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${web.baseUrl}/users/token`);
    await page.getByText(/You have an API token/).waitFor();
    await page.close();
  }, 120_000);

  it("refuses a short password, a guessable one (with zxcvbn's reason) and an unknown email, changing nothing", async () => {
    const short = await users(['set-password', EMAIL], 'short');
    expect(short.code).toBe(1);
    expect(short.err.join('\n')).toMatch(/at least 12 characters/);
    const common = await users(['set-password', EMAIL], 'password1234');
    expect(common.code).toBe(1);
    expect(common.err.join('\n')).toMatch(
      /error: The password is too easy to guess: This is similar to a commonly used password\./,
    );
    expect(common.err.join('\n')).not.toContain('password1234');
    const unknown = await users(['set-password', 'nobody@example.org'], PASSWORD);
    expect(unknown.code).toBe(1);
    expect(unknown.err.join('\n')).toMatch(/no user has the email nobody@example.org/);
    expect((await new Visitor(web.baseUrl).signIn(EMAIL, PASSWORD)).status).toBe(303);
  });

  it('lists users with when they were made and when their token was last used', async () => {
    const before = await users(['list']);
    const row = () => before.out.find((l) => l.startsWith(`${EMAIL}\t`))!.split('\t');
    expect(before.err).toEqual([]);
    expect(before.code).toBe(0);
    expect(before.out[0]).toBe('email\tcreated\tpassword\ttoken made\ttoken last used');
    expect(row()).toEqual([
      EMAIL,
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      'yes',
      expect.stringMatching(/^\d{4}-/),
      '-',
    ]);
    expect((await api('/api/v2/pushes/active', token)).status).toBe(200);
    // Written after the answer, without the request waiting for it.
    let used = '-';
    for (let i = 0; i < 50 && used === '-'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      used = (await users(['list'])).out.find((l) => l.startsWith(`${EMAIL}\t`))!.split('\t')[4]!;
    }
    expect(Date.parse(used)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('revokes the token: its calls answer 401 until a new one is made', async () => {
    const revoked = await users(['revoke', EMAIL]);
    expect(revoked).toMatchObject({ code: 0 });
    expect(revoked.last).toContain('revoked');
    expect((await api('/api/v2/pushes/active', token)).status).toBe(401);
    expect((await users(['revoke', EMAIL])).last).toContain('had no API token');
    const rotated = await users(['token', EMAIL]);
    token = rotated.last;
    expect((await api('/api/v2/pushes/active', token)).status).toBe(200);
  });

  it("turns off a user's two-step sign-in (lost authenticator and recovery codes) and ends their web sessions", async () => {
    const { userId } = (
      await web.db.query<{ userId: string }>('select id as "userId" from users where email = $1', [EMAIL])
    )[0]!;
    const twoFactor = web.core.web!.twoFactor;
    const { secret } = await twoFactor.begin(userId, EMAIL);
    const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) });
    const codes = await twoFactor.confirm(userId, code, '127.0.0.1');
    expect(codes).toHaveLength(10);
    expect(await twoFactor.status(userId)).toEqual({ enabled: true, recoveryCodesLeft: 10 });

    const reset = await users(['reset-2fa', EMAIL]);
    expect(reset).toMatchObject({ code: 0, err: [] });
    expect(reset.last).toBe(
      `two-step sign-in of ${EMAIL} turned off (its secret and recovery codes erased); their web sessions ended`,
    );
    expect(await twoFactor.status(userId)).toEqual({ enabled: false, recoveryCodesLeft: 0 });
    expect(await web.db.query('select totp_secret from users where id = $1', [userId])).toEqual([
      { totp_secret: null },
    ]);
    // The browser signed in above is signed out.
    const page = await browser.newPage();
    await page.goto(`${web.baseUrl}/users/token`);
    await page.waitForURL(/\/users\/sign_in/);
    await page.close();
    expect((await users(['reset-2fa', 'nobody@example.org'])).err.join('\n')).toMatch(/no user has the email/);
  }, 60_000);

  it('grants and revokes the admin flag (the admin console, issue 41); an unknown email is refused', async () => {
    const flag = async () =>
      (await web.db.query<{ admin: boolean }>('select admin from users where email = $1', [EMAIL]))[0]!.admin;
    expect(await flag()).toBe(false);
    const granted = await users(['grant-admin', EMAIL]);
    expect(granted).toMatchObject({ code: 0, err: [] });
    expect(granted.last).toBe(`${EMAIL} is an administrator: they open the admin console at /admin`);
    expect(await flag()).toBe(true);
    const revoked = await users(['revoke-admin', ` ${EMAIL.toUpperCase()} `]);
    expect(revoked).toMatchObject({ code: 0, err: [] });
    expect(revoked.last).toBe(`${EMAIL} is no longer flagged an administrator`);
    expect(await flag()).toBe(false);
    const unknown = await users(['grant-admin', 'nobody@example.org']);
    expect(unknown.code).toBe(1);
    expect(unknown.err.join('\n')).toMatch(/no user has the email/);
  });

  it('deletes the user: its pushes expired and erased (links answer 404), its session ended, other users untouched', async () => {
    const make = async (as: string, payload: string) => {
      const res = await api('/api/v2/pushes', as, {
        method: 'POST',
        body: JSON.stringify({ push: { payload, expire_after_views: 5 } }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { url_token: string }).url_token;
    };
    const mine = [await make(token, 'owned secret 1'), await make(token, 'owned secret 2')];
    const expired = await make(token, 'already gone');
    expect((await api(`/api/v2/pushes/${expired}`, token, { method: 'DELETE' })).status).toBe(200);
    const other = await web.core.users.createUser('bystander@example.org');
    const theirs = await make(other.token, 'not theirs to delete');

    const deleted = await users(['delete', EMAIL]);
    expect(deleted.code).toBe(0);
    expect(deleted.last).toBe(
      `deleted user ${EMAIL}: 2 active push(es) expired, 3 push(es) erased with their files and audit logs, 0 workspace(s) they were alone in deleted`,
    );

    for (const urlToken of [...mine, expired])
      expect((await fetch(`${web.baseUrl}/api/v2/pushes/${urlToken}`)).status).toBe(404);
    expect(
      await web.db.query('select count(*)::int as n from pushes where url_token = any($1)', [[...mine, expired]]),
    ).toEqual([{ n: 0 }]);
    expect(await web.db.query('select count(*)::int as n from users where email = $1', [EMAIL])).toEqual([{ n: 0 }]);
    expect((await api('/api/v2/pushes/active', token)).status).toBe(401);
    // The browser's session (signed in above) is over.
    const page = await browser.newPage();
    await page.goto(`${web.baseUrl}/users/token`);
    await page.waitForURL(/\/users\/sign_in/);
    await page.close();
    // Someone else's push is untouched.
    expect((await fetch(`${web.baseUrl}/api/v2/pushes/${theirs}/preview`)).status).toBe(200);
    expect((await users(['delete', EMAIL])).err.join('\n')).toMatch(/no user has the email/);
  }, 120_000);

  it('prints its usage for a wrong command line', async () => {
    for (const args of [['list', 'extra'], ['revoke'], ['frobnicate', EMAIL]]) {
      const wrong = await users(args);
      expect(wrong.code).toBe(2);
      expect(wrong.err.join('\n')).toContain('set-password EMAIL');
    }
  });
});
