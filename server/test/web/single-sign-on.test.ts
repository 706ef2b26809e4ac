/**
 * Issue 25, single sign-on: a real OpenID provider (the `oidc-provider` package) runs in this process on 127.0.0.1,
 * with this instance as its client and three people (alice: verified email in the allowed domain; bob: email not
 * verified; carol: verified email in another domain). Headless Chromium signs in through the provider's own login and
 * consent pages. alice signs in, makes an API token and a scoped API key on the token page and sees her pushes; bob
 * and carol are refused with a page saying why, and no account is made for them. Hostile answers are refused the same way: a
 * forged state, a replayed callback, and ID tokens whose nonce, issuer or audience are wrong (re-signed with the
 * provider's own key, so only the claim is wrong) or whose signature is not the provider's. Sign-out ends the
 * provider's session too (RP-initiated logout). PWPUSH_OIDC_ONLY turns password sign-in and sign-up off.
 *
 * Nothing leaves the machine: Chromium's requests to anything but 127.0.0.1 are aborted (the provider's built-in
 * pages import a web font).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { generate } from 'otplib';
import { buildShareLink, sealPush } from '@secret-push/sdk/e2e';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotPath, startWeb, Visitor, type WebApp } from './support.js';

const CLIENT_ID = 'secret-push-test';
const CLIENT_SECRET = 'a client secret long enough for HS256 at the provider';
const PROVIDER_NAME = 'Test IdP';
/** `xms_edov`: Entra ID's "email domain owner verified", sent instead of `email_verified` (none of them has both). */
const PEOPLE: Record<string, { email: string; email_verified?: boolean; xms_edov?: boolean | string; name: string }> = {
  alice: { email: 'alice@corp.example', email_verified: true, name: 'Alice' },
  bob: { email: 'bob@corp.example', email_verified: false, name: 'Bob' },
  carol: { email: 'carol@other.example', email_verified: true, name: 'Carol' },
  frank: { email: 'frank@corp.example', xms_edov: true, name: 'Frank' },
  grace: { email: 'grace@corp.example', xms_edov: '1', name: 'Grace' },
  heidi: { email: 'heidi@corp.example', xms_edov: false, name: 'Heidi' },
};

type Tamper = null | ((claims: JWTPayload) => JWTPayload) | 'foreign-key';

let issuer = '';
let idp: http.Server;
let app: WebApp;
let noAutoCreate: WebApp;
/** An instance that takes Entra ID's `xms_edov` as the proof of the email (PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM). */
let entra: WebApp;
/** A closed instance (PWPUSH_ALLOW_ANONYMOUS=false): a signed-out recipient of a link is sent to sign in first. */
let closed: WebApp;
/** Every request the provider received (method, URL, headers), as its HTTP server got it. */
const providerSaw: string[] = [];
let chromium: { browser: Browser; close(): Promise<void> };
let tamper: Tamper = null;
const contexts: BrowserContext[] = [];

async function startProvider(redirectBases: string[], signingKey: CryptoKey, jwk: object): Promise<void> {
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: redirectBases.map((base) => `${base}/users/oidc/callback`),
        post_logout_redirect_uris: redirectBases.map((base) => `${base}/`),
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['a cookie signing key for the test provider'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'] },
    findAccount: (_ctx, id) => (PEOPLE[id] ? { accountId: id, claims: () => ({ sub: id, ...PEOPLE[id] }) } : undefined),
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  });
  // A hostile token endpoint: the ID token it sends is changed after the provider made it.
  const foreign = (await generateKeyPair('RS256')).privateKey;
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path !== '/token' || !tamper || !body?.id_token) return;
    const claims = decodeJwt(body.id_token);
    const changed = tamper === 'foreign-key' ? claims : tamper(claims);
    body.id_token = await new SignJWT(changed)
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .sign(tamper === 'foreign-key' ? foreign : signingKey);
  });
  idp.on('request', (req) => providerSaw.push([req.method, req.url, JSON.stringify(req.headers)].join('\n')));
  idp.on('request', provider.callback());
}

