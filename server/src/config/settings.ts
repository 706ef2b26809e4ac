/**
 * Instance settings: read and validated once at start-up from the environment (`PWPUSH_*`, `DATABASE_URL`, `PORT`,
 * `NODE_ENV`) by `loadSettings(env)`. Nothing else in the server reads `process.env`. Each setting is declared once,
 * in the table of its area (./areas/*.ts, with the builders of ./setting.ts): its variable, default, what it accepts
 * and its meaning; that declaration is its only reader, and docs/settings.md's tables are made from the same
 * declarations (`settingsTableMarkdown`). ARCHITECTURE.md says how to add one.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SPEC_LIMITS, type PushRuleSettings } from '@secret-push/rules';
import { ACCOUNT_SETTINGS, type OidcSettings, readAccounts } from './areas/accounts.js';
import { FILE_STORAGE_SETTINGS, type FileStorageSettings, readFileStorage } from './areas/file-storage.js';
import { HTTP_SETTINGS, readHttp } from './areas/http.js';
import {
  type AppEnv,
  INSTANCE_SETTINGS,
  type LogLevel,
  type Mode,
  PUBLIC_BASE_URL,
  readAppEnv,
  readDatabaseUrl,
  readDataDir,
  readInstance,
} from './areas/instance.js';
import { BRAND_SETTINGS, brandSettings, type BrandSettings } from './brand-settings.js';
import { KEY_SETTINGS, MASTER_KEY, type MasterKey, readKeys } from './areas/keys.js';
import { MAIL_SETTINGS, type MailSettings, readMail } from './areas/mail.js';
import { PUSH_SETTINGS, readPushes } from './areas/pushes.js';
import { readWebhooks, WEBHOOK_SETTINGS, type WebhookSettings } from './areas/webhooks.js';
import { type Env, raw, type Setting, type SettingDoc, SettingsError } from './setting.js';

export { SPEC_LIMITS };
export { SettingsError, type SettingDoc };
export { type OidcSettings } from './areas/accounts.js';
export { type FileStorageSettings, type S3StorageSettings } from './areas/file-storage.js';
export { defaultWorkers } from './areas/instance.js';
export { parseMasterKey } from './areas/keys.js';
export { emailAvailable, mailLinkBase, type MailSettings } from './areas/mail.js';
export { type WebhookSettings } from './areas/webhooks.js';

/**
 * Instance settings, read and validated once at start-up by `loadSettings(env)` (which throws SettingsError with a
 * clear message on a bad value). The push rules' settings (`PushRuleSettings`) are the part the stateful mock shares.
 * Each field's variable and meaning are in its area's table (./areas/).
 */
export interface Settings extends PushRuleSettings {
  env: AppEnv;
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  publicBaseUrl: string | null;
  /** `full`, or `retrieve-only`: the public gateway (server/src/http/retrieve-only.ts). */
  mode: Mode;
  trustProxy: boolean;
  logLevel: LogLevel;
  rateLimitPerMinute: number;
  anonymousStoragePerHour: number;
  userStorageBytes: number;
  userOpenRequests: number;
  enableRequests: boolean;
  bodyLimitBytes: number;
  sweepIntervalSeconds: number;
  purgeExpiredAfterDays: number | null;
  /** Current key first; older keys only decrypt. Ids are short strings stored with each ciphertext. */
  masterKeys: MasterKey[];
  signingSecret: Buffer;
  enableSignups: boolean;
  sessionLifetimeHours: number;
  loginAttemptsPer15Minutes: number;
  workers: number;
  databasePoolSize: number;
  metricsEnabled: boolean;
  metricsToken: string | null;
  corsOrigins: string[];
  corsV1Create: boolean;
  mail: MailSettings;
  webhooks: WebhookSettings;
  /** Webhook POSTs a minute per account and per target address; 0: no budget. */
  webhookBudget: { perAccount: number; perAddress: number };
  /** `testWebhook` and `retryWebhookDelivery` calls per account a clock minute; 0: no limit. */
  webhookCalls: { testsPerMinute: number; redeliveriesPerMinute: number };
  oidc: OidcSettings | null;
  require2fa: boolean;
  /**
   * Accounts with these emails (lower case) are administrators of the instance (PWPUSH_ADMIN_EMAILS), beside those
   * flagged by `npm run users -- grant-admin`: they may open the admin console (/admin, docs/admin.md).
   */
  adminEmails: string[];
  fileStorage: FileStorageSettings;
  /** The instance's brand on pages and mails (PWPUSH_INSTANCE_NAME, PWPUSH_BRAND_*: ./brand-settings.ts). */
  brand: BrandSettings;
}

/** The areas, each with its table, in the order of docs/settings.md. A new area is one line here. */
const AREAS: { title: string; settings: readonly Setting<unknown>[] }[] = [
  { title: 'The instance', settings: INSTANCE_SETTINGS },
  { title: 'HTTP: proxy, limits, CORS, metrics', settings: HTTP_SETTINGS },
  { title: 'Pushes and requests', settings: PUSH_SETTINGS },
  { title: 'File storage', settings: FILE_STORAGE_SETTINGS },
  { title: 'Keys', settings: KEY_SETTINGS },
  { title: 'Accounts and sign-in', settings: ACCOUNT_SETTINGS },
  { title: 'Email', settings: MAIL_SETTINGS },
  { title: 'Brand', settings: BRAND_SETTINGS },
  { title: 'Webhooks', settings: WEBHOOK_SETTINGS },
];

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

