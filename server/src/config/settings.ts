/**
 * Instance settings: read and validated once at start-up from the environment (`PWPUSH_*`, `DATABASE_URL`, `PORT`,
 * `NODE_ENV`). Nothing else in the server reads `process.env`. A bad value throws SettingsError naming the variable
 * and what it accepts; the value itself is never echoed for secret variables.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CLIENT_ENCRYPTION_MODES,
  clientEncryptionSetting,
  DURATION_MIN_BOUNDS,
  NOTIFY_DAILY_LIMIT_DEFAULT,
  SPEC_LIMITS,
  WEBHOOK_CALL_LIMITS,
  type Bounds,
  type PushRuleSettings,
} from '@secret-push/rules';
import { BRAND_SETTING_ROWS, brandSettings, type BrandSettings } from './brand-settings.js';
import { SettingsError } from './settings-error.js';

export { SettingsError, SPEC_LIMITS };

/**
 * Instance settings, read and validated once at start-up from `PWPUSH_*`, `DATABASE_URL`, `PORT` and the data
 * directory by `loadSettings(env)` (which throws SettingsError with a clear message on a bad value). Nothing else
 * reads process.env. The push rules' settings (`PushRuleSettings`) are the part the stateful mock shares.
 */
export interface Settings extends PushRuleSettings {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  publicBaseUrl: string | null;
  /**
   * `full`, or `retrieve-only` (PWPUSH_MODE): the public gateway, which serves recipients only (their pages, retrieval,
   * preview, downloads, a request's answer) and answers 404 to everything else (server/src/http/retrieve-only.ts).
   */
  mode: (typeof MODES)[number];
  trustProxy: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  rateLimitPerMinute: number;
  /** Bytes of secrets (payload and files) anonymous callers may store per client address per clock hour; 0: no quota. */
  anonymousStoragePerHour: number;
  /** Bytes of secrets each user's active pushes (payload and files) and open requests (their asks' files) may hold; 0: no quota. */
  userStorageBytes: number;
  /** Requests each user may have open (pending) at once; 0: no limit. */
  userOpenRequests: number;
  /** Requests (`/api/v2/requests`): ask someone to send you a secret. */
  enableRequests: boolean;
  /** Largest request body of a caller who may not send files (anonymous callers, or file pushes off). */
  bodyLimitBytes: number;
  sweepIntervalSeconds: number;
  purgeExpiredAfterDays: number | null;
  /** Current key first; older keys only decrypt. Ids are short strings stored with each ciphertext. */
  masterKeys: { id: string; key: Buffer }[];
  /** Signs download links and (through a derived key) sign-in sessions: derived from the master key unless set. */
  signingSecret: Buffer;
  /** Web pages: visitors may make an account at /users/sign_up (PWPUSH_ENABLE_SIGNUPS). */
  enableSignups: boolean;
  /** Web pages: how long a sign-in lasts (PWPUSH_SESSION_LIFETIME_HOURS). */
  sessionLifetimeHours: number;
  /** Web pages: failed sign-ins per email, and per client address, within 15 minutes before 429 (PWPUSH_LOGIN_ATTEMPTS). */
  loginAttemptsPer15Minutes: number;
  /** Server processes sharing the port (PWPUSH_WORKERS); 1 serves from the main process itself. */
  workers: number;
  /** Connections each server process keeps to PostgreSQL at most (PWPUSH_DATABASE_POOL_SIZE). */
  databasePoolSize: number;
  /** `GET /metrics` answers (PWPUSH_METRICS); otherwise it is an unknown path. */
  metricsEnabled: boolean;
  /** When set, `GET /metrics` needs `Authorization: Bearer <token>` (PWPUSH_METRICS_TOKEN). */
  metricsToken: string | null;
  /** Browser apps on these exact origins may call the API (PWPUSH_CORS_ORIGINS); empty: no CORS. */
  corsOrigins: string[];
  /** `POST /p.json` answers `Access-Control-Allow-Origin: *`, as the reference does (PWPUSH_CORS_V1_CREATE). */
  corsV1Create: boolean;
  /** Email: the SMTP relay, the sender, the notify feature and its limits (PWPUSH_SMTP_URL, PWPUSH_MAIL_*, PWPUSH_NOTIFY_*). */
  mail: MailSettings;
  /** Webhooks (PWPUSH_WEBHOOKS, PWPUSH_WEBHOOKS_ALLOW_PRIVATE, PWPUSH_WEBHOOK_RETRY_SCHEDULE). */
  webhooks: WebhookSettings;
  /**
   * Webhook POSTs a minute, tries and retries alike, that one account's webhooks may send together
   * (PWPUSH_WEBHOOK_SENDS_PER_MINUTE), and that one target address may receive from every account
   * (PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE); past them deliveries wait for a later minute. 0: no budget.
   */
  webhookBudget: { perAccount: number; perAddress: number };
  /**
   * `testWebhook` and `retryWebhookDelivery` calls one account may make a clock minute
   * (PWPUSH_WEBHOOK_TESTS_PER_MINUTE, PWPUSH_WEBHOOK_REDELIVERIES_PER_MINUTE); past them 429. 0: no limit.
   */
  webhookCalls: { testsPerMinute: number; redeliveriesPerMinute: number };
  /** Single sign-on with an OpenID Connect provider (PWPUSH_OIDC_*); null: off. */
  oidc: OidcSettings | null;
  /** Password accounts must sign in with a second factor (TOTP), enrolling at their next sign-in (PWPUSH_REQUIRE_2FA). */
  require2fa: boolean;
  /**
   * Accounts with these emails (lower case) are administrators of the instance (PWPUSH_ADMIN_EMAILS), beside those
   * flagged by `npm run users -- grant-admin`: they may open the admin console (/admin, docs/admin.md).
   */
  adminEmails: string[];
  /** Where file bytes are kept (PWPUSH_FILE_STORAGE, PWPUSH_S3_*). */
  fileStorage: FileStorageSettings;
  /** The instance's brand on pages and mails (PWPUSH_INSTANCE_NAME, PWPUSH_BRAND_*: ./brand-settings.ts). */
  brand: BrandSettings;
}

/**
 * Where file bytes are kept (PWPUSH_FILE_STORAGE): in PostgreSQL (`push_files.content`, `request_files.content`), or in
 * an S3-compatible bucket under a prefix (../files/).
 */
export type FileStorageSettings = { kind: 'postgres' } | S3StorageSettings;

