/**
 * openapi-backend's request handling (`handleRequest`: routing, path parameters, security requirements, request
 * validation), worked out once per contract instead of on every request. The library rebuilds its operation list,
 * a RegExp per path template, lodash chains and deep copies of the request for each request it handles (about a tenth
 * of a request's CPU time in the bench); the answers depend only on the document, so they are computed here at start-up
 * and each request runs the same steps, with the same rules, against the results:
 *
 * - routing: the operation whose path equals the request's, else the most literal template that matches it (each
 *   `{param}` one segment; trailing slashes ignored) with the request's method; 404 when no template matches, 405 when
 *   one matches without the method (router.js `matchOperation`);
 * - path parameters: bath's pattern for the template, each value percent-decoded (router.js `parseRequest`);
 * - security: every scheme the operation's requirements name is asked once, a requirement holds when all its schemes
 *   say yes, and the operation is authorised when one requirement holds (backend.js `handleRequest`);
 * - validation: the Ajv validators openapi-backend compiled from the contract for the operation (`validator.
 *   getRequestValidatorsForOperation`), run on the object `validateRequest` builds (`path`, `query`, `header`, `cookie`,
 *   `requestBody`), with its rule for bodies that are not objects (validation.js `validateRequest`).
 *
 * What the library would do with parameter features the contracts do not use (cookie parameters, JSON or non-exploded
 * query parameters, array query parameters) is not carried over: a contract using one fails to load, so nothing is
 * silently validated differently.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import { mediaTypeOf, type HeaderValue } from '@secret-push/sdk/rules';

type Json = Record<string, unknown>;

/**
 * Most validation errors kept for one request. The body reader bounds every array and object by the contract before
 * validation (./body-bounds.ts), so the validator's list is short; this is the backstop.
 */
const MAX_ERRORS = 200;

export interface CompiledOperation {
  operationId: string;
  /** Lower case, as in the document. */
  method: string;
  /** The path template, e.g. `/api/v2/pushes/{url_token}`. */
  path: string;
  /** The operation as openapi-backend dereferenced it (its `requestBody`, `parameters`, `security`). */
  operation: Operation;
  /** Whether the operation declares a request body. */
  hasRequestBody: boolean;
  /** The request body's declared media types. */
  mediaTypes: string[];
  /** openapi-backend's route pattern: the template's literal parts as written, each `{param}` one segment. */
  matcher: RegExp;
  /** The template's literal characters: the more, the more specific. */
  literal: number;
  /** bath's pattern for the template's parameters (what openapi-backend reads path parameters with). */
  paramPattern: RegExp;
  paramNames: string[];
  /** The security requirements (the operation's, else the document's) and the schemes they name. */
  security: Record<string, unknown>[];
  schemes: string[];
  /** The compiled request validators (body, then parameters). */
  validators: ValidateFunction[];
}

export type Routed = { kind: 'ok'; operation: CompiledOperation } | { kind: 'not_found' } | { kind: 'method_not_allowed' };

