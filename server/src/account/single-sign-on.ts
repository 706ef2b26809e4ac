/**
 * Single sign-on with an OpenID Connect provider (issue 25), through `openid-client` (v6, functional API):
 *
 * - the provider's metadata comes from discovery (`<issuer>/.well-known/openid-configuration`, whose `issuer` must
 *   be the configured one), fetched on first use and again after a failure;
 * - the authorization code flow, with PKCE (S256), `state` and `nonce`: `start` makes all three for one browser,
 *   `finish` exchanges the code and has openid-client check the ID token (its signature against the provider's
 *   keys, which openid-client leaves out by default for a token straight from the token endpoint; `iss`, `aud`,
 *   `nonce`, times) and the state;
 * - `account` decides who signs in: the provider must say the email is verified (`email_verified` true, or the
 *   claim PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM names, such as Entra ID's `xms_edov`), the
 *   email's domain must be allowed, then the user linked to the provider's subject, else the user with that email
 *   (linked now), else a new user (PWPUSH_OIDC_AUTO_CREATE). A user with that email whose address nobody proved (a
 *   sign-up without email) is never linked as it is: the provider's verified email is the first proof, and the
 *   account is claimed (./claim.ts: every credential its maker set is removed) before it is linked (issue 45). Every
 *   refusal is a SignInRefusal saying why, and makes no account;
 * - logout is RP-initiated (`end_session_endpoint`) where the provider offers it.
 */
import { randomUUID } from 'node:crypto';
import type * as OpenIdClient from 'openid-client';
import type { OidcSettings } from '../config/settings.js';
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';
import { EMAIL, normalizeEmail } from '../user/user-service.js';
import type { AccountUser } from './account-service.js';
import { claimUnproven, type Claimed } from './claim.js';
import { joinByEmailDomain } from '../workspace/workspace-rules.js';
import { providerFailure, type ProviderFailure, type ProviderStage } from './provider-failure.js';

/** Where a failed call to the provider is reported (the server's log): its stage and cause, in codes, never a secret. */
export type ProviderFailureLog = (failure: ProviderFailure) => void;

/** A sign-in refused for a reason the person should read (the page shows `message`; `reason` is for tests and logs). */
export class SignInRefusal extends Error {
  constructor(
    readonly reason:
      | 'state'
      | 'provider_error'
      | 'token'
      | 'issuer'
      | 'audience'
      | 'nonce'
      | 'unverified_email'
      | 'domain'
      | 'no_account'
      | 'linked_elsewhere'
      | 'unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'SignInRefusal';
  }
}

/** What one browser must bring back to the callback: kept by the pages in a signed, short-lived cookie. */
export interface SignInTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
}

interface ProviderClaims {
  issuer: string;
  subject: string;
  email: string;
}

export interface SingleSignOn {
  readonly providerName: string;
  /** The provider's authorization URL for this browser, and what it must bring back. */
  start(redirectUri: string): Promise<{ url: string; transaction: SignInTransaction }>;
  /** Exchanges the code of the callback URL and checks the ID token; SignInRefusal on anything wrong. */
  finish(callbackUrl: URL, transaction: SignInTransaction): Promise<ProviderClaims>;
  /**
   * The user these claims sign in (linked or made now), or SignInRefusal; `claimed` when an account whose email
   * nobody had proven was claimed by this sign-in (what was removed from it).
   */
  account(claims: ProviderClaims, now?: Date): Promise<AccountUser & { claimed?: Claimed }>;
  /** The provider's logout URL (RP-initiated logout), or null when it offers none. */
  logoutUrl(postLogoutRedirectUri: string): Promise<string | null>;
}

export const USER_IDENTITIES = defineTable<{
  id: string;
  userId: string;
  issuer: string;
  subject: string;
  createdAt: Date;
  lastSignInAt: Date;
}>('user_identities', {
  id: column.bigint('id'),
  userId: column.text('user_id'),
  issuer: column.text('issuer'),
  subject: column.text('subject'),
  createdAt: column.date('created_at'),
  lastSignInAt: column.date('last_sign_in_at'),
});

interface UserRow {
  id: string;
  email: string;
  session_version: number;
}

