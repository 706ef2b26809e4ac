/**
 * openapi-backend's request handling (`handleRequest`: routing, path parameters, security requirements, request
 * validation), worked out once per contract instead of on every request. The library rebuilds its operation list,
 * a RegExp per path template, lodash chains and deep copies of the request for each request it handles (why that
 * matters, measured: docs/decisions/0007-operation-table.md); the answers depend only on the document, so they are
 * computed here at start-up and each request runs the same steps, with the same rules, against the results:
 *
 * - routing: the contract's route table (`contract().routes`, the project's one `RouteTable`, whose rules are
 *   router.js `matchOperation` and `parseRequest`: server/test/api/router.unit.test.ts compares them), asked once per
 *   request; its answer (the operation and its percent-decoded path parameters, or 404, or 405 with `Allow`) is what
 *   every later step uses;
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
import { mediaTypeOf, type HeaderValue, type RouteTable } from '@secret-push/rules';

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
  /** The security requirements (the operation's, else the document's) and the schemes they name. */
  security: Record<string, unknown>[];
  schemes: string[];
  /** Each requirement: the schemes it names and the scopes it lists under them (`{}`: none, the anonymous one). */
  requirements: { schemes: string[]; scopes: string[] }[];
  /** Every scope the requirements list (what a key without them is told it lacks). */
  scopes: string[];
  /** The compiled request validators (body, then parameters). */
  validators: ValidateFunction[];
}

/**
 * The one routing answer of a request, carried on it: its operation and path parameters (percent-decoded), or 404, or
 * 405 with the methods the path answers. `path` is the path template (what the access log names).
 */
export type Routed =
  | { kind: 'ok'; operation: CompiledOperation; path: string; params: Record<string, string> }
  | { kind: 'no_route' }
  | { kind: 'method_not_allowed'; path: string; allow: string[] };

/** What the route table routes to: an operation of the contract. */
export interface ContractOperation {
  operationId: string;
  method: string;
  path: string;
}

