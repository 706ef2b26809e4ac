/**
 * The hand-written facade over the generated client: one method per operation, typed errors, timeouts and
 * abort signals, paging, and bounded retries of the operations that are safe to repeat.
 */
import { type Client, createClient } from './generated/client/index.js';
import type { Auth } from './generated/core/auth.gen.js';
import {
  createApiKey as genCreateApiKey,
  createPush as genCreatePush,
  downloadPushFile as genDownloadPushFile,
  expirePush as genExpirePush,
  getPush as genGetPush,
  getPushAudit as genGetPushAudit,
  getVersion as genGetVersion,
  listActivePushes as genListActivePushes,
  listApiKeys as genListApiKeys,
  listExpiredPushes as genListExpiredPushes,
  notifyEmails as genNotifyEmails,
  requestAccessCode as genRequestAccessCode,
  previewPush as genPreviewPush,
  revokeApiKey as genRevokeApiKey,
} from './generated/sdk.gen.js';
import type {
  ApiKey,
  ApiKeyCreated,
  ApiKeyInput,
  ApiKeyList,
  AuditEntry,
  NotifyEmailsResponse,
  AccessCodeSent,
  PreviewResponse,
  Push,
  PushFile,
  PushInput,
  PushOwner,
  PushRetrieval,
  VersionReport,
} from './generated/types.gen.js';
import { importKey } from './e2e/envelope.js';
import { buildShareLink, parseShareLink } from './e2e/link.js';
import {
  isEndToEnd,
  isOpenedFile,
  isSealedFile,
  isSupportedScheme,
  markSealed,
  openFile,
  openPush,
  type SealedPush,
  sealPush,
} from './e2e/seal.js';
import { MissingKeyError, UnsupportedEncryptionError } from './errors.js';
import { type CreatePushParams, toFileUpload } from './files.js';
import { iteratePages, type Page, pageFromResponse } from './pagination.js';
import type { PagedList, RequestOptions } from './calls.js';
import { formCanCarry, multipartBody } from './upload.js';
import { createSender, type Send } from './send.js';
import { type RequestMethods, requestMethods } from './requests.js';
import { type WebhookMethods, webhookMethods } from './webhook-methods.js';
import { type WorkspaceMethods, workspaceMethods } from './workspace-methods.js';

export interface SecretPushClientOptions {
  /** The installation's origin, e.g. `https://pwpush.example.org` (without `/api/v2`). */
  baseUrl: string;
  /** API token (`Authorization: Bearer …`). Omit for anonymous use. */
  token?: string | undefined;
  /** With `token`: send the legacy pair `X-User-Email` + `X-User-Token` instead of a bearer token. */
  email?: string | undefined;
  /** A fetch implementation; defaults to `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
  /** Per attempt, in milliseconds; default 30,000. `0` disables the timer. */
  timeoutMs?: number | undefined;
  /** Sent as `User-Agent` (browsers may ignore it). */
  userAgent?: string | undefined;
  /** Retries of the safe operations on 429/503; default 2. `0` turns retries off. */
  maxRetries?: number | undefined;
  /** The longest wait before a retry; a longer `Retry-After` is not waited for (the error is thrown). Default 10,000. */
  maxRetryWaitMs?: number | undefined;
}

export interface RetrieveLinkOptions extends RequestOptions {
  /** Sent in the `X-Passphrase` header, never in the query string. */
  passphrase?: string | undefined;
  /**
   * For a push only some people may open (`recipient_emails`): the one-time code `requestAccessCode` had emailed,
   * sent in the `X-Access-Code` header. Used up by this retrieval.
   */
  accessCode?: string | undefined;
}

export interface RetrieveOptions extends RetrieveLinkOptions {
  /**
   * The key of an end-to-end encrypted push (the `k` of its link's fragment, or a CryptoKey). Needed to open such
   * a push; given for an ordinary push, the retrieval is refused (`DecryptionError`, `not_encrypted`).
   */
  key?: string | CryptoKey | undefined;
}

