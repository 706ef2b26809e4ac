/** Accounts and sign-in: sign-ups, sessions, sign-in attempts, the second factor and single sign-on (OIDC). */
import { type AppEnv } from './instance.js';
import { declared, type Env, flag, integer, raw, readHttpUrl, secret, SettingsError, text } from '../setting.js';

/** PWPUSH_OIDC_*: the provider, this instance's client at it, and who may sign in through it. */
export interface OidcSettings {
  /** The issuer identifier; its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Email domains (lower case) that may sign in; empty: any domain. */
  allowedDomains: string[];
  /** A verified email with no account yet gets one at its first sign-in (PWPUSH_OIDC_AUTO_CREATE). */
  autoCreate: boolean;
  /** Password sign-in and sign-up are off: the provider is the only way in (PWPUSH_OIDC_ONLY). */
  only: boolean;
  /** Shown on the sign-in button: "Sign in with <name>" (PWPUSH_OIDC_PROVIDER_NAME; default: the issuer's host). */
  providerName: string;
  /** An http:// issuer is accepted (development and test only: PWPUSH_OIDC_ALLOW_HTTP). */
  allowHttp: boolean;
  /**
   * The claim that must be true for the provider's `email` to count (PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM; default
   * `email_verified`; `xms_edov` for Microsoft Entra ID, which sends no `email_verified`).
   */
  emailVerifiedClaim: string;
}

const ENABLE_SIGNUPS = flag('PWPUSH_ENABLE_SIGNUPS', true, {
  meaning:
    "Visitors may make an account at `/users/sign_up`. Set `false` on a closed instance (accounts are then made with `npm run users`). Without `PWPUSH_SMTP_URL` a sign-up makes the account at once with an unconfirmed email: the first proof of that address (the single sign-on provider's verified email, or a reset link) claims it, removing its password, second factor, token, keys and webhooks.",
});
const SESSION_LIFETIME_HOURS = integer('PWPUSH_SESSION_LIFETIME_HOURS', {
  default: 24,
  min: 1,
  max: 720,
  meaning: 'How long a web sign-in lasts, in hours.',
});
const LOGIN_ATTEMPTS = integer('PWPUSH_LOGIN_ATTEMPTS', {
  default: 5,
  min: 1,
  max: 1000,
  meaning:
    'Failed sign-ins per email, and per client address, within 15 minutes before the sign-in page answers 429 (held in PostgreSQL).',
});
const REQUIRE_2FA = flag('PWPUSH_REQUIRE_2FA', false, {
  meaning:
    "Password sign-ins must end with a second factor (an authenticator app's code, or a recovery code); accounts without one enrol at their next sign-in before they get a session. Sign-ins with the single sign-on provider rely on the provider's own checks and are not made to enrol, but an account that has a second factor is always asked for it, after the provider too. API tokens and keys are not affected.",
});
const OIDC_ISSUER = text('PWPUSH_OIDC_ISSUER', {
  shown: 'unset (no single sign-on)',
  accepts: 'an `https://` URL',
  meaning:
    'Single sign-on: the OpenID Connect provider\'s issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`). Setting it needs `PWPUSH_OIDC_CLIENT_ID` and a client secret, and puts "Sign in with …" on the sign-in page. The provider redirects back to `<public base URL>/users/oidc/callback`. See [single-sign-on.md](single-sign-on.md).',
});
const OIDC_CLIENT_ID = text('PWPUSH_OIDC_CLIENT_ID', {
  shown: 'unset',
  accepts: 'a client id',
  meaning: "This instance's client id at the provider.",
});
const OIDC_CLIENT_SECRET = secret('PWPUSH_OIDC_CLIENT_SECRET', {
  shown: 'unset',
  accepts: 'a client secret',
  meaning: "This instance's client secret at the provider. Never logged.",
  what: "this instance's client secret at the single sign-on provider",
});
const OIDC_ALLOWED_DOMAINS = text('PWPUSH_OIDC_ALLOWED_DOMAINS', {
  shown: 'unset (any domain)',
  accepts: 'comma-separated email domains',
  meaning:
    'Email domains (`example.org,example.com`) whose people may sign in with the provider; anyone else is refused, with no account made. Either way the provider must say the email is verified (see `PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM`).',
});
const OIDC_EMAIL_VERIFIED_CLAIM = text('PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM', {
  default: 'email_verified',
  accepts: 'a claim name',
  meaning:
    'The claim (from the ID token, or the userinfo endpoint) that must be true for the provider\'s `email` to match or make an account; without it the sign-in is refused. `xms_edov` for Microsoft Entra ID, which sends no `email_verified` (its optional claim "email domain owner verified", to be added to the app registration; `true`, `"true"` and `"1"` count). Only the named claim counts. See [single-sign-on.md](single-sign-on.md).',
});
const OIDC_AUTO_CREATE = flag('PWPUSH_OIDC_AUTO_CREATE', true, {
  meaning:
    'A verified email with no account gets one at its first sign-in with the provider. `false`: only existing accounts (matched by verified email, or already linked) may sign in.',
});
const OIDC_ONLY = flag('PWPUSH_OIDC_ONLY', false, {
  meaning:
    'Sign-in is through the provider only: password sign-in and sign-up are off (API tokens still work; `npm run users` still makes accounts and tokens).',
});
const OIDC_PROVIDER_NAME = text('PWPUSH_OIDC_PROVIDER_NAME', {
  shown: "the issuer's host name",
  accepts: 'at most 64 characters',
  meaning: 'The name on the sign-in button: "Sign in with <name>".',
});
const OIDC_ALLOW_HTTP = flag('PWPUSH_OIDC_ALLOW_HTTP', false, {
  meaning:
    'Accept an `http://` issuer (a provider on this machine in development or tests). Refused in production: tokens and codes would travel in the clear.',
});

