/**
 * A real OpenID provider (the `oidc-provider` package) in the test process on 127.0.0.1, for the tests of a
 * workspace's single sign-on (the leaver's scenario, `require_single_sign_on`): its people sign in on its own login
 * and consent pages (devInteractions), any password. single-sign-on.test.ts keeps its own, with hostile answers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { BrowserContext, Page } from 'playwright-core';
import type { Settings } from '../../src/core.js';

const PROVIDER_NAME = 'Test IdP';
const CLIENT_ID = 'secret-push-workspaces';
const CLIENT_SECRET = 'a client secret long enough for HS256 at the provider';

export interface OpenIdProvider {
  issuer: string;
  /** The instance's `oidc` settings for this provider (any email domain; accounts made at first sign-in). */
  settings: NonNullable<Settings['oidc']>;
  /** Registers the instances (their base URLs) as the provider's client; call once, after they listen. */
  serve(redirectBases: string[]): Promise<void>;
  close(): Promise<void>;
}

/** `people`: the provider's accounts by login, each with a verified email. */
export async function startOpenIdProvider(people: Record<string, string>): Promise<OpenIdProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    settings: {
      issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      allowedDomains: [],
      autoCreate: true,
      only: false,
      providerName: PROVIDER_NAME,
      allowHttp: true,
      emailVerifiedClaim: 'email_verified',
    },
    async serve(redirectBases) {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
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
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        findAccount: (_ctx, id) => {
          const email = people[id];
          return email ? { accountId: id, claims: () => ({ sub: id, email, email_verified: true }) } : undefined;
        },
        features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      });
      server.on('request', provider.callback());
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A browser context that reaches 127.0.0.1 only (the provider's built-in pages import a web font). */
export async function localContext(browser: { newContext(): Promise<BrowserContext> }): Promise<BrowserContext> {
  const context = await browser.newContext();
  await context.route('**/*', (route) =>
    new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
  );
  return context;
}

/** On the provider's own pages (the "Sign in with …" button was pressed): logs in as `who` and consents. */
export async function loginAtProvider(page: Page, issuer: string, who: string): Promise<void> {
  await page.waitForURL((url) => url.origin === issuer);
  await page.locator('input[name="login"]').fill(who);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** Signs `who` in by single sign-on from the instance's sign-in page; back on the instance at `next` (or `/`). */
export async function signInBySso(page: Page, base: string, issuer: string, who: string, next = ''): Promise<void> {
  await page.goto(`${base}/users/sign_in${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await loginAtProvider(page, issuer, who);
  await page.waitForURL((url) => url.origin === base && !url.pathname.startsWith('/users/oidc/'));
}
