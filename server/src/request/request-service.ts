/**
 * RequestService: requests (issue 24). A requester asks for a secret; a responder answers once; the answer is a push
 * owned by the requester, made by the push service in one transaction with the request's claim. The states
 * (`pending` → `fulfilled` → `collected`, or `pending` → `expired` | `revoked`) move by conditional statements of the
 * request repository, each with its audit entry, and each move is told to the listeners (`onEvent`) after it commits:
 * the hook mail and webhooks attach to.
 */
import { randomUUID } from 'node:crypto';
import type {
  PushInput,
  RequestAttachment,
  RequestAuditEntry,
  RequestInput,
  RequestOwner,
  RequestPreview,
  RequestReceipt,
  RequestRecord,
  RequestSealing,
  RequestView,
  RespondToRequestRequest,
} from '@secret-push/sdk/generated';
import {
  ApiError,
  checkPushSchema,
  durationOfSeconds,
  htmlUrl,
  MAX_PAGE,
  normalizePushInput,
  PAGE_SIZE,
  SEALING_SCHEME,
  trimBase,
  validationFailed,
  type FieldErrors,
  type SchemaValidPushInput,
} from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import { newFileId, newUrlToken } from '../crypto/tokens.js';
import { deadlineFrom } from '../db/deadlines.js';
import type { Actor, Page, PushService, RequestContext } from '../push/push-service.js';
import { pushSchema } from '../push/push-schema.js';
import type { RequestRepository } from './request-repository.js';
import type { RequestAuditRow, RequestFileRow, RequestRow } from './request-tables.js';

