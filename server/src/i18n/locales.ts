/**
 * The languages of the pages and mails: one catalogue per language (`./messages/<code>.json`, flat keys → ICU
 * MessageFormat strings) and one line here. To add a language: copy `messages/en.json` to `messages/<code>.json`,
 * translate the values (keep every key and every `{placeholder}`), import it below and add its line to `LOCALES`
 * (code, its own name, `rtl` for a right-to-left script). `server/test/i18n/catalogue.test.ts` checks every catalogue
 * against English.
 */
import ar from './messages/ar.json' with { type: 'json' };
import cs from './messages/cs.json' with { type: 'json' };
import da from './messages/da.json' with { type: 'json' };
import de from './messages/de.json' with { type: 'json' };
import en from './messages/en.json' with { type: 'json' };
import es from './messages/es.json' with { type: 'json' };
import fi from './messages/fi.json' with { type: 'json' };
import fr from './messages/fr.json' with { type: 'json' };
import he from './messages/he.json' with { type: 'json' };
import id from './messages/id.json' with { type: 'json' };
import it from './messages/it.json' with { type: 'json' };
import ja from './messages/ja.json' with { type: 'json' };
import ko from './messages/ko.json' with { type: 'json' };
import nb from './messages/nb.json' with { type: 'json' };
import nl from './messages/nl.json' with { type: 'json' };
import pl from './messages/pl.json' with { type: 'json' };
import ptBR from './messages/pt-BR.json' with { type: 'json' };
import sv from './messages/sv.json' with { type: 'json' };
import tr from './messages/tr.json' with { type: 'json' };
import uk from './messages/uk.json' with { type: 'json' };
import zhCN from './messages/zh-CN.json' with { type: 'json' };

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
  { code: 'cs', name: 'Čeština', dir: 'ltr', messages: cs },
  { code: 'da', name: 'Dansk', dir: 'ltr', messages: da },
  { code: 'de', name: 'Deutsch', dir: 'ltr', messages: de },
  { code: 'es', name: 'Español', dir: 'ltr', messages: es },
  { code: 'fi', name: 'Suomi', dir: 'ltr', messages: fi },
  { code: 'fr', name: 'Français', dir: 'ltr', messages: fr },
  { code: 'he', name: 'עברית', dir: 'rtl', messages: he },
  { code: 'id', name: 'Bahasa Indonesia', dir: 'ltr', messages: id },
  { code: 'it', name: 'Italiano', dir: 'ltr', messages: it },
  { code: 'ja', name: '日本語', dir: 'ltr', messages: ja },
  { code: 'ko', name: '한국어', dir: 'ltr', messages: ko },
  { code: 'nb', name: 'Norsk bokmål', dir: 'ltr', messages: nb },
  { code: 'nl', name: 'Nederlands', dir: 'ltr', messages: nl },
  { code: 'pl', name: 'Polski', dir: 'ltr', messages: pl },
  { code: 'pt-BR', name: 'Português do Brasil', dir: 'ltr', messages: ptBR },
  { code: 'sv', name: 'Svenska', dir: 'ltr', messages: sv },
  { code: 'tr', name: 'Türkçe', dir: 'ltr', messages: tr },
  { code: 'uk', name: 'Українська', dir: 'ltr', messages: uk },
  { code: 'zh-CN', name: '简体中文', dir: 'ltr', messages: zhCN },
];
