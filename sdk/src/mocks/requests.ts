/**
 * Requests (issue 24) in the stateful mock: ask, answer once (the answer becomes a push of the requester in the
 * mock's store, with the request's settings), revoke, lists and the audit log, with the server's states, statuses and
 * codes. The expiry settings and attachments go through the shared push rules (`@secret-push/rules`) as on the server.
 */
import type {
  PushInput,
  RequestAttachment,
  RequestAuditEntry,
  RequestInput,
  RequestOwner,
  RequestRecord,
  RequestView,
} from '../generated/types.gen.js';
import {
  ApiError,
  checkPushSchema,
  durationOfSeconds,
  generatedPushSchema,
  htmlUrl,
  bytesInMemory,
  normalizePushInput,
  PAGE_SIZE,
  readNotifyRequest,
  requestedWorkspace,
  requireNotifyScope,
  SEALING_SCHEME,
  validationFailed,
} from '@secret-push/rules';
import type { ListPage, MockActor, MockStore, MockUser } from './store.js';
import type { MockWorkspaces } from './workspaces.js';

interface StoredRequest {
  record: Omit<RequestOwner, 'state' | 'html_url' | 'json_url' | 'answer' | 'closed_at'>;
  owner: MockUser;
  /** The workspace it belongs to (its answer is a push of it), or null: the requester's personal space. */
  workspaceId: number | null;
  state: RequestOwner['state'];
  answer: { urlToken: string; sealedKey: string | null } | null;
  closedAt: string | null;
  audit: RequestAuditEntry[];
  seq: number;
}

const requestNotFound = () => new ApiError('not_found', 'Request not found.');

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** `notify_emails_to` and its locale, by the pushes' rules (the server's request create does the same). */
function notifyList(
  input: RequestInput,
  errors: Record<string, string[]>,
): { recipients: string[]; locale: string | null } {
  if (!input.notify_emails_to || input.notify_emails_to.trim() === '') return { recipients: [], locale: null };
  try {
    return readNotifyRequest(input.notify_emails_to, input.notify_emails_to_locale);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    Object.assign(errors, error.details.fields);
    return { recipients: [], locale: null };
  }
}

export class MockRequests {
  private requests = new Map<string, StoredRequest>();
  private seq = 0;

  constructor(
    private readonly store: MockStore,
    private readonly workspaces: MockWorkspaces,
  ) {
    store.onRetrieved = (urlToken, actor) => {
      for (const r of this.requests.values())
        if (r.answer?.urlToken === urlToken && r.state === 'fulfilled') this.move(r, 'collected', actor);
    };
  }

  /** A deleted workspace's (deleteWorkspace): they go with it. */
  dropWorkspace(workspaceId: number): void {
    for (const [id, item] of this.requests) if (item.workspaceId === workspaceId) this.requests.delete(id);
  }

  reset(): void {
    this.requests.clear();
  }

