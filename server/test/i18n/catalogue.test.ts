/**
 * The catalogues (server/src/i18n/messages/*.json) against English, parsed with the ICU MessageFormat parser
 * (@formatjs/icu-messageformat-parser, the one intl-messageformat formats with): every language has exactly English's
 * keys; every message parses; it takes the same arguments of the same kinds (a placeholder, a number, a date, a plural,
 * a select, a tag); a plural has `other` and only the categories its language has; a select has English's cases.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { LOCALES } from '../../src/i18n/locales.js';

const DIR = fileURLToPath(new URL('../../src/i18n/messages/', import.meta.url));
const english = LOCALES.find((l) => l.code === 'en')!.messages;

const KIND: Record<number, string> = {
  [TYPE.argument]: 'argument',
  [TYPE.number]: 'number',
  [TYPE.date]: 'date',
  [TYPE.time]: 'time',
  [TYPE.select]: 'select',
  [TYPE.plural]: 'plural',
  [TYPE.tag]: 'tag',
};

interface Shape {
  /** Each argument with its kind (`count:plural`), sorted and without repeats. */
  args: string[];
  /** The cases of each select (`kind:collected|expired|fulfilled|other`). */
  selects: string[];
  /** Each plural's categories (name → categories). */
  plurals: Map<string, string[]>;
}

function shapeOf(
  elements: MessageFormatElement[],
  shape: Shape = { args: [], selects: [], plurals: new Map() },
): Shape {
  for (const el of elements) {
    if (el.type === TYPE.literal || el.type === TYPE.pound) continue;
    shape.args.push(`${el.value}:${KIND[el.type]}`);
    if (el.type === TYPE.select || el.type === TYPE.plural) {
      const cases = Object.keys(el.options).sort();
      if (el.type === TYPE.select) shape.selects.push(`${el.value}:${cases.join('|')}`);
      else shape.plurals.set(el.value, [...(shape.plurals.get(el.value) ?? []), ...cases]);
      for (const option of Object.values(el.options)) shapeOf(option.value, shape);
    }
    if (el.type === TYPE.tag) shapeOf(el.children, shape);
  }
  shape.args = [...new Set(shape.args)].sort();
  shape.selects = [...new Set(shape.selects)].sort();
  return shape;
}

describe('message catalogues', () => {
  it('has one catalogue file per listed language and no other', () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
    expect(files).toEqual(LOCALES.map((l) => l.code).sort());
    expect(new Set(LOCALES.map((l) => l.code.toLowerCase())).size).toBe(LOCALES.length);
    for (const l of LOCALES) expect(JSON.parse(readFileSync(`${DIR}${l.code}.json`, 'utf8'))).toEqual(l.messages);
  });

  it('names its keys area.part.item (letters and dots), English with no empty message', () => {
    for (const [key, message] of Object.entries(english)) {
      expect(key).toMatch(/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/);
      expect(message.trim()).not.toBe('');
    }
  });

  for (const locale of LOCALES) {
    describe(`${locale.code} (${locale.name}, ${locale.dir})`, () => {
      it("has exactly English's keys", () => {
        expect(Object.keys(locale.messages).sort()).toEqual(Object.keys(english).sort());
      });

      it('is a language Intl knows, with its direction', () => {
        const tag = new Intl.Locale(locale.code);
        expect(Intl.DateTimeFormat.supportedLocalesOf([locale.code])).toEqual([locale.code]);
        const info = tag as Intl.Locale & { getTextInfo?: () => { direction: string } };
        if (info.getTextInfo) expect(info.getTextInfo().direction).toBe(locale.dir);
      });

      it("takes English's arguments in every message, with valid plural categories and English's select cases", () => {
        const categories = new Set<string>(new Intl.PluralRules(locale.code).resolvedOptions().pluralCategories);
        const problems: string[] = [];
        for (const [key, source] of Object.entries(english)) {
          const message = locale.messages[key];
          if (typeof message !== 'string' || message.trim() === '') {
            problems.push(`${key}: missing or empty`);
            continue;
          }
          let theirs: Shape;
          try {
            theirs = shapeOf(parse(message));
          } catch (error) {
            problems.push(`${key}: does not parse (${(error as Error).message})`);
            continue;
          }
          const ours = shapeOf(parse(source));
          if (theirs.args.join() !== ours.args.join())
            problems.push(`${key}: arguments ${theirs.args.join(', ')} instead of ${ours.args.join(', ')}`);
          if (theirs.selects.join() !== ours.selects.join())
            problems.push(`${key}: select cases ${theirs.selects.join(' ')} instead of ${ours.selects.join(' ')}`);
          for (const [name, cases] of theirs.plurals) {
            if (!cases.includes('other')) problems.push(`${key}: plural ${name} has no "other"`);
            for (const c of cases)
              if (!c.startsWith('=') && !categories.has(c))
                problems.push(`${key}: plural ${name} has "${c}", not a category of ${locale.code}`);
          }
        }
        expect(problems).toEqual([]);
      });
    });
  }
});
