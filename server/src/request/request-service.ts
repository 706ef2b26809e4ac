/**
 * RequestService: requests (issue 24). A requester asks for a secret; a responder answers once; the answer is a push
 * owned by the requester, made by the push service in one transaction with the request's claim. The states
 * (`pending` → `fulfilled` → `collected`, or `pending` → `expired` | `revoked`) move by conditional statements of the
 * request repository, each with its audit entry, and each move is recorded in its own transaction by `recorded`: the
 * move followers run there (the email job, ./request-mail.ts; webhooks' `request.*` events,
 * ../webhooks/request-events.ts), so a move never commits without its follow-up work, nor the work without the move.
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
  requireNotifyScope,
  durationOfSeconds,
  htmlUrl,
  normalizePushInput,
  bytesInMemory,
  PAGE_SIZE,
  SEALING_SCHEME,
  trimBase,
  turnOn,
  validationFailed,
  type FieldErrors,
  type SchemaValidPushInput,
  type ValidFile,
} from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import { newFileId, newUrlToken } from '../crypto/tokens.js';
import { storeUnavailable, type FileObjects } from '../files/file-objects.js';
import { StoreUnavailableError } from '../files/object-store.js';
import { deadlineFrom } from '../db/deadlines.js';
import type { Page, PushService } from '../push/push-service.js';
import type { Actor, RequestContext } from '../request-context.js';
import { pushSchema } from '../push/push-schema.js';
import { checkFits, countedOrRefused, createLimits, type RequestLimitsState } from './request-limits.js';
import { SWEEP_BATCH, type RequestRepository } from './request-repository.js';
import type { RequestFileRow, RequestRow } from './request-tables.js';
import { type MoveFollower, refusal, type RequestMove, stateAt } from './request-moves.js';
import { requestSpaces, type RequestSpaces } from './request-workspaces.js';
import { auditEntry, checkPage, notifyList, pick } from './request-input.js';
import type { WorkspaceService } from '../workspace/workspace-service.js';

export type { MoveFollower, RequestMove } from './request-moves.js';

/** Files attached to an ask: at most this many, each at most this many bytes (or the instance's file limit). */
const ASK_FILE_COUNT = 5;
const ASK_FILE_BYTES = 1024 * 1024;
const PRIVATE_KEY_SENT =
  'holds a private key (d): it must never leave your client; make a new key pair and send its public half only';

/** A created request, and where it left its requester in the limits that are on (the 201's RateLimit fields). */
type CreatedRequest = RequestOwner & { limits?: RequestLimitsState };

export interface RequestService {
  /**
   * Counted against the requester's storage quota (its attachments) and open requests: 413 larger than the quota,
   * 429 `storage_quota_exceeded` / `too_many_open_requests` over them, nothing stored (request-limits.ts).
   */
  create(input: RequestInput, ctx: RequestContext, workspaceId?: number | null): Promise<CreatedRequest>;
  /** The owner's full view, or a responder's; changes nothing but a pending request's expiry by time. */
  get(urlToken: string, ctx: RequestContext): Promise<RequestRecord>;
  preview(urlToken: string, ctx: RequestContext): Promise<RequestPreview>;
  respond(urlToken: string, body: RespondToRequestRequest, ctx: RequestContext): Promise<RequestReceipt>;
  revoke(urlToken: string, ctx: RequestContext): Promise<RequestOwner>;
  /** The caller's personal requests, or with `workspaceId` that workspace's that the caller may see. */
  list(
    state: 'active' | 'expired',
    page: number,
    ctx: RequestContext,
    workspaceId?: number | null,
  ): Promise<Page<RequestOwner>>;
  audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<RequestAuditEntry>>;
  /** The answer's push was retrieved (push service hook): the first time, fulfilled → collected. */
  answerRetrieved(pushId: string, actor: Actor, now: Date): Promise<void>;
  /** Pending requests past their time → expired (the sweeper); how many. */
  sweep(now: Date): Promise<number>;
}

export interface RequestServiceDeps {
  repository: RequestRepository;
  pushes: PushService;
  settings: Settings;
  keyring: Keyring;
  /** What follows each move, in its transaction, in this order (the email job; webhooks' events). */
  followers?: MoveFollower[];
  /** The object store of file bytes (PWPUSH_FILE_STORAGE=s3://…); absent: attachments are kept in PostgreSQL. */
  files?: FileObjects;
  /** Workspaces (issue 41): requests of a workspace (./request-workspaces.ts); absent, a `workspace_id` is refused. */
  workspaces?: WorkspaceService;
}

/** An attachment's row, with its plaintext when it was read from the object store. */
type LoadedFile = RequestFileRow & { plain?: Buffer };

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

class RequestOperations implements RequestService {
  private readonly spaces: RequestSpaces;
  constructor(private readonly deps: RequestServiceDeps) {
    this.spaces = requestSpaces(deps.workspaces);
  }

  // ---- the operations ----

