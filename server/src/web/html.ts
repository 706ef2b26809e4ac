/**
 * HTML templates as tagged template literals: every interpolated value is escaped unless it is already Html (the
 * result of another `html` call). Arrays are joined; null, undefined and false render nothing.
 */
import type { MessageKey, MessageValues, Translator } from '../i18n/i18n.js';

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i += 1) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/**
 * A catalogue message as Html, with Html values (links, marks) put in at its placeholders: the message is formatted
 * with a marker in their place, escaped as a whole, and the markers replaced.
 */
export function htmlMessage(i18n: Translator, key: MessageKey, values: Record<string, Html | string | number>): Html {
  const parts: Html[] = [];
  const plain: MessageValues = {};
  for (const [name, value] of Object.entries(values)) {
    if (value instanceof Html) {
      plain[name] = `\u0000${parts.length}\u0000`;
      parts.push(value);
    } else plain[name] = typeof value === 'string' ? value.replace(/\u0000/g, '') : value;
  }
  const text = escapeHtml(i18n.t(key, plain));
  return new Html(text.replace(/\u0000(\d+)\u0000/g, (_, index: string) => parts[Number(index)]!.value));
}