const ADMIN_EMAILS = declared(
  'PWPUSH_ADMIN_EMAILS',
  {
    default: 'unset',
    accepts: 'comma-separated emails, at most 100',
    meaning:
      "The instance's administrators, who may open the admin console at `/admin` ([admin.md](admin.md)): users, storage, queues, settings, security events and the audit of admin actions. Accounts flagged with `npm run users -- grant-admin EMAIL` are administrators too.",
  },
  readAdminEmails,
);

const OIDC_DEPENDENT = [
  OIDC_CLIENT_ID,
  OIDC_CLIENT_SECRET,
  OIDC_ALLOWED_DOMAINS,
  OIDC_EMAIL_VERIFIED_CLAIM,
  OIDC_AUTO_CREATE,
  OIDC_ONLY,
  OIDC_PROVIDER_NAME,
  OIDC_ALLOW_HTTP,
];

export const ACCOUNT_SETTINGS = [
  ENABLE_SIGNUPS,
  SESSION_LIFETIME_HOURS,
  LOGIN_ATTEMPTS,
  REQUIRE_2FA,
  ADMIN_EMAILS,
  OIDC_ISSUER,
  ...OIDC_DEPENDENT,
];

export function readAccounts(env: Env, appEnv: AppEnv) {
  return {
    enableSignups: ENABLE_SIGNUPS.read(env),
    sessionLifetimeHours: SESSION_LIFETIME_HOURS.read(env),
    loginAttemptsPer15Minutes: LOGIN_ATTEMPTS.read(env),
    oidc: readOidc(env, appEnv),
    require2fa: REQUIRE_2FA.read(env),
    adminEmails: ADMIN_EMAILS.read(env),
  };
}

/** PWPUSH_ADMIN_EMAILS: a comma-separated list of emails, compared in lower case; at most 100 of them. */
function readAdminEmails(env: Env): string[] {
  const value = raw(env, 'PWPUSH_ADMIN_EMAILS') ?? '';
  const emails: string[] = [];
  for (const part of value.split(',')) {
    const email = part.trim().toLowerCase();
    if (email === '') continue;
    if (email.length > 320 || !/^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+$/.test(email))
      throw new SettingsError(
        'PWPUSH_ADMIN_EMAILS',
        `PWPUSH_ADMIN_EMAILS must be a comma-separated list of emails (got "${part.trim().slice(0, 64)}")`,
      );
    if (!emails.includes(email)) emails.push(email);
  }
  if (emails.length > 100)
    throw new SettingsError('PWPUSH_ADMIN_EMAILS', 'PWPUSH_ADMIN_EMAILS lists at most 100 emails');
  return emails;
}