  async create(input: RequestInput, ctx: RequestContext, named: number | null = null): Promise<CreatedRequest> {
    const { settings, keyring, repository } = this.deps;
    this.requireEnabled();
    const ownerId = this.requireUser(ctx);
    const workspaceId = await this.spaces.createsIn(named, ctx);
    if (input.notify_emails_to && input.notify_emails_to.trim() !== '') requireNotifyScope(ctx.scopes);
    const now = nowOf(ctx);
    const errors: FieldErrors = {};
    const ask = input.request ?? '';
    const uploads = input.files ?? [];
    if (ask.trim() === '' && uploads.length === 0) errors.request = ['ask for something: text, a file, or both'];
    const notify = notifyList(input, errors);
    if (input.public_key && !settings.clientEncryption.enabled)
      errors.public_key = ['sealed answers need end-to-end encryption, which this instance does not take'];
    else if (input.public_key && 'd' in input.public_key) errors.public_key = [PRIVATE_KEY_SENT];
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
      workspaceId,
      urlToken: newUrlToken(),
      ownerId,
      state: 'pending',
      askCiphertext: ask === '' ? null : keyring.encryptText(ask, aad.ask(id)),
      nameCiphertext: valid.name === '' ? null : keyring.encryptText(valid.name, aad.name(id)),
      noteCiphertext: valid.note === '' ? null : keyring.encryptText(valid.note, aad.note(id)),
      notifyEmailsTo: notify.to,
      notifyEmailsToLocale: notify.locale,
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
      baseUrl: this.base(ctx),
      // The files' contents as sent, as a push's. The ask's text is not counted, as a push's note is not: at most
      // 10,000 characters, kept only while the request is open, and the open-request limit bounds how many are.
      storedBytes: valid.files.reduce((sum, file) => sum + file.bytes.length, 0),
    };
    const limits = createLimits(settings);
    checkFits(limits, row.storedBytes);
    const uploaded: string[] = [];
    const files: LoadedFile[] = [];
    try {
      for (const [position, file] of valid.files.entries())
        files.push(await this.newFile(id, position, file, uploaded));
      const counted = await repository.transaction(async (tx) => {
        const result = await repository.insertCounted(tx, row, files, ctx.actor, deadlineOf(ctx), limits);
        if (result.stored) await this.recorded(tx, { type: 'request.created', request: row, at: now, by: ctx.actor });
        return result;
      });
      const state = countedOrRefused(counted, limits, row.storedBytes, now);
      return { ...this.ownerRecord(row, files, ctx, now), limits: state };
    } catch (error) {
      // The objects are stored before the rows: a create that did not commit (or was refused) deletes them.
      void this.deps.files?.remove(uploaded);
      throw error;
    }
  }

  async get(urlToken: string, ctx: RequestContext): Promise<RequestRecord> {
    this.requireEnabled();
    const now = nowOf(ctx);
    const row = await this.settled(await this.find(urlToken), now);
    const files = await this.filesOf(row.id);
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
    let erased: string[] = [];
    await pushes.createAnswer(input, ctx, {
      ownerId: row.ownerId,
      workspaceId: row.workspaceId,
      // The answer takes the attachments' place: fulfilling erases the ask and its files in the same transaction.
      releases: row.storedBytes,
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
          const fulfilled = await repository.fulfil(
            tx,
            { id: row.id, pushId: push.id, pushToken: push.urlToken, sealedKey },
            ctx.actor,
            now,
            deadline,
          );
          if (!fulfilled) throw refusal('fulfilled')!;
          erased = fulfilled.erasedObjects;
          await this.recorded(tx, { type: 'request.fulfilled', request: fulfilled.row, at: now, by: ctx.actor });
        },
      },
    });
    this.removeObjects(erased);
    return { url_token: row.urlToken, state: 'fulfilled', fulfilled_at: now.toISOString() };
  }

  async revoke(urlToken: string, ctx: RequestContext): Promise<RequestOwner> {
    this.requireEnabled();
    const now = nowOf(ctx);
    const found = await this.find(urlToken);
    this.requireUser(ctx);
    if (!(await this.spaces.mayManage(found, ctx))) throw new ApiError('forbidden', 'Only the requester may do this.');
    const row = await this.settled(found, now);
    const { repository } = this.deps;
    const revoked =
      row.state === 'pending'
        ? await repository.transaction(async (tx) => {
            const moved = await repository.revoke(tx, row.id, ctx.actor, now, deadlineOf(ctx));
            if (moved) await this.recorded(tx, { type: 'request.revoked', request: moved.row, at: now, by: ctx.actor });
            return moved;
          })
        : null;
    this.removeObjects(revoked?.erasedObjects);
    const current = revoked?.row ?? (await this.find(urlToken));
    return this.ownerRecord(current, await this.filesOf(row.id), ctx, now);
  }

  async list(state: 'active' | 'expired', page: number, ctx: RequestContext, named: number | null = null) {
    this.requireEnabled();
    const ownerId = this.requireUser(ctx);
    checkPage(page);
    const now = nowOf(ctx);
    const { repository } = this.deps;
    const offset = (page - 1) * PAGE_SIZE;
    const scope = await this.spaces.listsIn(named, ctx);
    const result = scope
      ? await repository.workspacePage(state, scope.workspaceId, scope.onlyOf, now, PAGE_SIZE, offset)
      : await repository.ownerPage(state, ownerId, now, PAGE_SIZE, offset);
    const items = await Promise.all(
      result.items.map(async (r) => this.ownerRecord(r, await this.filesOf(r.id), ctx, now)),
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
    const { repository } = this.deps;
    await repository.transaction(async (tx) => {
      const collected = await repository.collect(tx, pushId, actor, now, deadlineFrom());
      if (collected) await this.recorded(tx, { type: 'request.collected', request: collected, at: now, by: actor });
    });
  }

  async sweep(now: Date): Promise<number> {
    const { repository } = this.deps;
    let total = 0;
    for (;;) {
      // One transaction per batch: the moves and their follow-up work commit together.
      const batch = await repository.transaction(async (tx) => {
        const closed = await repository.sweepPastTime(tx, now);
        for (const { row } of closed)
          await this.recorded(tx, { type: 'request.expired', request: row, at: row.expiresAt, by: null });
        return closed;
      });
      this.removeObjects(batch.flatMap((c) => c.erasedObjects));
      total += batch.length;
      if (batch.length < SWEEP_BATCH) return total;
    }
  }

  // ---- what they share ----

  private requireEnabled(): void {
    if (!this.deps.settings.enableRequests)
      throw new ApiError(
        'no_route',
        `Requests are not enabled on this instance. ${turnOn('requests', this.deps.settings.env)}`,
      );
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
    const { repository } = this.deps;
    const moved = await repository.transaction(async (tx) => {
      const expired = await repository.expireByTime(tx, row.id, now);
      if (expired)
        await this.recorded(tx, { type: 'request.expired', request: expired.row, at: expired.row.expiresAt, by: null });
      return expired;
    });
    this.removeObjects(moved?.erasedObjects);
    return moved?.row ?? (await this.find(row.urlToken));
  }

  /**
   * Deletes from the object store the files a committed move erased (their rows are gone); a store that is down
   * leaves them to the sweeper's reconcile (../files/reconcile.ts). Never throws.
   */
  private removeObjects(keys: readonly string[] | undefined): void {
    if (keys && keys.length > 0) void this.deps.files?.remove(keys);
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

  private attachments(files: LoadedFile[]): RequestAttachment[] {
    return files.map((f) => ({
      filename: this.open(f.filenameCiphertext, aad.filename(f.id)),
      content_type: f.contentType,
      size: f.size,
      content: (f.plain ?? this.deps.keyring.decrypt(f.content!, aad.content(f.id))).toString('base64'),
    }));
  }

  /** An attachment's row, its bytes sealed in it (PostgreSQL) or in an object stored now (`uploaded` lists it). */
  private async newFile(requestId: string, position: number, file: ValidFile, uploaded: string[]): Promise<LoadedFile> {
    const { keyring, files } = this.deps;
    const id = newFileId();
    const bytes = Buffer.from(bytesInMemory(file.bytes));
    const row = {
      id,
      requestId,
      position,
      filenameCiphertext: keyring.encryptText(file.filename, aad.filename(id)),
      contentType: file.contentType,
      size: bytes.length,
    };
    if (!files) return { ...row, content: keyring.encrypt(bytes, aad.content(id)), objectKey: null };
    const objectKey = files.keyFor('request', id);
    uploaded.push(objectKey);
    try {
      await files.storeBytes(objectKey, aad.content(id), bytes);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw storeUnavailable('create');
      throw error;
    }
    return { ...row, content: null, objectKey, plain: bytes };
  }

  /** A request's attachments, those in the object store read whole (at most 5 of 1 MiB: they travel inline). */
  private async filesOf(requestId: string): Promise<LoadedFile[]> {
    const rows = await this.deps.repository.filesOf(requestId);
    return Promise.all(
      rows.map(async (f): Promise<LoadedFile> => {
        if (!f.objectKey) return f;
        if (!this.deps.files)
          throw new ApiError(
            'service_unavailable',
            'These attachments are kept in an object store that is not configured.',
          );
        let plain: Buffer | null;
        try {
          plain = await this.deps.files.read(f.objectKey, aad.content(f.id));
        } catch (error) {
          if (error instanceof StoreUnavailableError) throw storeUnavailable('download');
          throw error;
        }
        // An object gone under its row (the sweeper's reconcile drops such rows): unavailable, never an empty file.
        if (!plain) throw storeUnavailable('download');
        return { ...f, plain };
      }),
    );
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
      request_id: row.id,
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
            ...(row.answerPushId ? { push_id: row.answerPushId } : {}),
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

  /** Records a move in its transaction: every follower's work (email jobs; webhooks' events), in order. */
  private async recorded(tx: Db, move: RequestMove): Promise<void> {
    for (const follow of this.deps.followers ?? []) await follow(tx, move);
  }
}

export function createRequestService(deps: RequestServiceDeps): RequestService {
  return new RequestOperations(deps);
}
