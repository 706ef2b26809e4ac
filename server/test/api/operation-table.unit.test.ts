/**
 * The API edge runs openapi-backend's request steps from a table compiled at start-up (server/src/http/
 * operation-table.ts). These tests hold it to the library: for both documents, the same requests give the same
 * validation errors as openapi-backend's own `validateRequest`, and the same authorisation as its `handleRequest`.
 * Its routing is the contract's route table, held to the library's `matchOperation` and `parseRequest` by
 * ./router.unit.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend } from 'openapi-backend';
import { bundledDocument, bundledV1Document, contract, contractV1 } from '@secret-push/contract';
import { API_KEY_SCOPES } from '@secret-push/rules';
import { createSpecBackend } from '../../src/http/openapi-backend.js';
import { OperationTable } from '../../src/http/operation-table.js';

describe.each([
  ['v2', () => bundledDocument(), () => contract()],
  ['v1', () => bundledV1Document(), () => contractV1()],
] as const)('the operation table of %s against openapi-backend', (_name, document, toolkit) => {
  let backend: OpenAPIBackend;
  let table: OperationTable;
  beforeAll(async () => {
    backend = await createSpecBackend({ definition: document() as never });
    table = new OperationTable(backend, toolkit().routes);
  });

  it('finds the same validation errors as validateRequest, for bodies, queries and headers of every kind', () => {
    const bodies: unknown[] = [
      undefined,
      null,
      {},
      [],
      [1],
      'text',
      '{"push":{}}',
      123,
      true,
      { push: 'x' },
      { push: {} },
      { push: { payload: 'a' } },
    ];
    const queries: Record<string, string | string[]>[] = [
      {},
      { page: '2' },
      { page: '0' },
      { page: 'x' },
      { page: ['1', '2'] },
      { passphrase: 'p' },
      { token: 't' },
      { other: '1' },
    ];
    const headers: Record<string, string>[] = [
      {},
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      { 'x-passphrase': 'p' },
    ];
    let compared = 0;
    for (const op of table.operations()) {
      const path = op.path
        .replace(/\{url_token\}/, 'k7mz4qv2xw5nrt3hbj6ypa2c')
        .replace(/\{file_id\}/, 'f1')
        .replace(/\{prefix\}/, 'p');
      const routed = table.route(op.method, path);
      expect(routed).toMatchObject({ kind: 'ok', operation: { operationId: op.operationId } });
      const params = routed.kind === 'ok' ? routed.params : {};
      for (const body of bodies) {
        for (const query of queries) {
          for (const header of headers) {
            const request = { method: op.method, path, headers: { ...header }, query: { ...query }, body };
            const library = backend.validator.validateRequest(request, op.operationId).errors ?? null;
            const ours = table.validate(op, {
              params: { ...params },
              query: { ...query },
              headers: { ...header },
              body,
            });
            const summary = (errors: typeof ours) =>
              (errors ?? [])
                .map((e) => `${e.keyword} ${e.instancePath}${e.keyword === 'parse' ? '' : ` ${e.message ?? ''}`}`)
                .sort();
            expect({ op: op.operationId, body, query, header, errors: summary(ours) }).toEqual({
              op: op.operationId,
              body,
              query,
              header,
              errors: summary(library),
            });
            compared += 1;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('authorises as the requirements say: any one requirement, all of its schemes', () => {
    // An anonymous caller with every scope: the library's rules exactly.
    const caller = (scheme: (name: string) => unknown) => ({ anonymous: true, scheme, scopes: null });
    for (const op of table.operations()) {
      const anonymousAllowed =
        op.security.some((requirement) => Object.keys(requirement).length === 0) || op.security.length === 0;
      expect(
        table.authorized(
          op,
          caller(() => false),
        ),
      ).toBe(anonymousAllowed);
      const needsBoth = op.security.some((r) => Object.keys(r).length === 2);
      if (needsBoth)
        expect(
          table.authorized(
            op,
            caller((scheme) => scheme === 'legacyEmail'),
          ),
        ).toBe(anonymousAllowed);
      if (op.schemes.includes('bearerAuth'))
        expect(
          table.authorized(
            op,
            caller((scheme) => scheme === 'bearerAuth'),
          ),
        ).toBe(true);
      expect(
        table.authorized(
          op,
          caller(() => {
            throw new Error('refused');
          }),
        ),
      ).toBe(anonymousAllowed);
    }
  });

  it('holds a caller with a credential to the scopes the requirements list, and {} only to anonymous callers', () => {
    for (const op of table.operations()) {
      if (!op.schemes.includes('bearerAuth')) continue;
      const bearer = (scopes: ReadonlySet<string> | null) => ({
        anonymous: false,
        scheme: (name: string) => name === 'bearerAuth',
        scopes,
      });
      expect(op.scopes.length, op.operationId).toBe(1);
      expect(table.authorized(op, bearer(null)), op.operationId).toBe(true);
      expect(table.authorized(op, bearer(new Set(op.scopes))), op.operationId).toBe(true);
      expect(table.authorized(op, bearer(new Set())), op.operationId).toBe(false);
      // Another scope than the operation's (whichever comes first in the list) does not do.
      const other = API_KEY_SCOPES.find((scope) => !op.scopes.includes(scope))!;
      expect(table.authorized(op, bearer(new Set([other]))), op.operationId).toBe(false);
    }
  });
});
