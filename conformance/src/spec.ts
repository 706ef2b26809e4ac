/**
 * The contract, read at run time from the bundled OpenAPI document: finds each operation by its operationId and
 * validates every response the suite sees against the schema documented for that operation and status.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object in some set-ups.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

/** The copy packed with the package (`npm pack` runs `prepack`), else the repository's bundled spec. */
export const DEFAULT_SPEC_PATH = [
  fileURLToPath(new URL('../openapi.json', import.meta.url)),
  fileURLToPath(new URL('../../openapi/bundled/openapi.json', import.meta.url)),
].find((candidate) => existsSync(candidate)) ?? fileURLToPath(new URL('../../openapi/bundled/openapi.json', import.meta.url));

const SCHEMA_BASE = 'https://conformance.secret-push.invalid/schemas/';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

type Json = Record<string, unknown>;

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  responses: Record<string, Json>;
}

export interface Violation {
  /** Where it is: `status`, `body/<JSON path>`, `header/<name>`. */
  path: string;
  message: string;
}

interface CompiledResponse {
  body: ValidateFunction | null;
  headers: Record<string, ValidateFunction>;
  /** True when the documented content is JSON (then a non-JSON body is a violation). */
  json: boolean;
}

export class Contract {
  readonly operations = new Map<string, Operation>();
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, CompiledResponse>();

  constructor(readonly document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true });
    addFormats(this.ajv);
    // OpenAPI formats that are annotations only.
    for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']) {
      this.ajv.addFormat(format, true);
    }
    const components = (document.components ?? {}) as Json;
    const schemas = (components.schemas ?? {}) as Record<string, unknown>;
    for (const [name, schema] of Object.entries(schemas)) {
      this.ajv.addSchema({ ...(rewriteRefs(schema) as Json), $id: SCHEMA_BASE + name });
    }
    const paths = (document.paths ?? {}) as Record<string, Json>;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of HTTP_METHODS) {
        const op = item[method] as Json | undefined;
        if (!op || typeof op.operationId !== 'string') continue;
        this.operations.set(op.operationId, {
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          responses: (op.responses ?? {}) as Record<string, Json>,
        });
      }
    }
  }

  static load(specPath = DEFAULT_SPEC_PATH): Contract {
    if (!existsSync(specPath)) throw new Error(`no OpenAPI document at ${specPath}: pass --spec PATH`);
    return new Contract(JSON.parse(readFileSync(specPath, 'utf8')) as Json);
  }

  operation(operationId: string): Operation {
    const op = this.operations.get(operationId);
    if (!op) throw new Error(`the spec has no operation ${operationId}`);
    return op;
  }

  /** A named response of `components.responses` (for answers no operation can list: 404 no_route, 405). */
  hasComponentResponse(name: string): boolean {
    return Boolean(((this.document.components as Json)?.responses as Json | undefined)?.[name]);
  }

  /**
   * Validates one response. `target` is an operationId, or `#Name` for a component response.
   * Returns the violations; an empty list means the response matches the contract.
   */
  validate(target: string, status: number, headers: Headers, rawBody: string): Violation[] {
    const key = `${target} ${status}`;
    let compiled = this.compiled.get(key);
    if (!compiled) {
      const response = this.findResponse(target, status);
      if (!response) {
        return [{ path: 'status', message: `${status} is not documented for ${target}` }];
      }
      compiled = this.compile(response);
      this.compiled.set(key, compiled);
    }
    const violations: Violation[] = [];
    for (const [name, validate] of Object.entries(compiled.headers)) {
      const raw = headers.get(name);
      if (raw === null) continue;
      const value = /^-?\d+$/.test(raw) && isIntegerSchema(validate.schema) ? Number(raw) : raw;
      if (!validate(value)) {
        violations.push({ path: `header/${name}`, message: `${JSON.stringify(raw)} ${ajvMessage(validate)}` });
      }
    }
    if (compiled.json) {
      let body: unknown;
      try {
        body = rawBody === '' ? undefined : JSON.parse(rawBody);
      } catch {
        violations.push({ path: 'body', message: `is not JSON: ${JSON.stringify(rawBody.slice(0, 60))}` });
        return violations;
      }
      if (body === undefined) {
        violations.push({ path: 'body', message: 'is empty, a JSON body is documented' });
      } else if (compiled.body && !compiled.body(body)) {
        for (const error of compiled.body.errors ?? []) {
          violations.push({
            path: `body${error.instancePath || ''}` || 'body',
            message: `${error.message ?? 'invalid'}${error.params ? ' ' + JSON.stringify(error.params) : ''}`,
          });
        }
      }
    }
    return dedupe(violations);
  }

  private findResponse(target: string, status: number): Json | undefined {
    if (target.startsWith('#')) {
      const responses = (this.document.components as Json)?.responses as Record<string, Json> | undefined;
      const response = responses?.[target.slice(1)];
      return response ? this.deref(response) : undefined;
    }
    const op = this.operation(target);
    const response =
      op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses['default'];
    return response ? this.deref(response) : undefined;
  }

  private deref(node: Json): Json {
    let current = node;
    for (let depth = 0; typeof current.$ref === 'string' && depth < 20; depth++) {
      current = pointer(this.document, current.$ref as string) as Json;
    }
    return current;
  }

  private compile(response: Json): CompiledResponse {
    const content = (response.content ?? {}) as Record<string, Json>;
    const jsonType = Object.keys(content).find((type) => /json/.test(type));
    const schema = jsonType ? (content[jsonType]!.schema as Json | undefined) : undefined;
    const headers: Record<string, ValidateFunction> = {};
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const headerSchema = this.deref(header).schema as Json | undefined;
      if (headerSchema) headers[name] = this.ajv.compile(rewriteRefs(headerSchema) as Json);
    }
    return {
      body: schema ? this.ajv.compile(rewriteRefs(schema) as Json) : null,
      headers,
      json: Boolean(jsonType),
    };
  }
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node && typeof node === 'object') {
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        out[key] = SCHEMA_BASE + value.slice('#/components/schemas/'.length);
      } else {
        out[key] = rewriteRefs(value);
      }
    }
    return out;
  }
  return node;
}

function pointer(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as Json)?.[key];
  }
  if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
  return node;
}

function isIntegerSchema(schema: unknown): boolean {
  return Boolean(schema && typeof schema === 'object' && (schema as Json).type === 'integer');
}

function ajvMessage(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`.trim()).join('; ');
}

function dedupe(violations: Violation[]): Violation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.path} ${v.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
