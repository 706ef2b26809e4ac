/**
 * The contract's route table: which operation a method and path name. Built once per document. The rules are the
 * server's: the path whose template has the most literal characters wins for every method (so `DELETE
 * /api/v2/pushes/active` is a 405 of the `active` list, never an expiry of a push called "active"); a path no
 * template matches is `no_route`; a matched path without the method is `method_not_allowed` with the methods it
 * has. A trailing slash is ignored. Paths are matched as sent (percent-escapes are not decoded).
 */
import type { Json } from './refs.js';

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

export type RouteMatch =
  | { kind: 'ok'; operation: Operation; params: Record<string, string> }
  | { kind: 'no_route' }
  | { kind: 'method_not_allowed'; path: string; allow: string[] };

interface Row {
  path: string;
  literal: number;
  re: RegExp;
  names: string[];
  byMethod: Map<string, Operation>;
  allow: string[];
}

function escape(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The operations of a document's `paths`, in document order. */
export function operationsOf(document: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of HTTP_METHODS) {
      const object = item[method] as Json | undefined;
      if (object && typeof object.operationId === 'string') out.push({ operationId: object.operationId, method, path, object });
    }
  }
  return out;
}

export class RouteTable {
  private readonly rows: Row[];
  private readonly literalPaths: Map<string, Row>;

  constructor(operations: readonly Operation[]) {
    const byPath = new Map<string, Row>();
    for (const op of operations) {
      let row = byPath.get(op.path);
      if (!row) {
        const names: string[] = [];
        const pattern = op.path
          .split(/(\{[^}]+\})/)
          .map((part) => {
            if (!part.startsWith('{')) return escape(part);
            names.push(part.slice(1, -1));
            return '([^/]+)';
          })
          .join('');
        row = {
          path: op.path,
          literal: op.path.replace(/\{[^}]+\}/g, '').length,
          re: new RegExp(`^${pattern}/?$`),
          names,
          byMethod: new Map(),
          allow: [],
        };
        byPath.set(op.path, row);
      }
      row.byMethod.set(op.method.toUpperCase(), op);
      row.allow.push(op.method.toUpperCase());
    }
    // Most specific first: the longest literal part wins (`/pushes/active` before `/pushes/{url_token}`).
    this.rows = [...byPath.values()].sort((a, b) => b.literal - a.literal);
    this.literalPaths = new Map(this.rows.filter((r) => r.names.length === 0).map((r) => [r.path, r]));
  }

  match(method: string, path: string): RouteMatch {
    const row = this.rowFor(path);
    if (!row) return { kind: 'no_route' };
    const operation = row.byMethod.get(method.toUpperCase());
    if (!operation) return { kind: 'method_not_allowed', path: row.path, allow: [...row.allow] };
    const values = row.names.length > 0 ? row.re.exec(path)! : null;
    const params: Record<string, string> = {};
    row.names.forEach((name, i) => {
      params[name] = values![i + 1]!;
    });
    return { kind: 'ok', operation, params };
  }

  /**
   * The literal path (no template) a request path is, if any: `/api/v2/pushes/active` for `/api/v2/pushes/active/`.
   * A router that matched such a path to a template for another method has picked the wrong row.
   */
  literalRoute(path: string): { path: string; allow: string[] } | undefined {
    const row = this.literalPaths.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
    return row ? { path: row.path, allow: [...row.allow] } : undefined;
  }

  /** The methods a path template answers (for `Allow`). */
  allow(pathTemplate: string): string[] {
    return [...(this.rows.find((r) => r.path === pathTemplate)?.allow ?? [])];
  }

  private rowFor(path: string): Row | undefined {
    const literal = this.literalPaths.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
    if (literal) return literal;
    return this.rows.find((r) => r.re.test(path));
  }
}