const S = {
  linked: sql<{ issuer: string; subject: string; now: Date }, UserRow>(
    `update user_identities i set last_sign_in_at = :now from users u
     where i.issuer = :issuer and i.subject = :subject and u.id = i.user_id
     returning u.id, u.email, u.session_version`,
  ),
  byEmail: sql<{ email: string }, UserRow & { proven: boolean }>(
    'select id, email, session_version, email_confirmed_at is not null as proven from users where email = :email for update',
  ),
  otherSubject: sql<{ userId: string; issuer: string; subject: string }, { id: string }>(
    'select id from user_identities where user_id = :userId and issuer = :issuer and subject <> :subject',
  ),
  createUser: sql<{ id: string; email: string; now: Date }>(
    `insert into users (id, email, password_hash, created_at, updated_at, session_version, email_confirmed_at)
     values (:id, :email, null, :now, :now, 1, :now) on conflict (email) do nothing`,
  ),
  link: sql<{ userId: string; issuer: string; subject: string; now: Date }>(
    `insert into user_identities (user_id, issuer, subject, created_at, last_sign_in_at)
     values (:userId, :issuer, :subject, :now, :now) on conflict (issuer, subject) do nothing`,
  ),
};

const accountOf = (row: UserRow): AccountUser => ({
  userId: row.id,
  email: row.email,
  sessionVersion: Number(row.session_version),
});

/** The refusal for an error of openid-client's code exchange and ID token checks. */
/**
 * openid-client (and jose under it, about 15 MB of memory), loaded with the first sign-in's discovery: a process of an
 * instance without single sign-on, or before its first sign-in, never holds it.
 */
let client: typeof OpenIdClient | undefined;
const loadClient = async () => (client ??= await import('openid-client'));

function refusalOf(error: unknown): SignInRefusal {
  if (error instanceof SignInRefusal) return error;
  const e = error as { code?: string; cause?: { cause?: { claim?: string }; claim?: string } } | undefined;
  const claim = e?.cause?.cause?.claim ?? e?.cause?.claim;
  if (e?.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && claim === 'iss')
    return new SignInRefusal('issuer', 'The sign-in token was issued by another provider than this instance trusts.');
  if (e?.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && claim === 'aud')
    return new SignInRefusal('audience', 'The sign-in token was made for another application, not this one.');
  if (e?.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && claim === 'nonce')
    return new SignInRefusal('nonce', 'The sign-in token does not belong to this sign-in attempt (wrong nonce).');
  if (client && (error instanceof client.AuthorizationResponseError || error instanceof client.ResponseBodyError))
    return new SignInRefusal('provider_error', 'The provider refused the sign-in. Start again.');
  return new SignInRefusal('token', 'The answer of the provider could not be verified. Start again.');
}

/**
 * Whether the provider's claim says the email is verified. `email_verified` is a JSON boolean (OpenID Connect Core
 * 5.1), so only `true` counts. Another claim named by PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM also counts as the strings
 * "true" and "1": Entra ID's `xms_edov`, a "Boolean" in its documentation, has been seen sent either way.
 */
function saysVerified(claim: string, value: unknown): boolean {
  if (value === true) return true;
  return claim !== 'email_verified' && (value === 'true' || value === '1');
}