export interface S3StorageSettings {
  kind: 's3';
  bucket: string;
  /** Prepended to every object key: '' or ending in `/` (`secret-push/`). */
  prefix: string;
  /** PWPUSH_S3_ENDPOINT; null: AWS S3. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** PWPUSH_S3_ACCESS_KEY_ID and PWPUSH_S3_SECRET_ACCESS_KEY (or their _FILE); null: the AWS SDK's default chain. Secret. */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

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

export interface WebhookSettings {
  /** Owners may register webhooks (PWPUSH_WEBHOOKS); false: the webhook routes answer 404 and nothing is sent. */
  enabled: boolean;
  /** Targets on loopback, private, link-local… addresses, and http:// in production, are allowed (PWPUSH_WEBHOOKS_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Seconds before each retry of a failed delivery, in order (PWPUSH_WEBHOOK_RETRY_SCHEDULE); then it is failed. */
  retrySchedule: number[];
}

export interface MailSettings {
  /** `smtp://user:pass@host:port` or `smtps://…` (PWPUSH_SMTP_URL or PWPUSH_SMTP_URL_FILE); null: no email at all. Secret. */
  smtpUrl: string | null;
  /** The From of every message (PWPUSH_MAIL_FROM). */
  from: string;
  /** Push links by email (PWPUSH_NOTIFY_BY_EMAIL); false: the notify route does not exist (404). */
  notifyByEmail: boolean;
  /** Emails one user may have sent in 24 hours (PWPUSH_NOTIFY_DAILY_LIMIT). */
  notifyDailyLimit: number;
  /** The instance's name in messages (PWPUSH_INSTANCE_NAME). */
  instanceName: string;
  /** Tries of one delivery before it is given up (PWPUSH_MAIL_ATTEMPTS). */
  attempts: number;
  /** First wait before a retry, doubling up to an hour (PWPUSH_MAIL_RETRY_SECONDS). */
  retrySeconds: number;
}

/** Why an instance with an SMTP relay needs PWPUSH_PUBLIC_BASE_URL (the start-up refusal names it). */
const MAIL_NEEDS_BASE =
  "PWPUSH_SMTP_URL needs PWPUSH_PUBLIC_BASE_URL: the links in email are built only from it, never from a request's Host header, which a client chooses (in development, add PWPUSH_PUBLIC_BASE_URL=http://localhost:5100)";

/**
 * The base of every link in an email: PWPUSH_PUBLIC_BASE_URL, and nothing else (issue 45: a reset requested with
 * `Host: evil.example` must not mail a working token to evil.example). Start-up refuses a relay without it.
 */
export function mailLinkBase(settings: Pick<Settings, 'publicBaseUrl'>): string {
  if (!settings.publicBaseUrl) throw new SettingsError('PWPUSH_PUBLIC_BASE_URL', MAIL_NEEDS_BASE);
  return settings.publicBaseUrl.replace(/\/+$/, '');
}

/** Whether pushes' links can be emailed: a relay is configured and the feature is on (`email_auto_dispatch`). */
export function emailAvailable(settings: Pick<Settings, 'mail'>): boolean {
  return settings.mail.notifyByEmail && settings.mail.smtpUrl !== null;
}

/**
 * The repository root: the nearest folder above this module whose package.json lists the workspaces. Found by
 * walking up rather than by a fixed number of `..`, because this module runs both from its source
 * (server/src/config) and from the compiled bundle (server/dist).
 */
export const repoRoot = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { workspaces?: unknown };
      if (Array.isArray(pkg.workspaces)) return dir;
    } catch {
      /* no package.json here: keep going up */
    }
    if (path.dirname(dir) === dir) throw new Error(`no repository root (a package.json with workspaces) above ${from}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const ENVS = ['development', 'production', 'test'] as const;
const MODES = ['full', 'retrieve-only'] as const;

export interface SettingDoc {
  name: string;
  default: string;
  meaning: string;
}

/**
 * The settings that hold a secret, each also read from a file: `NAME_FILE` names a file whose first line (surrounding
 * whitespace trimmed) is the value, for secrets mounted as files (Docker and Compose secrets, Kubernetes Secret
 * volumes). Setting both `NAME` and `NAME_FILE` is refused. One table, in docs/settings.md and docs/deploy.md.
 */
export const SECRET_SETTINGS = {
  PWPUSH_MASTER_KEY: 'the master key: every secret at rest is sealed under it',
  PWPUSH_MASTER_KEY_PREVIOUS: 'older master keys, kept after a rotation to read what they sealed',
  PWPUSH_SIGNING_SECRET: 'signs file download links and sign-in sessions (derived from the master key when unset)',
  PWPUSH_SMTP_URL: "the SMTP relay's URL, with its user and password",
  PWPUSH_OIDC_CLIENT_SECRET: "this instance's client secret at the single sign-on provider",
  PWPUSH_METRICS_TOKEN: 'the bearer token a scrape of /metrics must send',
  DATABASE_URL: "the external PostgreSQL's URL, with its password",
  PWPUSH_S3_ACCESS_KEY_ID: "the object store's access key id (docs/object-storage.md)",
  PWPUSH_S3_SECRET_ACCESS_KEY: "the object store's secret access key",
} as const;

/**
 * Where each secret setting lands in `Settings` (a dotted path): the admin console's "Settings" page shows that these
 * are set, never their values (server/src/admin/settings-in-force.ts). Keyed by SECRET_SETTINGS, so a new secret
 * setting does not compile until its place is named here.
 */
export const SECRET_SETTING_FIELDS: Record<keyof typeof SECRET_SETTINGS, string> = {
  PWPUSH_MASTER_KEY: 'masterKeys',
  PWPUSH_MASTER_KEY_PREVIOUS: 'masterKeys',
  PWPUSH_SIGNING_SECRET: 'signingSecret',
  PWPUSH_SMTP_URL: 'mail.smtpUrl',
  PWPUSH_OIDC_CLIENT_SECRET: 'oidc.clientSecret',
  PWPUSH_METRICS_TOKEN: 'metricsToken',
  DATABASE_URL: 'databaseUrl',
  PWPUSH_S3_ACCESS_KEY_ID: 'fileStorage.credentials',
  PWPUSH_S3_SECRET_ACCESS_KEY: 'fileStorage.credentials',
};

/** The names of SECRET_SETTINGS. */
const SECRET_NAMES: readonly string[] = Object.keys(SECRET_SETTINGS);

/** One row per variable, in the order of the settings table (docs/settings.md). */
const TABLE: SettingDoc[] = [
  {
    name: 'PWPUSH_ENV',
    default: 'NODE_ENV, else `development`',
    meaning:
      '`development`, `production` or `test`. Production refuses to start without a master key and without `PWPUSH_PUBLIC_BASE_URL`.',
  },
  { name: 'PORT', default: '`5100`', meaning: 'TCP port the server listens on (1..65535).' },
  {
    name: 'PWPUSH_HOST',
    default: '`127.0.0.1`; `0.0.0.0` in production',
    meaning:
      'Address the server binds to. Development and test listen on the loopback address only; production (`PWPUSH_ENV=production`) binds what this says, every interface by default.',
  },
  {
    name: 'PWPUSH_DATA_DIR',
    default: '`<repo>/data`',
    meaning: 'Data directory: embedded PostgreSQL cluster and the development key file.',
  },
  {
    name: 'DATABASE_URL',
    default: 'unset',
    meaning:
      'PostgreSQL connection URL (`postgres://…`; it holds a password). Unset: an embedded PostgreSQL is started under the data directory.',
  },
  {
    name: 'PWPUSH_MODE',
    default: '`full`',
    meaning:
      '`full`, or `retrieve-only`: the public gateway in front of an internal instance on the same database. It serves what a recipient opens (the pages `/p/…` and `/r/…`, retrieval, preview, file downloads, expiry by a viewer, the answer to a request) and answers 404 to everything else: creating, accounts, API keys, webhooks, lists, audit logs, the API docs. See [docs/deploy.md](deploy.md).',
  },
  {
    name: 'PWPUSH_PUBLIC_BASE_URL',
    default: 'unset',
    meaning:
      "Public base URL (http or https) used in `json_url`, `html_url` and file links, and the only base of links in email. **Required in production, and wherever `PWPUSH_SMTP_URL` is set** (the server refuses to start without it); elsewhere, unset: answers use the request's own origin (its `Host` header).",
  },
  {
    name: 'PWPUSH_TRUST_PROXY',
    default: '`false`',
    meaning:
      'Trust `X-Forwarded-*` headers (client address, protocol) from the one reverse proxy in front: the client address is the one that proxy appended.',
  },
  { name: 'PWPUSH_LOG_LEVEL', default: '`info`', meaning: `One of ${LOG_LEVELS.join(', ')}.` },
  {
    name: 'PWPUSH_ALLOW_ANONYMOUS',
    default: '`true`',
    meaning: 'Allow creating and retrieving pushes without a token (`features.anonymous_access`).',
  },
  { name: 'PWPUSH_ENABLE_FILE_PUSHES', default: '`true`', meaning: 'Allow `file` pushes.' },
  { name: 'PWPUSH_ENABLE_URL_PUSHES', default: '`true`', meaning: 'Allow `url` pushes.' },
  { name: 'PWPUSH_ENABLE_QR_PUSHES', default: '`true`', meaning: 'Allow `qr` pushes.' },
  {
    name: 'PWPUSH_ENABLE_REQUESTS',
    default: '`true`',
    meaning: 'Requests (`/api/v2/requests`): ask someone to send you a secret.',
  },
  {
    name: 'PWPUSH_FILES_REQUIRE_AUTH',
    default: '`true`',
    meaning: 'File pushes (and any `files` property) need a token.',
  },
  { name: 'PWPUSH_FILE_MAX_COUNT', default: '`10`', meaning: 'Most files per push (1..10).' },
  {
    name: 'PWPUSH_FILE_MAX_BYTES',
    default: '`10485760`',
    meaning: 'Largest file in bytes after decoding (1..10485760).',
  },
  {
    name: 'PWPUSH_FILE_STORAGE',
    default: '`postgres`',
    meaning:
      'Where the bytes of files (file pushes, request attachments) are kept: `postgres` (in the database) or `s3://bucket/prefix` (an S3-compatible object store: AWS S3, MinIO, Cloudflare R2, Backblaze B2, …; the prefix is optional). Either way they are encrypted here first, so the store never sees a plaintext. See docs/object-storage.md; `npm run files -- migrate --to s3` moves existing files.',
  },
  {
    name: 'PWPUSH_S3_ENDPOINT',
    default: "unset (AWS S3's own)",
    meaning:
      "The store's base URL, for any store but AWS S3: `https://<account>.r2.cloudflarestorage.com`, `https://s3.us-west-004.backblazeb2.com`, `http://minio:9000`.",
  },
  {
    name: 'PWPUSH_S3_REGION',
    default: '`us-east-1`',
    meaning: "The bucket's region (`auto` for Cloudflare R2).",
  },
  {
    name: 'PWPUSH_S3_FORCE_PATH_STYLE',
    default: '`false`',
    meaning:
      'Address the bucket in the path (`<endpoint>/<bucket>/<key>`) rather than as a subdomain: MinIO and most self-hosted stores need `true`.',
  },
  {
    name: 'PWPUSH_S3_ACCESS_KEY_ID',
    default: 'unset',
    meaning:
      "The store's access key id (with `PWPUSH_S3_SECRET_ACCESS_KEY`; set both or neither). Neither: the AWS SDK's default chain (environment, profile, container or instance role).",
  },
  {
    name: 'PWPUSH_S3_SECRET_ACCESS_KEY',
    default: 'unset',
    meaning: "The store's secret access key. Secret: never logged.",
  },
  {
    name: 'PWPUSH_EXPIRE_AFTER_DAYS_DEFAULT',
    default: '`7`',
    meaning: 'Default `expire_after_days` (within _MIN.._MAX).',
  },
  { name: 'PWPUSH_EXPIRE_AFTER_DAYS_MIN', default: '`1`', meaning: 'Smallest `expire_after_days` accepted (1..90).' },
  { name: 'PWPUSH_EXPIRE_AFTER_DAYS_MAX', default: '`90`', meaning: 'Largest `expire_after_days` accepted (1..90).' },
  {
    name: 'PWPUSH_EXPIRE_AFTER_DURATION_MIN',
    default: '`0`',
    meaning:
      'Shortest `expire_after_duration` under a day accepted: 0 = 15 minutes, 1 = 30 minutes, 2 = 45 minutes, 3 = 1 hour, 4 = 6 hours, 5 = 12 hours, 6 = nothing under a day (0..6). Durations of a day or more follow the days bounds; `features.pushes.expire_after_duration` reports what is accepted.',
  },
  {
    name: 'PWPUSH_EXPIRE_AFTER_VIEWS_DEFAULT',
    default: '`5`',
    meaning: 'Default `expire_after_views` (within _MIN.._MAX).',
  },
  {
    name: 'PWPUSH_EXPIRE_AFTER_VIEWS_MIN',
    default: '`1`',
    meaning: 'Smallest `expire_after_views` accepted (1..100).',
  },
  {
    name: 'PWPUSH_EXPIRE_AFTER_VIEWS_MAX',
    default: '`100`',
    meaning: 'Largest `expire_after_views` accepted (1..100).',
  },
  { name: 'PWPUSH_DELETABLE_BY_VIEWER_DEFAULT', default: '`true`', meaning: 'Default of `deletable_by_viewer`.' },
  { name: 'PWPUSH_RETRIEVAL_STEP_DEFAULT', default: '`false`', meaning: 'Default of `retrieval_step`.' },
  {
    name: 'PWPUSH_PASSPHRASE_ATTEMPTS_PER_MINUTE',
    default: '`5`',
    meaning: 'Failed passphrase attempts per push per minute before 429 (1..1000, held in PostgreSQL).',
  },
  {
    name: 'PWPUSH_CLIENT_ENCRYPTION',
    default: '`allowed`',
    meaning:
      'End-to-end encrypted pushes (encrypted by the client, the key only in the link): `off` (refused with 422), `allowed`, `default` (the create page starts with "Encrypt in my browser" on) or `required` (ordinary pushes refused with 422: existing clients that do not encrypt cannot create pushes). Reported in `features.pushes.client_encryption`.',
  },
  {
    name: 'PWPUSH_RATE_LIMIT_PER_MINUTE',
    default: '`120`',
    meaning:
      "Requests per minute per client address (as the reference's default throttle; `/healthz`, `/readyz` and `/assets/` are not counted); `0` turns the limit off, e.g. for a conformance run or a benchmark.",
  },
  {
    name: 'PWPUSH_ANONYMOUS_STORAGE_PER_HOUR',
    default: '`100MiB`',
    meaning:
      'Storage quota of anonymous creators: bytes of secrets (payload and file contents) one client address (an IPv6 /64 counts as one) may store per clock hour (UTC), as bytes or with a unit (`KiB`, `MiB`, `GiB`; 0..1TiB); `0` turns it off. Independent of the request limit: `PWPUSH_RATE_LIMIT_PER_MINUTE=0` leaves it on. Over it: 429 `storage_quota_exceeded` with `Retry-After` (the next hour), nothing stored.',
  },
  {
    name: 'PWPUSH_USER_STORAGE',
    default: '`1GiB`',
    meaning:
      "Storage quota of each user: bytes of secrets the user's active pushes (payload and file contents) and open requests (the files attached to their asks) may hold at once (same units; `0` turns it off). Space comes back as pushes expire (by views, by time, or deleted) and as requests close (answered, expired, revoked: their ask and files are erased). Over it: 429 `storage_quota_exceeded` with `Retry-After` (when enough will have expired by time), nothing stored.",
  },
  {
    name: 'PWPUSH_USER_OPEN_REQUESTS',
    default: '`100`',
    meaning:
      'Requests each user may have open (pending: neither answered, expired nor revoked) at once (0..100000; `0` turns the limit off). Over it: 429 `too_many_open_requests` with `Retry-After` (when the first of them expires by time), nothing stored.',
  },
  {
    name: 'PWPUSH_BODY_LIMIT_BYTES',
    default: '`8388608`',
    meaning:
      'Largest request body (bytes, as sent and as decoded) of a caller who may not send files: anonymous callers while files need a token, everyone while file pushes are off. Callers who may send files get room for every file at the file limits. The limit is chosen per operation and caller before the body is read; over it: 413. The default fits the largest text push (1,048,576 characters) in any JSON encoding (65536..67108864).',
  },
  {
    name: 'PWPUSH_SWEEP_INTERVAL_SECONDS',
    default: '`30`',
    meaning:
      'How often the sweeper erases expired secrets and lapsed file bytes (1..60, so secrets past their time are gone within a minute).',
  },
  {
    name: 'PWPUSH_PURGE_EXPIRED_AFTER_DAYS',
    default: 'unset (never)',
    meaning: 'Delete expired push records (and their audit) this many days after expiry (1..36500).',
  },
  {
    name: 'PWPUSH_MASTER_KEY',
    default: 'unset',
    meaning:
      'Encryption key: 64 hex characters or base64 of 32 bytes, optionally prefixed `id:` (`npm run key` makes one). Required in production. Development without a key: `<data dir>/master.key` is generated.',
  },
  {
    name: 'PWPUSH_MASTER_KEY_PREVIOUS',
    default: 'unset',
    meaning: 'Comma-separated older keys (same format), used only to decrypt after a rotation.',
  },
  {
    name: 'PWPUSH_SIGNING_SECRET',
    default: 'derived from the master key',
    meaning: 'Secret (≥ 32 characters) that signs file download links and (through a derived key) sign-in sessions.',
  },
  {
    name: 'PWPUSH_ENABLE_SIGNUPS',
    default: '`true`',
    meaning:
      "Visitors may make an account at `/users/sign_up`. Set `false` on a closed instance (accounts are then made with `npm run users`). Without `PWPUSH_SMTP_URL` a sign-up makes the account at once with an unconfirmed email: the first proof of that address (the single sign-on provider's verified email, or a reset link) claims it, removing its password, second factor, token, keys and webhooks.",
  },
  { name: 'PWPUSH_SESSION_LIFETIME_HOURS', default: '`24`', meaning: 'How long a web sign-in lasts (1..720 hours).' },
  {
    name: 'PWPUSH_LOGIN_ATTEMPTS',
    default: '`5`',
    meaning:
      'Failed sign-ins per email, and per client address, within 15 minutes before the sign-in page answers 429 (1..1000, held in PostgreSQL).',
  },
  {
    name: 'PWPUSH_WORKERS',
    default:
      'the number of cores, less one when PostgreSQL runs on this machine (embedded, or `DATABASE_URL` on a loopback address); at least 1',
    meaning:
      'Server processes sharing the port (1..64). Above 1, a primary process runs the embedded PostgreSQL, the per-client limit and the metrics sum, and replaces a worker that dies; `1` serves from one process. See [operations.md](operations.md#running-the-server).',
  },
  {
    name: 'PWPUSH_DATABASE_POOL_SIZE',
    default: '`10`',
    meaning: 'Most PostgreSQL connections each server process holds (1..100): a host uses up to workers × this many.',
  },
  {
    name: 'PWPUSH_METRICS',
    default: '`false`',
    meaning:
      'Serve Prometheus metrics at `GET /metrics` (request counts and latencies by operation, pool, sweeper, refusals, process figures; summed over the workers).',
  },
  {
    name: 'PWPUSH_METRICS_TOKEN',
    default: 'unset',
    meaning:
      'When set (≥ 16 characters), `/metrics` needs `Authorization: Bearer <token>`; needs `PWPUSH_METRICS=true`.',
  },
  {
    name: 'PWPUSH_CORS_ORIGINS',
    default: 'unset (no CORS)',
    meaning:
      'Comma-separated exact origins (`https://app.example.org,http://localhost:3000`) of browser apps that may call the API (`/api/…` and the v1 `.json` paths) from another origin: preflights, `Access-Control-Allow-Origin` for those origins only, the headers clients read exposed. Never on pages, never with credentials (cookies). See [operations.md](operations.md#browser-apps-on-another-origin-cors).',
  },
  {
    name: 'PWPUSH_CORS_V1_CREATE',
    default: '`true`',
    meaning:
      'v1 compatibility: `POST /p.json` (an anonymous create) answers `Access-Control-Allow-Origin: *` from any origin, as Password Pusher does. `false` applies `PWPUSH_CORS_ORIGINS` to it like every other API path.',
  },
  {
    name: 'PWPUSH_SMTP_URL',
    default: 'none',
    meaning:
      'The SMTP relay for email: `smtp://user:pass@host:587` (STARTTLS when the relay offers it) or `smtps://user:pass@host:465` (TLS from the start); user and password percent-encoded. Needs `PWPUSH_PUBLIC_BASE_URL` (links in email are built only from it). Unset: no email (the notify fields answer 422 `are not available`, account flows stay as without email). Secret: never logged.',
  },
  {
    name: 'PWPUSH_MAIL_FROM',
    default: '`Secret Push <no-reply@…>`',
    meaning:
      'The From of every message: an address, or `Name <address>`. Default: `no-reply@` the host of `PWPUSH_PUBLIC_BASE_URL` (`localhost` without it), named after `PWPUSH_INSTANCE_NAME`.',
  },
  {
    name: 'PWPUSH_NOTIFY_BY_EMAIL',
    default: '`true`',
    meaning:
      "Email a push's link to recipients (`notify_emails_to`, `POST …/notify_emails`) when SMTP is configured. `false`: the route answers 404 and the fields 422, as Password Pusher with `notify_by_email.enabled: false`.",
  },
  {
    name: 'PWPUSH_NOTIFY_DAILY_LIMIT',
    default: '`500`',
    meaning: 'Emails one user may have sent in 24 hours (1..100000); over it, 422 on `base`.',
  },
  {
    name: 'PWPUSH_INSTANCE_NAME',
    default: '`Secret Push`',
    meaning:
      "The instance's name, shown in every page's header and title and in emails (1..100 characters). The brand's other settings follow; see [branding.md](branding.md).",
  },
  ...BRAND_SETTING_ROWS,
  {
    name: 'PWPUSH_MAIL_ATTEMPTS',
    default: '`10`',
    meaning:
      'Tries of one delivery when the relay fails temporarily (a 4xx reply, no connection) before it is given up as `failed` (1..50).',
  },
  {
    name: 'PWPUSH_MAIL_RETRY_SECONDS',
    default: '`30`',
    meaning: 'The wait before the first retry of a delivery; each next wait doubles, up to an hour (1..3600).',
  },
  {
    name: 'PWPUSH_WEBHOOKS',
    default: '`true`',
    meaning:
      'Owners may register signed webhooks for the events of their pushes and requests (at most 10 per account; [webhooks.md](webhooks.md)). `false`: the webhook routes answer 404 and nothing is sent.',
  },
  {
    name: 'PWPUSH_WEBHOOKS_ALLOW_PRIVATE',
    default: '`false`',
    meaning:
      'Webhook targets that are or resolve to loopback, private, link-local, multicast, unspecified or cloud-metadata addresses are allowed, and `http://` targets in production. Off, they are refused at registration and again at every connection (DNS rebinding). For development and tests only.',
  },
  {
    name: 'PWPUSH_WEBHOOK_SENDS_PER_MINUTE',
    default: '`600`',
    meaning:
      "Webhook POSTs (first tries, retries, test events and redeliveries alike) one account's webhooks may send together per clock minute, counted in PostgreSQL across every server process; deliveries past it stay `pending` and are sent in a later minute, never dropped (0..1,000,000; `0`: no budget). [docs/webhooks.md](webhooks.md)",
  },
  {
    name: 'PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE',
    default: '`3000`',
    meaning:
      'Webhook POSTs one target address (an IPv4 address, an IPv6 /64) may receive per clock minute from all accounts together, so that many accounts cannot aim the instance at one host; past it, deliveries to that address wait for a later minute (0..1,000,000; `0`: no budget).',
  },
  {
    name: 'PWPUSH_WEBHOOK_TESTS_PER_MINUTE',
    default: '`5`',
    meaning:
      'Test events (`testWebhook`, *Send a test event*) one account may send per clock minute, counted in PostgreSQL across every server process; past it 429 `rate_limited` with `Retry-After` and RateLimit fields, nothing queued (0..10000; `0`: no limit, e.g. for a conformance grade, which sends one per webhook fault).',
  },
  {
    name: 'PWPUSH_WEBHOOK_REDELIVERIES_PER_MINUTE',
    default: '`20`',
    meaning:
      'Redeliveries (`retryWebhookDelivery`) one account may ask for per clock minute, counted like test events; past it 429 (0..10000; `0`: no limit).',
  },
  {
    name: 'PWPUSH_WEBHOOK_RETRY_SCHEDULE',
    default: '`5s,5m,30m,2h,5h,10h`',
    meaning:
      'The waits before each retry of a webhook delivery that got no 2xx within 10 s, in order (each `<n>s`, `<n>m` or `<n>h`, 1 to 20 of them, each at most 24h); after the last the delivery is `failed`.',
  },
  {
    name: 'PWPUSH_OIDC_ISSUER',
    default: 'unset (no single sign-on)',
    meaning:
      'Single sign-on: the OpenID Connect provider\'s issuer URL (https; its discovery document is `<issuer>/.well-known/openid-configuration`). Setting it needs `PWPUSH_OIDC_CLIENT_ID` and a client secret, and puts "Sign in with …" on the sign-in page. The provider redirects back to `<public base URL>/users/oidc/callback`. See [single-sign-on.md](single-sign-on.md).',
  },
  { name: 'PWPUSH_OIDC_CLIENT_ID', default: 'unset', meaning: "This instance's client id at the provider." },
  {
    name: 'PWPUSH_OIDC_CLIENT_SECRET',
    default: 'unset',
    meaning: "This instance's client secret at the provider. Never logged.",
  },
  {
    name: 'PWPUSH_OIDC_ALLOWED_DOMAINS',
    default: 'unset (any domain)',
    meaning:
      'Comma-separated email domains (`example.org,example.com`) whose people may sign in with the provider; anyone else is refused, with no account made. Either way the provider must say the email is verified (see `PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM`).',
  },
  {
    name: 'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM',
    default: '`email_verified`',
    meaning:
      'The claim (from the ID token, or the userinfo endpoint) that must be true for the provider\'s `email` to match or make an account; without it the sign-in is refused. `xms_edov` for Microsoft Entra ID, which sends no `email_verified` (its optional claim "email domain owner verified", to be added to the app registration; `true`, `"true"` and `"1"` count). Only the named claim counts. See [single-sign-on.md](single-sign-on.md).',
  },
  {
    name: 'PWPUSH_OIDC_AUTO_CREATE',
    default: '`true`',
    meaning:
      'A verified email with no account gets one at its first sign-in with the provider. `false`: only existing accounts (matched by verified email, or already linked) may sign in.',
  },
  {
    name: 'PWPUSH_OIDC_ONLY',
    default: '`false`',
    meaning:
      'Sign-in is through the provider only: password sign-in and sign-up are off (API tokens still work; `npm run users` still makes accounts and tokens).',
  },
  {
    name: 'PWPUSH_OIDC_PROVIDER_NAME',
    default: "the issuer's host name",
    meaning: 'The name on the sign-in button: "Sign in with <name>" (at most 64 characters).',
  },
  {
    name: 'PWPUSH_OIDC_ALLOW_HTTP',
    default: '`false`',
    meaning:
      'Accept an `http://` issuer (a provider on this machine in development or tests). Refused in production: tokens and codes would travel in the clear.',
  },
  {
    name: 'PWPUSH_REQUIRE_2FA',
    default: '`false`',
    meaning:
      "Password sign-ins must end with a second factor (an authenticator app's code, or a recovery code); accounts without one enrol at their next sign-in before they get a session. Sign-ins with the single sign-on provider rely on the provider's own checks and are not made to enrol, but an account that has a second factor is always asked for it, after the provider too. API tokens and keys are not affected.",
  },
  {
    name: 'PWPUSH_ADMIN_EMAILS',
    default: 'unset',
    meaning:
      "Comma-separated emails of the instance's administrators, who may open the admin console at `/admin` ([admin.md](admin.md)): users, storage, queues, settings, security events and the audit of admin actions. Accounts flagged with `npm run users -- grant-admin EMAIL` are administrators too.",
  },
];

