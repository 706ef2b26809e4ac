/**
 * The one route table (`RouteTable` of `@secret-push/rules`, as `contract().routes` and `contractV1().routes`)
 * against openapi-backend's own router, so the two cannot drift: for every path template of both documents and a
 * corpus of concrete paths (literal and templated paths, trailing slashes, v2's `.json` suffixes as the server strips
 * them, encoded characters, unknown paths) and every method, the table gives the operation `matchOperation` gives,
 * the path parameters `parseRequest` gives, and its 404 and 405. The one difference is the project's rule that the
 * most specific path decides for every method (`DELETE /api/v2/pushes/active` is a 405, not an expiry of a push called
 * "active"): the test lists every request where it applies, and checks that each 405's `Allow` names exactly the
 * methods the library routes to that same path.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend } from 'openapi-backend';
import { bundledDocument, bundledV1Document, contract, contractV1, type Contract } from '@secret-push/contract';
import { createSpecBackend } from '../../src/http/openapi-backend.js';
import { stripJsonSuffix } from '../../src/http/api.js';

const METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'get', ' delete '];
const TOKEN = 'k7mz4qv2xw5nrt3hbj6ypa2c';
/** Values a path parameter is given: plain, with the characters tokens may hold, percent-encoded (a slash too). */
const VALUES = [TOKEN, 'p', 'a.b~c_d-e', 'caf%C3%A9%20x', 'a%2Fb', '%7Burl_token%7D', 'active', 'x.json'];

const V2_PATHS = [
  '/api/v2/version',
  '/api/v2/version/',
  '/api/v2/version.json',
  '/api/v2/pushes',
  '/api/v2/pushes/',
  '/api/v2/pushes//',
  '/api/v2/pushes.json',
  '/api/v2/pushes/active',
  '/api/v2/pushes/active/',
  '/api/v2/pushes/active.json',
  '/api/v2/pushes/active.json/',
  '/api/v2/pushes/expired',
  `/api/v2/pushes/${TOKEN}`,
  `/api/v2/pushes/${TOKEN}/`,
  `/api/v2/pushes/${TOKEN}.json`,
  '/api/v2/pushes/caf%C3%A9%20x',
  '/api/v2/pushes/a.b~c_d-e',
  '/api/v2/pushes/%ZZ',
  `/api/v2/pushes/${TOKEN}/preview`,
  `/api/v2/pushes/${TOKEN}/preview.json`,
  `/api/v2/pushes/${TOKEN}/audit`,
  `/api/v2/pushes/${TOKEN}/files/f1`,
  `/api/v2/pushes/${TOKEN}/files/f1/extra`,
  `/api/v2/pushes/${TOKEN}/files/`,
  '/api/v2/pushes/{url_token}',
  '/api/v2/PUSHES',
  '/api/v2/nothing',
  '/api/v2',
  '/api/v2/.json',
  '/api',
  '/',
  '/api/v1/version.json',
  '/p.json',
];

const V1_PATHS = [
  '/api/v1/version.json',
  '/api/v1/version',
  '/api/v1/version.json/',
  '/p.json',
  '/f.json',
  '/r.json',
  '/p.json/',
  '/pxjson',
  '/p/active.json',
  '/f/expired.json',
  `/p/${TOKEN}.json`,
  `/r/${TOKEN}/preview.json`,
  `/f/${TOKEN}/audit.json`,
  `/p/${TOKEN}/r.json`,
  '/p/rz6nryvl-d4.json',
  '/p/rz6nryvl-d4xjson',
  '/p/a.json.json',
  '/p/caf%C3%A9.json',
  `/x/${TOKEN}.json`,
  '/p/active.json/',
  '/p/.json',
  '//active.json',
  '/p',
  '/api/v2/version',
];

/** Every template as written, each parameter given each value, with trailing slashes and an extra or missing segment. */
function templatePaths(c: Contract): string[] {
  const out: string[] = [];
  for (const template of new Set(c.operations().map((op) => op.path))) {
    out.push(template, `${template}/`, `${template}/extra`, template.slice(0, template.lastIndexOf('/')) || '/');
    for (const value of VALUES) {
      const path = template.replace(/\{[^}]+\}/g, value);
      out.push(path, `${path}/`, `${path}//`);
    }
  }
  return out;
}

/** A v2 path as the server routes it: its `.json` suffix dropped by the same middleware. */
function asServerRoutes(path: string): string {
  return stripJsonSuffix(path);
}

