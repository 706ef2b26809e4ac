/** The push operations: thin, typed from the generated operation types (./../operations.ts). */
import { contract } from '@secret-push/contract';
import type { PushInput } from '@secret-push/sdk/generated';
import { listedWorkspace, pagingHeaders, parsePage, requestedWorkspace, schemaValidated } from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
import { storageFields } from '../../push/storage-quota.js';
import type { Handlers } from '../operations.js';

/** The properties `PushInput` declares, read from the contract; anything else a client of another dialect sends is ignored. */
const PUSH_FIELDS: readonly string[] = Object.keys(contract().schema<{ properties: object }>('PushInput').properties);

function pickPushInput(raw: Record<string, unknown>): PushInput {
  const input: Record<string, unknown> = {};
  for (const field of PUSH_FIELDS) if (raw[field] !== undefined) input[field] = raw[field];
  return input as PushInput;
}

type PushHandlers = Pick<
  Handlers,
  'createPush' | 'getPush' | 'previewPush' | 'expirePush' | 'getPushAudit' | 'listActivePushes' | 'listExpiredPushes'
>;

export function pushHandlers(core: Core): PushHandlers {
  const list =
    (state: 'active' | 'expired') =>
    async ({
      query,
      ctx,
    }: {
      query: { page?: string; workspace_id?: string; account_id?: string };
      ctx: RequestContext;
    }) => {
      const page = await core.pushes.list(state, parsePage(query.page), ctx, listedWorkspace(query));
      return {
        status: 200 as const,
        body: page.items,
        headers: pagingHeaders(`${ctx.baseUrl}/api/v2/pushes/${state}`, page.page, page.total),
      };
    };
  return {
    createPush: async ({ body, query, headers, ctx, bodyDigest }) => {
      // openapi-backend has validated the body against the spec's PushInput: the domain applies only instance rules.
      const input = schemaValidated(pickPushInput(body.push as Record<string, unknown>));
      const key = headers['idempotency-key'];
      const idempotency = key === undefined ? undefined : { key, fingerprint: bodyDigest ?? '' };
      // Wherever the client put it: beside `push` (Raycast, pwpush-cli), inside it, or in the query (Chrome).
      const workspaceId = requestedWorkspace(body, body.push, query);
      const { replayed, storage, ...push } = await core.pushes.createValidated(input, ctx, {
        idempotency,
        workspaceId,
      });
      const answer: Record<string, string> = {
        ...(storage ? storageFields(storage) : {}),
        ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}),
      };
      return { status: 201, body: push, ...(Object.keys(answer).length > 0 ? { headers: answer } : {}) };
    },

    getPush: async ({ params, query, headers, ctx }) => {
      // The header is preferred: it stays out of access logs and browser history.
      const passphrase = headers['x-passphrase'] ?? query.passphrase;
      const proof = { accessCode: headers['x-access-code'] };
      return { status: 200, body: await core.pushes.retrieve(params.url_token, passphrase, ctx, { proof }) };
    },

    previewPush: async ({ params, ctx }) => ({ status: 200, body: await core.pushes.preview(params.url_token, ctx) }),

    expirePush: async ({ params, ctx }) => ({ status: 200, body: await core.pushes.expire(params.url_token, ctx) }),

    getPushAudit: async ({ params, query, ctx }) => {
      const page = await core.pushes.audit(params.url_token, parsePage(query.page), ctx);
      const url = `${ctx.baseUrl}/api/v2/pushes/${encodeURIComponent(params.url_token)}/audit`;
      const body = { logs: page.items, ...(page.pushId ? { push_id: page.pushId } : {}) };
      return { status: 200, body, headers: pagingHeaders(url, page.page, page.total) };
    },

    listActivePushes: list('active'),
    listExpiredPushes: list('expired'),
  };
}
