/**
 * `Contract`: one OpenAPI document, read once, with the questions every part of the project asks of it answered the
 * same way: which operation a request names (the route table), what a `$ref` points at, and whether a value or a
 * whole response matches what the document says. One Ajv configuration (./ajv.ts) compiles every schema, with the
 * document registered as one schema resource so references between components resolve as written.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { makeAjv, mediaTypeOf } from '@secret-push/rules';
import { deref, resolvePointer, type Json } from './refs.js';
import { type Operation, operationsOf, RouteTable } from './routes.js';

/** A value checked against a schema: `errors` has one line per problem, `<json path> <message>`. */
export interface ValidationResult {
  valid: boolean;
  errors: string[];
}

/** One way a response breaks the contract. `path`: `status`, `media-type`, `body`, `body/<json path>`, `header/<name>`. */
export interface Violation {
  path: string;
  message: string;
}

export type HeadersLike = Headers | Record<string, string | string[] | number | undefined>;

export interface ResponseToCheck {
  status: number;
  headers: HeadersLike;
  /** The body as received (text); parsed here when the documented media type is JSON. */
  text?: string;
  /** Or the body already parsed (or bytes, for binary answers). Ignored when `text` is given. */
  body?: unknown;
}

export interface CheckOptions {
  /** Report headers the document marks `required: true` that the response lacks (default true). */
  requiredHeaders?: boolean;
}

const DOCUMENT_ID = 'urn:secret-push:openapi';

function headerGetter(headers: HeadersLike): (name: string) => string | null {
  if (typeof (headers as Headers).get === 'function') return (name) => (headers as Headers).get(name);
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return (name) => {
    const value = lower.get(name.toLowerCase());
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : String(value);
  };
}

