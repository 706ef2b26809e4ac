/**
 * Path lookup ahead of openapi-backend, for the two answers it cannot give on its own: a literal path (`active`,
 * `expired`) wins over `{url_token}` for every method (so `DELETE /pushes/active` is 405, not an expiry of a push
 * called "active"), and a 405 lists the methods in `Allow`.
 */
import type { OpenAPIBackend } from 'openapi-backend';

export type RouteMatch =
  | { kind: 'ok'; path: string }
  | { kind: 'no_route' }
  | { kind: 'method_not_allowed'; path: string; allow: string[] };

function templateRegExp(template: string): RegExp {
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}/?$`);
}

const cache = new WeakMap<OpenAPIBackend, { path: string; methods: string[]; literal: number; re: RegExp }[]>();

function table(backend: OpenAPIBackend) {
  let rows = cache.get(backend);
  if (!rows) {
    const byPath = new Map<string, string[]>();
    for (const op of backend.getOperations()) {
      byPath.set(op.path, [...(byPath.get(op.path) ?? []), op.method.toUpperCase()]);
    }
    rows = [...byPath].map(([path, methods]) => ({
      path,
      methods,
      literal: path.replace(/\{[^}]+\}/g, '').length,
      re: templateRegExp(path),
    }));
    // Most specific first: the longest literal part wins (`/pushes/active` before `/pushes/{url_token}`).
    rows.sort((a, b) => b.literal - a.literal);
    cache.set(backend, rows);
  }
  return rows;
}

export function resolveRoute(backend: OpenAPIBackend, method: string, path: string): RouteMatch {
  const row = table(backend).find((r) => r.re.test(path));
  if (!row) return { kind: 'no_route' };
  const m = method.toUpperCase();
  if (!row.methods.includes(m)) return { kind: 'method_not_allowed', path: row.path, allow: row.methods };
  return { kind: 'ok', path: row.path };
}