/** openapi-backend's own answer: the operation, or the 404 / 405 its strict matcher throws. */
function library(backend: OpenAPIBackend, method: string, path: string): { id: string; path?: string } {
  try {
    const op = backend.router.matchOperation({ method, path, headers: {}, query: {} }, true);
    return { id: op?.operationId ?? 'none', path: op?.path };
  } catch (error) {
    return { id: (error as Error).message.startsWith('405') ? 'method_not_allowed' : 'no_route' };
  }
}

function libraryParams(backend: OpenAPIBackend, method: string, path: string): Record<string, string> | 'malformed' {
  const request = { method, path, headers: {}, query: {} };
  try {
    return backend.router.parseRequest(request, backend.router.matchOperation(request, true)).params as Record<
      string,
      string
    >;
  } catch {
    return 'malformed'; // decodeURIComponent refused it: the server answers such paths before routing
  }
}

describe.each([
  ['v2', () => bundledDocument(), () => contract(), [...V2_PATHS, ...V2_PATHS.map(asServerRoutes)]],
  ['v1', () => bundledV1Document(), () => contractV1(), V1_PATHS],
] as const)('the route table of %s against openapi-backend', (name, document, toolkit, corpus) => {
  let backend: OpenAPIBackend;
  beforeAll(async () => {
    backend = await createSpecBackend({ definition: document() as never });
  });

  // Every method on every path through both routers, all CPU: v2 took 59 s of the project's 60 s on the shared 2-core
  // machine with one test worker (load ≈ 17), 138 s beside a second worker (load ≈ 30); hence its own time limit.
  it(
    'gives every method and path the operation, path parameters, 404 or 405 the library gives, but where the most specific path decides',
    { timeout: 240_000 },
    () => {
      const routes = toolkit().routes;
      const paths = [...new Set([...corpus, ...templatePaths(toolkit())])];
      const differences: string[] = [];
      const seen = new Set<string>();
      for (const path of paths) {
        for (const method of METHODS) {
          const expected = library(backend, method, path);
          const match = routes.match(method, path);
          const ours = match.kind === 'ok' ? match.operation.operationId : match.kind;
          seen.add(ours);
          const request = `${method.trim().toUpperCase()} ${path}`;
          if (match.kind === 'method_not_allowed') {
            // Allow: exactly the methods the library routes to the path the table chose.
            const routedThere = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE'].filter(
              (m) => library(backend, m, path).path === match.path,
            );
            expect(`${request} Allow: ${match.allow.join(', ')}`).toBe(`${request} Allow: ${routedThere.join(', ')}`);
          }
          if (ours !== expected.id) {
            // The only difference allowed: the library takes a less specific template for the method, the table a 405.
            expect(match.kind, request).toBe('method_not_allowed');
            const literal = (template: string) => template.replace(/\{[^}]+\}/g, '').length;
            expect(literal(match.kind === 'method_not_allowed' ? match.path : ''), request).toBeGreaterThan(
              literal(expected.path ?? ''),
            );
            differences.push(`${request} → 405 (library: ${expected.id})`);
            continue;
          }
          if (match.kind !== 'ok') continue;
          const params = libraryParams(backend, method, path);
          if (params === 'malformed')
            expect(
              Object.values(match.params).some((v) => v.includes('%')),
              request,
            ).toBe(true);
          else expect(match.params, request).toEqual(params);
        }
      }
      // Every operation, a 404 and a 405 were reached; the differences are the literal lists' other methods only.
      for (const op of toolkit().operations()) expect(seen, op.operationId).toContain(op.operationId);
      expect(seen).toContain('no_route');
      expect(seen).toContain('method_not_allowed');
      const deviating = [
        ...new Set(differences.map((d) => d.replace(/^\S+ /, '').replace(/ →.*/, '').replace(/\/+$/, ''))),
      ].sort();
      // The lists (`active`, `expired`) are the literal paths that share their parent with a `{url_token}` template.
      const lists =
        name === 'v2' ? /^\/api\/v2\/(pushes|requests)\/(active|expired)$/ : /^\/[^/]+\/(active|expired)\.json$/;
      for (const path of deviating) expect(path).toMatch(lists);
      expect(deviating).toEqual(
        expect.arrayContaining(
          name === 'v2' ? ['/api/v2/pushes/active', '/api/v2/pushes/expired'] : ['/p/active.json', '/f/expired.json'],
        ),
      );
      expect(differences.every((d) => d.startsWith('DELETE '))).toBe(true);
    },
  );
});