beforeAll(async () => {
  idp = http.createServer();
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  app = await startWeb({
    oidc: {
      issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      allowedDomains: ['corp.example'],
      autoCreate: true,
      only: false,
      providerName: PROVIDER_NAME,
      allowHttp: true,
      emailVerifiedClaim: 'email_verified',
    },
  });
  // Three more instances on the same database, started together (each its own core and port; the database is
  // migrated by the first): one that makes no account at sign-in (PWPUSH_OIDC_AUTO_CREATE=false), one reading
  // Entra's claim, one closed to anonymous visitors. The browser starts beside them.
  [noAutoCreate, entra, closed, chromium] = await Promise.all([
    startWeb({ oidc: { ...app.settings.oidc!, autoCreate: false } }, { db: app.db }),
    startWeb({ oidc: { ...app.settings.oidc!, emailVerifiedClaim: 'xms_edov' } }, { db: app.db }),
    startWeb({ oidc: app.settings.oidc!, allowAnonymous: false }, { db: app.db }),
    launchChromium(),
  ]);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  await startProvider([app.baseUrl, noAutoCreate.baseUrl, entra.baseUrl, closed.baseUrl], privateKey, jwk);
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await chromium?.close();
  await noAutoCreate?.stop();
  await entra?.stop();
  await closed?.stop();
  await app?.stop();
  idp?.closeAllConnections();
  await new Promise<void>((resolve) => (idp ? idp.close(() => resolve()) : resolve()));
});

/** A fresh browser (its own cookies) that reaches 127.0.0.1 only. */
async function browser(): Promise<{ context: BrowserContext; page: Page; callbacks: string[] }> {
  const context = await chromium.browser.newContext();
  contexts.push(context);
  await context.route('**/*', (route) =>
    new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
  );
  const page = await context.newPage();
  const callbacks: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/users/oidc/callback')) callbacks.push(r.url());
  });
  return { context, page, callbacks };
}

/** Clicks "Sign in with …" and goes through the provider's login and consent pages as `who`. */
async function signInAtProvider(page: Page, who: string, base = app.baseUrl, succeeds = true): Promise<void> {
  await page.goto(`${base}/users/sign_in`);
  await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.waitForURL((url) => url.origin === issuer);
  await page.locator('input[name="login"]').fill(who);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  if (succeeds) await page.waitForURL((url) => url.origin === base && !url.pathname.startsWith('/users/oidc/'));
}

async function hasSession(context: BrowserContext): Promise<boolean> {
  return (await context.cookies(app.baseUrl)).some((c) => c.name === 'sp_session');
}

async function usersWith(email: string): Promise<number> {
  const [row] = await app.db.query<{ n: string }>('select count(*) as n from users where email = $1', [email]);
  return Number(row!.n);
}

async function refusal(page: Page): Promise<string> {
  await page.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
  return (await page.locator('p.error').textContent()) ?? '';
}

