/**
 * The field messages of rules of their own (issue 42), by catalogue key, beside field-text.ts's forms of the
 * contract's schema: who may open a push (`allowed_networks`, `recipient_emails`, rules/src/recipient-access.ts),
 * the link's email (`notify_emails_to`, rules/src/notify.ts), a push's kind, encryption, files and lifetime
 * (rules/src/push-input.ts, durations.ts, form-input.ts), a request (request-service.ts), a webhook (its URL's own
 * rules in webhooks/targets.ts, webhook-handlers.ts, webhook-service.ts), an API key (api-key-handlers.ts,
 * user/api-keys.ts, rules/src/scopes.ts). A figure or a value the English names (which network) travels into the
 * sentence. server/test/web/field-forms.test.ts drives each of those rules with bad input and fails on a message
 * that matches no form.
 */
import type { MessageValues } from '../i18n/i18n.js';
import type { MessageKey } from '../i18n/locales.js';

/**
 * A message's form → its catalogue key and the values its placeholders take from the match. An area whose rules
 * have messages of their own (a workspace's settings, a brand) passes its forms, which are tried first.
 */
export type FieldForms = ReadonlyArray<readonly [RegExp, MessageKey, ((m: RegExpMatchArray) => MessageValues)?]>;

const value = (m: RegExpMatchArray) => ({ value: m[1]! });
const limit = (m: RegExpMatchArray) => ({ limit: Number(m[1]) });

export const RULE_FORMS: FieldForms = [
  // Who may open it.
  [/^contains an invalid network: (.*)$/s, 'fieldError.invalidNetwork', value],
  [/^has host bits set: (.*)$/s, 'fieldError.hostBits', value],
  [/^contains duplicate networks$/, 'fieldError.duplicateNetworks'],
  [/^contains invalid email\(s\)$/, 'fieldError.invalidEmails'],
  [/^contains duplicate emails$/, 'fieldError.duplicateEmails'],
  [/^needs notify_emails_to or recipient_emails$/, 'fieldError.needsAddresses'],
  // The link's email.
  [/^cannot be left blank$/, 'fieldError.blank'],
  [/^has commas used in the wrong way$/, 'fieldError.commas'],
  [/^contains more than (\d+) email\(s\)$/, 'fieldError.tooManyEmails', limit],
  [/^is not within the available options$/, 'fieldError.notAnOption'],
  [/^(?:are|is) not available$|^Notify by email feature is not enabled$/, 'fieldError.notifyUnavailable'],
  [/^is not available \(this instance has no SMTP relay\)/, 'fieldError.noMail'],
  [/^(?:are|is) not allowed for unknown users$/, 'fieldError.notifyAnonymous'],
  [/^are not available for end-to-end encrypted pushes\b/, 'fieldError.notifyEncrypted'],
  [/^The maximum number of emails has been reached for today$/, 'fieldError.notifyDaily'],
  [
    /^You can notify up to (\d+) email\(s\) and you have already sent emails to (\d+) recipients$/,
    'fieldError.notifyPerPush',
    (m) => ({ limit: Number(m[1]), already: Number(m[2]) }),
  ],
  // A push's kind, encryption, files, lifetime; a form's parts.
  [/^(?:File|URL|QR code) pushes are disabled on this instance\b/, 'fieldError.kindDisabled'],
  [/^This instance accepts only end-to-end encrypted pushes\b/, 'fieldError.encryptionRequired'],
  [/^End-to-end encrypted pushes are turned off on this instance\b/, 'fieldError.encryptionOff'],
  [/^This instance does not accept that encryption scheme or version\.$/, 'fieldError.encryptionScheme'],
  [
    /^file (\d+): content must be standard base64 with padding$/,
    'fieldError.fileUnreadable',
    (m) => ({ file: +m[1]! }),
  ],
  [/^is not accepted on this instance \(use expire_after_days\)$/, 'fieldError.durationOff'],
  [/^must be at least \d+ \([^)]*\) on this instance$/, 'fieldError.durationShort'],
  [/^must be at most \d+ \([^)]*\) on this instance$/, 'fieldError.durationLong'],
  [/^must be one of [\d, ]+ on this instance$/, 'fieldError.durationChoice'],
  [/^must be given once$/, 'fieldError.once'],
  [/^must be sent as file parts of a multipart body$/, 'fieldError.fileParts'],
  // A request.
  [/^ask for something: text, a file, or both$/, 'fieldError.requestEmpty'],
  [/^sealed answers need end-to-end encryption\b/, 'fieldError.encryptionOff'],
  // A webhook: its URL's own rules, then its other fields.
  [/^must be an absolute http\(s\) URL(?: of at most \d+ characters)?$/, 'fieldError.url'],
  [/^must be an https URL$/, 'fieldError.httpsOnly'],
  [/^must not hold a user name or password$/, 'fieldError.urlCredentials'],
  [/^must name a host$/, 'fieldError.urlHost'],
  [/^names a host that does not resolve$/, 'fieldError.hostUnresolved'],
  [/^(?:is|resolves to) a private or reserved address\b/, 'fieldError.privateAddress'],
  [
    /^must list 1 to (\d+) different events of (.+)$/,
    'fieldError.events',
    (m) => ({ limit: Number(m[1]), values: m[2]! }),
  ],
  [/^must be a text of at most (\d+) characters$/, 'fieldError.tooLong', limit],
  [/^must be a workspace id\b/, 'fieldError.workspaceId'],
  [/^is not a field of \w+$/, 'fieldError.unknownField'],
  [/^(?:an account|a workspace) may have at most (\d+) webhooks$/, 'fieldError.tooManyWebhooks', limit],
  // An API key.
  [/^must be an ISO-8601 instant\b/, 'fieldError.instant'],
  [/^must be in the future$/, 'fieldError.future'],
  [/^must be at most (\d+) days away$/, 'fieldError.daysAway', limit],
  [/^must be no later than (\S+), when the API key that makes it expires$/, 'fieldError.notAfterMaker', value],
  [/^item (\d+) must be one of (.+)$/, 'fieldError.scopeItem', (m) => ({ item: Number(m[1]), values: m[2]! })],
  [/^(?:an account|a workspace) holds at most (\d+) keys; revoke one first$/, 'fieldError.tooManyKeys', limit],
];

