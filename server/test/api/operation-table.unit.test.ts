/**
 * The API edge runs openapi-backend's request steps from a table compiled at start-up (server/src/http/
 * operation-table.ts). These tests hold it to the library: for both documents, the same requests give the same
 * operation (or the same 404 / 405), the same path parameters and the same validation errors as openapi-backend's own
 * `matchOperation`, `parseRequest` and `validateRequest`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend } from 'openapi-backend';
import { bundledDocument, bundledV1Document } from '@secret-push/contract';
import { createSpecBackend } from '../../src/http/openapi-backend.js';
import { OperationTable, requestPath } from '../../src/http/operation-table.js';

const METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS'];

const V2_PATHS = [
  '/api/v2/version',
  '/api/v2/version/',
  '/api/v2/pushes',
  '/api/v2/pushes/',
  '/api/v2/pushes//',
  '/api/v2/pushes/active',
  '/api/v2/pushes/active/',
  '/api/v2/pushes/expired',
  '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c',
  '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c/',
  '/api/v2/pushes/caf%C3%A9%20x',
  '/api/v2/pushes/a.b~c_d-e',
  '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c/preview',
  '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c/audit',
  '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c/files/f1',
  '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c/files/f1/extra',
  '/api/v2/pushes/{url_token}',
  '/api/v2/nothing',
  '/api/v2',
  '/api/v1/version.json',
];

const V1_PATHS = [
  '/api/v1/version.json',
  '/api/v1/version',
  '/p.json',
  '/f.json',
  '/r.json',
  '/p/active.json',
  '/f/expired.json',
  '/p/k7mz4qv2xw5nrt3hbj6ypa2c.json',
  '/r/k7mz4qv2xw5nrt3hbj6ypa2c/preview.json',
  '/f/k7mz4qv2xw5nrt3hbj6ypa2c/audit.json',
  '/p/k7mz4qv2xw5nrt3hbj6ypa2c/r.json',
  '/p/rz6nryvl-d4.json',
  '/p/rz6nryvl-d4xjson',
  '/x/k7mz4qv2xw5nrt3hbj6ypa2c.json',
  '/p/active.json/',
];

/** openapi-backend's own answer: the operationId, or the 404 / 405 its strict matcher throws. */
function libraryRoute(backend: OpenAPIBackend, method: string, path: string): string {
  try {
    return backend.router.matchOperation({ method, path, headers: {}, query: {} }, true)?.operationId ?? 'none';
  } catch (error) {
    return (error as Error).message.startsWith('405') ? 'method_not_allowed' : 'not_found';
  }
}

function tableRoute(table: OperationTable, method: string, path: string): string {
  const routed = table.route(method, requestPath(path));
  return routed.kind === 'ok' ? routed.operation.operationId : routed.kind;
}

describe.each([
  ['v2', () => bundledDocument(), V2_PATHS],
  ['v1', () => bundledV1Document(), V1_PATHS],
] as const)('the operation table of %s against openapi-backend', (_name, document, paths) => {
  let backend: OpenAPIBackend;
  let table: OperationTable;
  beforeAll(async () => {
    backend = await createSpecBackend({ definition: document() as never });
    table = new OperationTable(backend);
  });

  it('routes every method and path as the library matches them, with the same path parameters', () => {
    for (const path of paths) {
      for (const method of METHODS) {
        const expected = libraryRoute(backend, method, path);
        expect(`${method} ${path} → ${tableRoute(table, method, path)}`).toBe(`${method} ${path} → ${expected}`);
        const routed = table.route(method, requestPath(path));
        if (routed.kind !== 'ok') continue;
        const request = { method, path, headers: {}, query: {} };
        const libraryParams = backend.router.parseRequest(request, backend.router.matchOperation(request, true)).params;
        expect(table.params(routed.operation, requestPath(path))).toEqual(libraryParams);
      }
    }
  });

  it('finds the same validation errors as validateRequest, for bodies, queries and headers of every kind', () => {
    const bodies: unknown[] = [undefined, null, {}, [], [1], 'text', '{"push":{}}', 123, true, { push: 'x' }, { push: {} }, { push: { payload: 'a' } }];
    const queries: Record<string, string | string[]>[] = [{}, { page: '2' }, { page: '0' }, { page: 'x' }, { page: ['1', '2'] }, { passphrase: 'p' }, { token: 't' }, { other: '1' }];
    const headers: Record<string, string>[] = [{}, { 'content-type': 'application/json' }, { 'content-type': 'application/json', 'idempotency-key': 'k1' }, { 'x-passphrase': 'p' }];
    let compared = 0;
    for (const op of table.operations()) {
      const path = op.path.replace(/\{url_token\}/, 'k7mz4qv2xw5nrt3hbj6ypa2c').replace(/\{file_id\}/, 'f1').replace(/\{prefix\}/, 'p');
      const routed = table.route(op.method, path);
      expect(routed.kind).toBe('ok');
      const params = table.params(op, path);
      for (const body of bodies) {
        for (const query of queries) {
          for (const header of headers) {
            const request = { method: op.method, path, headers: { ...header }, query: { ...query }, body };
            const library = backend.validator.validateRequest(request, op.operationId).errors ?? null;
            const ours = table.validate(op, { params: { ...params }, query: { ...query }, headers: { ...header }, body });
            const summary = (errors: typeof ours) =>
              (errors ?? []).map((e) => `${e.keyword} ${e.instancePath}${e.keyword === 'parse' ? '' : ` ${e.message ?? ''}`}`).sort();
            expect({ op: op.operationId, body, query, header, errors: summary(ours) }).toEqual({ op: op.operationId, body, query, header, errors: summary(library) });
            compared += 1;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('authorises as the requirements say: any one requirement, all of its schemes', () => {
    for (const op of table.operations()) {
      const anonymousAllowed = op.security.some((requirement) => Object.keys(requirement).length === 0) || op.security.length === 0;
      expect(table.authorized(op, () => false)).toBe(anonymousAllowed);
      const needsBoth = op.security.some((r) => Object.keys(r).length === 2);
      if (needsBoth) expect(table.authorized(op, (scheme) => scheme === 'legacyEmail')).toBe(anonymousAllowed);
      if (op.schemes.includes('bearerAuth')) expect(table.authorized(op, (scheme) => scheme === 'bearerAuth')).toBe(true);
      expect(table.authorized(op, () => { throw new Error('refused'); })).toBe(anonymousAllowed);
    }
  });
});
