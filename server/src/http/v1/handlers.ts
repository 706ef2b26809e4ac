/**
 * The v1 operations (openapi/v1): each is the v2 operation of the same name on the same push service (storage, rules,
 * audit, limits, encryption), in v1's wrappers, shapes and texts (./shapes.ts).
 */
import { ApiError, pagingHeaders, parsePage, requestedWorkspace, trimBase, validationFailed } from '@secret-push/rules';
import type { Core, RequestContext } from '../../core.js';
import type { EdgeReply, EdgeRequest } from '../api.js';
import {
  V1_CREATES,
  V1_TEXT,
  v1AuditEntry,
  v1OwnerRecord,
  v1PushInput,
  v1Record,
  v1Retrieval,
  type V1Create,
} from './shapes.js';
import { storageFields } from '../../push/storage-quota.js';

/** `api_version` of the v1 report: PassPushPosh uses an instance only above 1.0 (decision 21). */
const V1_API_VERSION = '1.5';

type V1Handler = (request: EdgeRequest) => Promise<EdgeReply>;

/** Runs `call`, answering the refusals listed in `texts` (by code) with v1's text for them. */
async function withTexts<T>(call: () => Promise<T>, texts: Partial<Record<ApiError['code'], string>>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const text = error instanceof ApiError ? texts[error.code] : undefined;
    if (text === undefined) throw error;
    throw new ApiError((error as ApiError).code, text, (error as ApiError).details);
  }
}

/**
 * A create refused on `client_encryption` can only be the instance requiring end-to-end encryption (v1 bodies cannot
 * carry a marker): v2's text points at a report field v1 clients never read, so v1's says what to do instead.
 */
async function v1Refusals<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const fields = error instanceof ApiError && error.code === 'validation_failed' ? error.details.fields : undefined;
    if (!fields?.client_encryption) throw error;
    throw validationFailed({ ...fields, client_encryption: [V1_TEXT.encryptionRequired] });
  }
}

export function v1Handlers(core: Core): Record<string, V1Handler> {
  const baseOf = (ctx: RequestContext) => trimBase(core.settings.publicBaseUrl ?? ctx.baseUrl);
  const create =
    (what: V1Create): V1Handler =>
    async ({ body, ctx }) => {
      // The v2 schema and rules decide (422 names the field as v2 does); only the wrapper and the value forms are v1's.
      // The workspace, wherever pwpush-cli ≤ 0.13-style and form clients put it (beside or inside the wrapper).
      const fields = body as Record<string, unknown>;
      const workspaceId = requestedWorkspace(fields, fields[what.wrapper] as Record<string, unknown> | undefined);
      const push = await v1Refusals(() => core.pushes.create(v1PushInput(body, what), ctx, { workspaceId }));
      return {
        status: 201,
        body: v1OwnerRecord(push, baseOf(ctx)),
        ...(push.storage ? { headers: storageFields(push.storage) } : {}),
      };
    };
  const list =
    (state: 'active' | 'expired'): V1Handler =>
    async ({ params, query, ctx }) => {
      const page = await core.pushes.list(state, parsePage(query.page), ctx);
      const url = `${ctx.baseUrl}/${params.prefix}/${state}.json`;
      return {
        status: 200,
        body: page.items.map((p) => v1OwnerRecord(p, baseOf(ctx))),
        headers: pagingHeaders(url, page.page, page.total),
      };
    };

  return {
    getVersionV1: async () => {
      const { application_version, edition } = core.version();
      return { status: 200, body: { application_version, api_version: V1_API_VERSION, edition } };
    },
    createPasswordV1: create(V1_CREATES.createPasswordV1!),
    createFilePushV1: create(V1_CREATES.createFilePushV1!),
    createUrlPushV1: create(V1_CREATES.createUrlPushV1!),

    getPushV1: async ({ params, query, headers, ctx }) => {
      // X-Passphrase wins when both are sent: it stays out of access logs.
      const passphrase = headers['x-passphrase'] ?? query.passphrase;
      // v1 records cannot say that a payload is an envelope: an encrypted push is refused (409), nothing counted.
      const push = await core.pushes.retrieve(params.url_token!, passphrase, ctx, { plaintextOnly: true });
      return { status: 200, body: v1Retrieval(push, baseOf(ctx)) };
    },

    // v1's preview is the link alone (V1Preview): v2's may carry more (client_encryption).
    previewPushV1: async ({ params, ctx }) => ({
      status: 200,
      body: { url: (await core.pushes.preview(params.url_token!, ctx)).url },
    }),

    // A refused delete: anonymous 401, signed-in non-owner 403, both with the reference's text (decision 9).
    expirePushV1: async ({ params, ctx }) => {
      const push = await withTexts(() => core.pushes.expire(params.url_token!, ctx), {
        authentication_required: V1_TEXT.notDeletable,
        forbidden: V1_TEXT.notDeletable,
      });
      return { status: 200, body: v1Record(push, baseOf(ctx)) };
    },

    getPushAuditV1: async ({ params, query, ctx }) => {
      const token = params.url_token!;
      const page = await withTexts(() => core.pushes.audit(token, parsePage(query.page), ctx), {
        forbidden: V1_TEXT.notYours,
      });
      const url = `${ctx.baseUrl}/${params.prefix}/${encodeURIComponent(token)}/audit.json`;
      return {
        status: 200,
        body: { views: page.items.map(v1AuditEntry) },
        headers: pagingHeaders(url, page.page, page.total),
      };
    },

    listActivePushesV1: list('active'),
    listExpiredPushesV1: list('expired'),
  };
}