/** Files attached to an ask: at most this many, each at most this many bytes (or the instance's file limit). */
const ASK_FILE_COUNT = 5;
const ASK_FILE_BYTES = 1024 * 1024;
const NOTIFY_MAX = 10;
/** One address: no spaces, one @, a dot in the domain (the mail issue may check more). */
const EMAIL = /^[^\s@,;<>"]{1,64}@[^\s@,;<>"]{1,255}\.[^\s@,;<>".]{2,63}$/;

/** A move of a request, told to the listeners after it committed (never a secret: no ask, no answer). */
export interface RequestEvent {
  type: 'request.created' | 'request.fulfilled' | 'request.collected' | 'request.expired' | 'request.revoked';
  requestId: string;
  urlToken: string;
  ownerId: string;
  at: Date;
  notifyEmailsTo: string[];
  notifyEmailsToLocale: string;
}
type RequestListener = (event: RequestEvent) => void | Promise<void>;

export interface RequestService {
  create(input: RequestInput, ctx: RequestContext): Promise<RequestOwner>;
  /** The owner's full view, or a responder's; changes nothing but a pending request's expiry by time. */
  get(urlToken: string, ctx: RequestContext): Promise<RequestRecord>;
  preview(urlToken: string, ctx: RequestContext): Promise<RequestPreview>;
  respond(urlToken: string, body: RespondToRequestRequest, ctx: RequestContext): Promise<RequestReceipt>;
  revoke(urlToken: string, ctx: RequestContext): Promise<RequestOwner>;
  list(state: 'active' | 'expired', page: number, ctx: RequestContext): Promise<Page<RequestOwner>>;
  audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<RequestAuditEntry>>;
  /** The answer's push was retrieved (push service hook): the first time, fulfilled → collected. */
  answerRetrieved(pushId: string, actor: Actor, now: Date): Promise<void>;
  /** Pending requests past their time → expired (the sweeper); how many. */
  sweep(now: Date): Promise<number>;
  /** Adds a listener of the requests' moves (mail, webhooks); returns its removal. */
  onEvent(listener: RequestListener): () => void;
}

export interface RequestServiceDeps {
  repository: RequestRepository;
  pushes: PushService;
  settings: Settings;
  keyring: Keyring;
  /** Where a failing listener is reported (never with a secret). */
  onListenerError?: (error: unknown, event: RequestEvent) => void;
}

const aad = {
  ask: (id: string) => `requests.ask:${id}`,
  name: (id: string) => `requests.name:${id}`,
  note: (id: string) => `requests.note:${id}`,
  filename: (id: string) => `request_files.filename:${id}`,
  content: (id: string) => `request_files.content:${id}`,
};

const requestNotFound = () => new ApiError('not_found', 'Request not found.');
const nowOf = (ctx: RequestContext): Date => ctx.now ?? new Date();
const deadlineOf = (ctx: RequestContext): Date => ctx.deadline ?? deadlineFrom();

/** The state a request is in at `now` (a pending request past its time is expired, whether or not it was settled). */
function stateAt(row: RequestRow, now: Date): RequestRow['state'] {
  return row.state === 'pending' && row.expiresAt.getTime() <= now.getTime() ? 'expired' : row.state;
}

/** Why an answer is refused in a state (null: it is taken). */
function refusal(state: RequestRow['state']): ApiError | null {
  switch (state) {
    case 'pending':
      return null;
    case 'fulfilled':
    case 'collected':
      return new ApiError('request_answered', 'This request has already been answered; nothing was stored.');
    case 'revoked':
      return new ApiError('request_closed', 'This request was revoked by its requester; nothing was stored.');
    case 'expired':
      return new ApiError('request_closed', 'This request has expired; nothing was stored.');
  }
}

function notifyList(raw: string | undefined, errors: FieldErrors): string {
  if (!raw || raw.trim() === '') return '';
  const list = raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (list.length > NOTIFY_MAX) (errors.notify_emails_to ??= []).push(`at most ${NOTIFY_MAX} addresses`);
  const bad = list.findIndex((a) => !EMAIL.test(a));
  if (bad >= 0) (errors.notify_emails_to ??= []).push(`address ${bad + 1} is not an email address`);
  return list.join(',');
}

class RequestOperations implements RequestService {
  private readonly listeners = new Set<RequestListener>();

  constructor(private readonly deps: RequestServiceDeps) {}

  // ---- the operations ----

  async create(input: RequestInput, ctx: RequestContext): Promise<RequestOwner> {
    const { settings, keyring, repository } = this.deps;
    this.requireEnabled();
    const ownerId = this.requireUser(ctx);
    const now = nowOf(ctx);
    const errors: FieldErrors = {};
    const ask = input.request ?? '';
    const uploads = input.files ?? [];
    if (ask.trim() === '' && uploads.length === 0) errors.request = ['ask for something: text, a file, or both'];
    const notify = notifyList(input.notify_emails_to, errors);
    if (input.public_key && !settings.clientEncryption.enabled)
      errors.public_key = ['sealed answers need end-to-end encryption, which this instance does not take'];
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    // The expiry settings and the attachments, by the push rules and messages (the settings are the answer's).
    const valid = normalizePushInput(
      checkPushSchema(pushSchema(), {
        kind: uploads.length > 0 ? 'file' : 'text',
        payload: ask,
        ...(uploads.length > 0 ? { files: uploads } : {}),
        ...pick(input, ['expire_after_days', 'expire_after_duration', 'expire_after_views']),
        ...pick(input, ['deletable_by_viewer', 'retrieval_step', 'name', 'note']),
      } as PushInput),
      {
        ...settings,
        enableFilePushes: true,
        fileMaxCount: ASK_FILE_COUNT,
        fileMaxBytes: Math.min(ASK_FILE_BYTES, settings.fileMaxBytes),
      },
      (content) => Buffer.from(content, 'base64'),
    );
    const id = randomUUID();
    const row: RequestRow = {
      id,
      urlToken: newUrlToken(),
      ownerId,
      state: 'pending',
      askCiphertext: ask === '' ? null : keyring.encryptText(ask, aad.ask(id)),
      nameCiphertext: valid.name === '' ? null : keyring.encryptText(valid.name, aad.name(id)),
      noteCiphertext: valid.note === '' ? null : keyring.encryptText(valid.note, aad.note(id)),
      notifyEmailsTo: notify,
      notifyEmailsToLocale: input.notify_emails_to_locale ?? '',
      expireAfterDays: valid.expireAfterDays,
      expireAfterSeconds: valid.expireAfterSeconds,
      expireAfterViews: valid.expireAfterViews,
      deletableByViewer: valid.deletableByViewer,
      retrievalStep: valid.retrievalStep,
      publicKey: input.public_key ? { kty: 'OKP', crv: 'X25519', x: input.public_key.x } : null,
      answerPushId: null,
      answerUrlToken: null,
      sealedKey: null,
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + valid.expireAfterSeconds * 1000),
      fulfilledAt: null,
      collectedAt: null,
      closedAt: null,
    };
    const files = valid.files.map((file, position): RequestFileRow => {
      const fileId = newFileId();
      return {
        id: fileId,
        requestId: id,
        position,
        filenameCiphertext: keyring.encryptText(file.filename, aad.filename(fileId)),
        contentType: file.contentType,
        size: file.bytes.length,
        content: keyring.encrypt(Buffer.from(file.bytes), aad.content(fileId)),
      };
    });
    await repository.insert(row, files, ctx.actor, deadlineOf(ctx));
    this.emit('request.created', row, now);
    return this.ownerRecord(row, files, ctx, now);
  }

  async get(urlToken: string, ctx: RequestContext): Promise<RequestRecord> {
    this.requireEnabled();
    const now = nowOf(ctx);
    const row = await this.settled(await this.find(urlToken), now);
    const files = await this.deps.repository.filesOf(row.id);
    if (row.ownerId === ctx.actor.userId) return this.ownerRecord(row, files, ctx, now);
    return this.responderView(row, files, ctx, now);
  }

  async preview(urlToken: string, ctx: RequestContext): Promise<RequestPreview> {
    this.requireEnabled();
    const row = this.requireOwner(await this.find(urlToken), ctx);
    return { url: this.pageUrl(row, ctx) };
  }

  async respond(urlToken: string, body: RespondToRequestRequest, ctx: RequestContext): Promise<RequestReceipt> {
    const { repository, pushes } = this.deps;
    this.requireEnabled();
    const now = nowOf(ctx);
    const row = await this.settled(await this.find(urlToken), now);
    const refused = refusal(row.state);
    if (refused) throw refused;
    const input = this.answerInput(row, body);
    const deadline = deadlineOf(ctx);
    let fulfilled: RequestRow | null = null;
    await pushes.createAnswer(input, ctx, {
      ownerId: row.ownerId,
      claim: {
        before: async (tx) => {
          // Authoritative: the row locked until the answer commits or rolls back; a refusal stores nothing.
          const current = await repository.lock(tx, row.id);
          if (!current) throw requestNotFound();
          const why = refusal(stateAt(current, now));
          if (why) throw why;
        },
        after: async (tx, push) => {
          const sealedKey = row.publicKey ? (body.sealed_key ?? null) : null;
          fulfilled = await repository.fulfil(
            tx,
            { id: row.id, pushId: push.id, pushToken: push.urlToken, sealedKey },
            ctx.actor,
            now,
            deadline,
          );
          if (!fulfilled) throw refusal('fulfilled')!;
        },
      },
    });
    this.emit('request.fulfilled', fulfilled ?? row, now);
    return { url_token: row.urlToken, state: 'fulfilled', fulfilled_at: now.toISOString() };
  }

  async revoke(urlToken: string, ctx: RequestContext): Promise<RequestOwner> {
    this.requireEnabled();
    const now = nowOf(ctx);
    const row = await this.settled(this.requireOwner(await this.find(urlToken), ctx), now);
    const revoked =
      row.state === 'pending' ? await this.deps.repository.revoke(row.id, ctx.actor, now, deadlineOf(ctx)) : null;
    if (revoked) this.emit('request.revoked', revoked, now);
    const current = revoked ?? (await this.find(urlToken));
    return this.ownerRecord(current, await this.deps.repository.filesOf(row.id), ctx, now);
  }

  async list(state: 'active' | 'expired', page: number, ctx: RequestContext): Promise<Page<RequestOwner>> {
    this.requireEnabled();
    const ownerId = this.requireUser(ctx);
    checkPage(page);
    const now = nowOf(ctx);
    const result = await this.deps.repository.ownerPage(state, ownerId, now, PAGE_SIZE, (page - 1) * PAGE_SIZE);
    const items = await Promise.all(
      result.items.map(async (r) => this.ownerRecord(r, await this.deps.repository.filesOf(r.id), ctx, now)),
    );
    return { items, total: result.total, page, perPage: PAGE_SIZE };
  }

  async audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<RequestAuditEntry>> {
    this.requireEnabled();
    checkPage(page);
    const row = await this.settled(this.requireOwner(await this.find(urlToken), ctx), nowOf(ctx));
    const result = await this.deps.repository.auditPage(row.id, PAGE_SIZE, (page - 1) * PAGE_SIZE);
    return { items: result.items.map(auditEntry), total: result.total, page, perPage: PAGE_SIZE };
  }

  async answerRetrieved(pushId: string, actor: Actor, now: Date): Promise<void> {
    const collected = await this.deps.repository.collect(pushId, actor, now, deadlineFrom());
    if (collected) this.emit('request.collected', collected, now);
  }

  async sweep(now: Date): Promise<number> {
    const moved = await this.deps.repository.sweepPastTime(now);
    for (const row of moved) this.emit('request.expired', row, row.expiresAt);
    return moved.length;
  }

  onEvent(listener: RequestListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- what they share ----

  private requireEnabled(): void {
    if (!this.deps.settings.enableRequests)
      throw new ApiError('no_route', 'Requests are not enabled on this instance.');
  }

  private requireUser(ctx: RequestContext): string {
    if (!ctx.actor.userId) throw new ApiError('authentication_required', 'Requests need an API token.');
    return ctx.actor.userId;
  }

  private requireOwner(row: RequestRow, ctx: RequestContext): RequestRow {
    const userId = this.requireUser(ctx);
    if (row.ownerId !== userId) throw new ApiError('forbidden', 'Only the requester may do this.');
    return row;
  }

  private async find(urlToken: string): Promise<RequestRow> {
    const valid =
      typeof urlToken === 'string' && urlToken.length > 0 && urlToken.length <= 64 && !urlToken.includes('\u0000');
    const row = valid ? await this.deps.repository.findByToken(urlToken) : null;
    if (!row) throw requestNotFound();
    return row;
  }

  /** A pending request past its time is settled as expired (its audit entry, its event) before it is answered about. */
  private async settled(row: RequestRow, now: Date): Promise<RequestRow> {
    if (stateAt(row, now) !== 'expired' || row.state === 'expired') return row;
    const moved = await this.deps.repository.expireByTime(row.id, now);
    if (moved) this.emit('request.expired', moved, moved.expiresAt);
    return moved ?? (await this.find(row.urlToken));
  }

  /** The answer as a push input: the responder's secret, the request's settings; PushInput's schema and messages. */
  private answerInput(row: RequestRow, body: RespondToRequestRequest): SchemaValidPushInput {
    const answer = body.push ?? {};
    const sealedAnswer = answer.client_encryption !== undefined && answer.client_encryption !== null;
    if (row.publicKey && (!sealedAnswer || !body.sealed_key))
      throw validationFailed({
        sealed_key: ['this request takes only a sealed answer: client_encryption, envelopes and sealed_key'],
      });
    if (!row.publicKey && body.sealed_key !== undefined)
      throw validationFailed({ sealed_key: ['this request is not sealed: send the answer without sealed_key'] });
    const duration = durationOfSeconds(row.expireAfterSeconds);
    return checkPushSchema(pushSchema(), {
      ...pick(answer, ['payload', 'files', 'kind', 'passphrase', 'client_encryption']),
      ...(duration === null ? { expire_after_days: row.expireAfterDays } : { expire_after_duration: duration }),
      expire_after_views: row.expireAfterViews,
      deletable_by_viewer: row.deletableByViewer,
      retrieval_step: row.retrievalStep,
      name: this.open(row.nameCiphertext, aad.name(row.id)),
      note: this.open(row.noteCiphertext, aad.note(row.id)),
    } as PushInput);
  }

  private open(ciphertext: string | null, context: string): string {
    return ciphertext ? this.deps.keyring.decryptText(ciphertext, context) : '';
  }

  private base(ctx: RequestContext): string {
    return trimBase(this.deps.settings.publicBaseUrl ?? ctx.baseUrl);
  }

  private pageUrl(row: RequestRow, ctx: RequestContext): string {
    return `${this.base(ctx)}/r/${row.urlToken}`;
  }

  private attachments(files: RequestFileRow[]): RequestAttachment[] {
    return files.map((f) => ({
      filename: this.open(f.filenameCiphertext, aad.filename(f.id)),
      content_type: f.contentType,
      size: f.size,
      content: this.deps.keyring.decrypt(f.content, aad.content(f.id)).toString('base64'),
    }));
  }

  private sealing(row: RequestRow): RequestSealing | null {
    return row.publicKey ? { scheme: SEALING_SCHEME, version: 1, public_key: { ...row.publicKey } } : null;
  }

  private ownerRecord(row: RequestRow, files: RequestFileRow[], ctx: RequestContext, now: Date): RequestOwner {
    const base = this.base(ctx);
    const state = stateAt(row, now);
    const answered = row.answerUrlToken !== null && (state === 'fulfilled' || state === 'collected');
    return {
      audience: 'owner',
      url_token: row.urlToken,
      html_url: this.pageUrl(row, ctx),
      json_url: `${base}/api/v2/requests/${row.urlToken}`,
      state,
      request: this.open(row.askCiphertext, aad.ask(row.id)),
      name: this.open(row.nameCiphertext, aad.name(row.id)),
      note: this.open(row.noteCiphertext, aad.note(row.id)),
      files: this.attachments(files),
      expire_after_days: row.expireAfterDays,
      expire_after_duration: durationOfSeconds(row.expireAfterSeconds),
      expire_after_seconds: row.expireAfterSeconds,
      expire_after_views: row.expireAfterViews,
      deletable_by_viewer: row.deletableByViewer,
      retrieval_step: row.retrievalStep,
      notify_emails_to: row.notifyEmailsTo,
      notify_emails_to_locale: row.notifyEmailsToLocale,
      sealing: this.sealing(row),
      answer: answered
        ? {
            url_token: row.answerUrlToken!,
            html_url: htmlUrl(base, { urlToken: row.answerUrlToken!, retrievalStep: row.retrievalStep }),
            sealed_key: row.sealedKey,
          }
        : null,
      created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt.toISOString(),
      fulfilled_at: row.fulfilledAt?.toISOString() ?? null,
      collected_at: row.collectedAt?.toISOString() ?? null,
      closed_at: (row.closedAt ?? (state === 'expired' ? row.expiresAt : null))?.toISOString() ?? null,
    };
  }

  private responderView(row: RequestRow, files: RequestFileRow[], ctx: RequestContext, now: Date): RequestView {
    const { settings } = this.deps;
    const state = stateAt(row, now);
    const open = state === 'pending';
    return {
      audience: 'responder',
      url_token: row.urlToken,
      html_url: this.pageUrl(row, ctx),
      request: open ? this.open(row.askCiphertext, aad.ask(row.id)) : '',
      files: open ? this.attachments(files) : [],
      open,
      state,
      sealing: this.sealing(row),
      allowed: {
        kinds: [
          'text' as const,
          ...(settings.enableFilePushes ? (['file'] as const) : []),
          ...(settings.enableUrlPushes ? (['url'] as const) : []),
          ...(settings.enableQrPushes ? (['qr'] as const) : []),
        ],
        payload_max_length: 1048576,
        file_max_bytes: settings.enableFilePushes ? settings.fileMaxBytes : 0,
        file_max_count: settings.enableFilePushes ? settings.fileMaxCount : 0,
      },
      expires_at: row.expiresAt.toISOString(),
    };
  }

  private emit(type: RequestEvent['type'], row: RequestRow, at: Date): void {
    const event: RequestEvent = {
      type,
      requestId: row.id,
      urlToken: row.urlToken,
      ownerId: row.ownerId,
      at,
      notifyEmailsTo: row.notifyEmailsTo === '' ? [] : row.notifyEmailsTo.split(','),
      notifyEmailsToLocale: row.notifyEmailsToLocale,
    };
    for (const listener of this.listeners) {
      try {
        void Promise.resolve(listener(event)).catch((error: unknown) => this.deps.onListenerError?.(error, event));
      } catch (error) {
        this.deps.onListenerError?.(error, event);
      }
    }
  }
}

function auditEntry(r: RequestAuditRow): RequestAuditEntry {
  return {
    kind: r.kind,
    ip: r.ip,
    user_agent: r.userAgent,
    referrer: r.referrer,
    created_at: r.createdAt.toISOString(),
  };
}

function checkPage(page: number): void {
  if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE) {
    throw new ApiError('validation_failed', `page must be an integer from 1 to ${MAX_PAGE}`, {
      fields: { page: [`must be an integer from 1 to ${MAX_PAGE}`] },
    });
  }
}

function pick<T extends object>(from: T, keys: readonly (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
}

export function createRequestService(deps: RequestServiceDeps): RequestService {
  return new RequestOperations(deps);
}
