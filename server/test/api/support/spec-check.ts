/**
 * Checks real HTTP responses against the bundled contract: the status is one the operation declares, the body
 * matches that status's schema, and the headers the contract promises are there (Cache-Control: no-store,
 * X-Request-Id everywhere; Retry-After on 429/503; Allow on 405; pagination headers on lists; Content-Disposition
 * on downloads). Paths outside any operation are checked against the shared NoRoute/MethodNotAllowed responses.
 * v1 paths (`/p.json`, `/p/{url_token}.json`, `/api/v1/…`) are checked the same way against the v1 document, whose
 * errors are `V1ErrorResponse`s and whose unknown paths answer `not-found`.
 */
import { contract, contractV1, type Contract } from '@secret-push/contract';
import { isV1Path } from '../../../src/http/v1/edge.js';

/** The lists and the audit log, whose 200s carry X-Total-Count (and maybe Link). */
const PAGED = [
  'listActivePushes',
  'listExpiredPushes',
  'getPushAudit',
  'listActivePushesV1',
  'listExpiredPushesV1',
  'getPushAuditV1',
  'listActiveRequests',
  'listExpiredRequests',
  'getRequestAudit',
];

export interface CheckedResponse {
  method: string;
  path: string;
  status: number;
  operationId: string | null;
  headers: Headers;
  body: unknown;
}

export class SpecChecker {
  readonly violations: string[] = [];
  readonly checked: CheckedResponse[] = [];
  private constructor(
    private readonly v2: Contract,
    private readonly v1: Contract,
  ) {}

  static async create(): Promise<SpecChecker> {
    return new SpecChecker(contract(), contractV1());
  }

  /** Records one response (its body already read) and notes every way it breaks the contract. */
  check(method: string, url: URL, status: number, headers: Headers, body: unknown): CheckedResponse {
    const v1 = isV1Path(url.pathname);
    const c = v1 ? this.v1 : this.v2;
    const errorSchema = (value: unknown) => c.validateComponent(v1 ? 'V1ErrorResponse' : 'ErrorResponse', value).valid;
    // v2 takes `.json` on every path; v1's version report also answers without it (x-json-suffix-optional).
    const path = v1
      ? url.pathname.replace(/^\/api\/v1\/version$/, '/api/v1/version.json')
      : url.pathname.replace(/(?<=^\/api\/v2\/.+)\.json$/, '');
    const where = `${method} ${path} → ${status}`;
    const problems: string[] = [];
    let operationId: string | null = null;
    if (headers.get('cache-control') !== 'no-store') problems.push('Cache-Control is not no-store');
    if (!headers.get('x-request-id')) problems.push('no X-Request-Id');
    if ((status === 429 || status === 503) && !/^\d+$/.test(headers.get('retry-after') ?? '')) {
      problems.push('no Retry-After');
    }
    const route = c.routes.match(method, path);
    if (path === '/healthz' || path === '/readyz') {
      // The probes live outside the contract; a failing one still answers an ErrorResponse.
      if (status !== 200 && status !== 503) problems.push('probe answered neither 200 nor 503');
    } else if (route.kind === 'ok') {
      const operation = route.operation;
      operationId = operation.operationId;
      const declared = Object.keys(operation.object.responses ?? {});
      if (!declared.includes(String(status))) problems.push(`status ${status} is not declared for ${operationId}`);
      else if (operationId === 'downloadPushFile' && status === 200) {
        if (!/^attachment;.*filename\*=UTF-8''/.test(headers.get('content-disposition') ?? '')) {
          problems.push('no attachment Content-Disposition');
        }
      } else {
        const violations = c.checkResponse(
          operation.operationId,
          { status, headers, body },
          { requiredHeaders: false },
        );
        for (const v of violations.filter((v) => v.path.startsWith('body')))
          problems.push(`${v.path.replace(/^body/, 'body ') || 'body /'} ${v.message}`);
        if (!String(headers.get('content-type')).startsWith('application/json')) problems.push('not JSON');
      }
      if (status === 200 && PAGED.includes(operationId ?? '')) {
        if (!/^\d+$/.test(headers.get('x-total-count') ?? '')) problems.push('no X-Total-Count');
        const link = headers.get('link');
        if (
          link &&
          !/^<https?:\/\/[^>]+\?page=\d+>; rel="(next|prev)"(, <https?:\/\/[^>]+\?page=\d+>; rel="(next|prev)")?$/.test(
            link,
          )
        ) {
          problems.push(`malformed Link ${link}`);
        }
      }
    } else {
      const expected = route.kind === 'no_route' ? 404 : 405;
      if (status !== expected) problems.push(`expected ${expected} for an unrouted request`);
      if (!errorSchema(body)) problems.push('body is not an ErrorResponse');
      if (status === 405 && !headers.get('allow')) problems.push('no Allow on 405');
      // v1 clients compare the text: an unknown path is `not-found`, as an unknown push (decision 20).
      if (v1 && status === 404 && (body as { error?: unknown } | null)?.error !== 'not-found')
        problems.push('v1 404 error is not "not-found"');
    }
    if (status >= 400 && !errorSchema(body)) problems.push('error body is not an ErrorResponse');
    for (const p of problems) this.violations.push(`${where}: ${p}`);
    const record = { method, path, status, operationId, headers, body };
    this.checked.push(record);
    return record;
  }

  /** A fetch that checks every response it returns (for the SDK client and raw requests alike). */
  fetch(): typeof fetch {
    return async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      const text = await response.clone().text();
      let body: unknown = text;
      if ((response.headers.get('content-type') ?? '').startsWith('application/json') && text) {
        try {
          body = JSON.parse(text);
        } catch {
          this.violations.push(`${request.method} ${request.url}: invalid JSON body`);
        }
      }
      this.check(request.method, new URL(request.url), response.status, response.headers, body);
      return response;
    };
  }
}
