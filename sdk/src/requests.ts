/**
 * The request methods of the client (issue 24): ask someone to send you a secret, answer such a request (sealed to the
 * requester's key when the request asks for it), follow it, and open its answer. Built on the client's one sender
 * (timeouts, typed errors, retries of the safe calls) in ./client.ts.
 */
import {
  createRequest as genCreateRequest,
  getRequest as genGetRequest,
  getRequestAudit as genGetRequestAudit,
  listActiveRequests as genListActiveRequests,
  listExpiredRequests as genListExpiredRequests,
  previewRequest as genPreviewRequest,
  respondToRequest as genRespondToRequest,
  revokeRequest as genRevokeRequest,
} from './generated/sdk.gen.js';
import type {
  PushRetrieval,
  RequestAnswerInput,
  RequestAuditEntry,
  RequestInput,
  RequestOwner,
  RequestPreview,
  RequestReceipt,
  RequestRecord,
  RequestView,
} from './generated/types.gen.js';
import { base64UrlToBytes, bytesToBase64Url } from './e2e/encoding.js';
import { openContentKey, sealContentKey } from './e2e/request-seal.js';
import { sealPush } from './e2e/seal.js';
import { MissingKeyError, SecretPushError } from './errors.js';
import { type CreatePushParams, toFileUpload } from './files.js';
import { iteratePages, type Page, pageFromResponse } from './pagination.js';
import type { GeneratedCall, PagedList, RequestOptions, Retry } from './calls.js';

type Send = <T>(
  call: GeneratedCall,
  opts: RequestOptions | undefined,
  retry: Retry,
) => Promise<{ data: T; response: Response }>;

/** What an answer holds: the secret of a push create (its expiry settings come from the request). */
export type RequestAnswerParams = Pick<CreatePushParams, 'payload' | 'files' | 'kind' | 'passphrase'>;

export interface OpenResponseOptions extends RequestOptions {
  /** The key pair whose public half the request was created with (needed for a sealed answer). */
  keyPair?: CryptoKeyPair | undefined;
  /** The passphrase the responder set, if any. */
  passphrase?: string | undefined;
}

export interface RequestMethods {
  /** Creates a request (201, owner's view); give `public_key` (from `generateRequestKeyPair`) to ask for a sealed answer. */
  createRequest(input: RequestInput, options?: RequestOptions): Promise<RequestOwner>;
  /** The requester's full view, or (anyone else) the responder's. Reading changes nothing. */
  getRequest(urlToken: string, options?: RequestOptions): Promise<RequestRecord>;
  /** `{ url }`: the answer page to send to the responder. */
  previewRequest(urlToken: string, options?: RequestOptions): Promise<RequestPreview>;
  /**
   * Answers a request, once. When the request asks for a sealed answer the secret is encrypted here and its key
   * sealed to the requester's public key before anything is sent. Never retried (a second answer is refused).
   */
  respondToRequest(urlToken: string, answer: RequestAnswerParams, options?: RequestOptions): Promise<RequestReceipt>;
  /** Revokes a pending request (the requester only). */
  revokeRequest(urlToken: string, options?: RequestOptions): Promise<RequestOwner>;
  /**
   * Retrieves the answer of a fulfilled request (the requester only): the push it made, opened with `keyPair` when the
   * answer is sealed. Counts as a view of that push, and moves the request to `collected`.
   */
  openResponse(urlToken: string, options?: OpenResponseOptions): Promise<PushRetrieval>;
  /** The request's audit log, oldest first, over all pages. */
  requestAudit: PagedList<RequestAuditEntry, [urlToken: string]>;
  /**
   * The caller's pending and fulfilled requests, newest first; with `workspaceId`, that workspace's (every one for its
   * owner, admins and auditors, a member's own for a member). A request of a workspace: `createRequest({ …,
   * workspace_id })`.
   */
  activeRequests: PagedList<RequestOwner, [], WorkspaceListOptions>;
  /** The caller's collected, expired and revoked requests, newest first; `workspaceId` as `activeRequests`. */
  expiredRequests: PagedList<RequestOwner, [], WorkspaceListOptions>;
}

/** A list's options: with `workspaceId`, that workspace's requests instead of the caller's personal ones. */
type WorkspaceListOptions = RequestOptions & { workspaceId?: number };

/** The push retrieval the client already has (with its key handling). */
type Retrieve = (
  urlToken: string,
  options: (RequestOptions & { passphrase?: string | undefined; key?: string | undefined }) | undefined,
) => Promise<PushRetrieval>;