describe('single sign-on with a real OpenID provider', () => {
  it('signs alice in (account made and linked to her subject); she makes an API token and sees her pushes', async () => {
    const { context, page, callbacks } = await browser();
    await signInAtProvider(page, 'alice');
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await hasSession(context)).toBe(true);
    expect(callbacks).toHaveLength(1);
    expect(new URL(callbacks[0]!).searchParams.get('state')).toBeTruthy();

    const [user] = await app.db.query<{ id: string; password_hash: string | null }>(
      'select id, password_hash from users where email = $1',
      ['alice@corp.example'],
    );
    expect(user!.password_hash).toBeNull();
    const links = await app.db.query<{ issuer: string; subject: string }>(
      'select issuer, subject from user_identities where user_id = $1',
      [user!.id],
    );
    expect(links).toEqual([{ issuer, subject: 'alice' }]);

    await page.goto(`${app.baseUrl}/users/token`);
    await page.getByRole('button', { name: 'Make a token' }).click();
    const token = (await page.locator('#api-token').textContent())!.trim();
    await page.screenshot({ path: screenshotPath('sso-token-page.png') });
    const made = await fetch(`${app.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'made by alice through SSO', name: 'sso push' } }),
    });
    expect(made.status).toBe(201);
    const { url_token } = (await made.json()) as { url_token: string };
    await page.goto(`${app.baseUrl}/pushes/active`);
    expect(await page.content()).toContain(url_token);
    // A scoped key for her CI, made on the same page: it creates pushes and nothing else.
    await page.goto(`${app.baseUrl}/users/token`);
    await page.locator('#key-name').fill('alice ci');
    await page.locator('input[name="scopes"][value="pushes:create"]').check();
    await page.getByRole('button', { name: 'Make a key' }).click();
    const key = (await page.locator('#api-key-token').textContent())!.trim();
    const byKey = await fetch(`${app.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'made by alice ci' } }),
    });
    expect(byKey.status).toBe(201);
    const listByKey = await fetch(`${app.baseUrl}/api/v2/pushes/active`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(listByKey.status).toBe(403);
    expect(listByKey.headers.get('www-authenticate')).toContain('insufficient_scope');
    // Regenerating the token: the old one stops working.
    await page.goto(`${app.baseUrl}/users/token`);
    await page.getByRole('button', { name: /Make a new token/ }).click();
    await page.locator('#api-token').waitFor();
    const old = await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${token}` } });
    expect(old.status).toBe(401);

    // The callback's answer replayed, in the same browser after sign-out and in another one: refused.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.origin === issuer && url.pathname.startsWith('/session/end'));
    expect(await hasSession(context)).toBe(false);
    await page.goto(callbacks[0]!);
    expect(await refusal(page)).toMatch(/already used|not started in this browser/);
    expect(await hasSession(context)).toBe(false);
    const other = await browser();
    await other.page.goto(callbacks[0]!);
    expect(await refusal(other.page)).toMatch(/already used|not started in this browser/);
    expect(await hasSession(other.context)).toBe(false);

    // The log has the callback's route, never its code, its state, the client secret or the token.
    const log = app.logs.join('\n');
    expect(log).toContain('/users/oidc/callback');
    const answer = new URL(callbacks[0]!).searchParams;
    for (const secret of [answer.get('code')!, answer.get('state')!, CLIENT_SECRET, token]) {
      expect(log).not.toContain(secret);
    }
  });

  it('signs alice in again as the same account (linked by subject)', async () => {
    const { context, page } = await browser();
    await signInAtProvider(page, 'alice');
    expect(await hasSession(context)).toBe(true);
    expect(await usersWith('alice@corp.example')).toBe(1);
  });

  it('refuses bob, whose email the provider does not say is verified: no account, no session', async () => {
    const { context, page } = await browser();
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.locator('input[name="login"]').fill('bob');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await refusal(page)).toMatch(/does not say that your email address is verified/);
    await page.screenshot({ path: screenshotPath('sso-refused.png') });
    expect(await hasSession(context)).toBe(false);
    expect(await usersWith('bob@corp.example')).toBe(0);
  });

  it('refuses carol, whose domain is not allowed: no account, no session', async () => {
    const { context, page } = await browser();
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.locator('input[name="login"]').fill('carol');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await refusal(page)).toMatch(/Accounts of other\.example may not sign in/);
    expect(await hasSession(context)).toBe(false);
    expect(await usersWith('carol@other.example')).toBe(0);
  });

  it('refuses a forged state', async () => {
    const { context, page } = await browser();
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.waitForURL((url) => url.origin === issuer);
    // The attempt this browser started is pending; an answer with another state arrives.
    await page.goto(`${app.baseUrl}/users/oidc/callback?code=forged-code&state=forged-state&iss=${issuer}`);
    expect(await refusal(page)).toMatch(/does not belong to the sign-in started in this browser/);
    expect(await hasSession(context)).toBe(false);
  });

  it('refuses an account already linked to another identity at the provider: no new link, no session', async () => {
    // Another person at the provider holds alice's address (a recreated account there, or a mistake of its admin).
    PEOPLE['alice-twin'] = { email: 'alice@corp.example', email_verified: true, name: 'Alice Twin' };
    const { context, page } = await browser();
    await page.goto(`${app.baseUrl}/users/sign_in`);
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.locator('input[name="login"]').fill('alice-twin');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await refusal(page)).toMatch(/is linked to another identity at Test IdP/);
    expect(await hasSession(context)).toBe(false);
    expect(await usersWith('alice@corp.example')).toBe(1);
    const links = await app.db.query<{ subject: string }>(
      'select l.subject from user_identities l join users u on u.id = l.user_id where u.email = $1',
      ['alice@corp.example'],
    );
    expect(links.map((l) => l.subject)).toEqual(['alice']);
  });

  it('refuses a person without an account where accounts are not made at sign-in: no account, no session', async () => {
    PEOPLE.erin = { email: 'erin@corp.example', email_verified: true, name: 'Erin' };
    const { context, page } = await browser();
    await page.goto(`${noAutoCreate.baseUrl}/users/sign_in`);
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.locator('input[name="login"]').fill('erin');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await refusal(page)).toMatch(/There is no account for erin@corp\.example on this instance/);
    expect(await context.cookies(noAutoCreate.baseUrl)).not.toContainEqual(
      expect.objectContaining({ name: 'sp_session' }),
    );
    expect(await usersWith('erin@corp.example')).toBe(0);
  });

  it('says the provider cannot be reached when it is down, and makes nothing', async () => {
    // An instance whose provider listens nowhere (a closed loopback port).
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadIssuer = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = await startWeb({ oidc: { ...app.settings.oidc!, issuer: deadIssuer } }, { db: app.db });
    try {
      const { context, page } = await browser();
      await page.goto(`${down.baseUrl}/users/sign_in`);
      await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
      expect(await refusal(page)).toMatch(/Test IdP cannot be reached right now/);
      expect(await context.cookies(down.baseUrl)).not.toContainEqual(expect.objectContaining({ name: 'sp_session' }));
    } finally {
      await down.stop();
    }
  });

  it('refuses a person whose provider sends no email_verified (as Entra ID), under the default setting', async () => {
    const { context, page } = await browser();
    await signInAtProvider(page, 'frank', app.baseUrl, false);
    expect(await refusal(page)).toMatch(/does not say that your email address is verified \(email_verified\)/);
    expect(await hasSession(context)).toBe(false);
    expect(await usersWith('frank@corp.example')).toBe(0);
  });

  it('signs that person in where PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM=xms_edov, and only on that claim', async () => {
    // The four people at once, each in a browser of their own (independent accounts, cookies and provider sessions).
    const signedIn = ['frank', 'grace'].map(async (who) => {
      const { context, page } = await browser();
      await signInAtProvider(page, who, entra.baseUrl);
      expect(new URL(page.url()).pathname).toBe('/');
      expect(await context.cookies(entra.baseUrl)).toContainEqual(expect.objectContaining({ name: 'sp_session' }));
      expect(await usersWith(`${who}@corp.example`)).toBe(1);
    });
    // xms_edov false, and a person with email_verified but no xms_edov (the named claim is the only proof): refused.
    const refused = ['heidi', 'alice'].map(async (who) => {
      const { context, page } = await browser();
      await signInAtProvider(page, who, entra.baseUrl, false);
      expect(await refusal(page)).toMatch(/does not say that your email address is verified \(xms_edov\)/);
      expect(await context.cookies(entra.baseUrl)).not.toContainEqual(expect.objectContaining({ name: 'sp_session' }));
    });
    await Promise.all([...signedIn, ...refused]);
    expect(await usersWith('heidi@corp.example')).toBe(0);
  });

  const hostile: [string, Tamper, RegExp][] = [
    ['a wrong nonce', (c) => ({ ...c, nonce: 'not-the-nonce-of-this-attempt' }), /wrong nonce/],
    ['a token from another issuer', (c) => ({ ...c, iss: 'http://127.0.0.1:9/another-issuer' }), /another provider/],
    ['a token for another audience', (c) => ({ ...c, aud: 'another-client' }), /another application/],
    ['a token not signed by the provider', 'foreign-key', /could not be verified/],
  ];
  for (const [name, change, message] of hostile) {
    it(`refuses ${name}: no account, no session`, async () => {
      // dave is not known before, so an account made by mistake would show.
      PEOPLE.dave = { email: 'dave@corp.example', email_verified: true, name: 'Dave' };
      const { context, page } = await browser();
      tamper = change;
      try {
        await page.goto(`${app.baseUrl}/users/sign_in`);
        await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
        await page.locator('input[name="login"]').fill('dave');
        await page.locator('input[name="password"]').fill('anything');
        await page.getByRole('button', { name: 'Sign-in' }).click();
        await page.getByRole('button', { name: 'Continue' }).click();
        expect(await refusal(page)).toMatch(message);
      } finally {
        tamper = null;
      }
      expect(await hasSession(context)).toBe(false);
      expect(await usersWith('dave@corp.example')).toBe(0);
    });
  }
});

describe("issue 45: a sign-up nobody confirmed never captures a real person's single sign-on", () => {
  const KATE = 'kate@corp.example';
  const ATTACKER = 'the attacker s own long password';
  let kateId = '';

  it("kate's provider sign-in claims the account an attacker signed up with her address: nothing of theirs survives", async () => {
    PEOPLE.kate = { email: KATE, email_verified: true, name: 'Kate' };
    // The default instance sends no email, so a sign-up makes the account at once, with nobody's proof of the address.
    const attacker = new Visitor(app.baseUrl);
    expect((await attacker.signUp(KATE, ATTACKER)).status).toBe(303);
    const [made] = await app.db.query<{ id: string; email_confirmed_at: string | null }>(
      'select id, email_confirmed_at from users where email = $1',
      [KATE],
    );
    expect(made!.email_confirmed_at).toBeNull();
    kateId = made!.id;
    // The attacker's second factor, account token and key, and their signed-in session.
    const { secret } = await app.core.web!.twoFactor.begin(kateId, KATE);
    await app.core.web!.twoFactor.confirm(kateId, await generate({ secret }), '127.0.0.1');
    const token = await app.core.users.rotateToken(KATE);
    const key = await app.core.users.keys.create(kateId, { name: 'attacker', scopes: ['pushes:read'] }, null);
    expect((await attacker.fetch('/users/token')).status).toBe(200);

    // Kate signs in with the provider, which says her address is verified: the account becomes hers, emptied.
    const { context, page } = await browser();
    await signInAtProvider(page, 'kate', app.baseUrl, false);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    const notice = await page.locator('main').innerText();
    expect(notice).toContain('whose email nobody had confirmed');
    expect(notice).toContain('its password, its two-factor sign-in, its API token and 1 API key');
    expect(await hasSession(context)).toBe(true);
    const links = await app.db.query<{ user_id: string }>('select user_id from user_identities where subject = $1', [
      'kate',
    ]);
    expect(links).toEqual([{ user_id: kateId }]);

    // The attacker: signed out, and their password, token and key no longer open anything.
    expect((await attacker.fetch('/users/token')).status).toBe(302);
    expect((await new Visitor(app.baseUrl).signIn(KATE, ATTACKER)).status).not.toBe(303);
    for (const credential of [token, key.token]) {
      const answer = await fetch(`${app.baseUrl}/api/v2/pushes/active`, {
        headers: { authorization: `Bearer ${credential}` },
      });
      expect(answer.status).toBe(401);
    }
    const [after] = await app.db.query<Record<string, unknown>>(
      'select password_hash, totp_secret, email_confirmed_at from users where id = $1',
      [kateId],
    );
    expect(after).toMatchObject({ password_hash: null, totp_secret: null });
    expect(after!.email_confirmed_at).not.toBeNull();
  });

  it("asks for the account's own second factor after the provider, and gives no session before it", async () => {
    const { secret } = await app.core.web!.twoFactor.begin(kateId, KATE);
    await app.core.web!.twoFactor.confirm(kateId, await generate({ secret }), '127.0.0.1');
    const { context, page } = await browser();
    await signInAtProvider(page, 'kate', app.baseUrl, false);
    await page.waitForURL(`${app.baseUrl}/users/two_factor/verify`);
    expect(await hasSession(context)).toBe(false);
    // A code of the next time step (the one confirm used is spent).
    await page
      .getByLabel(/Code from your authenticator app/)
      .fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${app.baseUrl}/`);
    const session = (await context.cookies(app.baseUrl)).find((c) => c.name === 'sp_session')!;
    expect(decodeJwt(session.value).f).toBe('oidc+totp');
  });
});

