/**
 * A fetch wrapper for tests: records every request the SDK makes and checks every answer against the bundled spec
 * (status documented for the operation, body valid for its schema, `Cache-Control: no-store`, `X-Request-Id`, and
 * `X-Total-Count` on pages). Violations are collected, and the suites assert there are none after each test.
 */
import { contract } from '@secret-push/contract';

const spec = contract();

function operationOf(method: string, url: string): string | undefined {
  const path = new URL(url).pathname.replace(/\.json$/, '');
  const match = spec.routes.match(method, path);
  return match.kind === 'ok' ? match.operation.operationId : undefined;
}

interface SeenRequest {
  method: string;
  url: string;
  headers: Headers;
  status: number | undefined;
}

export interface SpecCheckingFetch {
  fetch: typeof fetch;
  seen: SeenRequest[];
  violations: string[];
  clear(): void;
}

export function specCheckingFetch(inner: () => typeof fetch = () => globalThis.fetch): SpecCheckingFetch {
  const seen: SeenRequest[] = [];
  const violations: string[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const entry: SeenRequest = {
      method: request.method,
      url: request.url,
      headers: new Headers(request.headers),
      status: undefined,
    };
    seen.push(entry);
    const response = await inner()(request);
    entry.status = response.status;
    const operationId = operationOf(request.method, request.url);
    const where = `${request.method} ${new URL(request.url).pathname} → ${response.status}`;
    if (!operationId) {
      violations.push(`${where}: no operation of the spec`);
      return response;
    }
    const contentType = response.headers.get('Content-Type');
    const text = operationId === 'downloadPushFile' && response.ok ? '' : await response.clone().text();
    let body: unknown = text;
    if (contentType?.includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        violations.push(`${where}: body is not JSON`);
      }
    }
    const result =
      operationId === 'downloadPushFile' && response.ok
        ? { valid: true, errors: [] }
        : spec.validateResponse(operationId, response.status, contentType, body);
    if (!result.valid) violations.push(`${where}: ${result.errors.join('; ')}`);
    if (response.headers.get('Cache-Control') !== 'no-store')
      violations.push(`${where}: Cache-Control is not no-store`);
    if (!response.headers.get('X-Request-Id')) violations.push(`${where}: no X-Request-Id`);
    if (
      response.ok &&
      /^(listActivePushes|listExpiredPushes|getPushAudit)$/.test(operationId) &&
      !response.headers.has('X-Total-Count')
    ) {
      violations.push(`${where}: no X-Total-Count`);
    }
    return response;
  };
  return {
    fetch: wrapped,
    seen,
    violations,
    clear() {
      seen.length = 0;
      violations.length = 0;
    },
  };
}
