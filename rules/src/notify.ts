/**
 * Email notification of a push's link (Password Pusher's `notify_emails_to`), the rules the server and the stateful
 * mock share: reading the recipient list, the locale, the per-push and per-user limits, and the reference's messages
 * (app/validators/multiple_emails_validator.rb, app/models/concerns/pwpush/notifiable_by_email.rb).
 */
import { ApiError, validationFailed, type FieldErrors } from './errors.js';
import { turnOn, type ServerEnv } from './feature-gates.js';
import type { ApiKeyScope } from './scopes.js';

/** Recipients per push, counting the create and every later `notifyEmails` call. */
export const NOTIFY_MAX_RECIPIENTS = 5;
/** `notifyEmails` calls per user per minute before 429. */
export const NOTIFY_CALLS_PER_MINUTE = 5;
/** The default per-user cap of emails in 24 hours (`PWPUSH_NOTIFY_DAILY_LIMIT`). */
export const NOTIFY_DAILY_LIMIT_DEFAULT = 500;
/** Longest address accepted (RFC 5321's path limit less the brackets), and its local part. */
const MAX_ADDRESS = 254;
const MAX_LOCAL = 64;

/**
 * Password Pusher's locale codes (`notify_emails_to_locale`); the server writes the mail in the catalogue of
 * server/src/i18n that the locale names, else in English (server/src/mail/messages.ts).
 */
export const NOTIFY_LOCALES = [
  'ca',
  'cs',
  'da',
  'de',
  'en',
  'en-GB',
  'es',
  'eu',
  'fi',
  'fr',
  'ga',
  'hi',
  'hu',
  'id',
  'is',
  'it',
  'ja',
  'ko',
  'lv',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'pt-PT',
  'ro',
  'ru',
  'sk',
  'sr',
  'sv',
  'th',
  'uk',
  'ur',
  'zh-CN',
] as const;
export const NOTIFY_TEXT = {
  blank: 'cannot be left blank',
  commas: 'has commas used in the wrong way',
  duplicates: 'contains duplicate emails',
  tooMany: `contains more than ${NOTIFY_MAX_RECIPIENTS} email(s)`,
  invalid: 'contains invalid email(s)',
  locale: 'is not within the available options',
  unavailable: ['are not available', 'is not available', 'Notify by email feature is not enabled'],
  anonymous: ['are not allowed for unknown users', 'is not allowed for unknown users'],
  notOwner: ['are allowed only for owners', 'is allowed only for owners'],
  expired: ['are not available for expired pushes', 'is not available for expired pushes'],
  encrypted:
    'are not available for end-to-end encrypted pushes: the key is only in your link, so a mailed link could not open it',
  daily: 'The maximum number of emails has been reached for today',
  perPush: (already: number) =>
    `You can notify up to ${NOTIFY_MAX_RECIPIENTS} email(s) and you have already sent emails to ${already} recipients`,
  queued: 'Recipient(s) are added to the queue to be sent.',
  rateLimited: 'Too many email notification requests. Please try again in a minute.',
} as const;

// Plain ASCII addresses only: an atom-text local part (dots between atoms) and a dotted host name with a letter TLD.
// No spaces, quotes, brackets, control characters (CR and LF included) or non-ASCII characters: nothing a header
// could be smuggled in with. Linear: every quantifier is followed by a character it cannot match.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Whether one address (already trimmed) is a plain ASCII mailbox this service sends to. */
export function isPlainAddress(address: string): boolean {
  if (address.length === 0 || address.length > MAX_ADDRESS) return false;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at !== address.indexOf('@')) return false;
  const local = address.slice(0, at);
  const labels = address.slice(at + 1).split('.');
  if (local.length > MAX_LOCAL || !LOCAL.test(local) || labels.length < 2) return false;
  if (!labels.every((label) => LABEL.test(label))) return false;
  return /^[A-Za-z]{2,63}$/.test(labels[labels.length - 1]!);
}