describe('PWPUSH_OIDC_ONLY', () => {
  it('shows only the provider on the sign-in page and refuses password sign-in and sign-up', async () => {
    const only = await startWeb({ oidc: { ...app.settings.oidc!, only: true } }, { db: app.db });
    try {
      const v = new Visitor(only.baseUrl);
      const { html, csrf } = await v.page('/users/sign_in');
      expect(html).toContain(`Sign in with ${PROVIDER_NAME}`);
      expect(html).not.toContain('name="password"');
      expect(html).not.toContain('/users/sign_up');
      const post = await v.post('/users/sign_in', { _csrf: csrf, email: 'alice@corp.example', password: 'x' });
      expect(post.status).toBe(403);
      expect((await v.page('/users/sign_up')).response.status).toBe(403);
      expect(v.cookies.has('sp_session')).toBe(false);
    } finally {
      await only.stop();
    }
  });
});

describe('the key of an end-to-end encrypted link, across the trip to the provider', () => {
  /** Seals a push in "the sender's browser" (the SDK), makes it on the closed instance, and returns its share link. */
  async function sealedLink(plaintext: string): Promise<{ link: string; key: string }> {
    const owner = await closed.core.users.createUser(`sealer-${Date.now()}@corp.example`, 'a long enough password');
    const sealed = await sealPush({ payload: plaintext, retrieval_step: true });
    const push = await closed.core.pushes.create(sealed.push, {
      actor: { userId: owner.userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
      baseUrl: closed.baseUrl,
    });
    return { link: buildShareLink(push.html_url, sealed.key), key: sealed.key };
  }

  it('comes back to the link after signing in with the provider, decrypts, and is never sent anywhere', async () => {
    const plaintext = `sealed for the trip ${Date.now()}`;
    const { link, key } = await sealedLink(plaintext);
    const { context, page } = await browser();
    const sent: string[] = [];
    const providerUrls: string[] = [];
    context.on('request', (r) => {
      const url = new URL(r.url());
      if (url.origin === issuer) providerUrls.push(r.url());
      url.hash = '';
      sent.push([r.method(), url.href, JSON.stringify(r.headers()), r.postData() ?? ''].join('\n'));
    });
    page.on('framenavigated', (frame) => {
      if (new URL(frame.url()).origin === issuer) providerUrls.push(frame.url());
    });
    const before = providerSaw.length;

    await page.goto(link);
    await page.getByRole('heading', { name: 'Sign in to open this secret' }).waitFor();
    await page.locator('#sign-in-link').click();
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.waitForURL((url) => url.origin === issuer);
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    // Back at the link, fragment and all, signed in; the tab keeps nothing after.
    await page.waitForURL((url) => url.origin === closed.baseUrl && url.pathname.startsWith('/p/'));
    expect(page.url()).toBe(link);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe(plaintext);

    // The key went to no server: not in any request the browser made (address, headers, body), not in any request
    // the provider received, not in any address of the provider's pages (its scripts could read a fragment there),
    // not in the log of the instance.
    expect(sent.length).toBeGreaterThan(10);
    expect(providerSaw.length - before).toBeGreaterThan(3);
    expect(providerUrls.length).toBeGreaterThan(2);
    const forms = [key, encodeURIComponent(key), Buffer.from(key).toString('base64')];
    for (const text of [...sent, ...providerSaw.slice(before), ...providerUrls, closed.logs.join('\n')])
      for (const form of [...forms, plaintext]) expect(text.includes(form), text.slice(0, 120)).toBe(false);
  });

  it("keeps no key for a way back that is not a secret's page, and restores none on another secret's page", async () => {
    const { link, key } = await sealedLink(`not for elsewhere ${Date.now()}`);
    const { page } = await browser();
    // A sign-in page whose way back is off-site (safeNext makes it "/"), with a key in its fragment.
    await page.goto(`${closed.baseUrl}/users/sign_in?next=${encodeURIComponent('//evil.example/p/x')}#k=${key}`);
    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.waitForURL((url) => url.origin === issuer);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === closed.baseUrl && !url.pathname.startsWith('/users/oidc/'));
    expect(page.url()).toBe(`${closed.baseUrl}/`);

    // A key kept for one secret's page is not put on another's.
    const other = await sealedLink(`another ${Date.now()}`);
    await page.goto(`${closed.baseUrl}/`);
    await page.evaluate(
      ([path, hash]) => sessionStorage.setItem('secret-push:fragment', JSON.stringify({ path, hash, at: Date.now() })),
      [new URL(link).pathname, `#k=${key}`],
    );
    const bare = other.link.split('#')[0]!;
    await page.goto(bare);
    await page.locator('#push-error').waitFor();
    expect(await page.locator('#push-error').textContent()).toMatch(/key/i);
    expect(page.url()).toBe(bare);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
  });
});