/** Claims that say who signs in or for whom the token is: none of them can say that an email was verified. */
const OWN_CLAIMS = ['sub', 'iss', 'aud', 'email', 'nonce', 'azp'];

/** PWPUSH_OIDC_*: all or nothing: an issuer needs a client id and a secret, and the other settings need an issuer. */
function readOidc(env: Env, appEnv: AppEnv): OidcSettings | null {
  const issuerText = OIDC_ISSUER.read(env);
  if (issuerText === undefined) {
    const names = OIDC_DEPENDENT.flatMap((s) => (s.secret ? [s.name, `${s.name}_FILE`] : [s.name]));
    const stray = names.find((name) => raw(env, name) !== undefined);
    if (stray)
      throw new SettingsError(stray, `${stray} is set but PWPUSH_OIDC_ISSUER is not: set the provider's issuer URL`);
    return null;
  }
  const allowHttp = OIDC_ALLOW_HTTP.read(env);
  if (allowHttp && appEnv === 'production') {
    throw new SettingsError(
      'PWPUSH_OIDC_ALLOW_HTTP',
      "PWPUSH_OIDC_ALLOW_HTTP is refused in production: use the provider's https:// issuer",
    );
  }
  readHttpUrl(env, OIDC_ISSUER.name);
  // Kept as written (a trailing slash included, as authentik's issuers have): discovery compares it with the
  // provider's `issuer` exactly.
  const issuer = new URL(issuerText).href;
  if (!issuer.startsWith('https://') && !allowHttp) {
    throw new SettingsError(
      'PWPUSH_OIDC_ISSUER',
      'PWPUSH_OIDC_ISSUER must be an https:// URL (PWPUSH_OIDC_ALLOW_HTTP=true accepts http:// outside production)',
    );
  }
  const clientId = OIDC_CLIENT_ID.read(env);
  if (!clientId) throw new SettingsError('PWPUSH_OIDC_CLIENT_ID', 'PWPUSH_OIDC_ISSUER needs PWPUSH_OIDC_CLIENT_ID');
  const allowedDomains = readAllowedDomains(env);
  const providerName = OIDC_PROVIDER_NAME.read(env) ?? new URL(issuer).hostname;
  if (providerName.length > 64 || /[\u0000-\u001f\u007f]/.test(providerName)) {
    throw new SettingsError(
      'PWPUSH_OIDC_PROVIDER_NAME',
      'PWPUSH_OIDC_PROVIDER_NAME must be at most 64 characters, without control characters',
    );
  }
  const emailVerifiedClaim = readEmailVerifiedClaim(env);
  return {
    issuer,
    clientId,
    clientSecret: OIDC_CLIENT_SECRET.required(env, 'PWPUSH_OIDC_ISSUER'),
    allowedDomains,
    autoCreate: OIDC_AUTO_CREATE.read(env),
    only: OIDC_ONLY.read(env),
    providerName,
    allowHttp,
    emailVerifiedClaim,
  };
}

function readAllowedDomains(env: Env): string[] {
  const allowedDomains: string[] = [];
  for (const part of (OIDC_ALLOWED_DOMAINS.read(env) ?? '').split(',')) {
    const domain = part.trim().toLowerCase().replace(/^@/, '');
    if (domain === '') continue;
    if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(domain)) {
      throw new SettingsError(
        'PWPUSH_OIDC_ALLOWED_DOMAINS',
        `PWPUSH_OIDC_ALLOWED_DOMAINS must be comma-separated email domains such as example.org (got "${part.trim()}")`,
      );
    }
    if (!allowedDomains.includes(domain)) allowedDomains.push(domain);
  }
  return allowedDomains;
}

function readEmailVerifiedClaim(env: Env): string {
  const emailVerifiedClaim = OIDC_EMAIL_VERIFIED_CLAIM.read(env);
  // A claim's name as providers write them (`email_verified`, `xms_edov`); never one that names who signs in.
  if (!/^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(emailVerifiedClaim) || OWN_CLAIMS.includes(emailVerifiedClaim)) {
    throw new SettingsError(
      'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM',
      `PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM must name a claim such as email_verified or xms_edov (letters, digits, _ . : -, at most 64; not ${OWN_CLAIMS.join(', ')})`,
    );
  }
  return emailVerifiedClaim;
}