async function plainAnswer(answer: RequestAnswerParams): Promise<RequestAnswerInput> {
  const { files, ...rest } = answer;
  return { ...rest, ...(files !== undefined ? { files: await Promise.all(files.map(toFileUpload)) } : {}) };
}

/** The answer sealed to the request's key: the push's envelopes and the sealed content key. */
async function sealedAnswer(
  view: RequestView,
  answer: RequestAnswerParams,
): Promise<{ push: RequestAnswerInput; sealed_key: string }> {
  const sealed = await sealPush(answer);
  const { payload, files, kind, passphrase, client_encryption } = sealed.push;
  const push: RequestAnswerInput = { kind, client_encryption };
  if (payload !== undefined) push.payload = payload;
  if (files !== undefined) push.files = files;
  if (passphrase !== undefined) push.passphrase = passphrase;
  const sealedKey = await sealContentKey(view.sealing!.public_key, view.url_token, base64UrlToBytes(sealed.key)!);
  return { push, sealed_key: sealedKey };
}

export function requestMethods(send: Send, baseUrl: string, retrieve: Retrieve): RequestMethods {
  const get = async (urlToken: string, opts?: RequestOptions): Promise<RequestRecord> =>
    (await send<RequestRecord>((x) => genGetRequest({ ...x, path: { url_token: urlToken } }), opts, 'safe')).data;

  function listOf(gen: typeof genListActiveRequests): PagedList<RequestOwner, [], WorkspaceListOptions> {
    const page = async (n: number, opts?: WorkspaceListOptions): Promise<Page<RequestOwner>> => {
      const { workspaceId, ...rest } = opts ?? {};
      const query = { page: n, ...(workspaceId === undefined ? {} : { workspace_id: String(workspaceId) }) };
      const { data, response } = await send<RequestOwner[]>((x) => gen({ ...x, query }), rest, 'safe');
      return pageFromResponse(data, n, response.headers, baseUrl);
    };
    return Object.assign((opts?: WorkspaceListOptions) => iteratePages((n) => page(n, opts)), { page });
  }

  const auditPage = async (urlToken: string, n: number, opts?: RequestOptions): Promise<Page<RequestAuditEntry>> => {
    const { data, response } = await send<{ logs: RequestAuditEntry[] }>(
      (x) => genGetRequestAudit({ ...x, path: { url_token: urlToken }, query: { page: n } }),
      opts,
      'safe',
    );
    return pageFromResponse(data.logs, n, response.headers, baseUrl);
  };

  return {
    async createRequest(input, opts) {
      // Not retried: a retry after a lost answer would make a second request.
      return (await send<RequestOwner>((x) => genCreateRequest({ ...x, body: { request: input } }), opts, 'never'))
        .data;
    },
    getRequest: get,
    async previewRequest(urlToken, opts) {
      return (
        await send<RequestPreview>((x) => genPreviewRequest({ ...x, path: { url_token: urlToken } }), opts, 'safe')
      ).data;
    },
    async respondToRequest(urlToken, answer, opts) {
      const view = await get(urlToken, opts);
      const sealing = view.sealing;
      const body = sealing ? await sealedAnswer(view as RequestView, answer) : { push: await plainAnswer(answer) };
      const { data } = await send<RequestReceipt>(
        (x) => genRespondToRequest({ ...x, path: { url_token: urlToken }, body }),
        opts,
        'never',
      );
      return data;
    },
    async revokeRequest(urlToken, opts) {
      return (await send<RequestOwner>((x) => genRevokeRequest({ ...x, path: { url_token: urlToken } }), opts, 'never'))
        .data;
    },
    async openResponse(urlToken, opts) {
      const record = await get(urlToken, opts);
      if (record.audience !== 'owner' || !record.answer) {
        throw new SecretPushError('this request has no answer for this caller (not answered, or not yours)', {
          code: 'not_answered',
          body: record,
        });
      }
      const { answer } = record;
      let key: string | undefined;
      if (answer.sealed_key) {
        if (!opts?.keyPair)
          throw new MissingKeyError('the answer is sealed: give the key pair the request was created with', {
            code: 'missing_key',
          });
        key = bytesToBase64Url(await openContentKey(opts.keyPair, record.url_token, answer.sealed_key));
      }
      return retrieve(answer.url_token, { ...opts, key });
    },
    requestAudit: Object.assign(
      (urlToken: string, opts?: RequestOptions) => iteratePages((n) => auditPage(urlToken, n, opts)),
      { page: auditPage },
    ),
    activeRequests: listOf(genListActiveRequests),
    expiredRequests: listOf(genListExpiredRequests as typeof genListActiveRequests),
  };
}