export function createSingleSignOn(
  settings: OidcSettings,
  db: Db,
  logFailure: ProviderFailureLog = () => undefined,
): SingleSignOn {
  const verifiedClaim = settings.emailVerifiedClaim;
  const report = (stage: ProviderStage, error: unknown) => logFailure(providerFailure(stage, error));
  let config: Promise<OpenIdClient.Configuration> | null = null;
  const configuration = () => {
    config ??= loadClient()
      .then((c) =>
        c.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
          execute: [
            // The ID token's signature is checked against the provider's keys (jwks_uri) too, not only the TLS of
            // the token endpoint that openid-client relies on by default (OpenID Connect Core 3.1.3.7).
            c.enableNonRepudiationChecks,
            // Only with PWPUSH_OIDC_ALLOW_HTTP, which the settings refuse in production.
            ...(settings.allowHttp ? [c.allowInsecureRequests] : []),
          ],
          timeout: 10,
        }),
      )
      .catch((error: unknown) => {
        config = null;
        report('discovery', error);
        throw error;
      });
    return config.catch(() => {
      throw new SignInRefusal('unavailable', `${settings.providerName} cannot be reached right now. Try again later.`);
    });
  };

  async function linkOrCreate(claims: ProviderClaims, now: Date): Promise<AccountUser & { claimed?: Claimed }> {
    return db.transaction(async (tx) => {
      let [user] = await tx.query(S.byEmail, { email: claims.email });
      if (!user) {
        if (!settings.autoCreate)
          throw new SignInRefusal(
            'no_account',
            `There is no account for ${claims.email} on this instance, and accounts are not made at sign-in. Ask its administrator for one.`,
          );
        await tx.query(S.createUser, { id: randomUUID(), email: claims.email, now });
        [user] = await tx.query(S.byEmail, { email: claims.email });
      }
      const other = await tx.query(S.otherSubject, {
        userId: user!.id,
        issuer: claims.issuer,
        subject: claims.subject,
      });
      if (other.length > 0)
        throw new SignInRefusal(
          'linked_elsewhere',
          `The account of ${claims.email} is linked to another identity at ${settings.providerName}. Ask the administrator.`,
        );
      // The provider's verified email is the first proof of an address nobody had proven: claimed, then linked.
      const claimed = user!.proven ? null : await claimUnproven(tx, user!.id, now);
      await tx.query(S.link, { userId: user!.id, issuer: claims.issuer, subject: claims.subject, now });
      if (!claimed) return accountOf(user!);
      return { ...accountOf({ ...user!, session_version: Number(user!.session_version) + 1 }), claimed };
    });
  }

  return {
    providerName: settings.providerName,

    async start(redirectUri) {
      const cfg = await configuration();
      const client = await loadClient();
      const transaction: SignInTransaction = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
      };
      const url = client.buildAuthorizationUrl(cfg, {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
        code_challenge_method: 'S256',
        state: transaction.state,
        nonce: transaction.nonce,
      });
      return { url: url.href, transaction };
    },

    async finish(callbackUrl, transaction) {
      if (callbackUrl.searchParams.get('state') !== transaction.state)
        throw new SignInRefusal('state', 'This sign-in answer does not belong to the sign-in started in this browser.');
      const cfg = await configuration();
      const client = await loadClient();
      let claims: OpenIdClient.IDToken | undefined;
      let profile: Record<string, unknown>;
      let stage: ProviderStage = 'token_exchange';
      try {
        const tokens = await client.authorizationCodeGrant(cfg, callbackUrl, {
          pkceCodeVerifier: transaction.codeVerifier,
          expectedState: transaction.state,
          expectedNonce: transaction.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
        if (!claims) throw new SignInRefusal('token', 'The provider sent no ID token.');
        profile = claims;
        // Providers that keep the email out of the ID token (oidc-provider's default, some Keycloak set-ups) give it
        // at the userinfo endpoint, for the same subject (openid-client checks that `sub` matches).
        if (claims.email === undefined || claims[verifiedClaim] === undefined) {
          stage = 'userinfo';
          profile = { ...(await client.fetchUserInfo(cfg, tokens.access_token, claims.sub)), ...claims };
        }
      } catch (error) {
        if (!(error instanceof SignInRefusal)) report(stage, error);
        throw refusalOf(error);
      }
      if (!saysVerified(verifiedClaim, profile[verifiedClaim]))
        throw new SignInRefusal(
          'unverified_email',
          `${settings.providerName} does not say that your email address is verified (${verifiedClaim}), so it cannot sign you in here. Verify it with ${settings.providerName} first.`,
        );
      const email = typeof profile.email === 'string' ? normalizeEmail(profile.email) : '';
      if (email.length > 320 || !EMAIL.test(email) || email.includes('\u0000'))
        throw new SignInRefusal('unverified_email', `${settings.providerName} sent no usable email address.`);
      const domain = email.slice(email.lastIndexOf('@') + 1);
      if (settings.allowedDomains.length > 0 && !settings.allowedDomains.includes(domain))
        throw new SignInRefusal(
          'domain',
          `Accounts of ${domain} may not sign in to this instance. Use an address of ${settings.allowedDomains.join(', ')}.`,
        );
      if (typeof claims.sub !== 'string' || claims.sub.length === 0 || claims.sub.length > 255)
        throw new SignInRefusal('token', 'The sign-in token names no usable subject.');
      return { issuer: claims.iss, subject: claims.sub, email };
    },

    async account(claims, now = new Date()) {
      const [linked] = await db.query(S.linked, { issuer: claims.issuer, subject: claims.subject, now });
      const user = linked ? accountOf(linked) : await linkOrCreate(claims, now);
      // A workspace tied to the person's email domain takes them in as a member (issue 41; ../workspace/).
      await joinByEmailDomain(db, user.userId, user.email, now);
      return user;
    },

    async logoutUrl(postLogoutRedirectUri) {
      const cfg = await configuration().catch(() => null);
      if (!cfg?.serverMetadata().end_session_endpoint) return null;
      return (await loadClient()).buildEndSessionUrl(cfg, { post_logout_redirect_uri: postLogoutRedirectUri }).href;
    },
  };
}
