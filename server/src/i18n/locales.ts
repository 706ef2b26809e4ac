/**
 * The languages of the pages and mails: one catalogue per language (`./messages/<code>.json`, flat keys → ICU
 * MessageFormat strings) and one line here. To add a language: copy `messages/en.json` to `messages/<code>.json`,
 * translate the values (keep every key and every `{placeholder}`), import it below and add its line to `LOCALES`
 * (code, its own name, `rtl` for a right-to-left script). `server/test/i18n/catalogue.test.ts` checks every catalogue
 * against English.
 */
import ar from './messages/ar.json' with { type: 'json' };
import de from './messages/de.json' with { type: 'json' };
import en from './messages/en.json' with { type: 'json' };
import es from './messages/es.json' with { type: 'json' };
import fr from './messages/fr.json' with { type: 'json' };

/** A key of the catalogues (English's keys are the set every language has). */
export type MessageKey = keyof typeof en;

export interface LocaleInfo {
  /** A BCP 47 tag, as `<html lang>` and `Intl` take it (`en`, `pt-BR`, `zh-CN`). */
  code: string;
  /** The language's name in itself, for the language menu. */
  name: string;
  dir: 'ltr' | 'rtl';
  messages: Record<string, string>;
}

/** English first: the default and the fallback. */
export const LOCALES: readonly LocaleInfo[] = [
  { code: 'en', name: 'English', dir: 'ltr', messages: en },
  { code: 'ar', name: 'العربية', dir: 'rtl', messages: ar },
  { code: 'de', name: 'Deutsch', dir: 'ltr', messages: de },
  { code: 'es', name: 'Español', dir: 'ltr', messages: es },
  { code: 'fr', name: 'Français', dir: 'ltr', messages: fr },
];
