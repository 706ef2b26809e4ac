/**
 * openapi-backend speaks OpenAPI 3.0 with draft-07 Ajv. Our contract is OpenAPI 3.1 (JSON Schema 2020-12), so this
 * wrapper validates the document with a 3.1-aware validator, replaces the backend's own (3.0-only) definition check
 * and compiles every schema with Ajv2020 + ajv-formats, keeping the OpenAPI-specific formats.
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Options as AjvOptions } from 'ajv/dist/2020.js';
import { BUNDLED_SPEC_PATH, makeAjv } from '../domain/schema-ajv.js';
import { OpenAPIBackend, type Document, type Operation, type Options as BackendOptions } from 'openapi-backend';

export const SPEC_PATH = BUNDLED_SPEC_PATH;
export { makeAjv };

let cachedSpec: Document | undefined;
/** The bundled contract, parsed once. Each backend gets its own deep copy (the backend dereferences in place). */
export function loadSpec(): Document {
  cachedSpec ??= JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as Document;
  return structuredClone(cachedSpec);
}

/** Validates a 3.1 document; throws with the validator's findings when it is not valid OpenAPI. */
export async function validateDocument(document: Document): Promise<void> {
  const result = await new Validator().validate(document as unknown as Record<string, unknown>);
  if (!result.valid) {
    const details = typeof result.errors === 'string' ? result.errors : JSON.stringify(result.errors, null, 2);
    throw new Error(`The bundled OpenAPI document is not valid OpenAPI 3.1:\n${details}`);
  }
}

const ANNOTATIONS = new Set(['description', 'title', 'summary', 'examples', 'example', 'deprecated', 'default']);

/**
 * Resolves every local `$ref` into its own deep copy. openapi-backend's dereferencer shares nested objects between
 * the occurrences of a `$ref` that has sibling keywords (legal in 3.1), and its cycle breaker then turns the shared
 * `properties` maps into bogus `$ref`s. A tree without shared objects compiles cleanly. The contract has no cycles;
 * one would be reported here instead of looping.
 */
export function inlineRefs(document: Document): Document {
  const root = document as unknown as Record<string, unknown>;
  const resolvePointer = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported, got ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], root);
  };
  const walk = (node: unknown, trail: string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, trail));
    if (node === null || typeof node !== 'object') return node;
    const object = node as Record<string, unknown>;
    if (typeof object.$ref === 'string') {
      const ref = object.$ref;
      if (trail.includes(ref)) throw new Error(`Cyclic $ref ${ref}`);
      const target = resolvePointer(ref);
      if (target === undefined) throw new Error(`Unresolvable $ref ${ref}`);
      const resolved = walk(target, [...trail, ref]) as Record<string, unknown>;
      const siblings = Object.fromEntries(Object.entries(object).filter(([key]) => key !== '$ref'));
      if (Object.keys(siblings).every((key) => ANNOTATIONS.has(key))) return { ...resolved, ...siblings };
      return { ...walk(siblings, trail) as object, allOf: [resolved] };
    }
    return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, walk(value, trail)]));
  };
  return walk(document, []) as Document;
}

/** openapi-backend with the 3.0 definition check replaced (the 3.1 document was validated before init). */
class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

export type SpecBackendOptions = Omit<BackendOptions, 'definition' | 'customizeAjv' | 'strict'> & {
  definition?: Document;
};

/** Creates and initialises an openapi-backend for the bundled 3.1 contract, failing closed (`strict`). */
export async function createSpecBackend(opts: SpecBackendOptions = {}): Promise<OpenAPIBackend> {
  const definition = opts.definition ?? loadSpec();
  await validateDocument(definition);
  const backend = new OpenApi31Backend({
    ...opts,
    definition: inlineRefs(definition),
    strict: true,
    customizeAjv: (_original, ajvOpts) => makeAjv(ajvOpts as AjvOptions) as never,
  });
  await backend.init();
  precompileRouting(backend);
  return backend;
}

/**
 * openapi-backend's router rebuilds its operation list (a lodash chain over every path) on each `getOperations()`
 * and compiles one RegExp per operation on each `matchOperation()`: every request paid that twice (about 6% of the
 * server's CPU in a profile of `npm run bench`). The definition never changes after `init()`, so
 * the list is built once here and the path patterns are compiled once. The matching rules are the library's own
 * (router.js `matchOperation`, 5.21.2): an exact path with the method first, else the templates matching the path,
 * most literal characters first (stable order), the first with the method; 404 and 405 as thrown errors in strict
 * mode, `undefined` otherwise.
 */
function precompileRouting(backend: OpenAPIBackend): void {
  const router = backend.router;
  const isUnderApiRoot = (path: string) => (router as unknown as { isUnderApiRoot(path: string): boolean }).isUnderApiRoot(path);
  const operations = router.getOperations();
  const byId = new Map(operations.map((op) => [op.operationId, op]));
  const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const templates = operations
    .map((op) => ({
      op,
      re: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escape).join('[^/]+')}$`),
      literal: op.path.replace(/\{.*?\}/g, '').length,
    }))
    // Array.prototype.sort is stable, like lodash's orderBy.
    .sort((a, b) => b.literal - a.literal);

  router.getOperations = () => operations;
  router.getOperation = (operationId: string) => byId.get(operationId);
  router.matchOperation = ((req: Parameters<typeof router.matchOperation>[0], strict?: boolean) => {
    const normalized = router.normalizeRequest(req);
    if (!isUnderApiRoot(normalized.path)) {
      if (strict) throw Error('404-notFound: no route matches request');
      return undefined;
    }
    const path = router.normalizePath(normalized.path);
    const method = normalized.method;
    const exact = operations.find((op) => op.path === path && op.method === method);
    if (exact) return exact;
    const matching = templates.filter((t) => t.re.test(path));
    if (matching.length === 0) {
      if (strict) throw Error('404-notFound: no route matches request');
      return undefined;
    }
    const match = matching.find((t) => t.op.method === method)?.op;
    if (!match && strict) throw Error('405-methodNotAllowed: this method is not registered for the route');
    return match;
  }) as typeof router.matchOperation;
}

/** The query parameter names an operation declares (its own and its path's), by operationId. */
export function declaredQueryNames(backend: OpenAPIBackend): Map<string, Set<string>> {
  const names = new Map<string, Set<string>>();
  for (const op of backend.getOperations() as Operation[]) {
    names.set(
      op.operationId ?? '',
      new Set(
        (op.parameters ?? [])
          .filter((p) => 'in' in p && p.in === 'query')
          .map((p) => (p as { name: string }).name),
      ),
    );
  }
  return names;
}