export function loadSettings(env: Env): Settings {
  const appEnv = readAppEnv(env);
  const dataDir = readDataDir(env, repoRoot);
  productionRefusals(env, appEnv);
  const databaseUrl = readDatabaseUrl(env);
  const publicBaseUrl = PUBLIC_BASE_URL.read(env);
  const mail = readMail(env, publicBaseUrl);
  return {
    ...readInstance(env, appEnv, databaseUrl),
    dataDir,
    databaseUrl,
    publicBaseUrl,
    ...readPushes(env),
    ...readKeys(env, dataDir),
    ...readHttp(env),
    ...readAccounts(env, appEnv),
    fileStorage: readFileStorage(env),
    mail,
    brand: brandSettings(env, mail.instanceName),
    ...readWebhooks(env),
  };
}

/**
 * What production needs and does not have, refused at once (one message listing each, rather than one refusal per
 * start): the master key and the public base URL. Only whether they are set: their form is checked where they are read.
 */
function productionRefusals(env: Env, appEnv: AppEnv): void {
  if (appEnv !== 'production') return;
  const missing: { variable: string; message: string }[] = [];
  if (raw(env, MASTER_KEY.name) === undefined && raw(env, `${MASTER_KEY.name}_FILE`) === undefined) {
    missing.push({
      variable: 'PWPUSH_MASTER_KEY',
      message:
        'PWPUSH_MASTER_KEY or PWPUSH_MASTER_KEY_FILE is required in production (64 hex characters or base64 of 32 bytes; `npm run key` makes one)',
    });
  }
  if (raw(env, PUBLIC_BASE_URL.name) === undefined) {
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

/**
 * Largest request body of a caller who may send files: every file at its base64 size (JSON's encoding; multipart is
 * smaller), plus 8 MiB for the payload, note and the rest.
 */
export function maxBodyBytes(settings: Pick<Settings, 'fileMaxCount' | 'fileMaxBytes'>): number {
  return settings.fileMaxCount * Math.ceil(settings.fileMaxBytes / 3) * 4 + 8 * 1024 * 1024;
}

/** The row of `NAME_FILE`, the same for every secret setting (SECRET_SETTINGS). */
function fileRow(name: string): SettingDoc {
  return {
    name: `${name}_FILE`,
    default: 'unset',
    accepts: 'a file',
    meaning: `A file whose first line is \`${name}\` (a secret mounted as a file: Docker or Compose secrets, a Kubernetes Secret volume); set only one of the two.`,
  };
}

/** An area's rows: its settings' and, after each secret setting, the row of its `NAME_FILE`. */
const rowsOf = (settings: readonly Setting<unknown>[]): SettingDoc[] =>
  settings.flatMap((s) => (s.secret === undefined ? [s.doc] : [s.doc, fileRow(s.name)]));

/** Every row, area after area. */
const ROWS: readonly SettingDoc[] = AREAS.flatMap((area) => rowsOf(area.settings));

/**
 * The settings that hold a secret, each also read from a file: `NAME_FILE` names a file whose first line (surrounding
 * whitespace trimmed) is the value, for secrets mounted as files (Docker and Compose secrets, Kubernetes Secret
 * volumes). Setting both `NAME` and `NAME_FILE` is refused. One table, in docs/settings.md and docs/deploy.md.
 */
export const SECRET_SETTINGS: Readonly<Record<string, string>> = Object.fromEntries(
  AREAS.flatMap((area) => area.settings.flatMap((s) => (s.secret === undefined ? [] : [[s.name, s.secret]]))),
);

/**
 * Where each secret setting lands in `Settings` (a dotted path): the admin console's "Settings" page shows that these
 * are set, never their values (server/src/admin/settings-in-force.ts). A new secret setting fails at start-up (and in
 * every test) until its place is named here.
 */
export const SECRET_SETTING_FIELDS: Readonly<Record<string, string>> = {
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
for (const name of Object.keys(SECRET_SETTINGS)) {
  if (SECRET_SETTING_FIELDS[name] === undefined) throw new Error(`SECRET_SETTING_FIELDS has no place for ${name}`);
}

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
export function unknownVariables(env: Env): { name: string; closest: string }[] {
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
export function unknownVariablesWarning(env: Env): string | null {
  const unknown = unknownVariables(env);
  if (unknown.length === 0) return null;
  return `Unknown settings ignored: ${unknown.map((u) => `${u.name} (did you mean ${u.closest}?)`).join(', ')}`;
}

/** The settings table (docs/settings.md): name, default, what it accepts and meaning of every variable. */
export function settingsTable(): SettingDoc[] {
  return ROWS.map((row) => ({ ...row }));
}

/**
 * docs/settings.md's tables, one per area (its links are relative to docs/). Regenerate them with
 * `npm run --silent settings:docs` (scripts/settings-docs.ts), which writes them between the page's markers.
 */
export function settingsTableMarkdown(): string {
  return AREAS.map((area) => {
    const lines = [`### ${area.title}`, '', '| Variable | Default | Accepts | Meaning |', '|---|---|---|---|'];
    for (const row of rowsOf(area.settings))
      lines.push(`| \`${row.name}\` | ${row.default} | ${row.accepts} | ${row.meaning} |`);
    return lines.join('\n');
  }).join('\n\n');
}

/** docs/deploy.md's table of the settings that hold a secret, each with the variable that reads it from a file. */
export function secretSettingsMarkdown(): string {
  const lines = ['| Secret | From a file | What it is |', '|---|---|---|'];
  for (const [name, what] of Object.entries(SECRET_SETTINGS))
    lines.push(`| \`${name}\` | \`${name}_FILE\` | ${what} |`);
  return lines.join('\n');
}