/** The row of `NAME_FILE`, the same for every secret setting (SECRET_SETTINGS). */
function fileRow(name: string): SettingDoc {
  return {
    name: `${name}_FILE`,
    default: 'unset',
    meaning: `A file whose first line is \`${name}\` (a secret mounted as a file: Docker or Compose secrets, a Kubernetes Secret volume); set only one of the two.`,
  };
}

/** The table with a `NAME_FILE` row after the row of each secret setting. */
const ROWS: readonly SettingDoc[] = TABLE.flatMap((row) =>
  SECRET_NAMES.includes(row.name) ? [row, fileRow(row.name)] : [row],
);

/** The `PWPUSH_*` variables the server reads (those of the table). */
const KNOWN_VARIABLES: readonly string[] = ROWS.map((row) => row.name).filter((name) => name.startsWith('PWPUSH_'));

/** Edit distance (insertions, deletions, substitutions, swaps of neighbours), for the closest known name. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * `PWPUSH_*` variables of the environment that no setting reads (a typo is otherwise silently ignored), each with the
 * known name closest to it. Names only: a value may be a secret.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): { name: string; closest: string }[] {
  return Object.keys(env)
    .filter((name) => name.toUpperCase().startsWith('PWPUSH_') && !KNOWN_VARIABLES.includes(name))
    .sort()
    .map((name) => {
      let closest = KNOWN_VARIABLES[0]!;
      let best = Infinity;
      for (const known of KNOWN_VARIABLES) {
        const distance = editDistance(name.toUpperCase(), known);
        if (distance < best) [best, closest] = [distance, known];
      }
      return { name, closest };
    });
}

/** The start-up warning for `unknownVariables`, or null when every `PWPUSH_*` variable is known. */
export function unknownVariablesWarning(env: NodeJS.ProcessEnv): string | null {
  const unknown = unknownVariables(env);
  if (unknown.length === 0) return null;
  return `Unknown settings ignored: ${unknown.map((u) => `${u.name} (did you mean ${u.closest}?)`).join(', ')}`;
}

