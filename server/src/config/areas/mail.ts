/** Email: the SMTP relay, the sender, the instance's name in messages, pushes' links by email and deliveries' retries. */
import { NOTIFY_DAILY_LIMIT_DEFAULT } from '@secret-push/rules';
import { type Env, flag, integer, secret, SettingsError, text } from '../setting.js';

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

const SMTP_URL = secret('PWPUSH_SMTP_URL', {
  shown: 'none',
  accepts: '`smtp://user:pass@host:587` or `smtps://user:pass@host:465`',
  meaning:
    'The SMTP relay for email: `smtp://` uses STARTTLS when the relay offers it, `smtps://` TLS from the start; user and password percent-encoded. Needs `PWPUSH_PUBLIC_BASE_URL` (links in email are built only from it). Unset: no email (the notify fields answer 422 `are not available`, account flows stay as without email). Secret: never logged.',
  what: "the SMTP relay's URL, with its user and password",
});
const MAIL_FROM = text('PWPUSH_MAIL_FROM', {
  shown: '`Secret Push <no-reply@…>`',
  accepts: 'an address, or `Name <address>`',
  meaning:
    'The From of every message. Default: `no-reply@` the host of `PWPUSH_PUBLIC_BASE_URL` (`localhost` without it), named after `PWPUSH_INSTANCE_NAME`.',
});
const NOTIFY_BY_EMAIL = flag('PWPUSH_NOTIFY_BY_EMAIL', true, {
  meaning:
    "Email a push's link to recipients (`notify_emails_to`, `POST …/notify_emails`) when SMTP is configured. `false`: the route answers 404 and the fields 422, as Password Pusher with `notify_by_email.enabled: false`.",
});
const NOTIFY_DAILY_LIMIT = integer('PWPUSH_NOTIFY_DAILY_LIMIT', {
  default: NOTIFY_DAILY_LIMIT_DEFAULT,
  min: 1,
  max: 100_000,
  meaning: 'Emails one user may have sent in 24 hours; over it, 422 on `base`.',
});
const INSTANCE_NAME = text('PWPUSH_INSTANCE_NAME', {
  default: 'Secret Push',
  accepts: 'one line of 1..100 characters',
  meaning:
    "The instance's name, shown in every page's header and title and in emails. The brand's other settings are the Brand area below; see [branding.md](branding.md).",
});
const MAIL_ATTEMPTS = integer('PWPUSH_MAIL_ATTEMPTS', {
  default: 10,
  min: 1,
  max: 50,
  meaning:
    'Tries of one delivery when the relay fails temporarily (a 4xx reply, no connection) before it is given up as `failed`.',
});
const MAIL_RETRY_SECONDS = integer('PWPUSH_MAIL_RETRY_SECONDS', {
  default: 30,
  min: 1,
  max: 3600,
  meaning: 'The wait before the first retry of a delivery; each next wait doubles, up to an hour.',
});

export const MAIL_SETTINGS = [
  SMTP_URL,
  MAIL_FROM,
  NOTIFY_BY_EMAIL,
  NOTIFY_DAILY_LIMIT,
  INSTANCE_NAME,
  MAIL_ATTEMPTS,
  MAIL_RETRY_SECONDS,
];

/** Why an instance with an SMTP relay needs PWPUSH_PUBLIC_BASE_URL (the start-up refusal names it). */
const MAIL_NEEDS_BASE =
  "PWPUSH_SMTP_URL needs PWPUSH_PUBLIC_BASE_URL: the links in email are built only from it, never from a request's Host header, which a client chooses (in development, add PWPUSH_PUBLIC_BASE_URL=http://localhost:5100)";

/**
 * The base of every link in an email: PWPUSH_PUBLIC_BASE_URL, and nothing else (issue 45: a reset requested with
 * `Host: evil.example` must not mail a working token to evil.example). Start-up refuses a relay without it.
 */
export function mailLinkBase(settings: { publicBaseUrl: string | null }): string {
  if (!settings.publicBaseUrl) throw new SettingsError('PWPUSH_PUBLIC_BASE_URL', MAIL_NEEDS_BASE);
  return settings.publicBaseUrl.replace(/\/+$/, '');
}

/** Whether pushes' links can be emailed: a relay is configured and the feature is on (`email_auto_dispatch`). */
export function emailAvailable(settings: { mail: MailSettings }): boolean {
  return settings.mail.notifyByEmail && settings.mail.smtpUrl !== null;
}

/** The email settings: the relay's URL (inline or from a file), the sender, the feature and its limits. */
export function readMail(env: Env, publicBaseUrl: string | null): MailSettings {
  const smtp = SMTP_URL.read(env);
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
  const instanceName = INSTANCE_NAME.read(env);
  if (instanceName.length > 100 || /[\r\n]/.test(instanceName)) {
    throw new SettingsError('PWPUSH_INSTANCE_NAME', 'PWPUSH_INSTANCE_NAME must be one line of at most 100 characters');
  }
  const host = publicBaseUrl ? new URL(publicBaseUrl).hostname : 'localhost';
  const from = MAIL_FROM.read(env) ?? `${instanceName.replace(/["\\<>]/g, '')} <no-reply@${host}>`;
  if (/[\r\n]/.test(from) || !/@/.test(from) || from.length > 320) {
    throw new SettingsError('PWPUSH_MAIL_FROM', 'PWPUSH_MAIL_FROM must be an address or `Name <address>` on one line');
  }
  return {
    smtpUrl,
    from,
    notifyByEmail: NOTIFY_BY_EMAIL.read(env),
    notifyDailyLimit: NOTIFY_DAILY_LIMIT.read(env),
    instanceName,
    attempts: MAIL_ATTEMPTS.read(env),
    retrySeconds: MAIL_RETRY_SECONDS.read(env),
  };
}
