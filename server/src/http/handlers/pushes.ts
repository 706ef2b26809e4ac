import type { Request, Response } from 'express';
import type { Core, Page, PushInput } from '../../domain/contract.js';
import { pageOf, pathParam, queryString, routed, type OperationHandler } from './types.js';

// The fields of PushInput; anything else a client of another dialect sends is ignored.
const PUSH_FIELDS = [
  'payload',
  'files',
  'kind',
  'expire_after_days',
  'expire_after_views',
  'deletable_by_viewer',
  'retrieval_step',
  'passphrase',
  'name',
  'note',
] as const satisfies readonly (keyof PushInput)[];

function pickPushInput(raw: Record<string, unknown>): PushInput {
  const input: Record<string, unknown> = {};
  for (const field of PUSH_FIELDS) if (raw[field] !== undefined) input[field] = raw[field];
  return input as PushInput;
}

/** `Link` (rel next/prev, absolute URLs) and `X-Total-Count` for a page of a list. */
export function setPaginationHeaders(res: Response, url: string, page: Page<unknown>, maxPage = 200): void {
  res.setHeader('X-Total-Count', String(page.total));
  const lastPage = Math.min(Math.max(1, Math.ceil(page.total / page.perPage)), maxPage);
  const links: string[] = [];
  if (page.page < lastPage) links.push(`<${url}?page=${page.page + 1}>; rel="next"`);
  if (page.page > 1) links.push(`<${url}?page=${Math.min(page.page - 1, lastPage)}>; rel="prev"`);
  if (links.length > 0) res.setHeader('Link', links.join(', '));
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function pushHandlers(core: Core): Record<string, OperationHandler> {
  return {
    createPush: async (c, _req, res) => {
      const body = c.request.requestBody as { push: Record<string, unknown> };
      // openapi-backend has validated the body against the spec's PushInput: the domain applies only instance rules.
      const push = await core.pushes.create(pickPushInput(body.push), { ...routed(res).ctx, inputValidatedBySchema: true });
      res.status(201).json(push);
    },

    getPush: async (c, req, res) => {
      // The header is preferred: it stays out of access logs and browser history.
      const passphrase = header(req, 'x-passphrase') ?? queryString(c, 'passphrase');
      const push = await core.pushes.retrieve(pathParam(c, 'url_token'), passphrase, routed(res).ctx);
      res.status(200).json(push);
    },

    previewPush: async (c, _req, res) => {
      res.status(200).json(await core.pushes.preview(pathParam(c, 'url_token'), routed(res).ctx));
    },

    expirePush: async (c, _req, res) => {
      res.status(200).json(await core.pushes.expire(pathParam(c, 'url_token'), routed(res).ctx));
    },

    getPushAudit: async (c, _req, res) => {
      const token = pathParam(c, 'url_token');
      const { ctx } = routed(res);
      const page = await core.pushes.audit(token, pageOf(c), ctx);
      setPaginationHeaders(res, `${ctx.baseUrl}/api/v2/pushes/${encodeURIComponent(token)}/audit`, page);
      res.status(200).json({ logs: page.items });
    },

    listActivePushes: async (c, _req, res) => {
      const { ctx } = routed(res);
      const page = await core.pushes.list('active', pageOf(c), ctx);
      setPaginationHeaders(res, `${ctx.baseUrl}/api/v2/pushes/active`, page);
      res.status(200).json(page.items);
    },

    listExpiredPushes: async (c, _req, res) => {
      const { ctx } = routed(res);
      const page = await core.pushes.list('expired', pageOf(c), ctx);
      setPaginationHeaders(res, `${ctx.baseUrl}/api/v2/pushes/expired`, page);
      res.status(200).json(page.items);
    },
  };
}
