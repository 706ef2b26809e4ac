/**
 * Validates values against the bundled spec with Ajv 2020 (JSON Schema 2020-12, the dialect of OpenAPI 3.1):
 * response bodies by operationId + status + media type, and named examples. Shared by the contract tests, the
 * Prism test and anything else that must check a body against the contract.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import is typed as the module namespace.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin));

export const bundledSpecPath = fileURLToPath(new URL('../bundled/openapi.json', import.meta.url));

type Json = Record<string, unknown>;
const SPEC_ID = 'urn:secret-push:openapi';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface Operation {
  operationId: string;
  method: (typeof METHODS)[number];
  path: string;
  object: Json;
}

export interface ValidationResult {
  valid: boolean;
  /** One line per problem: `<json path> <message>`. */
  errors: string[];
}

export function loadBundledSpec(path = bundledSpecPath): Json {
  return JSON.parse(readFileSync(path, 'utf8')) as Json;
}

/** Rewrites local refs so sub-schemas compiled on their own still resolve into the spec document. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node && typeof node === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#') ? SPEC_ID + v : rebase(v);
    }
    return out;
  }
  return node;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
}

export class SpecValidator {
  readonly spec: Json;
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(spec: Json = loadBundledSpec()) {
    this.spec = spec;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    for (const f of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']) this.ajv.addFormat(f, true);
    this.ajv.addKeyword('example');
    this.ajv.addSchema({ ...(rebase(spec) as Json), $id: SPEC_ID });
  }

  /** Follows `$ref` of non-schema objects (responses, examples, parameters). */
  deref<T = Json>(node: unknown): T {
    let current = node as Json;
    for (let i = 0; i < 10 && current && typeof current.$ref === 'string'; i++) {
      const pointer = (current.$ref as string).replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
      current = pointer.reduce<Json>((acc, key) => acc[key] as Json, this.spec);
    }
    return current as T;
  }

  operations(): Operation[] {
    const ops: Operation[] = [];
    for (const [path, item] of Object.entries(this.spec.paths as Record<string, Json>)) {
      for (const method of METHODS) {
        const object = item[method] as Json | undefined;
        if (object) ops.push({ operationId: object.operationId as string, method, path, object });
      }
    }
    return ops;
  }

  operation(operationId: string): Operation {
    const op = this.operations().find((o) => o.operationId === operationId);
    if (!op) throw new Error(`No operation ${operationId} in the spec`);
    return op;
  }

  /** The response object an operation documents for a status, or undefined when the status is undocumented. */
  response(operationId: string, status: number): Json | undefined {
    const responses = this.operation(operationId).object.responses as Record<string, unknown>;
    const entry = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    return entry ? this.deref(entry) : undefined;
  }

  validateSchema(schema: unknown, value: unknown, cacheKey?: string): ValidationResult {
    const key = cacheKey ?? JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as Json);
      this.cache.set(key, validate);
    }
    const valid = validate(value) as boolean;
    return { valid, errors: valid ? [] : formatErrors(validate.errors) };
  }

  /** Validates a component schema by name, e.g. `validateComponent('Push', value)`. */
  validateComponent(name: string, value: unknown): ValidationResult {
    return this.validateSchema({ $ref: `#/components/schemas/${name}` }, value, `component:${name}`);
  }

  /**
   * Validates a response: the status must be documented for the operation, the media type must be one the
   * spec lists, and the body must match its schema. `body` is the parsed JSON (or the text for non-JSON).
   */
  validateResponse(operationId: string, status: number, contentType: string | null, body: unknown): ValidationResult {
    const response = this.response(operationId, status);
    if (!response) return { valid: false, errors: [`status ${status} is not documented for ${operationId}`] };
    const content = response.content as Record<string, Json> | undefined;
    if (!content) return { valid: true, errors: [] };
    const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const media = content[mediaType];
    if (!media) {
      return { valid: false, errors: [`media type "${mediaType}" is not documented for ${operationId} ${status} (expected ${Object.keys(content).join(', ')})`] };
    }
    return this.validateSchema(media.schema, body, `${operationId}:${status}:${mediaType}`);
  }
}
