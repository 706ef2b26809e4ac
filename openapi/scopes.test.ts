/**
 * Every operation declares the scope an API key needs for it, in its security requirements, and only scopes of the
 * contract's list (`ApiKeyScope`). An operation added without a declared scope fails here (and the server's
 * generated scope test, server/test/api/scopes.test.ts, then sends it a key without the scope and one with it).
 *
 * How an operation declares its scope: its `security` lists the one scope under every scheme of every requirement
 * but the anonymous one: `- bearerAuth: [pushes:create]` and `- legacyEmail: [pushes:create]` / `legacyToken:
 * [pushes:create]`. An operation that takes no credential at all (the version report, a signed download) says so
 * with `security: [{}]` alone. A requirement inherited from the document's root lists no scope, so it fails.
 * This test also does the job of Spectral's `oas3-operation-security-defined`, which is off (openapi/spectral.yaml).
 */
import { describe, expect, it } from 'vitest';
import { API_KEY_SCOPES } from '@secret-push/rules';
import { contract, contractV1, type Contract } from './src/index.js';

const SCHEMES = ['bearerAuth', 'legacyEmail', 'legacyToken'];

/** What is wrong with an operation's declared scope; empty when it is right. */
function problems(c: Contract, operationId: string): string[] {
  const security = c.security(operationId);
  const out: string[] = [];
  if (!c.operation(operationId).object.security)
    out.push('inherits the root security (declare its own, with its scope)');
  const credentialed = security.filter((r) => Object.keys(r).length > 0);
  if (credentialed.length === 0) {
    if (security.length !== 1) out.push('takes no credential but does not say so with `security: [{}]` alone');
    return out;
  }
  for (const requirement of credentialed) {
    for (const [scheme, scopes] of Object.entries(requirement)) {
      if (!SCHEMES.includes(scheme)) out.push(`names the unknown scheme ${scheme}`);
      if (scopes.length !== 1) out.push(`lists ${scopes.length} scopes under ${scheme} (one is needed)`);
      for (const scope of scopes)
        if (!(API_KEY_SCOPES as readonly string[]).includes(scope)) out.push(`lists ${scope}, which is no ApiKeyScope`);
    }
  }
  if (c.scopes(operationId).length !== 1) out.push(`lists different scopes: ${c.scopes(operationId).join(', ')}`);
  return out;
}

describe('the scopes of operations', () => {
  for (const [name, c] of [
    ['v2', contract()],
    ['v1', contractV1()],
  ] as const) {
    it(`${name}: every operation declares exactly one scope of the list, or takes no credential`, () => {
      const wrong = c
        .operations()
        .map((op) => ({ op: op.operationId, problems: problems(c, op.operationId) }))
        .filter((p) => p.problems.length > 0);
      expect(wrong).toEqual([]);
      expect(c.operations().filter((op) => c.scopes(op.operationId).length === 1).length).toBeGreaterThan(5);
    });

    it(`${name}: an operation that needs a scope documents the 403 insufficient_scope with its challenge`, () => {
      for (const op of c.operations()) {
        if (c.scopes(op.operationId).length === 0) continue;
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response object of the document
        const forbidden = c.response(op.operationId, 403) as Record<string, any> | undefined;
        expect(forbidden, `${op.operationId} documents no 403`).toBeDefined();
        expect(Object.keys(forbidden!.headers ?? {}), op.operationId).toContain('WWW-Authenticate');
        const examples = Object.values(forbidden!.content?.['application/json']?.examples ?? {}).map(
          (e) => c.deref<{ value: { code: string } }>(e).value.code,
        );
        expect(examples, op.operationId).toContain('insufficient_scope');
      }
    });
  }

  it('catches an operation whose requirements list no scope', () => {
    const document = structuredClone(contract().document) as { paths: Record<string, Record<string, unknown>> };
    document.paths['/api/v2/pushes']!.post = {
      ...(document.paths['/api/v2/pushes']!.post as object),
      security: [{}, { bearerAuth: [] }],
    };
    const c = new (contract().constructor as new (d: unknown) => Contract)(document);
    expect(problems(c, 'createPush')).toEqual([
      'lists 0 scopes under bearerAuth (one is needed)',
      'lists different scopes: ',
    ]);
  });
});
