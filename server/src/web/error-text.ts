/**
 * What a page says of a refusal (issue 42: an API error's text on a page, in the visitor's language). The API's
 * `error` is English and precise (it names the quota, the limit, the field); a page in English shows it as it is. In
 * any other language the page shows the catalogue's sentence for the error's `code` (`js.apiError.<code in camel
 * case>`, the same keys the pages' scripts use through `window.SecretPush.apiError`), which says what happened and
 * what to do, without the figures. A code the catalogue has no sentence for (`validation_failed`: its text names
 * fields and their rules) keeps the API's text.
 */
import { LOCALES, type MessageKey } from '../i18n/locales.js';
import type { Translator } from '../i18n/i18n.js';

const ENGLISH = LOCALES[0]!.messages;

/** The catalogue key of an error code (`storage_quota_exceeded` → `js.apiError.storageQuotaExceeded`), if it has one. */
export function apiErrorKey(code: string): MessageKey | undefined {
  const key = `js.apiError.${code.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())}`;
  return Object.hasOwn(ENGLISH, key) ? (key as MessageKey) : undefined;
}

/** A refusal's text for a page in the visitor's language (see the module's comment). */
export function errorText(i18n: Translator, error: { code: string; message: string }): string {
  if (i18n.locale === 'en') return error.message;
  const key = apiErrorKey(error.code);
  return key ? i18n.t(key) : error.message;
}
