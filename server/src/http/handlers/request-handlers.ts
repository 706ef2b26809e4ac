/** The request operations (issue 24): thin, typed from the generated operation types (../operations.ts). */
import { contract } from '@secret-push/contract';
import type { RequestAnswerInput, RequestInput } from '@secret-push/sdk/generated';
import { listedWorkspace, pagingHeaders, parsePage, requestedWorkspace } from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
import { requestLimitFields } from '../../request/request-limits.js';
import type { Handlers } from '../operations.js';

/** The properties an input schema declares, read from the contract; anything else a client sends is ignored. */
function declared<T>(schema: string): (raw: unknown) => T {
  const fields = Object.keys(contract().schema<{ properties: object }>(schema).properties);
  return (raw) => {
    const input: Record<string, unknown> = {};
    const from = (raw ?? {}) as Record<string, unknown>;
    for (const field of fields) if (from[field] !== undefined) input[field] = from[field];
    return input as T;
  };
}

type RequestHandlers = Pick<
  Handlers,
  | 'createRequest'
  | 'getRequest'
  | 'previewRequest'
  | 'respondToRequest'
  | 'revokeRequest'
  | 'getRequestAudit'
  | 'listActiveRequests'
  | 'listExpiredRequests'
>;

export function requestHandlers(core: Core): RequestHandlers {
  const requestInput = declared<RequestInput>('RequestInput');
  const answerInput = declared<RequestAnswerInput>('RequestAnswerInput');
  const list =
    (state: 'active' | 'expired') =>
    async ({ query, ctx }: { query: { page?: string; workspace_id?: string }; ctx: RequestContext }) => {
      const page = await core.requests.list(state, parsePage(query.page), ctx, listedWorkspace(query));
      return {
        status: 200 as const,
        body: page.items,
        headers: pagingHeaders(`${ctx.baseUrl}/api/v2/requests/${state}`, page.page, page.total),
      };
    };
  return {
    createRequest: async ({ body, ctx }) => {
      const workspace = requestedWorkspace(body.request as Record<string, unknown>);
      const { limits, ...created } = await core.requests.create(requestInput(body.request), ctx, workspace);
      const headers = limits ? requestLimitFields(limits) : {};
      return { status: 201, body: created, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
    },
    getRequest: async ({ params, ctx }) => ({ status: 200, body: await core.requests.get(params.url_token, ctx) }),
    previewRequest: async ({ params, ctx }) => ({
      status: 200,
      body: await core.requests.preview(params.url_token, ctx),
    }),
    respondToRequest: async ({ params, body, ctx }) => {
      const answer = { push: answerInput(body.push), ...(body.sealed_key ? { sealed_key: body.sealed_key } : {}) };
      return { status: 201, body: await core.requests.respond(params.url_token, answer, ctx) };
    },
    revokeRequest: async ({ params, ctx }) => ({
      status: 200,
      body: await core.requests.revoke(params.url_token, ctx),
    }),
    getRequestAudit: async ({ params, query, ctx }) => {
      const page = await core.requests.audit(params.url_token, parsePage(query.page), ctx);
      const url = `${ctx.baseUrl}/api/v2/requests/${encodeURIComponent(params.url_token)}/audit`;
      return { status: 200, body: { logs: page.items }, headers: pagingHeaders(url, page.page, page.total) };
    },
    listActiveRequests: list('active'),
    listExpiredRequests: list('expired'),
  };
}