describe('a push for specific people, opened by single sign-on as a listed address (issue 42)', () => {
  async function pushFor(recipients: string[], payload: string, on: WebApp = closed) {
    const owner = await on.core.users.createUser(`sender-${Date.now()}@corp.example`, 'a long enough password');
    const ctx = {
      actor: { userId: owner.userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
      baseUrl: on.baseUrl,
    };
    const push = await on.core.pushes.create(
      { payload, recipient_emails: recipients, expire_after_views: 3, retrieval_step: true },
      ctx,
    );
    const views = async () => (await on.core.pushes.state(push.url_token, ctx))!.views_remaining;
    return { push, views };
  }

  it('shows the secret to alice, signed in at the provider as a listed address, without a code; refuses her on a push for others', async () => {
    const mine = await pushFor(['Alice@corp.example'], `for alice ${Date.now()}`);
    const theirs = await pushFor(['dora@corp.example'], `for dora ${Date.now()}`);
    const { page } = await browser();
    await signInAtProvider(page, 'alice', closed.baseUrl);

    await page.goto(mine.push.html_url);
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toMatch(/^for alice /);
    expect(await mine.views()).toBe(2);

    // Signed in as someone the sender did not name (and no codes on this instance): said so, nothing to reveal.
    await page.goto(theirs.push.html_url);
    await page.locator('#access-intro').waitFor();
    expect(await page.locator('#access-intro').textContent()).toMatch(
      /signed in as alice@corp\.example, which is not one of the people the sender named/,
    );
    expect(await page.getByRole('button', { name: 'Reveal the secret' }).count()).toBe(0);
    expect(await page.locator('#secret-value').count()).toBe(0);
    expect(await theirs.views()).toBe(3);
  });

  it('offers a signed-out visitor "Sign in with …" on the page (no code without a relay), and opens the secret after it', async () => {
    const mine = await pushFor(['alice@corp.example'], `for alice on an open instance ${Date.now()}`, app);
    const { page } = await browser();
    await page.goto(mine.push.html_url);
    await page.locator('#access-step').waitFor();
    expect(await page.locator('#access-intro').textContent()).toContain(`Sign in with ${PROVIDER_NAME}`);
    expect(await page.locator('#code-request-form, #code-form').count()).toBe(0);
    expect((await page.content()).toLowerCase()).not.toContain('alice@corp.example');

    await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.waitForURL((url) => url.origin === issuer);
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    // Back at the link, signed in as a listed address: the ordinary reveal step, and the secret.
    await page.waitForURL((url) => url.origin === app.baseUrl && url.pathname === `/p/${mine.push.url_token}`);
    expect(await page.locator('#access-step').count()).toBe(0);
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toMatch(/^for alice on an open instance /);
    expect(await mine.views()).toBe(2);
  });
});
