/**
 * A `validation_failed` refusal's field messages on a page, in the visitor's language (issue 42). The API's field
 * messages are English and come from the rules' own text (`@secret-push/rules` field-errors.ts for the contract's
 * schema, the instance's bounds in push-input.ts, the account rules); a page in English shows them as the API says
 * them, and any other language shows the catalogue's sentence (`fieldError.*`) for each message whose form is listed
 * below or in field-forms.ts (the rules of their own: who may open a push, the link's email, a webhook's URL, an API
 * key), with its figures; a password too easy to guess also says zxcvbn's warning and suggestion from the error's
 * `details.advice` (its keys). A message of no form keeps the API's text. server/test/web/field-text.test.ts and
 * field-forms.test.ts make each form through the rules themselves, so a changed English message that no longer
 * matches fails there, not silently on a page.
 */
import type { Translator, MessageValues } from '../i18n/i18n.js';
import { adviceKey, RULE_FORMS, type FieldForms } from './field-forms.js';

export type { FieldForms } from './field-forms.js';

type Fields = Record<string, string[]>;

/** A form that is exactly `text`. */
export function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
}

const FORMS: FieldForms = [
  [/^is required$/, 'fieldError.required'],
  [/^can't be blank$/, 'fieldError.blank'],
  [/^must be (an integer|a number|a string|a boolean|an array|an object|a null)$/, 'fieldError.kind'],
  [/^must be one of: (.+)$/, 'fieldError.choice', (m) => ({ values: m[1]! })],
  [/^(?:is too short \(at least|must be at least) (\d+) characters?\)?$/, 'fieldError.tooShort', (m) => limit(m)],
  [/^(?:is too long \(at most|must be at most) (\d+) characters?\)?$/, 'fieldError.tooLong', (m) => limit(m)],
  [/^must be at least (-?\d+)(?: \(exclusive\))?$/, 'fieldError.atLeast', (m) => limit(m)],
  [/^must be at most (-?\d+)(?: \(exclusive\))?$/, 'fieldError.atMost', (m) => limit(m)],
  [/^must be an integer from (-?\d+) to (-?\d+)$/, 'fieldError.between', (m) => ({ min: +m[1]!, max: +m[2]! })],
  [/^must be a valid HTTP or HTTPS URL$/, 'fieldError.url'],
  [/^(?:has an invalid format|is invalid)$/, 'fieldError.invalid'],
  [/^(?:You can only attach up to|at most) (\d+) files? per push\.?$/, 'fieldError.tooManyFiles', (m) => limit(m)],
  [/^needs at least one file for a file push$/, 'fieldError.fileNeeded'],
  [/^are only allowed on file pushes$/, 'fieldError.filesOnlyForFiles'],
  [/^file (\d+): larger than the limit of \d+ bytes$/, 'fieldError.fileTooBig', (m) => ({ file: +m[1]! })],
  [/^must be an email address$/, 'fieldError.email'],
  [/^is already registered$/, 'fieldError.emailTaken'],
  [/^is too easy to guess\b/, 'fieldError.weakPassword'],
  [/^conflicts with expire_after_(?:days|duration) /, 'fieldError.lifetimeConflict'],
];

function limit(m: RegExpMatchArray): MessageValues {
  return { limit: Number(m[1] ?? m[2]) };
}

/** zxcvbn's warning and suggestion (their keys) said in the visitor's language; none: nothing known. */
function adviceText(i18n: Translator, advice: readonly string[]): string {
  return advice
    .map(adviceKey)
    .filter((key) => key !== null)
    .map((key) => i18n.t(key))
    .join(' ');
}

/**
 * One field message in the visitor's language, or as the API says it (English, or a form not listed). `advice`:
 * zxcvbn's feedback keys of the refusal, said after a password's "too easy to guess".
 */
export function fieldText(
  i18n: Translator,
  message: string,
  area: FieldForms = [],
  advice: readonly string[] = [],
): string {
  if (i18n.locale === 'en') return message;
  for (const [form, key, values] of [...area, ...FORMS, ...RULE_FORMS]) {
    const match = form.exec(message);
    if (!match) continue;
    const why = key === 'fieldError.weakPassword' ? adviceText(i18n, advice) : '';
    return why ? `${i18n.t('fieldError.weakPasswordShort')} ${why}` : i18n.t(key, values?.(match));
  }
  return message;
}

/** A refusal's field messages for a form that shows each beside its field (`advice`: zxcvbn's keys, if any). */
export function fieldTexts(
  i18n: Translator,
  fields: Fields | undefined,
  advice: readonly string[] = [],
): Fields | undefined {
  if (!fields || i18n.locale === 'en') return fields;
  return Object.fromEntries(
    Object.entries(fields).map(([name, list]) => [name, list.map((m) => fieldText(i18n, m, [], advice))]),
  );
}

/**
 * A `validation_failed` refusal said in one line, for a form that shows one message (the API key and webhook forms,
 * the top of the sign-up and reset forms): the API's text in English; else each field's message in the visitor's
 * language, after the field's name as the API names it (`name`, `url`, also the form's field) when `named`.
 */
export function fieldsLine(
  i18n: Translator,
  error: { message: string; details: { fields?: Fields; advice?: readonly string[] } },
  named = true,
): string {
  const { fields, advice = [] } = error.details;
  if (i18n.locale === 'en' || !fields || Object.keys(fields).length === 0) return error.message;
  return Object.entries(fields)
    .map(([name, list]) => `${named ? `${name}: ` : ''}${list.map((m) => fieldText(i18n, m, [], advice)).join(' ')}`)
    .join(' ');
}
