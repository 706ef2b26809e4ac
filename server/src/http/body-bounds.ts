/**
 * The bounds a request body is read within, derived from the contract: for each position of a JSON body (the body,
 * `push`, `push.files`, each file, …) the most code points of a string there, items of an array, keys of an object,
 * and the same for each field of a form. The body reader (./body.ts) enforces them while the bytes stream in
 * (./json-scan.ts, ./urlencoded.ts, the multipart parser's limits), so a body over them is refused from what has been
 * read so far, before `JSON.parse`, before the schema validator, before any per-item work: the cost of reading a
 * body is bounded by these limits, never by what the body holds.
 *
 * A bound is *sound*: a value over it fails the contract's schema for sure. `allOf` members tighten a bound,
 * `anyOf`/`oneOf` branches loosen it to the loosest branch, and `if`/`then` rules (conditional) are left to the
 * validator. Positions the contract leaves open (unknown properties, which the API ignores, and anything below
 * them) get the server's own policy (`OPEN`), and every body has a depth, a count of values and a key length it may
 * not pass (`JSON_LIMITS`).
 */

/** The bounds of one position of a JSON body. */
export interface ShapeBounds {
  /** Most code points of a string here. */
  maxLength: number;
  /** Most items of an array here. */
  maxItems: number;
  /** Most keys of an object here. */
  maxProperties: number;
  /** The bounds of each item of an array here. */
  items: ShapeBounds;
  /** The bounds of the declared keys of an object here. */
  properties: ReadonlyMap<string, ShapeBounds>;
  /** The bounds of any other key. */
  additional: ShapeBounds;
  /** Whether the contract describes this position (a refusal names the field), or it is open (the server's policy). */
  declared: boolean;
}

/** Policy for positions the contract leaves open: unknown properties (ignored by the API) and what they hold. */
const OPEN_LIMITS = { maxLength: 65_536, maxItems: 256, maxProperties: 256 } as const;

/** Limits of every JSON body, wherever the contract says nothing. */
export const JSON_LIMITS = {
  /** Containers nested inside each other (the contract's deepest request body needs 4). */
  maxDepth: 32,
  /** Values in the whole body (scalars and containers; a full file push holds fewer than 60). */
  maxValues: 10_000,
  /** Code points of an object key (the longest key the contracts declare has 32). */
  maxKeyLength: 1_024,
  /** Characters of a number (a 64-bit integer has 20). */
  maxNumberLength: 256,
} as const;

/** Limits of every form body (multipart and urlencoded). */
export const FORM_LIMITS = {
  /** Fields (and file parts) of one form: the forms declare at most 12. */
  maxFields: 64,
  /** Bytes of a field name as sent (`file_push[expire_after_views]` has 30). */
  maxNameBytes: 256,
  /** Code points of a value the contract types as a number or a boolean (sent as text in a form). */
  maxScalarText: 64,
} as const;

function open(): ShapeBounds {
  const node = {
    ...OPEN_LIMITS,
    properties: new Map<string, ShapeBounds>(),
    declared: false,
  } as Partial<ShapeBounds> as ShapeBounds & { items: ShapeBounds; additional: ShapeBounds };
  node.items = node;
  node.additional = node;
  return node;
}

/** The policy's bounds: every position below an open one is open too. */
export const OPEN: ShapeBounds = open();

type Schema = Record<string, unknown>;

/** A position as the schemas say it, before the policy fills the gaps (Infinity: the schemas set no bound). */
interface Shape {
  maxLength: number;
  maxItems: number;
  maxProperties: number;
  items?: Shape;
  properties: Map<string, Shape>;
  additional?: Shape;
}

const ANY = (): Shape => ({ maxLength: Infinity, maxItems: Infinity, maxProperties: Infinity, properties: new Map() });

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : Infinity;
}

/** Both hold: each bound is the tighter one. */
function intersect(a: Shape, b: Shape): Shape {
  const properties = new Map<string, Shape>();
  for (const key of new Set([...a.properties.keys(), ...b.properties.keys()])) {
    const fromA = a.properties.get(key) ?? a.additional;
    const fromB = b.properties.get(key) ?? b.additional;
    properties.set(key, fromA && fromB ? intersect(fromA, fromB) : (fromA ?? fromB)!);
  }
  return {
    maxLength: Math.min(a.maxLength, b.maxLength),
    maxItems: Math.min(a.maxItems, b.maxItems),
    maxProperties: Math.min(a.maxProperties, b.maxProperties),
    items: a.items && b.items ? intersect(a.items, b.items) : (a.items ?? b.items),
    properties,
    additional: a.additional && b.additional ? intersect(a.additional, b.additional) : (a.additional ?? b.additional),
  };
}

/** One of them holds: each bound is the looser one (a side without a bound has none). */
function union(a: Shape, b: Shape): Shape {
  const properties = new Map<string, Shape>();
  for (const key of new Set([...a.properties.keys(), ...b.properties.keys()])) {
    const fromA = a.properties.get(key) ?? a.additional;
    const fromB = b.properties.get(key) ?? b.additional;
    properties.set(key, fromA && fromB ? union(fromA, fromB) : ANY());
  }
  return {
    maxLength: Math.max(a.maxLength, b.maxLength),
    maxItems: Math.max(a.maxItems, b.maxItems),
    maxProperties: Math.max(a.maxProperties, b.maxProperties),
    ...(a.items && b.items ? { items: union(a.items, b.items) } : {}),
    properties,
    ...(a.additional && b.additional ? { additional: union(a.additional, b.additional) } : {}),
  };
}

