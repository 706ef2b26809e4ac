/** Which query parameters each v2 operation declares (the edge ignores the others, as the contract says). */
import type { Contract } from '@secret-push/contract';

/** The query parameter names each operation declares (its own and its path's). */
export function declaredQueries(c: Contract): Map<string, Set<string>> {
  return new Map(
    c.operations().map((op) => [
      op.operationId,
      new Set(
        c
          .parameters(op.operationId)
          .filter((p) => p.in === 'query')
          .map((p) => String(p.name)),
      ),
    ]),
  );
}