  create(raw: Record<string, unknown>, actor: MockActor, base: string): RequestOwner {
    const owner = this.requireUser(actor);
    const input = raw as RequestInput;
    // The workspace named (or the key's), once the caller may create there (the server's rule: 403 otherwise).
    const keyWorkspace = actor.grantor?.workspaceId ?? null;
    const named = requestedWorkspace(raw) ?? keyWorkspace;
    const workspaceId = named
      ? this.workspaces.membership(named, owner.email, 'create', keyWorkspace).workspaceId
      : null;
    if (typeof input.notify_emails_to === 'string' && input.notify_emails_to.trim() !== '')
      requireNotifyScope(actor.scopes);
    const ask = typeof input.request === 'string' ? input.request : '';
    const uploads = Array.isArray(input.files) ? input.files : [];
    const errors: Record<string, string[]> = {};
    if (ask.trim() === '' && uploads.length === 0) errors.request = ['ask for something: text, a file, or both'];
    const notify = notifyList(input, errors);
    if (input.public_key && !this.store.settings.clientEncryption.enabled)
      errors.public_key = ['sealed answers need end-to-end encryption'];
    else if (input.public_key && 'd' in input.public_key)
      errors.public_key = [
        'holds a private key (d): it must never leave your client; make a new key pair and send its public half only',
      ];
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const valid = normalizePushInput(
      checkPushSchema(generatedPushSchema(), {
        kind: uploads.length > 0 ? 'file' : 'text',
        payload: ask,
        ...(uploads.length > 0 ? { files: uploads } : {}),
        ...pick(input, ['expire_after_days', 'expire_after_duration', 'expire_after_views']),
        ...pick(input, ['deletable_by_viewer', 'retrieval_step', 'name', 'note']),
      }),
      { ...this.store.settings, enableFilePushes: true, fileMaxCount: 5, fileMaxBytes: 1024 * 1024 },
    );
    let urlToken: string;
    do urlToken = `r${crypto.randomUUID().replace(/-/g, '').slice(0, 23)}`;
    while (this.requests.has(urlToken));
    const at = new Date(this.store.now());
    const files: RequestAttachment[] = valid.files.map((f) => ({
      filename: f.filename,
      content_type: f.contentType,
      size: f.bytes.length,
      content: bytesToBase64(bytesInMemory(f.bytes)),
    }));
    const stored: StoredRequest = {
      record: {
        audience: 'owner',
        url_token: urlToken,
        request_id: crypto.randomUUID(),
        request: ask,
        name: valid.name,
        note: valid.note,
        files,
        expire_after_days: valid.expireAfterDays,
        expire_after_duration: durationOfSeconds(valid.expireAfterSeconds),
        expire_after_seconds: valid.expireAfterSeconds,
        expire_after_views: valid.expireAfterViews,
        deletable_by_viewer: valid.deletableByViewer,
        retrieval_step: valid.retrievalStep,
        notify_emails_to: notify.recipients.join(','),
        notify_emails_to_locale: notify.locale ?? '',
        sealing: input.public_key
          ? { scheme: SEALING_SCHEME, version: 1, public_key: { kty: 'OKP', crv: 'X25519', x: input.public_key.x } }
          : null,
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + valid.expireAfterSeconds * 1000).toISOString(),
        fulfilled_at: null,
        collected_at: null,
      },
      owner,
      workspaceId,
      state: 'pending',
      answer: null,
      closedAt: null,
      audit: [],
      seq: ++this.seq,
    };
    // The links are "sent" (or refused by the daily limit) before anything is stored, as the server's transaction.
    this.store.mailRequest(
      notify.recipients.map((to) => ({
        to,
        locale: notify.locale,
        link: `${this.mailBase(base)}/r/${urlToken}`,
        urlToken,
        request: 'created' as const,
      })),
    );
    this.requests.set(urlToken, stored);
    this.log(stored, 'creation', actor, at);
    return this.ownerView(stored, base);
  }

  get(urlToken: string, actor: MockActor, base: string): RequestRecord {
    const r = this.find(urlToken);
    return r.owner.email === actor.user?.email ? this.ownerView(r, base) : this.responderView(r, base);
  }

  preview(urlToken: string, actor: MockActor, base: string): { url: string } {
    return { url: this.ownerView(this.owned(urlToken, actor), base).html_url };
  }

  respond(
    urlToken: string,
    body: Record<string, unknown>,
    actor: MockActor,
  ): { url_token: string; state: 'fulfilled'; fulfilled_at: string } {
    const r = this.find(urlToken);
    refuse(r.state);
    const answer = (body.push ?? {}) as Record<string, unknown>;
    const sealedKey = typeof body.sealed_key === 'string' ? body.sealed_key : undefined;
    const sealed = answer.client_encryption !== undefined && answer.client_encryption !== null;
    if (r.record.sealing && (!sealed || !sealedKey))
      throw validationFailed({ sealed_key: ['this request takes only a sealed answer'] });
    if (!r.record.sealing && sealedKey !== undefined)
      throw validationFailed({ sealed_key: ['this request is not sealed'] });
    const { record } = r;
    const input: PushInput = {
      ...pick(answer as PushInput, ['payload', 'files', 'kind', 'passphrase', 'client_encryption']),
      ...(record.expire_after_duration === null
        ? { expire_after_days: record.expire_after_days }
        : { expire_after_duration: record.expire_after_duration }),
      expire_after_views: record.expire_after_views,
      deletable_by_viewer: record.deletable_by_viewer,
      retrieval_step: record.retrieval_step,
      name: record.name,
      note: record.note,
    };
    const push = this.store.create(input, { ...actor, user: r.owner }, undefined, r.workspaceId);
    const at = new Date(this.store.now());
    r.answer = { urlToken: push.state.urlToken, sealedKey: sealedKey ?? null };
    r.record.fulfilled_at = at.toISOString();
    this.move(r, 'fulfilled', actor, at);
    return { url_token: urlToken, state: 'fulfilled', fulfilled_at: at.toISOString() };
  }

  revoke(urlToken: string, actor: MockActor, base: string): RequestOwner {
    const r = this.managed(urlToken, actor);
    if (r.state === 'pending') {
      const at = new Date(this.store.now());
      r.closedAt = at.toISOString();
      this.move(r, 'revoked', actor, at);
    }
    return this.ownerView(r, base);
  }

  list(which: 'active' | 'expired', page: number, actor: MockActor, base: string, url: URL): ListPage<RequestOwner> {
    const owner = this.requireUser(actor);
    // With `workspace_id` (or a workspace's key): that workspace's, every one or a member's own (the server's rule).
    const scope = this.workspaces.forList(url, actor);
    const mine = [...this.requests.values()]
      .filter((r) =>
        scope
          ? r.workspaceId === scope.workspaceId && (scope.seesAll || r.owner.email === owner.email)
          : r.workspaceId === null && r.owner.email === owner.email,
      )
      .map((r) => this.settled(r))
      .filter((r) => (r.state === 'pending' || r.state === 'fulfilled') === (which === 'active'))
      .sort((a, b) => b.record.created_at.localeCompare(a.record.created_at) || b.seq - a.seq);
    return {
      items: mine.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((r) => this.ownerView(r, base)),
      total: mine.length,
    };
  }

  audit(urlToken: string, page: number, actor: MockActor): ListPage<RequestAuditEntry> {
    const r = this.owned(urlToken, actor);
    return { items: r.audit.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), total: r.audit.length };
  }

  // ---- what they share ----

  private requireUser(actor: MockActor): MockUser {
    if (!actor.user) throw new ApiError('authentication_required', 'Requests need an API token.');
    return actor.user;
  }

  private find(urlToken: string): StoredRequest {
    const r = this.requests.get(urlToken);
    if (!r) throw requestNotFound();
    return this.settled(r);
  }

  private owned(urlToken: string, actor: MockActor): StoredRequest {
    const user = this.requireUser(actor);
    const r = this.find(urlToken);
    if (r.owner.email !== user.email) throw new ApiError('forbidden', 'Only the requester may do this.');
    return r;
  }

  /**
   * A request the caller may revoke: their own (a workspace's while they are still in it), or any of a workspace they
   * manage (owner, admin, its key); 403 otherwise, as the server.
   */
  private managed(urlToken: string, actor: MockActor): StoredRequest {
    const user = this.requireUser(actor);
    const r = this.find(urlToken);
    const keyWorkspace = actor.grantor?.workspaceId ?? null;
    const refused = () => new ApiError('forbidden', 'Only the requester may do this.');
    if (keyWorkspace !== null && r.workspaceId !== keyWorkspace) throw refused();
    if (r.workspaceId === null) {
      if (r.owner.email !== user.email) throw refused();
      return r;
    }
    if (keyWorkspace !== null) return r;
    const role = this.workspaces.roleOf(r.workspaceId, user.email, null);
    if (role === 'owner' || role === 'admin' || (role !== null && r.owner.email === user.email)) return r;
    throw refused();
  }

  /** A pending request past its time is expired, as of its expires_at. */
  private settled(r: StoredRequest): StoredRequest {
    if (r.state === 'pending' && Date.parse(r.record.expires_at) <= this.store.now()) {
      r.closedAt = r.record.expires_at;
      this.move(r, 'expired', { user: null, ip: '', userAgent: '', referrer: '' }, new Date(r.record.expires_at));
    }
    return r;
  }

  private move(r: StoredRequest, state: StoredRequest['state'], actor: MockActor, at = new Date(this.store.now())) {
    r.state = state;
    if (state === 'collected') r.record.collected_at = at.toISOString();
    this.log(r, state === 'pending' ? 'creation' : state, actor, at);
    if (state !== 'pending') {
      const token = r.record.url_token;
      const link = `${this.mailBase('http://localhost')}/requests/${token}`;
      this.store.mailRequest([{ to: r.owner.email, locale: null, link, urlToken: token, request: state }]);
    }
  }

  /** The links in emails: the instance's public address when set (as the server's mails). */
  private mailBase(base: string): string {
    return this.store.settings.publicBaseUrl ?? base;
  }

  private log(r: StoredRequest, kind: RequestAuditEntry['kind'], actor: MockActor, at: Date): void {
    r.audit.push({
      kind,
      ip: actor.ip,
      user_agent: actor.userAgent.slice(0, 255),
      referrer: actor.referrer.slice(0, 255),
      created_at: at.toISOString(),
    });
  }

  private ownerView(r: StoredRequest, base: string): RequestOwner {
    const answered = r.answer && (r.state === 'fulfilled' || r.state === 'collected');
    return {
      ...r.record,
      files: r.record.files.map((f) => ({ ...f })),
      state: r.state,
      html_url: `${base}/r/${r.record.url_token}`,
      json_url: `${base}/api/v2/requests/${r.record.url_token}`,
      answer: answered
        ? {
            url_token: r.answer!.urlToken,
            html_url: htmlUrl(base, { urlToken: r.answer!.urlToken, retrievalStep: r.record.retrieval_step }),
            sealed_key: r.answer!.sealedKey,
          }
        : null,
      closed_at: r.closedAt,
    };
  }

  private responderView(r: StoredRequest, base: string): RequestView {
    const s = this.store.settings;
    const open = r.state === 'pending';
    return {
      audience: 'responder',
      url_token: r.record.url_token,
      html_url: `${base}/r/${r.record.url_token}`,
      request: open ? r.record.request : '',
      files: open ? r.record.files.map((f) => ({ ...f })) : [],
      open,
      state: r.state,
      sealing: r.record.sealing,
      allowed: {
        kinds: [
          'text',
          ...(s.enableFilePushes ? (['file'] as const) : []),
          ...(s.enableUrlPushes ? (['url'] as const) : []),
          ...(s.enableQrPushes ? (['qr'] as const) : []),
        ],
        payload_max_length: 1048576,
        file_max_bytes: s.enableFilePushes ? s.fileMaxBytes : 0,
        file_max_count: s.enableFilePushes ? s.fileMaxCount : 0,
      },
      expires_at: r.record.expires_at,
    };
  }
}

function refuse(state: StoredRequest['state']): void {
  if (state === 'fulfilled' || state === 'collected')
    throw new ApiError('request_answered', 'This request has already been answered; nothing was stored.');
  if (state === 'revoked')
    throw new ApiError('request_closed', 'This request was revoked by its requester; nothing was stored.');
  if (state === 'expired') throw new ApiError('request_closed', 'This request has expired; nothing was stored.');
}

function pick<T extends object>(from: T, keys: readonly (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
}
