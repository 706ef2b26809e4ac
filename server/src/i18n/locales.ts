/**
 * The languages of the pages and mails: one catalogue per language (`./messages/<code>.json`, flat keys → ICU
 * MessageFormat strings) and one line here. To add a language: copy `messages/en.json` to `messages/<code>.json`,
 * translate the values (keep every key and every `{placeholder}`) and add its line to `LOCALES` (code, its own name,
 * `rtl` for a right-to-left script). `server/test/i18n/catalogue.test.ts` checks every catalogue against English.
 *
 * English is imported (the default, the fallback of a missing key, and the type of the keys); every other catalogue is
 * read from its file on its first use in the process, then kept: a server whose visitors all read English never holds
 * the other twenty (issue 44: they were a part of every process's memory). The build copies the folder beside the
 * bundle (scripts/build.ts), so `MESSAGES_DIR` names it from source and compiled alike, as `ASSETS_DIR` does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import en from './messages/en.json' with { type: 'json' };

/** The catalogues' folder: ./messages beside this source file, or the build's copy beside the bundle. */
export const MESSAGES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'messages');

/** A key of the catalogues (English's keys are the set every language has). */
export type MessageKey = keyof typeof en;

export interface LocaleInfo {
  /** A BCP 47 tag, as `<html lang>` and `Intl` take it (`en`, `pt-BR`, `zh-CN`). */
  code: string;
  /** The language's name in itself, for the language menu. */
  name: string;
  dir: 'ltr' | 'rtl';
  /** The catalogue (English's imported; the others read from their file on first use). */
  readonly messages: Record<string, string>;
}

/** A language's line: its catalogue is read on first use (`messages`), then kept. */
function lazyLocale(code: string, name: string, dir: 'ltr' | 'rtl' = 'ltr'): LocaleInfo {
  let messages: Record<string, string> | undefined;
  return {
    code,
    name,
    dir,
    get messages() {
      messages ??= JSON.parse(readFileSync(path.join(MESSAGES_DIR, `${code}.json`), 'utf8')) as Record<string, string>;
      return messages;
    },
  };
}

/** English first: the default and the fallback. */
export const LOCALES: readonly LocaleInfo[] = [
  { code: 'en', name: 'English', dir: 'ltr', messages: en },
  lazyLocale('ar', 'العربية', 'rtl'),
  lazyLocale('cs', 'Čeština'),
  lazyLocale('da', 'Dansk'),
  lazyLocale('de', 'Deutsch'),
  lazyLocale('es', 'Español'),
  lazyLocale('fi', 'Suomi'),
  lazyLocale('fr', 'Français'),
  lazyLocale('he', 'עברית', 'rtl'),
  lazyLocale('id', 'Bahasa Indonesia'),
  lazyLocale('it', 'Italiano'),
  lazyLocale('ja', '日本語'),
  lazyLocale('ko', '한국어'),
  lazyLocale('nb', 'Norsk bokmål'),
  lazyLocale('nl', 'Nederlands'),
  lazyLocale('pl', 'Polski'),
  lazyLocale('pt-BR', 'Português do Brasil'),
  lazyLocale('sv', 'Svenska'),
  lazyLocale('tr', 'Türkçe'),
  lazyLocale('uk', 'Українська'),
  lazyLocale('zh-CN', '简体中文'),
];
