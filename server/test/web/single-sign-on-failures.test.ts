/**
 * Issue 39: a sign-in that fails at the provider logs why, for the operator: the stage (discovery, token exchange) and
 * the cause (DNS, connection, TLS, an HTTP status, a mismatched issuer, the provider's own OAuth error code), never the
 * client secret, a code or a token. Real failures on this machine: a name that does not resolve (`.invalid`), a closed
 * port, a server answering 404, TLS spoken to a plain HTTP server, a discovery document naming another issuer, and a
 * real OpenID provider (`oidc-provider`) refusing a forged code and a wrong client secret. Each goes through the real
 * core (createCore on the test database) with a logger that keeps what it is given.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OidcSettings } from '../../src/config/settings.js';
import { createCore, type Core } from '../../src/core.js';
import { freePort } from '../../src/db/embedded.js';
import { createMigratedDatabase, makeSettings, type TestDatabase } from '../support/db.js';

const CLIENT_ID = 'secret-push-failures';
const CLIENT_SECRET = 'the client secret that must never reach a log line';

let db: TestDatabase;
let idp: http.Server;
let issuer = '';
/** Answers 404 to everything, or, under /other, a discovery document naming another issuer. */
let plain: http.Server;
let plainUrl = '';
const cores: Core[] = [];

beforeAll(async () => {
  db = await createMigratedDatabase('sp_sso_fail');
  idp = http.createServer();
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: ['http://127.0.0.1:9/users/oidc/callback'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    cookies: { keys: ['a cookie signing key for the test provider'] },
  });
  idp.on('request', provider.callback());
  plain = http.createServer((req, res) => {
    if (req.url?.startsWith('/other/')) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ issuer: 'http://127.0.0.1:1/someone-else', authorization_endpoint: 'http://x/a' }));
    } else res.writeHead(404).end('no such page');
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const core of cores) await core.close();
  idp?.closeAllConnections();
  idp?.close();
  plain?.closeAllConnections();
  plain?.close();
  await db?.drop();
});

/** A core whose single sign-on points at `oidc`, and the lines its logger received. */
async function coreWith(oidc: Partial<OidcSettings>): Promise<{ core: Core; lines: [object, string][] }> {
  const lines: [object, string][] = [];
  const logger = {
    info: () => undefined,
    // Only the provider's failures: the test database's role is a superuser, which the core warns about too.
    warn: (obj: object, msg: string) => void (msg === 'single sign-on failed' && lines.push([obj, msg])),
    error: (obj: object, msg: string) => void lines.push([obj, msg]),
  };
  const settings = makeSettings({
    databaseUrl: db.url,
    oidc: {
      issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      allowedDomains: [],
      autoCreate: true,
      only: false,
      providerName: 'Test IdP',
      allowHttp: true,
      emailVerifiedClaim: 'email_verified',
      ...oidc,
    },
  });
  const core = await createCore(settings, { logger });
  cores.push(core);
  return { core, lines };
}

/** Starts a sign-in (discovery) expecting the refusal, and returns the one failure line logged. */
async function discoveryFailure(oidc: Partial<OidcSettings>): Promise<Record<string, unknown>> {
  const { core, lines } = await coreWith(oidc);
  await expect(core.web!.singleSignOn!.start('http://127.0.0.1:9/users/oidc/callback')).rejects.toMatchObject({
    reason: 'unavailable',
  });
  expect(lines.map(([, msg]) => msg)).toEqual(['single sign-on failed']);
  const text = JSON.stringify(lines);
  expect(text).not.toContain(CLIENT_SECRET);
  return (lines[0]![0] as { single_sign_on: Record<string, unknown> }).single_sign_on;
}

describe('a sign-in that fails at the provider', () => {
  it('logs a provider name that does not resolve as discovery, dns, ENOTFOUND', async () => {
    const failure = await discoveryFailure({
      issuer: 'https://no-such-provider.invalid/realms/main',
      allowHttp: false,
    });
    expect(failure).toEqual({ stage: 'discovery', cause: 'dns', code: 'ENOTFOUND' });
  });

  it('logs a closed port as discovery, connection, ECONNREFUSED', async () => {
    const failure = await discoveryFailure({ issuer: `http://127.0.0.1:${await freePort()}` });
    expect(failure).toEqual({ stage: 'discovery', cause: 'connection', code: 'ECONNREFUSED' });
  });

  it('logs TLS spoken to a plain HTTP server as discovery, tls, with the TLS error code', async () => {
    const failure = await discoveryFailure({ issuer: plainUrl.replace('http:', 'https:'), allowHttp: false });
    expect(failure).toMatchObject({ stage: 'discovery', cause: 'tls' });
    expect(String(failure.code)).toMatch(/^ERR_SSL_|^ERR_TLS_/);
  });

  it('logs a discovery document that is not there as discovery, http_status, 404', async () => {
    const failure = await discoveryFailure({ issuer: `${plainUrl}/realms/main` });
    expect(failure).toEqual({
      stage: 'discovery',
      cause: 'http_status',
      code: 'OAUTH_RESPONSE_IS_NOT_CONFORM',
      status: 404,
    });
  });

  it('logs a discovery document of another issuer as discovery, issuer_mismatch', async () => {
    const failure = await discoveryFailure({ issuer: `${plainUrl}/other/realm` });
    expect(failure).toEqual({
      stage: 'discovery',
      cause: 'issuer_mismatch',
      code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
    });
  });

  it("logs a code the provider refuses as token_exchange with the provider's error code (invalid_grant)", async () => {
    const { core, lines } = await coreWith({});
    const sso = core.web!.singleSignOn!;
    const { transaction } = await sso.start('http://127.0.0.1:9/users/oidc/callback');
    const forgedCode = 'a-code-this-provider-never-issued';
    const callback = new URL(
      `http://127.0.0.1:9/users/oidc/callback?code=${forgedCode}&state=${transaction.state}&iss=${encodeURIComponent(issuer)}`,
    );
    await expect(sso.finish(callback, transaction)).rejects.toMatchObject({ reason: 'provider_error' });
    expect(lines).toHaveLength(1);
    expect(lines[0]![1]).toBe('single sign-on failed');
    expect(lines[0]![0]).toEqual({
      single_sign_on: {
        stage: 'token_exchange',
        cause: 'provider_error',
        code: 'OAUTH_RESPONSE_BODY_ERROR',
        provider_error: 'invalid_grant',
        status: 400,
      },
    });
    const text = JSON.stringify(lines);
    for (const secret of [CLIENT_SECRET, forgedCode, transaction.codeVerifier, transaction.nonce])
      expect(text).not.toContain(secret);
  });

  it("logs a wrong client secret as token_exchange with the provider's invalid_client, and not the secret", async () => {
    const wrongSecret = 'a wrong client secret that must not be logged either';
    const { core, lines } = await coreWith({ clientSecret: wrongSecret });
    const sso = core.web!.singleSignOn!;
    const { transaction } = await sso.start('http://127.0.0.1:9/users/oidc/callback');
    const callback = new URL(
      `http://127.0.0.1:9/users/oidc/callback?code=whatever&state=${transaction.state}&iss=${encodeURIComponent(issuer)}`,
    );
    await expect(sso.finish(callback, transaction)).rejects.toMatchObject({ reason: 'provider_error' });
    expect(lines.map(([obj]) => obj)).toEqual([
      {
        single_sign_on: {
          stage: 'token_exchange',
          cause: 'provider_error',
          code: 'OAUTH_RESPONSE_BODY_ERROR',
          provider_error: 'invalid_client',
          status: 401,
        },
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain(wrongSecret);
  });
});