/** The settings table (docs/settings.md): name, default and meaning of every variable. */
export function settingsTable(): SettingDoc[] {
  return ROWS.map((row) => ({ ...row }));
}

/** The table as Markdown, for docs/settings.md (its links are relative to docs/). */
export function settingsTableMarkdown(): string {
  const lines = ['| Variable | Default | Meaning |', '|---|---|---|'];
  for (const row of ROWS) lines.push(`| \`${row.name}\` | ${row.default} | ${row.meaning} |`);
  return lines.join('\n');
}

/** docs/deploy.md's table of the settings that hold a secret, each with the variable that reads it from a file. */
export function secretSettingsMarkdown(): string {
  const lines = ['| Secret | From a file | What it is |', '|---|---|---|'];
  for (const [name, what] of Object.entries(SECRET_SETTINGS))
    lines.push(`| \`${name}\` | \`${name}_FILE\` | ${what} |`);
  return lines.join('\n');
}

/**
 * Largest request body of a caller who may send files: every file at its base64 size (JSON's encoding; multipart is
 * smaller), plus 8 MiB for the payload, note and the rest.
 */
export function maxBodyBytes(settings: Pick<Settings, 'fileMaxCount' | 'fileMaxBytes'>): number {
  return settings.fileMaxCount * Math.ceil(settings.fileMaxBytes / 3) * 4 + 8 * 1024 * 1024;
}

