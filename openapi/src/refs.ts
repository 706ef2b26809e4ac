/**
 * `$ref` resolution within one OpenAPI document: JSON pointers, following chains of references between non-schema
 * objects (responses, examples, parameters, headers), and a deep inliner for tools that need a reference-free tree.
 */
export type Json = Record<string, unknown>;

/** The node a local JSON pointer (`#/components/schemas/Push`) names; undefined when it names nothing. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) throw new Error(`Only local $refs are supported, got ${ref}`);
  if (ref === '#') return document;
  if (!ref.startsWith('#/')) throw new Error(`Only JSON-pointer $refs are supported, got ${ref}`);
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    node = node !== null && typeof node === 'object' ? (node as Json)[key] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Follows `$ref` until a node without one (non-schema objects never carry siblings that matter). */
export function deref<T = Json>(document: unknown, node: unknown): T {
  let current = node;
  for (let depth = 0; depth < 32; depth++) {
    const ref = current !== null && typeof current === 'object' ? (current as Json).$ref : undefined;
    if (typeof ref !== 'string') return current as T;
    const target = resolvePointer(document, ref);
    if (target === undefined) throw new Error(`Unresolvable $ref ${ref}`);
    current = target;
  }
  throw new Error('A $ref chain longer than 32 links (a cycle?)');
}

const ANNOTATIONS = new Set(['description', 'title', 'summary', 'examples', 'example', 'deprecated', 'default']);

/**
 * Resolves every local `$ref` into its own deep copy. openapi-backend's dereferencer shares nested objects between
 * the occurrences of a `$ref` that has sibling keywords (legal in 3.1), and its cycle breaker then turns the shared
 * `properties` maps into bogus `$ref`s; a tree without shared objects compiles cleanly. The contract has no cycles;
 * one is reported instead of looping.
 */
export function inlineRefs<T>(document: T): T {
  const walk = (node: unknown, trail: string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, trail));
    if (node === null || typeof node !== 'object') return node;
    const object = node as Json;
    if (typeof object.$ref === 'string') {
      const ref = object.$ref;
      if (trail.includes(ref)) throw new Error(`Cyclic $ref ${ref}`);
      const target = resolvePointer(document, ref);
      if (target === undefined) throw new Error(`Unresolvable $ref ${ref}`);
      const resolved = walk(target, [...trail, ref]) as Json;
      const siblings = Object.fromEntries(Object.entries(object).filter(([key]) => key !== '$ref'));
      if (Object.keys(siblings).every((key) => ANNOTATIONS.has(key))) return { ...resolved, ...siblings };
      return { ...(walk(siblings, trail) as Json), allOf: [resolved] };
    }
    return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, walk(value, trail)]));
  };
  return walk(document, []) as T;
}