export interface CreatePushOptions extends RequestOptions {
  /**
   * Encrypt the payload, the file names and the file bytes here, with a new random key that only the returned
   * `shareLink` carries (in its fragment); the server stores envelopes it cannot open. Default false.
   */
  endToEnd?: boolean | undefined;
  /**
   * The Idempotency-Key sent with the create (default: a new random UUID per call). The server answers a repeat of
   * the same key and body with the push the first request made, so the client retries a create safely; pass your own
   * key to make a create you repeat later (another process, after a crash) safe too.
   */
  idempotencyKey?: string | undefined;
}

/**
 * A new random Idempotency-Key (a UUID v4). WebCrypto's where there is one (browsers, Node ≥ 19, Node 18 with
 * `--experimental-global-webcrypto`); Node 18 without it has no global `crypto`, and a key only has to be unique
 * among one caller's creates, not secret: Math.random's 122 bits then.
 */
function newIdempotencyKey(): string {
  const webCrypto = globalThis.crypto as Crypto | undefined;
  if (typeof webCrypto?.randomUUID === 'function') return webCrypto.randomUUID();
  const bytes = new Uint8Array(16);
  if (typeof webCrypto?.getRandomValues === 'function') webCrypto.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The created push (owner view) and the link to give the recipient. */
export type CreatedPush = PushOwner & {
  /**
   * The link to share: `html_url`, plus `#k=<key>` for an end-to-end encrypted push. Not enumerable, so logging
   * or serialising the record never writes the key (read it explicitly).
   */
  readonly shareLink: string;
};

/** `notifyEmails`' recipients (a list, or the comma-separated text the API takes) and the message's language. */
export interface NotifyEmailsParams {
  to: string | readonly string[];
  /** `en`, `de`, `es`, `fr`, … (others are written in English); default `en`. */
  locale?: string | null | undefined;
}

/** `requestAccessCode`'s options: `locale`, the email's language, sent as `Accept-Language`. */
export interface AccessCodeOptions extends RequestOptions {
  locale?: string | undefined;
}

export interface SecretPushClient extends RequestMethods, WebhookMethods, WorkspaceMethods {
  /**
   * Creates a push (201); with `{ endToEnd: true }` encrypts it here first (after one look at the version report,
   * per client, that the instance accepts the scheme). The result's `shareLink` is the link to give the
   * recipient. Sent with an Idempotency-Key, so it is retried on a network error, a timeout, 409, 429 and 503 with
   * the same key: a retry never makes a second push.
   */
  createPush(params: CreatePushParams, options?: CreatePushOptions): Promise<CreatedPush>;
  /**
   * Retrieves a push: counts as a view. Never retried automatically. An end-to-end encrypted push is opened with
   * `options.key` (plaintext payload, real file names); without a key it throws `MissingKeyError`, whose `body`
   * is the record as retrieved (envelopes), so the view is not lost.
   */
  retrievePush(urlToken: string, options?: RetrieveOptions): Promise<PushRetrieval>;
  /**
   * Retrieves the push a share link points to (`{base}/p/<token>[/r][#k=<key>]`; only its path and fragment are
   * read, the request goes to the client's `baseUrl`): counts as a view. With a key in the fragment the push is
   * opened (it must be end-to-end encrypted). Without one, a preview (no view) first checks that the push is not
   * encrypted, so a link that lost its key throws `MissingKeyError` without spending a view. The key is never
   * sent.
   */
  retrieveLink(link: string, options?: RetrieveLinkOptions): Promise<PushRetrieval>;
  /** The shareable link, without a view. */
  previewPush(urlToken: string, options?: RequestOptions): Promise<PreviewResponse>;
  /** Expires a push now (owner, or anyone when `deletable_by_viewer`). */
  expirePush(urlToken: string, options?: RequestOptions): Promise<Push>;
  /** The push's audit log, oldest first, over all pages; `audit.page(urlToken, n)` reads one page. */
  audit: PagedList<AuditEntry, [urlToken: string]>;
  /**
   * Emails the push's link to more recipients (the owner only; at most 5 per push in all). Needs
   * `features.pushes.email_auto_dispatch`. The delivery shows in the audit log (`creation_email_send`,
   * `notify_by_email.status`). Not retried: a repeat would queue the recipients again. To email on create, give
   * `notify_emails_to` (and `notify_emails_to_locale`) to `createPush`.
   */
  notifyEmails(urlToken: string, params: NotifyEmailsParams, options?: RequestOptions): Promise<NotifyEmailsResponse>;
  /**
   * The first step of opening a push for specific people: emails a one-time code to `email` when it is one of the
   * push's `recipient_emails` (the same answer otherwise); then `retrievePush(urlToken, { accessCode })`. Not
   * retried: each call counts against the push's and the caller's limits. `options.locale` (`de`, `pt-BR`, or a whole
   * `Accept-Language` value) is the language of the email; English without one.
   */
  requestAccessCode(urlToken: string, email: string, options?: AccessCodeOptions): Promise<AccessCodeSent>;
  /** The caller's active pushes, newest first, over all pages; `activePushes.page(n)` reads one page. */
  activePushes: PagedList<PushOwner>;
  /** The caller's expired pushes, newest first, over all pages; `expiredPushes.page(n)` reads one page. */
  expiredPushes: PagedList<PushOwner>;
  /** The instance's version and features. */
  version(options?: RequestOptions): Promise<VersionReport>;
  /**
   * The bytes of a retrieved file, through its signed link (valid 5 minutes). Does not count as a view. A file of
   * an opened end-to-end encrypted push (from `retrieveLink`, or `retrievePush` with a key; the file object, a
   * copy of it, or its `url`) is decrypted, and its `filename` is already the real name; one of an encrypted push
   * retrieved without a key throws `MissingKeyError`. The link of a push retrieved by other means downloads as is.
   */
  downloadFile(file: PushFile | string, options?: RequestOptions): Promise<Uint8Array>;
  /**
   * Makes an API key of the caller's account with these scopes (and an optional `expires_at`); the result's `token`
   * is shown this once. A key may grant only scopes it holds. Not retried automatically (a retry could make a
   * second key). With `workspace_id`, a key of that workspace (its owner and admins only), acting for it.
   */
  createApiKey(input: ApiKeyInput, options?: RequestOptions): Promise<ApiKeyCreated>;
  /**
   * The caller's personal API keys, newest first, never their tokens; with `workspaceId`, that workspace's keys,
   * whoever made them (for its owner and admins, and its keys).
   */
  listApiKeys(options?: RequestOptions & { workspaceId?: number }): Promise<ApiKey[]>;
  /** Revokes one of the caller's keys at once; answers the key as it was. */
  revokeApiKey(id: string, options?: RequestOptions): Promise<ApiKey>;
  /** The generated hey-api client underneath (the facade has a method for every operation of the contract). */
  readonly raw: Client;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_MAX_RETRY_WAIT_MS = 10_000;
const DOWNLOAD_PATH = /\/api\/v2\/pushes\/([^/?#]+)\/files\/([^/?#]+)$/;

async function plainPushInput(params: CreatePushParams): Promise<PushInput> {
  const { files, ...rest } = params;
  const push: PushInput = { ...rest };
  if (files !== undefined) push.files = await Promise.all(files.map(toFileUpload));
  return push;
}

/** The created record with its `shareLink`; for an encrypted push, checks that the server kept it as one. */
function withShareLink(data: PushOwner, sealed: SealedPush | undefined): CreatedPush {
  if (sealed && !isSupportedScheme(data.client_encryption)) {
    // The server stored the envelopes as an ordinary push: it does not know the feature.
    throw new UnsupportedEncryptionError(
      'the server did not keep the push as end-to-end encrypted (it does not support client_encryption)',
      {
        code: 'not_supported_by_server',
        body: data,
      },
    );
  }
  const shareLink = sealed ? buildShareLink(data.html_url, sealed.key) : data.html_url;
  // Not enumerable: a logged or serialised record never carries the key.
  return Object.defineProperty(data, 'shareLink', { value: shareLink, enumerable: false }) as CreatedPush;
}

/** Throws unless the version report says the instance accepts this SDK's scheme (so nothing is created in vain). */
function requireEncryptionSupport(report: VersionReport): void {
  const feature = report.features.pushes.client_encryption;
  if (feature && !feature.enabled) {
    throw new UnsupportedEncryptionError('end-to-end encrypted pushes are disabled on this instance', {
      code: 'disabled_on_instance',
    });
  }
  if (!feature || !feature.schemes.some(isSupportedScheme)) {
    throw new UnsupportedEncryptionError(
      'the server does not support end-to-end encrypted pushes (aes-256-gcm, version 1)',
      {
        code: 'not_supported_by_server',
      },
    );
  }
}

/** Opens a retrieved record with the key; without one, refuses an encrypted record instead of handing out envelopes. */
async function afterRetrieval(data: PushRetrieval, key: CryptoKey | undefined): Promise<PushRetrieval> {
  if (key !== undefined) return openPush(data, key);
  if (isEndToEnd(data)) {
    markSealed(data);
    throw new MissingKeyError('the push is end-to-end encrypted and no key was given (the link has no #k=…)', {
      code: 'missing_key',
      body: data,
    });
  }
  return data;
}

/** The generated client for `baseUrl`: JSON accepted, the caller's User-Agent, one of the two credential styles. */
function rawClient(options: SecretPushClientOptions, baseUrl: string) {
  const { token, email } = options;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.userAgent) headers['User-Agent'] = options.userAgent;
  return createClient({
    baseUrl,
    headers,
    // Resolve at call time so a replaced globalThis.fetch (msw, test doubles) is honoured.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    // The generated operations list the bearer scheme and the legacy pair; send one of them.
    auth: (scheme: Auth) => {
      if (!token) return undefined;
      if (scheme.scheme === 'bearer') return email ? undefined : token;
      if (scheme.name === 'X-User-Email') return email || undefined;
      if (scheme.name === 'X-User-Token') return email ? token : undefined;
      return undefined;
    },
  });
}

export function createSecretPushClient(options: SecretPushClientOptions): SecretPushClient {
  if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) {
    throw new TypeError('createSecretPushClient: baseUrl must be an absolute http(s) URL');
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v2$/, '');
  const defaultTimeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = Math.max(0, options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const maxRetryWaitMs = Math.max(0, options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS);
  const raw = rawClient(options, baseUrl);

  const send = createSender(raw, { defaultTimeout, maxRetries, maxRetryWaitMs });

  function listPage(gen: typeof genListActivePushes) {
    return async (page: number, opts?: RequestOptions): Promise<Page<PushOwner>> => {
      const { data, response } = await send<PushOwner[]>((x) => gen({ ...x, query: { page } }), opts, 'safe');
      return pageFromResponse(data, page, response.headers, baseUrl);
    };
  }

  function pagedList(
    fetchPage: (page: number, opts?: RequestOptions) => Promise<Page<PushOwner>>,
  ): PagedList<PushOwner> {
    const list = (opts?: RequestOptions) => iteratePages((page) => fetchPage(page, opts));
    return Object.assign(list, { page: fetchPage });
  }

  const auditPage = async (urlToken: string, page: number, opts?: RequestOptions): Promise<Page<AuditEntry>> => {
    const { data, response } = await send<{ logs: AuditEntry[] }>(
      (x) => genGetPushAudit({ ...x, path: { url_token: urlToken }, query: { page } }),
      opts,
      'safe',
    );
    return pageFromResponse(data.logs, page, response.headers, baseUrl);
  };
  const audit: PagedList<AuditEntry, [urlToken: string]> = Object.assign(
    (urlToken: string, opts?: RequestOptions) => iteratePages((page) => auditPage(urlToken, page, opts)),
    { page: auditPage },
  );

  // Asked once per client, before the first encrypted create; a failed check is asked again next time.
  let encryptionSupported: Promise<void> | undefined;
  function checkEncryptionSupport(opts: RequestOptions | undefined): Promise<void> {
    encryptionSupported ??= send<VersionReport>((x) => genGetVersion(x), opts, 'safe').then(({ data }) =>
      requireEncryptionSupport(data),
    );
    encryptionSupported.catch(() => (encryptionSupported = undefined));
    return encryptionSupported;
  }

  async function retrieve(urlToken: string, opts: RetrieveOptions | undefined): Promise<PushRetrieval> {
    const headers = retrievalHeaders(opts?.passphrase, opts?.accessCode);
    // A malformed key fails here, before the request that would spend a view.
    const key = opts?.key === undefined ? undefined : await importKey(opts.key);
    const { data } = await send<PushRetrieval>(
      (x) => genGetPush({ ...x, path: { url_token: urlToken }, headers }),
      opts,
      'never',
    );
    return afterRetrieval(data, key);
  }

  return {
    raw,
    async createPush(params, opts) {
      const sealed = opts?.endToEnd ? await sealPush(params) : undefined;
      if (sealed) await checkEncryptionSupport(opts);
      // One key for every attempt of this create: the server answers a repeat with the push the first one made.
      const key = opts?.idempotencyKey ?? newIdempotencyKey();
      const { files, ...rest } = params;
      if (!sealed && files !== undefined && files.length > 0 && formCanCarry(rest)) {
        // Files as multipart parts (./upload.ts), encoded once: every attempt sends the same bytes under the key.
        const form = await multipartBody(rest, files);
        const headers = { 'Content-Type': form.contentType, 'Idempotency-Key': key };
        const { data } = await send<PushOwner>(
          (x) => genCreatePush({ ...x, body: form.bytes as never, bodySerializer: null, headers }),
          opts,
          'idempotent',
        );
        return withShareLink(data, undefined);
      }
      const push = sealed ? sealed.push : await plainPushInput(params);
      const headers = { 'Idempotency-Key': key };
      const { data } = await send<PushOwner>(
        (x) => genCreatePush({ ...x, body: { push }, headers }),
        opts,
        'idempotent',
      );
      return withShareLink(data, sealed);
    },
    retrievePush: retrieve,
    async retrieveLink(link, opts) {
      const { urlToken, key } = parseShareLink(link);
      if (key === null) {
        const preview = await send<PreviewResponse>(
          (x) => genPreviewPush({ ...x, path: { url_token: urlToken } }),
          opts,
          'safe',
        );
        if (isEndToEnd(preview.data)) {
          throw new MissingKeyError(
            'the push is end-to-end encrypted and the link has no key (#k=…); no view was spent',
            { code: 'missing_key' },
          );
        }
      }
      return retrieve(urlToken, { ...opts, key: key ?? undefined });
    },
    async previewPush(urlToken, opts) {
      const { data } = await send<PreviewResponse>(
        (x) => genPreviewPush({ ...x, path: { url_token: urlToken } }),
        opts,
        'safe',
      );
      return data;
    },
    async expirePush(urlToken, opts) {
      // Not retried (not a safe operation): after a lost answer a repeat would only report the already-expired record.
      const { data } = await send<Push>((x) => genExpirePush({ ...x, path: { url_token: urlToken } }), opts, 'never');
      return data;
    },
    audit,
    async notifyEmails(urlToken, params, opts) {
      const body = {
        notify_emails_to: typeof params.to === 'string' ? params.to : params.to.join(','),
        ...(params.locale !== undefined ? { notify_emails_to_locale: params.locale } : {}),
      };
      const { data } = await send<NotifyEmailsResponse>(
        (x) => genNotifyEmails({ ...x, path: { url_token: urlToken }, body }),
        opts,
        'never',
      );
      return data;
    },
    activePushes: pagedList(listPage(genListActivePushes)),
    expiredPushes: pagedList(listPage(genListExpiredPushes as typeof genListActivePushes)),
    async version(opts) {
      const { data } = await send<VersionReport>((x) => genGetVersion(x), opts, 'safe');
      return data;
    },
    downloadFile: (file, opts) => download(send, baseUrl, file, opts),
    ...requestMethods(send, baseUrl, retrieve),
    ...webhookMethods(send, baseUrl),
    ...apiKeyMethods(send),
    ...accessCodeMethods(send),
    ...workspaceMethods(send, baseUrl),
  };
}

/** The API-key operations of the facade. */
/** The headers of a retrieval: the passphrase and an access code, each when given. */
function retrievalHeaders(passphrase: string | undefined, accessCode: string | undefined): Record<string, string> {
  return {
    ...(passphrase !== undefined ? { 'X-Passphrase': passphrase } : {}),
    ...(accessCode !== undefined ? { 'X-Access-Code': accessCode } : {}),
  };
}

/** Who may open a push (issue 42): the code step before `retrievePush(urlToken, { accessCode })`. */
function accessCodeMethods(send: Send): Pick<SecretPushClient, 'requestAccessCode'> {
  return {
    async requestAccessCode(urlToken: string, email: string, opts?: AccessCodeOptions) {
      const headers = opts?.locale ? { 'Accept-Language': opts.locale } : undefined;
      const { data } = await send<AccessCodeSent>(
        (x) =>
          genRequestAccessCode({ ...x, path: { url_token: urlToken }, body: { email }, ...(headers && { headers }) }),
        opts,
        'never',
      );
      return data;
    },
  };
}

function apiKeyMethods(send: Send): Pick<SecretPushClient, 'createApiKey' | 'listApiKeys' | 'revokeApiKey'> {
  return {
    async createApiKey(input: ApiKeyInput, opts?: RequestOptions) {
      const { data } = await send<ApiKeyCreated>(
        (x) => genCreateApiKey({ ...x, body: { api_key: input } }),
        opts,
        'never',
      );
      return data;
    },
    async listApiKeys(opts?: RequestOptions & { workspaceId?: number }) {
      const { workspaceId, ...rest } = opts ?? {};
      const query = workspaceId === undefined ? undefined : { workspace_id: String(workspaceId) };
      const { data } = await send<ApiKeyList>(
        (x) => genListApiKeys({ ...x, ...(query ? { query } : {}) }),
        rest,
        'safe',
      );
      return data.api_keys;
    },
    async revokeApiKey(id: string, opts?: RequestOptions) {
      // Retried on 429/503 like a read: revoking twice revokes once (a repeat after a lost answer is a 404).
      const { data } = await send<ApiKey>((x) => genRevokeApiKey({ ...x, path: { id } }), opts, 'safe');
      return data;
    },
  };
}

/**
 * `downloadFile`: the signed link's path and token, sent to the client's own `baseUrl`; a file of an opened
 * end-to-end push is decrypted, one of a push retrieved without its key refused.
 */
async function download(
  send: Send,
  baseUrl: string,
  file: Parameters<SecretPushClient['downloadFile']>[0],
  opts: RequestOptions | undefined,
): ReturnType<SecretPushClient['downloadFile']> {
  if (isSealedFile(file)) {
    throw new MissingKeyError('this file is end-to-end encrypted and its push was retrieved without a key', {
      code: 'missing_key',
    });
  }
  const link = new URL(typeof file === 'string' ? file : file.url, baseUrl);
  const match = DOWNLOAD_PATH.exec(link.pathname);
  const token = link.searchParams.get('token');
  if (!match || !token) throw new TypeError(`downloadFile: not a signed download link of this API: ${link.pathname}`);
  const [, urlToken, fileId] = match as unknown as [string, string, string];
  // Sent to the client's own baseUrl: the link's host is the instance's public URL, which a server-side
  // caller may not reach (the path and the signed token are what identify the file).
  const { data } = await send<ArrayBuffer>(
    (x) =>
      genDownloadPushFile({
        ...x,
        path: { url_token: decodeURIComponent(urlToken), file_id: decodeURIComponent(fileId) },
        query: { token },
        parseAs: 'arrayBuffer',
      }),
    opts,
    'safe',
  );
  const bytes = new Uint8Array(data);
  return isOpenedFile(file) ? openFile(file, bytes) : bytes;
}