/** What a (dereferenced) schema bounds; `if`/`then`/`else` and `not` are conditional and add nothing. */
function shapeOf(schema: unknown, depth = 0): Shape {
  if (!isSchema(schema) || depth > 64) return ANY();
  let shape: Shape = {
    maxLength: num(schema.maxLength),
    maxItems: num(schema.maxItems),
    maxProperties: num(schema.maxProperties),
    properties: new Map(),
  };
  if (isSchema(schema.items)) shape.items = shapeOf(schema.items, depth + 1);
  if (isSchema(schema.properties)) {
    for (const [key, sub] of Object.entries(schema.properties)) shape.properties.set(key, shapeOf(sub, depth + 1));
  }
  if (isSchema(schema.additionalProperties)) shape.additional = shapeOf(schema.additionalProperties, depth + 1);
  if (Array.isArray(schema.allOf))
    for (const member of schema.allOf) shape = intersect(shape, shapeOf(member, depth + 1));
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches) && branches.length > 0) {
      shape = intersect(shape, branches.map((b) => shapeOf(b, depth + 1)).reduce(union));
    }
  }
  return shape;
}

/** The schemas' shape with the policy's bounds where they set none. */
function bounded(shape: Shape | undefined): ShapeBounds {
  if (!shape) return OPEN;
  const properties = new Map<string, ShapeBounds>();
  for (const [key, sub] of shape.properties) properties.set(key, bounded(sub));
  const pick = (value: number, policy: number) => (Number.isFinite(value) ? value : policy);
  return {
    maxLength: pick(shape.maxLength, OPEN_LIMITS.maxLength),
    maxItems: pick(shape.maxItems, OPEN_LIMITS.maxItems),
    maxProperties: pick(shape.maxProperties, OPEN_LIMITS.maxProperties),
    items: bounded(shape.items),
    properties,
    additional: bounded(shape.additional),
    declared: true,
  };
}

/**
 * The bounds of a JSON body described by `schema` (a dereferenced request body schema). `topLevel`: a schema whose
 * properties may also stand at the body's top level, bound as there (the v1 creates read the push fields at the top
 * level of a body without its wrapper, server/src/http/v1).
 */
export function jsonBounds(schema: unknown, topLevel?: unknown): ShapeBounds {
  const shape = shapeOf(schema);
  if (topLevel !== undefined) {
    for (const [key, sub] of shapeOf(topLevel).properties) {
      const own = shape.properties.get(key) ?? shape.additional;
      shape.properties.set(key, own ? intersect(own, sub) : sub);
    }
  }
  return bounded(shape);
}

/** The bounds of one form field's value: code points, and whether the contract types it as text. */
export interface FormFieldBound {
  maxLength: number;
  text: boolean;
}

/** The bounds of a form body described by `schema` (CreatePushUrlencoded, V1PasswordForm, …), by field name. */
export interface FormBounds {
  fields: ReadonlyMap<string, FormFieldBound>;
  /** Most file parts (the largest `maxItems` of an array field). */
  maxFiles: number;
}

function typesOf(schema: Schema): string[] {
  const t = schema.type;
  return Array.isArray(t) ? t.map(String) : typeof t === 'string' ? [t] : [];
}

/** A form field's bound: a text field's maxLength, a number's or boolean's text at most FORM_LIMITS.maxScalarText. */
function fieldBound(schema: unknown): FormFieldBound {
  const s = isSchema(schema) ? schema : {};
  const shape = shapeOf(s);
  const types = typesOf(s);
  const text = types.length === 0 || types.includes('string');
  const scalar = Number.isFinite(shape.maxLength)
    ? shape.maxLength
    : text
      ? OPEN_LIMITS.maxLength
      : FORM_LIMITS.maxScalarText;
  return { maxLength: Math.min(scalar, text ? Infinity : FORM_LIMITS.maxScalarText), text };
}

export function formBounds(schema: unknown): FormBounds {
  const shape = isSchema(schema) && isSchema(schema.properties) ? (schema.properties as Record<string, unknown>) : {};
  const fields = new Map<string, FormFieldBound>();
  let maxFiles = 0;
  for (const [name, sub] of Object.entries(shape)) {
    if (isSchema(sub) && typesOf(sub).includes('array')) {
      maxFiles = Math.max(maxFiles, num(sub.maxItems) === Infinity ? FORM_LIMITS.maxFields : num(sub.maxItems));
      // Sent as text (urlencoded), the field must be empty (form-input.ts): its bound is the scalar one.
      fields.set(name, { maxLength: FORM_LIMITS.maxScalarText, text: false });
      continue;
    }
    fields.set(name, fieldBound(sub));
  }
  return { fields, maxFiles };
}

/** The bound of the value of the form field called `name` (an undeclared field: the policy's). */
export function formFieldBound(bounds: FormBounds | undefined, name: string): FormFieldBound {
  return bounds?.fields.get(name) ?? { maxLength: OPEN_LIMITS.maxLength, text: true };
}

/** The largest bound of any field: what the multipart parser may buffer of one text part (UTF-8: 4 bytes a code point). */
export function largestFormField(bounds: FormBounds | undefined): number {
  let most: number = OPEN_LIMITS.maxLength;
  for (const field of bounds?.fields.values() ?? []) most = Math.max(most, field.maxLength);
  return most;
}