/** zxcvbn's feedback keys (`warnings.common`, `suggestions.anotherWord`, all it can return) → catalogue keys. */
const ADVICE = [
  'warnings.straightRow',
  'warnings.keyPattern',
  'warnings.simpleRepeat',
  'warnings.extendedRepeat',
  'warnings.sequences',
  'warnings.recentYears',
  'warnings.dates',
  'warnings.topTen',
  'warnings.topHundred',
  'warnings.common',
  'warnings.similarToCommon',
  'warnings.wordByItself',
  'warnings.namesByThemselves',
  'warnings.commonNames',
  'warnings.userInputs',
  'warnings.pwned',
  'suggestions.l33t',
  'suggestions.reverseWords',
  'suggestions.allUppercase',
  'suggestions.capitalization',
  'suggestions.dates',
  'suggestions.recentYears',
  'suggestions.associatedYears',
  'suggestions.sequences',
  'suggestions.repeated',
  'suggestions.longerKeyboardPattern',
  'suggestions.anotherWord',
  'suggestions.useWords',
  'suggestions.noNeed',
  'suggestions.pwned',
] as const;

/** The catalogue key of one of zxcvbn's feedback keys, or null for a key it does not list. */
export function adviceKey(key: string): MessageKey | null {
  return (ADVICE as readonly string[]).includes(key) ? (`zxcvbn.${key}` as `zxcvbn.${(typeof ADVICE)[number]}`) : null;
}
