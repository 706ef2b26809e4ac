/**
 * fast-check arbitraries derived from the contract's schemas (dereferenced: `inlineRefs`), for the generative suite
 * (./contract-fuzz.test.ts):
 *
 * - `valid(schema)`: values the schema accepts: types, enums, consts, bounds, patterns, formats, required and optional
 *   properties, `oneOf`/`anyOf` branches, `allOf` members merged, and the `if`/`then` rules applied after the fact
 *   (a value that meets an `if` gets the `then`'s properties regenerated under both schemas), so most values of
 *   `PushInput` are pushes the server takes;
 * - `nearValid(schema)`: a valid value with one thing wrong (a field of the wrong type, out of range, one past its
 *   length or item bound, a required field left out, a value outside its enum or pattern);
 * - `hostileJson(schema)`: JSON text no honest client sends: huge arrays and strings where the schema has them, deep
 *   nesting, hundreds of keys, bad bytes and escapes, duplicate and prototype keys, absurd numbers, cut-off text.
 *
 * Why not json-schema-faker: it draws from its own random source, so a fast-check seed would not replay its values
 * (and it does not apply `if`/`then`); these arbitraries are fast-check's all the way down, so FC_SEED replays a run.
 */
import fc from 'fast-check';
import { makeAjv } from '@secret-push/rules';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary schemas

/** Generated strings and arrays stay short (bounds are tested by the near-valid and hostile cases). */
const CAP = { string: 24, items: 3 };

const ajv = makeAjv();
const conditions = new Map<string, (value: unknown) => boolean>();
function holds(schema: Json, value: unknown): boolean {
  const key = JSON.stringify(schema);
  let check = conditions.get(key);
  if (!check) {
    const validate = ajv.compile(schema);
    check = (v) => validate(v) as boolean;
    conditions.set(key, check);
  }
  return check(value);
}

function typesOf(s: Json): string[] {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties || s.additionalProperties) return ['object'];
  if (s.items) return ['array'];
  if (s.maxLength !== undefined || s.pattern || s.format === 'uri') return ['string'];
  return ['string', 'integer', 'boolean'];
}

/** Both schemas at once (for `allOf` members and `if`/`then` refinements): bounds tightened, properties merged. */
function merge(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (key === 'properties') {
      const props: Json = { ...(a.properties ?? {}) };
      for (const [name, sub] of Object.entries(value as Json))
        props[name] = props[name] ? merge(props[name], sub as Json) : sub;
      out.properties = props;
    } else if (key === 'required') out.required = [...new Set([...(a.required ?? []), ...(value as string[])])];
    else if (key === 'allOf') out.allOf = [...(a.allOf ?? []), ...(value as Json[])];
    else if (['minimum', 'minLength', 'minItems'].includes(key))
      out[key] = Math.max(a[key] ?? -Infinity, value as number);
    else if (['maximum', 'maxLength', 'maxItems', 'maxProperties'].includes(key))
      out[key] = Math.min(a[key] ?? Infinity, value as number);
    else if (key === 'type' && a.type) {
      const both = typesOf(a).filter((t) => typesOf(b).includes(t));
      out.type = both.length > 0 ? both : a.type;
    } else if (!(key in a) || key === 'pattern' || key === 'format' || key === 'enum' || key === 'const')
      out[key] = value;
  }
  return out;
}

/** `allOf` merged into one schema; its `if`/`then` members kept aside, in order. */
function flatten(schema: Json): { base: Json; rules: Json[] } {
  const { allOf, ...rest } = schema;
  let base: Json = rest;
  const rules: Json[] = [];
  for (const member of (allOf ?? []) as Json[]) {
    if (member.if) {
      rules.push(member);
      continue;
    }
    const inner = flatten(member);
    base = merge(base, inner.base);
    rules.push(...inner.rules);
  }
  return { base, rules };
}

const text = (min: number, max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 2, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'binary' }) },
  );

function stringOf(s: Json): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const bound = s.maxLength ?? Infinity;
  const max = Math.min(bound, Math.max(min, CAP.string));
  const fits = (v: string) => [...v].length >= min && [...v].length <= bound;
  // Bytes as the schema says they are encoded (a file's `content`), so a valid value decodes.
  if (s.contentEncoding === 'base64' && !(s.minLength > 0))
    return fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b).toString('base64'));
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (s.format === 'uri') {
    const url = fc.webUrl({ size: 'small' });
    return (s.pattern ? url.filter((u) => new RegExp(s.pattern).test(u)) : url).filter(fits);
  }
  // Longer repetitions where a minimum length asks for them (an envelope's 43 characters), else filtering would spin.
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern), { size: min >= 8 ? 'large' : 'small' }).filter(fits);
  return text(min, max);
}

