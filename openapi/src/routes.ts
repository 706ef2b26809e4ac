/**
 * The contract's route table: which operation a method and path name. Built once per document, with the one route
 * table of the project (`RouteTable` in `@secret-push/rules`, whose rules are openapi-backend's `matchOperation`
 * plus "the most specific path decides for every method"): the server's API edge, the mock's front, the conformance
 * grader and the tests all route with `contract().routes`.
 */
import type { RouteMatch as AnyRouteMatch } from '@secret-push/rules';
import type { Json } from './refs.js';

export { RouteTable, routingPath } from '@secret-push/rules';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface Operation {
  operationId: string;
  /** Lower case, as in the document. */
  method: HttpMethod;
  /** The path template, e.g. `/api/v2/pushes/{url_token}`. */
  path: string;
  /** The operation object as written (it may hold `$ref`s). */
  object: Json;
}

export type RouteMatch = AnyRouteMatch<Operation>;

/** The operations of a document's `paths`, in document order. */
export function operationsOf(document: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of HTTP_METHODS) {
      const object = item[method] as Json | undefined;
      if (object && typeof object.operationId === 'string')
        out.push({ operationId: object.operationId, method, path, object });
    }
  }
  return out;
}