/** What `validate` checks: the request as the edge read it. */
export interface RequestToValidate {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** Refuses a parameter whose handling by openapi-backend is not carried over here. */
function checkSupported(operationId: string, parameter: Json): void {
  const schema = (parameter.schema ?? {}) as Json;
  const where = `${operationId}: parameter ${String(parameter.name)} (in ${String(parameter.in)})`;
  if (parameter.in === 'cookie') throw new Error(`${where}: cookie parameters are not supported by the API edge`);
  if (
    parameter.in === 'query' &&
    (parameter.content !== undefined || parameter.explode === false || schema.type === 'array')
  ) {
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

export class OperationTable {
  private readonly byId = new Map<string, CompiledOperation>();
  /** With `served`: the methods of each path template it serves (for `Allow`). */
  private readonly servedMethods: Map<string, Set<string>> | null = null;

  /**
   * `backend`: openapi-backend loaded with the contract (its dereferenced operations and compiled validators);
   * `routes`: the contract's route table, over the same operations (checked here: a difference fails to load);
   * `served`: the operations this instance serves (a retrieve-only one, ./retrieve-only.ts), or null for every one.
   * Another operation is an unknown path (404), and a 405's `Allow` names only served methods (none: a 404).
   */
  constructor(
    backend: OpenAPIBackend,
    private readonly routes: RouteTable<ContractOperation>,
    private readonly served: ReadonlySet<string> | null = null,
  ) {
    for (const operation of backend.router.getOperations()) {
      const operationId = operation.operationId;
      if (!operationId) continue;
      const parameters = (operation.parameters ?? []) as unknown as Json[];
      for (const parameter of parameters) checkSupported(operationId, parameter);
      const requestBody = operation.requestBody as { content?: Json } | undefined;
      const security = (operation.security ?? []) as Record<string, unknown>[];
      this.byId.set(operationId, {
        operationId,
        method: operation.method.toLowerCase(),
        path: operation.path,
        operation,
        hasRequestBody: Boolean(operation.requestBody),
        mediaTypes: Object.keys(requestBody?.content ?? {}),
        security,
        schemes: security.flatMap((requirement) => Object.keys(requirement)),
        requirements: security.map((requirement) => ({
          schemes: Object.keys(requirement),
          scopes: [...new Set(Object.values(requirement).flatMap((v) => (Array.isArray(v) ? v.map(String) : [])))],
        })),
        scopes: [
          ...new Set(security.flatMap((r) => Object.values(r).flatMap((v) => (Array.isArray(v) ? v.map(String) : [])))),
        ],
        validators: backend.validator.getRequestValidatorsForOperation(operationId) ?? [],
      });
    }
    const routed = routes.operations();
    const same =
      routed.length === this.byId.size &&
      routed.every((op) => {
        const compiled = this.byId.get(op.operationId);
        return compiled !== undefined && compiled.method === op.method.toLowerCase() && compiled.path === op.path;
      });
    if (!same) throw new Error('The route table and openapi-backend disagree on the operations of the contract');
    if (served) {
      this.servedMethods = new Map();
      for (const op of routed) {
        if (!served.has(op.operationId)) continue;
        const methods = this.servedMethods.get(op.path) ?? new Set<string>();
        methods.add(op.method.toUpperCase());
        this.servedMethods.set(op.path, methods);
      }
    }
  }

  operations(): CompiledOperation[] {
    return [...this.byId.values()];
  }

  /** Routes a request (its path as sent, before decoding): one match of the route table, the answer every step uses. */
  route(method: string, path: string): Routed {
    const match = this.routes.match(method, path);
    if (this.served) {
      if (match.kind === 'ok' && !this.served.has(match.operation.operationId)) return { kind: 'no_route' };
      if (match.kind === 'method_not_allowed') {
        const methods = this.servedMethods?.get(match.path);
        const allow = match.allow.filter((m) => methods?.has(m));
        return allow.length > 0 ? { ...match, allow } : { kind: 'no_route' };
      }
    }
    if (match.kind !== 'ok') return match;
    return {
      kind: 'ok',
      operation: this.byId.get(match.operation.operationId)!,
      path: match.operation.path,
      params: match.params,
    };
  }

  /**
   * Whether the operation's security requirements hold for a caller: one requirement holds when each scheme it names
   * says yes (backend.js `handleRequest`) and the caller holds every scope it lists. Two rules of ours on top:
   * the anonymous requirement `{}` holds only for a caller who sent no credential (a key that lacks the scope is
   * refused, not served as if anonymous), and a requirement that names a scheme but no scope is held only by a
   * caller with every scope (an operation that forgot to declare its scope is closed to API keys).
   */
  authorized(
    op: CompiledOperation,
    caller: { anonymous: boolean; scheme(name: string): unknown; scopes: ReadonlySet<string> | null },
  ): boolean {
    if (op.security.length === 0) return true;
    const results = new Map<string, unknown>();
    for (const name of op.schemes) {
      if (results.has(name)) continue;
      try {
        results.set(name, caller.scheme(name));
      } catch (error) {
        results.set(name, { error: error || new Error('security handler rejected') });
      }
    }
    const held = caller.scopes;
    return op.requirements.some((requirement) => {
      if (requirement.schemes.length === 0) return caller.anonymous;
      const schemesHold = requirement.schemes.every((name) => {
        const result = results.get(name) as { error?: unknown } | undefined;
        return Boolean(result) && !(typeof result === 'object' && result.error);
      });
      if (!schemesHold) return false;
      if (held === null) return true;
      return requirement.scopes.length > 0 && requirement.scopes.every((scope) => held.has(scope));
    });
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
    if (
      typeof raw !== 'object' &&
      raw !== undefined &&
      op.mediaTypes.length === 1 &&
      op.mediaTypes[0] === 'application/json'
    ) {
      try {
        JSON.parse(`${String(raw)}`);
      } catch (error) {
        errors.push({
          keyword: 'parse',
          instancePath: '',
          schemaPath: '#/requestBody',
          params: {},
          message: (error as Error).message,
        });
      }
    }
    const contentType = mediaTypeOf(request.headers['content-type'] as HeaderValue);
    // A copy of the headers: Ajv's type coercion writes into what it validates.
    const parameters: Record<string, unknown> = {
      path: request.params,
      query: request.query,
      header: { ...request.headers },
      cookie: {},
    };
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