function objectOf(s: Json, rules: Json[], depth: number): fc.Arbitrary<Json> {
  const props = (s.properties ?? {}) as Json;
  const required = new Set<string>(s.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  // An optional property is there about one time in three: values that set every field at once mostly meet a rule
  // of the server's that JSON Schema cannot state (days and duration must mean one lifetime), and refuse.
  const ABSENT = Symbol('absent');
  for (const [name, sub] of Object.entries(props)) {
    const arb = valid(sub as Json, depth + 1);
    model[name] = required.has(name)
      ? arb
      : fc.oneof({ weight: 2, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: arb });
  }
  // Required keys a branch names without a schema for them.
  for (const name of required) model[name] ??= valid({}, depth + 1);
  const record = fc
    .record(model)
    .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== ABSENT))) as fc.Arbitrary<Json>;
  return rules.reduce<fc.Arbitrary<Json>>((arb, rule) => arb.chain((value) => refine(value, s, rule, depth)), record);
}

/** A value that meets a rule's `if` gets what its `then` says, its properties regenerated under both schemas. */
function refine(value: Json, s: Json, rule: Json, depth: number): fc.Arbitrary<Json> {
  if (!holds(rule.if as Json, value)) return fc.constant(value);
  const then = flatten(rule.then as Json).base;
  const names = new Set<string>([
    ...((then.required ?? []) as string[]),
    ...Object.keys(then.properties ?? {}).filter((n) => n in value),
  ]);
  if (names.size === 0) return fc.constant(value);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names)
    model[name] = valid(merge((s.properties ?? {})[name] ?? {}, (then.properties ?? {})[name] ?? {}), depth + 1);
  return fc.record(model).map((overrides) => ({ ...value, ...overrides }));
}

/** Values `schema` accepts (mostly: a rule JSON Schema cannot state is the server's, and may refuse some). */
export function valid(schema: Json, depth = 0): fc.Arbitrary<unknown> {
  const { base: s, rules } = flatten(schema);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (branches && depth < 12) {
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    return fc.oneof(...branches.map((b) => valid(merge(rest, b), depth + 1)));
  }
  const arbitraries = typesOf(s).map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({
          min: Math.max(s.minimum ?? -1000, -(2 ** 31)),
          max: Math.min(s.maximum ?? 1000, 2 ** 31 - 1),
        });
      case 'number':
        return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true });
      case 'string':
        return stringOf(s);
      case 'array': {
        const min = s.minItems ?? 0;
        return fc.array(valid(s.items ?? {}, depth + 1), {
          minLength: min,
          maxLength: Math.min(s.maxItems ?? CAP.items, Math.max(min, CAP.items)),
        });
      }
      default:
        return depth > 8 ? fc.constant({}) : objectOf(s, rules, depth);
    }
  });
  return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
}

// ------------------------------------------------------------------------------------------------- near-valid

/** A value of another JSON type than `schema` allows. */
function wrongType(schema: Json): fc.Arbitrary<unknown> {
  const allowed = typesOf(flatten(schema).base);
  const all: [string, fc.Arbitrary<unknown>][] = [
    ['string', fc.string({ maxLength: 8 })],
    ['integer', fc.integer()],
    ['number', fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n))],
    ['boolean', fc.boolean()],
    ['array', fc.array(fc.integer(), { maxLength: 2 })],
    ['object', fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 })],
    ['null', fc.constant(null)],
  ];
  const others = all
    .filter(([t]) => !allowed.includes(t) && !(t === 'integer' && allowed.includes('number')))
    .map(([, a]) => a);
  return others.length > 0 ? fc.oneof(...others) : fc.constant(Symbol.for('none'));
}