function raw(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const v = value.toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new SettingsError(name, `${name} must be one of true, false, 1, 0, yes, no (got "${value}")`);
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) {
    throw new SettingsError(name, `${name} must be an integer from ${min} to ${max} (got "${value}")`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new SettingsError(name, `${name} must be an integer from ${min} to ${max} (got "${value}")`);
  }
  return n;
}

const MIB = 1024 * 1024;
const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kib: 1024,
  mib: MIB,
  gib: 1024 * MIB,
  tib: 1024 * 1024 * MIB,
};
const MAX_BYTE_SIZE = 1024 * 1024 * MIB;

/** A size in bytes: a whole number, optionally with a binary unit (`512KiB`, `100MiB`, `1GiB`); at most 1 TiB. */
function byteSize(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const match = /^(\d{1,16})\s*([a-z]*)$/i.exec(value);
  const unit = match ? BYTE_UNITS[match[2]!.toLowerCase()] : undefined;
  const n = match && unit ? Number(match[1]) * unit : NaN;
  if (!Number.isSafeInteger(n) || n > MAX_BYTE_SIZE) {
    throw new SettingsError(
      name,
      `${name} must be a number of bytes, optionally with a unit (KiB, MiB, GiB, TiB), at most 1TiB; 0 turns it off (got "${value}")`,
    );
  }
  return n;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const v = value.toLowerCase();
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new SettingsError(name, `${name} must be one of ${allowed.join(', ')} (got "${value}")`);
}

function httpUrl(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(name, `${name} must be an absolute http:// or https:// URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SettingsError(name, `${name} must be an absolute http:// or https:// URL (got "${value}")`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new SettingsError(name, `${name} must be a base URL without credentials, query or fragment`);
  }
  // Keep a path prefix (a server mounted under /secrets) but never a trailing slash.
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function bounds(env: NodeJS.ProcessEnv, prefix: string, spec: { min: number; max: number; default: number }): Bounds {
  const min = int(env, `${prefix}_MIN`, spec.min, spec.min, spec.max);
  const max = int(env, `${prefix}_MAX`, spec.max, spec.min, spec.max);
  if (min > max) {
    throw new SettingsError(`${prefix}_MIN`, `${prefix}_MIN (${min}) must not be greater than ${prefix}_MAX (${max})`);
  }
  const fallback = Math.min(Math.max(spec.default, min), max);
  const def = int(env, `${prefix}_DEFAULT`, fallback, min, max);
  return { default: def, min, max };
}

/** Parses one key: `[id:]<64 hex | base64 of 32 bytes>`. The id defaults to a fingerprint of the key. */
export function parseMasterKey(text: string, variable: string): { id: string; key: Buffer } {
  const value = text.trim();
  let id: string | undefined;
  let material = value;
  const colon = value.indexOf(':');
  if (colon > 0) {
    id = value.slice(0, colon);
    material = value.slice(colon + 1);
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) {
      throw new SettingsError(variable, `${variable}: a key id must be 1 to 32 characters of [A-Za-z0-9_-]`);
    }
  }
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(material)) key = Buffer.from(material, 'hex');
  else if (/^[A-Za-z0-9+/]{43}=?$/.test(material) || /^[A-Za-z0-9_-]{43}=?$/.test(material)) {
    const decoded = Buffer.from(material.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (decoded.length === 32) key = decoded;
  }
  if (!key) {
    throw new SettingsError(
      variable,
      `${variable} must be 64 hex characters or base64 of 32 bytes, optionally prefixed with "id:"`,
    );
  }
  return { id: id ?? createHash('sha256').update(key).digest('hex').slice(0, 8), key };
}