/** What `validate` checks: the request as the edge read it. */
export interface RequestToValidate {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** router.js `pathTemplateToPattern`. */
function routePattern(template: string): RegExp {
  return new RegExp(`^${template.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+')}$`);
}

/** bath-es5's `toPathPattern` and parameter names (its literal parts are not escaped: kept as the library has it). */
function bathPattern(template: string): { pattern: RegExp; names: string[] } {
  return {
    pattern: new RegExp(`^${template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`),
    names: (template.match(/\{[A-Za-z0-9_-]+\}/g) ?? []).map((x) => x.slice(1, -1)),
  };
}

/** Refuses a parameter whose handling by openapi-backend is not carried over here. */
function checkSupported(operationId: string, parameter: Json): void {
  const schema = (parameter.schema ?? {}) as Json;
  const where = `${operationId}: parameter ${String(parameter.name)} (in ${String(parameter.in)})`;
  if (parameter.in === 'cookie') throw new Error(`${where}: cookie parameters are not supported by the API edge`);
  if (parameter.in === 'query' && (parameter.content !== undefined || parameter.explode === false || schema.type === 'array')) {
    throw new Error(`${where}: JSON, non-exploded and array query parameters are not supported by the API edge`);
  }
}

/**
 * The request path as openapi-backend normalises it before routing (router.js `normalizeRequest`): trimmed, with a
 * leading slash, without a query string.
 */
export function requestPath(path: string): string {
  let p = path.trim();
  if (!p.startsWith('/')) p = `/${p}`;
  const q = p.indexOf('?');
  return q === -1 ? p : p.slice(0, q);
}

/** router.js `normalizePath` (apiRoot `/`): trimmed, trailing slashes removed. */
function routingPath(path: string): string {
  let p = path.trim();
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

export class OperationTable {
  private readonly byId = new Map<string, CompiledOperation>();
  /** Most literal first (a stable sort: document order among equals), as `matchOperation` orders template matches. */
  private readonly bySpecificity: CompiledOperation[];
  /** `method path` → operation, for the exact-path match that comes first. */
  private readonly exact = new Map<string, CompiledOperation>();

  constructor(backend: OpenAPIBackend) {
    for (const operation of backend.router.getOperations()) {
      const operationId = operation.operationId;
      if (!operationId) continue;
      const parameters = (operation.parameters ?? []) as unknown as Json[];
      for (const parameter of parameters) checkSupported(operationId, parameter);
      const requestBody = operation.requestBody as { content?: Json } | undefined;
      const { pattern, names } = bathPattern(operation.path);
      const security = (operation.security ?? []) as Record<string, unknown>[];
      const compiled: CompiledOperation = {
        operationId,
        method: operation.method.toLowerCase(),
        path: operation.path,
        operation,
        hasRequestBody: Boolean(operation.requestBody),
        mediaTypes: Object.keys(requestBody?.content ?? {}),
        matcher: routePattern(operation.path),
        literal: operation.path.replace(/\{.*?\}/g, '').length,
        paramPattern: pattern,
        paramNames: names,
        security,
        schemes: security.flatMap((requirement) => Object.keys(requirement)),
        validators: backend.validator.getRequestValidatorsForOperation(operationId) ?? [],
      };
      this.byId.set(operationId, compiled);
      const key = `${compiled.method} ${compiled.path}`;
      if (!this.exact.has(key)) this.exact.set(key, compiled);
    }
    this.bySpecificity = [...this.byId.values()].sort((a, b) => b.literal - a.literal);
  }

  operations(): CompiledOperation[] {
    return [...this.byId.values()];
  }

  /** The operation a request names (`path` as `requestPath` gives it), or why there is none. */
  route(method: string, path: string): Routed {
    const m = method.trim().toLowerCase();
    const p = routingPath(path);
    const exact = this.exact.get(`${m} ${p}`);
    if (exact) return { kind: 'ok', operation: exact };
    let matched = false;
    for (const op of this.bySpecificity) {
      if (!op.matcher.test(p)) continue;
      if (op.method === m) return { kind: 'ok', operation: op };
      matched = true;
    }
    return matched ? { kind: 'method_not_allowed' } : { kind: 'not_found' };
  }

  /** The path parameters of a routed request, percent-decoded ({} when bath's pattern does not match). */
  params(op: CompiledOperation, path: string): Record<string, string> {
    const params: Record<string, string> = {};
    if (op.paramNames.length === 0) return params;
    const m = op.paramPattern.exec(routingPath(path));
    if (!m) return params;
    op.paramNames.forEach((name, i) => {
      params[name] = decodeURIComponent(m[i + 1]!);
    });
    return params;
  }

  /** Whether the operation's security requirements hold, given each scheme's verdict. */
  authorized(op: CompiledOperation, scheme: (name: string) => unknown): boolean {
    if (op.security.length === 0) return true;
    const results = new Map<string, unknown>();
    for (const name of op.schemes) {
      if (results.has(name)) continue;
      try {
        results.set(name, scheme(name));
      } catch (error) {
        results.set(name, { error: error || new Error('security handler rejected') });
      }
    }
    return op.security.some((requirement) =>
      Object.keys(requirement).every((name) => {
        const result = results.get(name) as { error?: unknown } | undefined;
        return Boolean(result) && !(typeof result === 'object' && result.error);
      }),
    );
  }

  /**
   * Validates a request against the operation's compiled validators; the errors, or null when it is valid. The query
   * object may be changed (Ajv coerces parameter types in place): pass one the caller does not keep.
   */
  validate(op: CompiledOperation, request: RequestToValidate): ErrorObject[] | null {
    const errors: ErrorObject[] = [];
    const raw = request.body;
    // parseRequest: a body that is not an object is read as JSON text if it is that.
    let requestBody = raw;
    if (raw && typeof raw !== 'object') {
      try {
        requestBody = JSON.parse(String(raw)) as unknown;
      } catch {
        /* kept as it is; the check below reports it */
      }
    }
    // validateRequest: when JSON is the only declared format, a body that is not an object must be JSON text.
    if (typeof raw !== 'object' && raw !== undefined && op.mediaTypes.length === 1 && op.mediaTypes[0] === 'application/json') {
      try {
        JSON.parse(`${String(raw)}`);
      } catch (error) {
        errors.push({ keyword: 'parse', instancePath: '', schemaPath: '#/requestBody', params: {}, message: (error as Error).message });
      }
    }
    const contentType = mediaTypeOf(request.headers['content-type'] as HeaderValue);
    // A copy of the headers: Ajv's type coercion writes into what it validates.
    const parameters: Record<string, unknown> = { path: request.params, query: request.query, header: { ...request.headers }, cookie: {} };
    if (typeof requestBody === 'object' || contentType === 'application/json') parameters.requestBody = requestBody;
    for (const validate of op.validators) {
      validate(parameters);
      // One by one, and no more than MAX_ERRORS (never spread: a list of millions overflows the call stack).
      for (const error of validate.errors ?? []) {
        if (errors.length >= MAX_ERRORS) break;
        errors.push(error);
      }
    }
    return errors.length > 0 ? errors : null;
  }
}