/** One thing wrong with a value of `schema` (out of range, one past a bound, a bad enum value or pattern). */
function broken(schema: Json): fc.Arbitrary<unknown> {
  const s = flatten(schema).base;
  const options: fc.Arbitrary<unknown>[] = [wrongType(schema)];
  if (typeof s.maximum === 'number') options.push(fc.integer({ min: s.maximum + 1, max: s.maximum + 1000 }));
  if (typeof s.minimum === 'number') options.push(fc.constant(s.minimum - 1));
  if (typeof s.maxLength === 'number' && s.maxLength < 20_000) options.push(fc.constant('x'.repeat(s.maxLength + 1)));
  if (typeof s.minLength === 'number' && s.minLength > 0) options.push(fc.constant(''));
  if (Array.isArray(s.enum)) options.push(fc.constantFrom('zzz', 'TEXT', ' text', ''));
  if (s.pattern || s.format) options.push(fc.constantFrom('\u0000', 'not a url', '../etc/passwd', '%%%', '💥'));
  if (typeof s.maxItems === 'number' && s.maxItems < 100)
    options.push(fc.array(valid(s.items ?? {}), { minLength: s.maxItems + 1, maxLength: s.maxItems + 2 }));
  return fc.oneof(...options);
}

/** A valid object of `schema` with one property broken, dropped (when required) or a nested one broken. */
export function nearValid(schema: Json, depth = 0): fc.Arbitrary<unknown> {
  const s = flatten(schema).base;
  const props = Object.keys(s.properties ?? {});
  if (!typesOf(s).includes('object') || props.length === 0 || depth > 3) return broken(schema);
  return valid(schema).chain((value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return broken(schema);
    const v = value as Json;
    return fc.constantFrom(...props).chain((name) => {
      const sub = s.properties[name] as Json;
      const dropped = (s.required ?? []).includes(name) ? [fc.constant(undefined)] : [];
      return fc.oneof(broken(sub), nearValid(sub, depth + 1), ...dropped).map((bad) => {
        const out = { ...v };
        if (bad === undefined) delete out[name];
        else out[name] = bad;
        return out;
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------------- hostile

/** The JSON pointer-ish paths (of property names) to each array and string of a schema, for the hostile cases. */
function positions(
  schema: Json,
  kind: 'array' | 'string',
  path: string[] = [],
  depth = 0,
  out: string[][] = [],
): string[][] {
  if (depth > 6) return out;
  const s = flatten(schema).base;
  if (typesOf(s).includes(kind) && path.length > 0) out.push(path);
  for (const [name, sub] of Object.entries((s.properties ?? {}) as Json))
    positions(sub as Json, kind, [...path, name], depth + 1, out);
  for (const branch of (s.oneOf ?? s.anyOf ?? []) as Json[]) positions(branch, kind, path, depth + 1, out);
  return out;
}

function nest(path: string[], leaf: string): string {
  return path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, leaf);
}

/** JSON text no honest client sends, shaped by `schema` where it helps (its arrays and strings). */
export function hostileJson(schema: Json): fc.Arbitrary<string> {
  const arrays = positions(schema, 'array');
  const strings = positions(schema, 'string');
  const big = (n: number) => fc.constant(n);
  const options: fc.Arbitrary<string>[] = [
    fc.integer({ min: 40, max: 5000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
    fc.integer({ min: 40, max: 2000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
    fc
      .integer({ min: 257, max: 3000 })
      .map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`),
    fc.constantFrom(
      '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
      '{"a":1,"a":2}',
      '{"n":1e400,"m":-0,"o":123456789012345678901234567890}',
      `{"n":${'9'.repeat(300)}}`,
      '\ufeff{}',
      '{"s":"\\ud800\\u0000"}',
      '{"unterminated":',
      '{} trailing',
      '',
      ' ',
      'null',
      '[]',
      '"a string"',
      `{"s":"${'\\u0000'.repeat(100)}"}`,
    ),
  ];
  if (arrays.length > 0) {
    options.push(
      fc
        .tuple(
          fc.constantFrom(...arrays),
          fc.integer({ min: 11, max: 20_000 }),
          fc.constantFrom('{}', '1', '"x"', '[]'),
        )
        .map(([path, n, item]) => nest(path, `[${Array(n).fill(item).join(',')}]`)),
    );
  }
  if (strings.length > 0) {
    options.push(
      fc
        .tuple(fc.constantFrom(...strings), fc.oneof(big(70_000), big(1_048_577), big(2_000_000)))
        .map(([path, n]) => nest(path, JSON.stringify('a'.repeat(n)))),
    );
    options.push(fc.constantFrom(...strings).map((path) => nest(path, '"\\uDEAD\\uBEEF bad \\x escape"')));
  }
  return fc.oneof(...options);
}