/** Rewrites local refs of a sub-schema so it resolves inside the registered document when compiled on its own. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node && typeof node === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#') ? DOCUMENT_ID + v : rebase(v);
    }
    return out;
  }
  return node;
}

export function formatAjvErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) => {
      const extra = e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : '';
      return `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
    });
}

function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

export class Contract {
  readonly document: Json;
  /** The one route table (`RouteTable` of `@secret-push/rules`) over this document's operations. */
  readonly routes: RouteTable<Operation>;
  readonly ajv: Ajv2020;
  private readonly byId: Map<string, Operation>;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: Json) {
    this.document = document;
    const operations = operationsOf(document);
    this.byId = new Map(operations.map((op) => [op.operationId, op]));
    this.routes = new RouteTable(operations);
    this.ajv = makeAjv();
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  operations(): Operation[] {
    return [...this.byId.values()];
  }

  operation(operationId: string): Operation {
    const op = this.byId.get(operationId);
    if (!op) throw new Error(`The contract has no operation ${operationId}`);
    return op;
  }

  hasOperation(operationId: string): boolean {
    return this.byId.has(operationId);
  }

  /** Follows `$ref`s of non-schema objects (responses, examples, parameters, headers). */
  deref<T = Json>(node: unknown): T {
    return deref<T>(this.document, node);
  }

  /** The node at a local JSON pointer. */
  at<T = unknown>(pointer: string): T {
    const node = resolvePointer(this.document, pointer);
    if (node === undefined) throw new Error(`Nothing at ${pointer} in the contract`);
    return node as T;
  }

  /** A component schema as written (`schema('PushInput')`). */
  schema<T = Json>(name: string): T {
    return this.at<T>(`#/components/schemas/${name}`);
  }

  /** The parameters an operation takes (its own and its path's), dereferenced. */
  parameters(operationId: string): Json[] {
    const op = this.operation(operationId);
    const item = (this.document.paths as Record<string, Json>)[op.path] ?? {};
    return [...((op.object.parameters as unknown[]) ?? []), ...((item.parameters as unknown[]) ?? [])].map((p) =>
      this.deref(p),
    );
  }

  /** The response object an operation documents for a status (exact, `4XX`, `default`), dereferenced. */
  response(operationId: string, status: number): Json | undefined {
    const responses = (this.operation(operationId).object.responses ?? {}) as Record<string, unknown>;
    const entry = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    return entry ? this.deref(entry) : undefined;
  }

  /** A named response of `components.responses` (the answers no operation lists: no_route, 405). */
  componentResponse(name: string): Json | undefined {
    const node = ((this.document.components as Json | undefined)?.responses as Json | undefined)?.[name];
    return node ? this.deref(node) : undefined;
  }

  /** The compiled validator of a schema taken from the document (or `{ $ref }` into it). Cached by `key`. */
  validator(schema: unknown, key?: string): ValidateFunction {
    const cacheKey = key ?? JSON.stringify(schema);
    let validate = this.compiled.get(cacheKey);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as Json);
      this.compiled.set(cacheKey, validate);
    }
    return validate;
  }

  validateSchema(schema: unknown, value: unknown, key?: string): ValidationResult {
    const validate = this.validator(schema, key);
    const valid = validate(value) as boolean;
    return { valid, errors: valid ? [] : formatAjvErrors(validate.errors) };
  }

  /** Validates a value against a component schema, e.g. `validateComponent('Push', value)`. */
  validateComponent(name: string, value: unknown): ValidationResult {
    return this.validateSchema({ $ref: `#/components/schemas/${name}` }, value, `component:${name}`);
  }

  /**
   * Checks one response against what `target` documents: an operationId, or `#Name` for a component response. The
   * status must be documented; the media type must be one the response lists; a JSON body must parse and match its
   * schema; documented headers must match their schemas, and those marked required must be there. An empty list
   * means the response keeps the contract.
   */
  checkResponse(target: string, response: ResponseToCheck, options: CheckOptions = {}): Violation[] {
    const documented = target.startsWith('#')
      ? this.componentResponse(target.slice(1))
      : this.response(target, response.status);
    if (!documented) return [{ path: 'status', message: `${response.status} is not documented for ${target}` }];
    const get = headerGetter(response.headers);
    const violations: Violation[] = [];
    this.checkHeaders(target, response.status, documented, get, options.requiredHeaders !== false, violations);
    const content = documented.content as Record<string, Json> | undefined;
    if (content && Object.keys(content).length > 0) {
      const mediaType = mediaTypeOf(get('content-type'));
      const media = content[mediaType];
      if (!media) {
        violations.push({
          path: 'media-type',
          message: `"${mediaType}" is not documented for ${target} ${response.status} (expected ${Object.keys(content).join(', ')})`,
        });
      } else if (isJsonMediaType(mediaType)) {
        this.checkJsonBody(`${target}:${response.status}:${mediaType}`, media.schema, response, violations);
      }
    }
    return dedupe(violations);
  }

  /**
   * `checkResponse` for a body already parsed, as one line per problem (`<where> <message>`): the status is documented,
   * the media type is one the response lists, the body matches. Headers other than the media type are not looked at.
   */
  validateResponse(operationId: string, status: number, contentType: string | null, body: unknown): ValidationResult {
    const violations = this.checkResponse(
      operationId,
      { status, headers: contentType === null ? {} : { 'content-type': contentType }, body },
      { requiredHeaders: false },
    );
    return {
      valid: violations.length === 0,
      errors: violations.map((v) => `${v.path === 'body' ? '/' : v.path.replace(/^body/, '')} ${v.message}`),
    };
  }

  private checkJsonBody(key: string, schema: unknown, response: ResponseToCheck, violations: Violation[]): void {
    let body: unknown = response.body;
    if (response.text !== undefined) {
      if (response.text === '') {
        violations.push({ path: 'body', message: 'is empty, a JSON body is documented' });
        return;
      }
      try {
        body = JSON.parse(response.text);
      } catch {
        violations.push({ path: 'body', message: `is not JSON: ${JSON.stringify(response.text.slice(0, 60))}` });
        return;
      }
    }
    if (schema === undefined) return;
    const validate = this.validator(schema, key);
    if (validate(body)) return;
    for (const error of validate.errors ?? []) {
      if (error.keyword === 'if') continue;
      violations.push({
        path: `body${error.instancePath || ''}`,
        message: `${error.message ?? 'invalid'}${error.params ? ' ' + JSON.stringify(error.params) : ''}`,
      });
    }
  }

  private checkHeaders(
    target: string,
    status: number,
    documented: Json,
    get: (name: string) => string | null,
    requireRequired: boolean,
    violations: Violation[],
  ): void {
    for (const [name, node] of Object.entries((documented.headers ?? {}) as Record<string, unknown>)) {
      const header = this.deref<Json>(node);
      const raw = get(name);
      if (raw === null) {
        if (requireRequired && header.required === true)
          violations.push({ path: `header/${name}`, message: 'is required but missing' });
        continue;
      }
      if (!header.schema) continue;
      const validate = this.validator(header.schema, `${target}:${status}:header:${name}`);
      const schemaType = (this.deref<Json>(header.schema) as Json).type;
      const value = /^-?\d+$/.test(raw) && schemaType === 'integer' ? Number(raw) : raw;
      if (!validate(value)) {
        const detail = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`.trim()).join('; ');
        violations.push({ path: `header/${name}`, message: `${JSON.stringify(raw)} ${detail}` });
      }
    }
  }
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