function readKeyFile(file: string, variable: string): { id: string; key: Buffer } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SettingsError(
      variable,
      `${variable}: cannot read the key file ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseMasterKey(text, `${variable} (${file})`);
}

/** Development convenience: a random key, generated once under the data dir and reused. */
function developmentKey(dataDir: string): { id: string; key: Buffer } {
  const file = path.join(dataDir, 'master.key');
  if (existsSync(file)) return readKeyFile(file, 'PWPUSH_MASTER_KEY_FILE');
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const key = randomBytes(32);
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(file, 'PWPUSH_MASTER_KEY_FILE');
    throw err;
  }
  chmodSync(file, 0o600);
  return parseMasterKey(key.toString('hex'), 'PWPUSH_MASTER_KEY_FILE');
}

function masterKeys(env: NodeJS.ProcessEnv, dataDir: string): Settings['masterKeys'] {
  const given = optionalSecret(env, 'PWPUSH_MASTER_KEY');
  // Production without a key was refused before (productionRefusals); elsewhere a key is made once under the data dir.
  const current = given ? parseMasterKey(given.value, given.from) : developmentKey(dataDir);

  const keys = [current];
  const previous = optionalSecret(env, 'PWPUSH_MASTER_KEY_PREVIOUS');
  if (previous) {
    for (const part of previous.value.split(',')) {
      if (part.trim() === '') continue;
      const key = parseMasterKey(part, previous.from);
      const clash = keys.find((k) => k.id === key.id);
      if (clash) {
        if (clash.key.equals(key.key)) continue;
        throw new SettingsError(previous.from, `${previous.from}: key id "${key.id}" is used by two different keys`);
      }
      keys.push(key);
    }
  }
  return keys;
}

/**
 * What production needs and does not have, refused at once (one message listing each, rather than one refusal per
 * start): the master key and the public base URL. Only whether they are set: their form is checked where they are read.
 */
function productionRefusals(env: NodeJS.ProcessEnv, appEnv: Settings['env']): void {
  if (appEnv !== 'production') return;
  const missing: { variable: string; message: string }[] = [];
  if (raw(env, 'PWPUSH_MASTER_KEY') === undefined && raw(env, 'PWPUSH_MASTER_KEY_FILE') === undefined) {
    missing.push({
      variable: 'PWPUSH_MASTER_KEY',
      message:
        'PWPUSH_MASTER_KEY or PWPUSH_MASTER_KEY_FILE is required in production (64 hex characters or base64 of 32 bytes; `npm run key` makes one)',
    });
  }
  if (raw(env, 'PWPUSH_PUBLIC_BASE_URL') === undefined) {
    missing.push({
      variable: 'PWPUSH_PUBLIC_BASE_URL',
      message:
        "PWPUSH_PUBLIC_BASE_URL is required in production: set it to the public address people open, e.g. PWPUSH_PUBLIC_BASE_URL=https://secrets.example.org (without it, the links in answers would be built from each request's Host header, which a client chooses)",
    });
  }
  if (missing.length === 1) throw new SettingsError(missing[0]!.variable, missing[0]!.message);
  if (missing.length > 1) {
    throw new SettingsError(
      missing[0]!.variable,
      `production needs ${missing.length} settings that are not set:\n${missing.map((m) => `  - ${m.message}`).join('\n')}`,
    );
  }
}

export function loadSettings(env: NodeJS.ProcessEnv): Settings {
  const appEnv = oneOf(env, 'PWPUSH_ENV', ENVS, oneOf(env, 'NODE_ENV', ENVS, 'development'));
  const dataDirRaw = raw(env, 'PWPUSH_DATA_DIR');
  const dataDir = path.resolve(dataDirRaw ?? path.join(repoRoot, 'data'));

  productionRefusals(env, appEnv);
  const database = optionalSecret(env, 'DATABASE_URL');
  const databaseUrl = database?.value ?? null;
  if (database && !/^postgres(ql)?:\/\//.test(database.value)) {
    throw new SettingsError(database.from, 'DATABASE_URL must be a postgres:// or postgresql:// URL');
  }

  const fileMaxCount = int(env, 'PWPUSH_FILE_MAX_COUNT', SPEC_LIMITS.fileMaxCount, 1, SPEC_LIMITS.fileMaxCount);
  const fileMaxBytes = int(env, 'PWPUSH_FILE_MAX_BYTES', SPEC_LIMITS.fileMaxBytes, 1, SPEC_LIMITS.fileMaxBytes);
  const purge = raw(env, 'PWPUSH_PURGE_EXPIRED_AFTER_DAYS');

  const keys = masterKeys(env, dataDir);
  const publicBaseUrl = httpUrl(env, 'PWPUSH_PUBLIC_BASE_URL');
  const signing = optionalSecret(env, 'PWPUSH_SIGNING_SECRET');
  if (signing !== undefined && signing.value.length < 32) {
    throw new SettingsError(signing.from, 'PWPUSH_SIGNING_SECRET must be at least 32 characters');
  }
  const signingSecret = signing
    ? Buffer.from(signing.value, 'utf8')
    : createHmac('sha256', keys[0]!.key).update('secret-push download-link signing v1').digest();
  const mail = mailSettings(env, publicBaseUrl);

  return {
    env: appEnv,
    // Development listens on loopback only; production binds what PWPUSH_HOST says (every interface by default).
    host: raw(env, 'PWPUSH_HOST') ?? (appEnv === 'production' ? '0.0.0.0' : '127.0.0.1'),
    port: int(env, 'PORT', 5100, 1, 65535),
    dataDir,
    databaseUrl,
    publicBaseUrl,
    mode: oneOf(env, 'PWPUSH_MODE', MODES, 'full'),
    trustProxy: bool(env, 'PWPUSH_TRUST_PROXY', false),
    logLevel: oneOf(env, 'PWPUSH_LOG_LEVEL', LOG_LEVELS, 'info'),
    allowAnonymous: bool(env, 'PWPUSH_ALLOW_ANONYMOUS', true),
    enableFilePushes: bool(env, 'PWPUSH_ENABLE_FILE_PUSHES', true),
    enableUrlPushes: bool(env, 'PWPUSH_ENABLE_URL_PUSHES', true),
    enableQrPushes: bool(env, 'PWPUSH_ENABLE_QR_PUSHES', true),
    enableRequests: bool(env, 'PWPUSH_ENABLE_REQUESTS', true),
    filesRequireAuth: bool(env, 'PWPUSH_FILES_REQUIRE_AUTH', true),
    fileMaxCount,
    fileMaxBytes,
    expireAfterDays: bounds(env, 'PWPUSH_EXPIRE_AFTER_DAYS', SPEC_LIMITS.expireAfterDays),
    expireAfterDurationMin: int(
      env,
      'PWPUSH_EXPIRE_AFTER_DURATION_MIN',
      DURATION_MIN_BOUNDS.default,
      DURATION_MIN_BOUNDS.min,
      DURATION_MIN_BOUNDS.max,
    ),
    expireAfterViews: bounds(env, 'PWPUSH_EXPIRE_AFTER_VIEWS', SPEC_LIMITS.expireAfterViews),
    deletableByViewerDefault: bool(env, 'PWPUSH_DELETABLE_BY_VIEWER_DEFAULT', true),
    retrievalStepDefault: bool(env, 'PWPUSH_RETRIEVAL_STEP_DEFAULT', false),
    passphraseAttemptsPerMinute: int(env, 'PWPUSH_PASSPHRASE_ATTEMPTS_PER_MINUTE', 5, 1, 1000),
    clientEncryption: clientEncryptionSetting(
      oneOf(env, 'PWPUSH_CLIENT_ENCRYPTION', CLIENT_ENCRYPTION_MODES, 'allowed'),
    ),
    rateLimitPerMinute: int(env, 'PWPUSH_RATE_LIMIT_PER_MINUTE', 120, 0, 1_000_000),
    anonymousStoragePerHour: byteSize(env, 'PWPUSH_ANONYMOUS_STORAGE_PER_HOUR', 100 * MIB),
    userStorageBytes: byteSize(env, 'PWPUSH_USER_STORAGE', 1024 * MIB),
    userOpenRequests: int(env, 'PWPUSH_USER_OPEN_REQUESTS', 100, 0, 100_000),
    bodyLimitBytes: int(env, 'PWPUSH_BODY_LIMIT_BYTES', 8 * 1024 * 1024, 64 * 1024, 64 * 1024 * 1024),
    sweepIntervalSeconds: int(env, 'PWPUSH_SWEEP_INTERVAL_SECONDS', 30, 1, 60),
    purgeExpiredAfterDays: purge === undefined ? null : int(env, 'PWPUSH_PURGE_EXPIRED_AFTER_DAYS', 0, 1, 36500),
    masterKeys: keys,
    signingSecret,
    enableSignups: bool(env, 'PWPUSH_ENABLE_SIGNUPS', true),
    sessionLifetimeHours: int(env, 'PWPUSH_SESSION_LIFETIME_HOURS', 24, 1, 720),
    loginAttemptsPer15Minutes: int(env, 'PWPUSH_LOGIN_ATTEMPTS', 5, 1, 1000),
    workers: int(env, 'PWPUSH_WORKERS', defaultWorkers(databaseUrl), 1, 64),
    databasePoolSize: int(env, 'PWPUSH_DATABASE_POOL_SIZE', 10, 1, 100),
    ...metricsSettings(env),
    ...corsSettings(env),
    oidc: oidcSettings(env, appEnv),
    require2fa: bool(env, 'PWPUSH_REQUIRE_2FA', false),
    adminEmails: adminEmails(env),
    fileStorage: fileStorageSettings(env),
    mail,
    brand: brandSettings(env, mail.instanceName),
    webhookBudget: {
      perAccount: int(env, 'PWPUSH_WEBHOOK_SENDS_PER_MINUTE', 600, 0, 1_000_000),
      perAddress: int(env, 'PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE', 3000, 0, 1_000_000),
    },
    webhookCalls: {
      testsPerMinute: int(env, 'PWPUSH_WEBHOOK_TESTS_PER_MINUTE', WEBHOOK_CALL_LIMITS.test.perMinute, 0, 10_000),
      redeliveriesPerMinute: int(
        env,
        'PWPUSH_WEBHOOK_REDELIVERIES_PER_MINUTE',
        WEBHOOK_CALL_LIMITS.redeliver.perMinute,
        0,
        10_000,
      ),
    },
    webhooks: {
      enabled: bool(env, 'PWPUSH_WEBHOOKS', true),
      allowPrivate: bool(env, 'PWPUSH_WEBHOOKS_ALLOW_PRIVATE', false),
      retrySchedule: retrySchedule(env, 'PWPUSH_WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h'),
    },
  };
}

const SCHEDULE_UNIT: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A list of waits (`5s,5m,2h`) in seconds: 1..20 of them, each 1 s to 24 h. */
function retrySchedule(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const text = raw(env, name) ?? fallback;
  const parts = text.split(',').map((p) => p.trim());
  const seconds = parts.map((p) => {
    const m = /^([0-9]{1,5})([smh])$/.exec(p);
    return m ? Number(m[1]) * SCHEDULE_UNIT[m[2]!]! : NaN;
  });
  if (parts.length > 20 || seconds.some((n) => !Number.isInteger(n) || n < 1 || n > 86_400)) {
    throw new SettingsError(
      name,
      `${name} must be 1 to 20 comma-separated waits such as 5s,5m,30m,2h (each 1s to 24h; got "${text.slice(0, 100)}")`,
    );
  }
  return seconds;
}

/** The email settings: the relay's URL (inline or from a file), the sender, the feature and its limits. */
function mailSettings(env: NodeJS.ProcessEnv, publicBaseUrl: string | null): MailSettings {
  const smtp = optionalSecret(env, 'PWPUSH_SMTP_URL');
  const smtpUrl = smtp?.value ?? null;
  if (smtp !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(smtp.value);
    } catch {
      /* refused below */
    }
    // Never echoes the value: it holds the relay's password.
    if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
      throw new SettingsError(
        smtp.from,
        'PWPUSH_SMTP_URL must be smtp://user:pass@host:port or smtps://user:pass@host:port (user and password percent-encoded)',
      );
    }
    if (publicBaseUrl === null) throw new SettingsError('PWPUSH_PUBLIC_BASE_URL', MAIL_NEEDS_BASE);
  }
  const instanceName = raw(env, 'PWPUSH_INSTANCE_NAME') ?? 'Secret Push';
  if (instanceName.length > 100 || /[\r\n]/.test(instanceName)) {
    throw new SettingsError('PWPUSH_INSTANCE_NAME', 'PWPUSH_INSTANCE_NAME must be one line of at most 100 characters');
  }
  const host = publicBaseUrl ? new URL(publicBaseUrl).hostname : 'localhost';
  const from = raw(env, 'PWPUSH_MAIL_FROM') ?? `${instanceName.replace(/["\\<>]/g, '')} <no-reply@${host}>`;
  if (/[\r\n]/.test(from) || !/@/.test(from) || from.length > 320) {
    throw new SettingsError('PWPUSH_MAIL_FROM', 'PWPUSH_MAIL_FROM must be an address or `Name <address>` on one line');
  }
  return {
    smtpUrl,
    from,
    notifyByEmail: bool(env, 'PWPUSH_NOTIFY_BY_EMAIL', true),
    notifyDailyLimit: int(env, 'PWPUSH_NOTIFY_DAILY_LIMIT', NOTIFY_DAILY_LIMIT_DEFAULT, 1, 100_000),
    instanceName,
    attempts: int(env, 'PWPUSH_MAIL_ATTEMPTS', 10, 1, 50),
    retrySeconds: int(env, 'PWPUSH_MAIL_RETRY_SECONDS', 30, 1, 3600),
  };
}

/** PWPUSH_OIDC_*: all or nothing: an issuer needs a client id and a secret, and the other settings need an issuer. */
function oidcSettings(env: NodeJS.ProcessEnv, appEnv: Settings['env']): OidcSettings | null {
  const issuerText = raw(env, 'PWPUSH_OIDC_ISSUER');
  const dependent = [
    'PWPUSH_OIDC_CLIENT_ID',
    'PWPUSH_OIDC_CLIENT_SECRET',
    'PWPUSH_OIDC_CLIENT_SECRET_FILE',
    'PWPUSH_OIDC_ALLOWED_DOMAINS',
    'PWPUSH_OIDC_AUTO_CREATE',
    'PWPUSH_OIDC_ONLY',
    'PWPUSH_OIDC_PROVIDER_NAME',
    'PWPUSH_OIDC_ALLOW_HTTP',
    'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM',
  ];
  if (issuerText === undefined) {
    const stray = dependent.find((name) => raw(env, name) !== undefined);
    if (stray)
      throw new SettingsError(stray, `${stray} is set but PWPUSH_OIDC_ISSUER is not: set the provider's issuer URL`);
    return null;
  }
  const allowHttp = bool(env, 'PWPUSH_OIDC_ALLOW_HTTP', false);
  if (allowHttp && appEnv === 'production') {
    throw new SettingsError(
      'PWPUSH_OIDC_ALLOW_HTTP',
      "PWPUSH_OIDC_ALLOW_HTTP is refused in production: use the provider's https:// issuer",
    );
  }
  httpUrl(env, 'PWPUSH_OIDC_ISSUER');
  // Kept as written (a trailing slash included, as authentik's issuers have): discovery compares it with the
  // provider's `issuer` exactly.
  const issuer = new URL(issuerText).href;
  if (!issuer.startsWith('https://') && !allowHttp) {
    throw new SettingsError(
      'PWPUSH_OIDC_ISSUER',
      'PWPUSH_OIDC_ISSUER must be an https:// URL (PWPUSH_OIDC_ALLOW_HTTP=true accepts http:// outside production)',
    );
  }
  const clientId = raw(env, 'PWPUSH_OIDC_CLIENT_ID');
  if (!clientId) throw new SettingsError('PWPUSH_OIDC_CLIENT_ID', 'PWPUSH_OIDC_ISSUER needs PWPUSH_OIDC_CLIENT_ID');
  const allowedDomains: string[] = [];
  for (const part of (raw(env, 'PWPUSH_OIDC_ALLOWED_DOMAINS') ?? '').split(',')) {
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
  const providerName = raw(env, 'PWPUSH_OIDC_PROVIDER_NAME') ?? new URL(issuer).hostname;
  if (providerName.length > 64 || /[\u0000-\u001f\u007f]/.test(providerName)) {
    throw new SettingsError(
      'PWPUSH_OIDC_PROVIDER_NAME',
      'PWPUSH_OIDC_PROVIDER_NAME must be at most 64 characters, without control characters',
    );
  }
  const emailVerifiedClaim = raw(env, 'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM') ?? 'email_verified';
  // A claim's name as providers write them (`email_verified`, `xms_edov`); never one that names who signs in.
  if (!/^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(emailVerifiedClaim) || OWN_CLAIMS.includes(emailVerifiedClaim)) {
    throw new SettingsError(
      'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM',
      `PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM must name a claim such as email_verified or xms_edov (letters, digits, _ . : -, at most 64; not ${OWN_CLAIMS.join(', ')})`,
    );
  }
  return {
    issuer,
    clientId,
    clientSecret: secretValue(env, 'PWPUSH_OIDC_CLIENT_SECRET'),
    allowedDomains,
    autoCreate: bool(env, 'PWPUSH_OIDC_AUTO_CREATE', true),
    only: bool(env, 'PWPUSH_OIDC_ONLY', false),
    providerName,
    allowHttp,
    emailVerifiedClaim,
  };
}

/** Claims that say who signs in or for whom the token is: none of them can say that an email was verified. */
const OWN_CLAIMS = ['sub', 'iss', 'aud', 'email', 'nonce', 'azp'];

/**
 * A secret given inline (`NAME`) or in a file (`NAME_FILE`, its first line): at most one of them; undefined when
 * neither is set. Never echoed: an error names the variable and the file, never what it holds.
 */
function optionalSecret(env: NodeJS.ProcessEnv, name: string): { value: string; from: string } | undefined {
  const inline = raw(env, name);
  const file = raw(env, `${name}_FILE`);
  if (inline !== undefined && file !== undefined) {
    throw new SettingsError(name, `Set only one of ${name} and ${name}_FILE`);
  }
  if (inline !== undefined) return { value: inline, from: name };
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path.resolve(file), 'utf8');
  } catch (err) {
    throw new SettingsError(
      `${name}_FILE`,
      `${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const value = text.split(/\r?\n/)[0]!.trim();
  if (value === '') throw new SettingsError(`${name}_FILE`, `${name}_FILE: ${file} is empty`);
  return { value, from: `${name}_FILE` };
}

/** A secret that must be set (inline or in a file): `neededBy` says what needs it. Never echoed. */
function secretValue(env: NodeJS.ProcessEnv, name: string, neededBy = 'PWPUSH_OIDC_ISSUER'): string {
  const secret = optionalSecret(env, name);
  if (secret === undefined) throw new SettingsError(name, `${neededBy} needs ${name} or ${name}_FILE`);
  return secret.value;
}

/** PWPUSH_FILE_STORAGE (`postgres`, or `s3://bucket/prefix`) and the store's PWPUSH_S3_* settings. */
function fileStorageSettings(env: NodeJS.ProcessEnv): FileStorageSettings {
  const value = raw(env, 'PWPUSH_FILE_STORAGE') ?? 'postgres';
  if (value.toLowerCase() === 'postgres') return { kind: 'postgres' };
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  const prefix = match?.[2] ?? '';
  if (!match || prefix.startsWith('/') || prefix.includes('//') || /[\u0000-\u001f\u007f\\]/.test(prefix)) {
    throw new SettingsError(
      'PWPUSH_FILE_STORAGE',
      `PWPUSH_FILE_STORAGE must be postgres or s3://bucket/prefix (a bucket name of 3 to 63 lower-case letters, digits, dots and hyphens; the prefix optional) (got "${value}")`,
    );
  }
  const accessKeyId = optionalSecret(env, 'PWPUSH_S3_ACCESS_KEY_ID')?.value;
  const secretAccessKey = optionalSecret(env, 'PWPUSH_S3_SECRET_ACCESS_KEY')?.value;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new SettingsError(
      accessKeyId === undefined ? 'PWPUSH_S3_ACCESS_KEY_ID' : 'PWPUSH_S3_SECRET_ACCESS_KEY',
      'Set both PWPUSH_S3_ACCESS_KEY_ID and PWPUSH_S3_SECRET_ACCESS_KEY (or their _FILE), or neither (the AWS SDK then finds credentials itself)',
    );
  }
  return {
    kind: 's3',
    bucket: match[1]!,
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    endpoint: httpUrl(env, 'PWPUSH_S3_ENDPOINT'),
    region: raw(env, 'PWPUSH_S3_REGION') ?? 'us-east-1',
    forcePathStyle: bool(env, 'PWPUSH_S3_FORCE_PATH_STYLE', false),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
  };
}

/** PWPUSH_ADMIN_EMAILS: a comma-separated list of emails, compared in lower case; at most 100 of them. */
function adminEmails(env: NodeJS.ProcessEnv): string[] {
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

/** PWPUSH_CORS_ORIGINS: exact origins (scheme, host, port; no path, no `*`), each as browsers send it in `Origin`. */
function corsSettings(env: NodeJS.ProcessEnv): Pick<Settings, 'corsOrigins' | 'corsV1Create'> {
  const value = raw(env, 'PWPUSH_CORS_ORIGINS');
  const corsOrigins: string[] = [];
  for (const part of value === undefined ? [] : value.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      /* refused below */
    }
    // An origin is what `Origin` carries: scheme, host and port; no path, query, credentials or wildcard.
    const exact =
      url &&
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.pathname === '/' &&
      !url.search &&
      !url.hash &&
      !url.username &&
      !url.password &&
      !text.includes('*');
    if (!exact) {
      throw new SettingsError(
        'PWPUSH_CORS_ORIGINS',
        `PWPUSH_CORS_ORIGINS must be a comma-separated list of exact origins such as https://app.example.org or http://localhost:3000 (scheme, host and port; no path and no wildcard; got "${text}")`,
      );
    }
    const origin = url!.origin;
    if (!corsOrigins.includes(origin)) corsOrigins.push(origin);
  }
  return { corsOrigins, corsV1Create: bool(env, 'PWPUSH_CORS_V1_CREATE', true) };
}

/**
 * One server process per core this process may use (cgroup and affinity limits included), less one when PostgreSQL
 * runs on the same machine (the embedded one, or a DATABASE_URL on a loopback address): it needs a core of its own.
 * Measured with the bench on a 2-core machine, a second worker beside a local PostgreSQL added no throughput and cost
 * about 40 % more CPU per request and 200 MB (a worker and the primary); with PostgreSQL elsewhere every core serves.
 */
export function defaultWorkers(databaseUrl: string | null, cores = os.availableParallelism()): number {
  const local = databaseUrl === null || isLoopbackUrl(databaseUrl);
  return Math.min(64, Math.max(1, local ? cores - 1 : cores));
}

function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  // No host (a Unix socket named in the query) is this machine too.
  return host === '' || host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function metricsSettings(env: NodeJS.ProcessEnv): Pick<Settings, 'metricsEnabled' | 'metricsToken'> {
  const metricsEnabled = bool(env, 'PWPUSH_METRICS', false);
  const metricsToken = optionalSecret(env, 'PWPUSH_METRICS_TOKEN')?.value ?? null;
  if (metricsToken !== null) {
    if (!metricsEnabled) {
      throw new SettingsError(
        'PWPUSH_METRICS_TOKEN',
        'PWPUSH_METRICS_TOKEN is set but PWPUSH_METRICS is not true: set PWPUSH_METRICS=true to serve /metrics',
      );
    }
    if (metricsToken.length < 16 || /\s/.test(metricsToken)) {
      throw new SettingsError(
        'PWPUSH_METRICS_TOKEN',
        'PWPUSH_METRICS_TOKEN must be at least 16 characters without spaces',
      );
    }
  }
  return { metricsEnabled, metricsToken };
}
