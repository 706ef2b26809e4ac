/**
 * The one route table: which operation a method and path name, or why none does. The server's API edge (both
 * contracts), the contract toolkit (`contract().routes`), the stateful mock and the conformance grader all route
 * with it, so a request is matched in one place, once. It lives here, in the lowest package (`@secret-push/rules`),
 * because the mock (in the SDK) cannot import the contract toolkit; it needs only each operation's method and path
 * template.
 *
 * The rules are openapi-backend's `matchOperation` (its router.js), compiled once instead of on every request:
 *
 * - the path is trimmed and its trailing slashes are removed (`/api/v2/pushes//` is `/api/v2/pushes`); the method is
 *   compared without case;
 * - a path equal to a template with no parameters is that path; otherwise each `{param}` is one non-empty segment and
 *   the literal parts are matched as written (`.` is a dot); among the templates that match, the one with the most
 *   literal characters wins (document order among equals);
 * - no template matches: `no_route` (404); templates match but none with the method: `method_not_allowed` (405) with
 *   the methods of the most specific one, in document order;
 * - path parameters are read from the path as sent and percent-decoded (a malformed escape is kept as sent: the
 *   server refuses such paths before routing).
 *
 * One rule is the project's own (ARCHITECTURE.md, "One router"): the most specific path that matches decides for every
 * method. openapi-backend would answer `DELETE /api/v2/pushes/active` with the expiry of a push called "active"
 * (`/pushes/{url_token}` has DELETE); here it is a 405 of the `active` list (Allow: GET). server/test/api/router.unit.
 * test.ts compares every answer with openapi-backend's own `matchOperation` and allows exactly this difference.
 */

/** What the table routes to: an operation's method (any case) and its path template, e.g. `/api/v2/pushes/{url_token}`. */
export interface RoutedOperation {
  method: string;
  path: string;
}

export type RouteMatch<T extends RoutedOperation = RoutedOperation> =
  | { kind: 'ok'; operation: T; params: Record<string, string> }
  | { kind: 'no_route' }
  | { kind: 'method_not_allowed'; path: string; allow: string[] };

interface Row<T> {
  path: string;
  /** The template's literal characters: the more, the more specific. */
  literal: number;
  /** openapi-backend's pattern, with a group per parameter. */
  re: RegExp;
  names: string[];
  byMethod: Map<string, T>;
  /** The methods the path answers, upper case, in document order (for `Allow`). */
  allow: string[];
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The path as openapi-backend routes it: trimmed, a leading slash, no query string, no trailing slashes. */
export function routingPath(path: string): string {
  let p = path.trim();
  if (!p.startsWith('/')) p = `/${p}`;
  const q = p.indexOf('?');
  if (q !== -1) p = p.slice(0, q);
  let end = p.length;
  while (end > 1 && p.charCodeAt(end - 1) === 47 /* / */) end -= 1;
  return end === p.length ? p : p.slice(0, end);
}

function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export class RouteTable<T extends RoutedOperation = RoutedOperation> {
  /** Most specific first (a stable sort: document order among equals). */
  private readonly rows: Row<T>[];
  /** Templates without parameters, by path: matched by one lookup. */
  private readonly literalPaths = new Map<string, Row<T>>();
  private readonly ops: readonly T[];

  constructor(operations: readonly T[]) {
    this.ops = [...operations];
    const byPath = new Map<string, Row<T>>();
    for (const op of operations) {
      let row = byPath.get(op.path);
      if (!row) {
        const names: string[] = [];
        const pattern = op.path
          .split(/(\{[^}]+\})/)
          .map((part) => {
            if (!part.startsWith('{')) return escapeRegExp(part);
            names.push(part.slice(1, -1));
            return '([^/]+)';
          })
          .join('');
        row = {
          path: op.path,
          literal: op.path.replace(/\{[^}]+\}/g, '').length,
          re: new RegExp(`^${pattern}$`),
          names,
          byMethod: new Map(),
          allow: [],
        };
        byPath.set(op.path, row);
        if (names.length === 0) this.literalPaths.set(op.path, row);
      }
      const method = op.method.toUpperCase();
      if (!row.byMethod.has(method)) {
        row.byMethod.set(method, op);
        row.allow.push(method);
      }
    }
    this.rows = [...byPath.values()].sort((a, b) => b.literal - a.literal);
  }

  /** The operations the table routes to, as given. */
  operations(): readonly T[] {
    return this.ops;
  }

  /** The operation a request names, with its path parameters; or 404 `no_route`; or 405 with the methods of the path. */
  match(method: string, path: string): RouteMatch<T> {
    const p = routingPath(path);
    let row = this.literalPaths.get(p);
    let values: RegExpExecArray | null = null;
    if (!row) {
      for (const candidate of this.rows) {
        values = candidate.re.exec(p);
        if (values) {
          row = candidate;
          break;
        }
      }
      if (!row) return { kind: 'no_route' };
    }
    const operation = row.byMethod.get(method.trim().toUpperCase());
    if (!operation) return { kind: 'method_not_allowed', path: row.path, allow: [...row.allow] };
    const params: Record<string, string> = {};
    if (values) row.names.forEach((name, i) => (params[name] = decodeParam(values![i + 1]!)));
    return { kind: 'ok', operation, params };
  }

  /** The methods a path template answers (for `Allow`), upper case. */
  allow(pathTemplate: string): string[] {
    return [...(this.rows.find((r) => r.path === pathTemplate)?.allow ?? [])];
  }
}