/** The recipients of a `notify_emails_to` string, or the messages on `notify_emails_to` (the reference's, in its order). */
export function parseRecipients(text: string): { recipients: string[] } | { errors: string[] } {
  if (text.trim() === '') return { errors: [NOTIFY_TEXT.blank] };
  const parts = text.split(',').map((part) => part.trim());
  const errors: string[] = [];
  if (parts.some((part) => part === '')) errors.push(NOTIFY_TEXT.commas);
  const recipients = parts.filter((part) => part !== '');
  const lower = recipients.map((r) => r.toLowerCase());
  if (new Set(lower).size !== lower.length) errors.push(NOTIFY_TEXT.duplicates);
  if (recipients.length > NOTIFY_MAX_RECIPIENTS) errors.push(NOTIFY_TEXT.tooMany);
  if (!recipients.every(isPlainAddress)) errors.push(NOTIFY_TEXT.invalid);
  return errors.length > 0 ? { errors } : { recipients };
}

/** What a valid request asks for: the recipients as read, and the locale (null: English). */
export interface NotifyRequest {
  recipients: string[];
  locale: string | null;
}

/**
 * Reads `notify_emails_to` and `notify_emails_to_locale` (already schema-checked: a string, a string or null);
 * throws validation_failed with the reference's messages. An empty locale (a form left empty) is none.
 */
export function readNotifyRequest(to: string | undefined, locale: string | null | undefined): NotifyRequest {
  const fields: FieldErrors = {};
  const parsed = parseRecipients(to ?? '');
  if ('errors' in parsed) fields.notify_emails_to = parsed.errors;
  const chosen = locale === undefined || locale === null || locale === '' ? null : locale;
  if (chosen !== null && !(NOTIFY_LOCALES as readonly string[]).includes(chosen)) {
    fields.notify_emails_to_locale = [NOTIFY_TEXT.locale];
  }
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
  return { recipients: (parsed as { recipients: string[] }).recipients, locale: chosen };
}

/** The 422 of a request the instance or the push cannot serve: the reference's pair of messages, and `base`'s. */
export function notifyRefused(pair: readonly [string, string, string?] | readonly string[]): ApiError {
  const fields: FieldErrors = { notify_emails_to: [pair[0]!] };
  if (pair[1]) fields.notify_emails_to_locale = [pair[1]];
  if (pair[2]) fields.base = [pair[2]];
  return validationFailed(fields);
}

/**
 * The 422 of `notify_emails_to` on an instance that sends no email: the reference's messages per field (clients and
 * the conformance suite read them), and an `error` that also says why and which setting turns email on: the SMTP
 * relay (`no_relay`), or the feature itself (`off`, PWPUSH_NOTIFY_BY_EMAIL=false with a relay).
 */
export function emailUnavailable(reason: 'no_relay' | 'off', env: ServerEnv | undefined): ApiError {
  const refused = notifyRefused(NOTIFY_TEXT.unavailable);
  const why = reason === 'no_relay' ? 'this instance has no SMTP relay' : 'emailing links is off on this instance';
  return new ApiError(
    'validation_failed',
    `${refused.message}: ${why}. ${turnOn(reason === 'no_relay' ? 'email' : 'notifyByEmail', env)}`,
    refused.details,
  );
}

/** `notify_owner_on_view` (read receipts by email) asked on an instance without an SMTP relay: its field's message. */
export function readReceiptsUnavailable(env: ServerEnv | undefined): string {
  return `is not available (this instance has no SMTP relay). ${turnOn('email', env)}`;
}

/** The 422 of a limit (`base`): the daily cap, or the recipients a push may have in all. */
export function notifyLimit(message: string): ApiError {
  return validationFailed({ base: [message] });
}

/**
 * `notify_emails_to` on a create (a push's or a request's) sends email on the caller's behalf, as `notifyEmails` does:
 * an API key needs `pushes:notify` for it too (issue 45), else 403 insufficient_scope naming it. `scopes`: the caller's
 * key's (undefined: the account token, the legacy pair or an anonymous caller, whom the other rules decide).
 */
export function requireNotifyScope(scopes: readonly ApiKeyScope[] | undefined): void {
  if (scopes && !scopes.includes('pushes:notify'))
    throw new ApiError(
      'insufficient_scope',
      'This API key lacks the scope pushes:notify, which emailing the link (notify_emails_to) needs.',
      { scopes: ['pushes:notify'] },
    );
}
