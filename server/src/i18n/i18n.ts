/**
 * The one way to the catalogues: which language a visitor gets (`?locale=`, then the `sp_locale` cookie, then
 * `Accept-Language`, then English), and a translator that formats a key of that language's catalogue with
 * intl-messageformat (ICU MessageFormat: plural, select, number). A key missing from a catalogue falls back to English
 * (the catalogue test keeps none missing).
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { LOCALES, type LocaleInfo, type MessageKey } from './locales.js';

export type { MessageKey } from './locales.js';

/** The values a message takes: text and numbers (a placeholder, a plural or a select argument). */
export type MessageValues = Record<string, string | number>;

export interface Translator {
  /** The BCP 47 tag (`<html lang>`, `Intl`). */
  locale: string;
  dir: 'ltr' | 'rtl';
  t(key: MessageKey, values?: MessageValues): string;
  /** The raw ICU strings of the keys that start with one of `prefixes` (what a page's script formats itself). */
  raw(prefixes: readonly string[]): Record<string, string>;
}

/** The cookie that keeps a visitor's choice (set when a page is opened with `?locale=`). */
export const LOCALE_COOKIE = 'sp_locale';
/** How much of an `Accept-Language` header is read (bounded before any per-item work). */
const ACCEPT_LANGUAGE_CHARS = 512;
const ACCEPT_LANGUAGE_ITEMS = 16;

const ENGLISH = LOCALES[0]!;
const byCode = new Map(LOCALES.map((l) => [l.code.toLowerCase(), l]));

/** The language of a tag: the exact one (`pt-BR`), else the first of its base language (`de-AT` → `de`), else none. */
function findLocale(tag: string | null | undefined): LocaleInfo | undefined {
  if (typeof tag !== 'string' || tag.length === 0 || tag.length > 35) return undefined;
  const lower = tag.trim().replace(/_/g, '-').toLowerCase();
  const exact = byCode.get(lower);
  if (exact) return exact;
  const base = lower.split('-')[0]!;
  return byCode.get(base) ?? LOCALES.find((l) => l.code.toLowerCase().split('-')[0] === base);
}

/** The languages of an `Accept-Language` header, most wanted first (q=0 dropped). */
function acceptedTags(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, ACCEPT_LANGUAGE_CHARS)
    .split(',')
    .slice(0, ACCEPT_LANGUAGE_ITEMS)
    .map((item, index) => {
      const [tag = '', ...params] = item.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((e) => e.q > 0 && e.tag !== '' && e.tag !== '*')
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((e) => e.tag);
}

export interface LocaleSources {
  query?: unknown;
  cookie?: string;
  acceptLanguage?: string;
}

/** The visitor's language: `?locale=`, then the cookie, then `Accept-Language`, then English. */
export function negotiateLocale(sources: LocaleSources): LocaleInfo {
  const query = typeof sources.query === 'string' ? findLocale(sources.query) : undefined;
  return (
    query ??
    findLocale(sources.cookie) ??
    acceptedTags(sources.acceptLanguage)
      .map(findLocale)
      .find((l) => l !== undefined) ??
    ENGLISH
  );
}

const compiled = new Map<string, IntlMessageFormat>();

function messageOf(info: LocaleInfo, key: MessageKey): IntlMessageFormat {
  const id = `${info.code}\u0000${key}`;
  let format = compiled.get(id);
  if (!format) {
    const own = info.messages[key];
    const [source, locale] = own === undefined ? [ENGLISH.messages[key]!, ENGLISH.code] : [own, info.code];
    format = new IntlMessageFormat(source, locale);
    compiled.set(id, format);
  }
  return format;
}

/** A translator for a language (a tag, matched as `findLocale` does; English when none matches). */
export function translator(locale: LocaleInfo | string | null | undefined): Translator {
  const info = typeof locale === 'object' && locale !== null ? locale : (findLocale(locale) ?? ENGLISH);
  return {
    locale: info.code,
    dir: info.dir,
    t: (key, values) => String(messageOf(info, key).format(values)),
    raw: (prefixes) =>
      Object.fromEntries(
        Object.keys(ENGLISH.messages)
          .filter((key) => prefixes.some((p) => key.startsWith(p)))
          .map((key) => [key, info.messages[key] ?? ENGLISH.messages[key]!]),
      ),
  };
}
