/**
 * PushService: the rules of api-decisions.md for pushes, on top of the push repository (the SQL) and the crypto.
 * The rules the stateful mock applies too come from `@secret-push/rules`; what is left here is what only a server
 * with a database and keys does: encryption at rest, hashing, signed links, and the order of the statements.
 */
import type { Readable } from 'node:stream';
import type {
  AuditEntry,
  PreviewResponse,
  Push,
  PushInput,
  PushOwner,
  PushRetrieval,
} from '@secret-push/sdk/generated';
import {
  ApiError,
  checkPushSchema,
  FAILED_VIEW_DEDUPE_MS,
  isExpired,
  isOwner,
  isPastTime,
  jsonUrl,
  lastViewAnswer,
  MAX_PAGE,
  notFound,
  ownerRecord,
  PAGE_SIZE,
  pushRecord,
  requireAuditCaller,
  requireAuditOwner,
  requireCallerAllowed,
  requireListCaller,
  requireMayCreate,
  requireMayExpire,
  safeFilename,
  trimBase,
  type SchemaValidPushInput,
} from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import { checkPassphrase } from './passphrase-gate.js';
import { signDownloadToken, verifyDownloadToken } from '../crypto/tokens.js';
import type { NotifyService } from '../mail/notify-service.js';
import { storeUnavailable, type FileObjects } from '../files/file-objects.js';
import { StoreUnavailableError } from '../files/object-store.js';
import { keyWorkspace, type Actor, type RequestContext } from '../request-context.js';
import type { PushEvents } from './push-followers.js';
import type { WorkspaceService } from '../workspace/workspace-service.js';
import { pageAccessOf, type AccessCodes, type AccessProof, type PageState } from './access-codes.js';
import type { FileMeta, PushRepository, WithinChange } from './push-repository.js';
import { pushSchema } from './push-schema.js';
import { envelopeContexts, deadlineOf, nowOf, ownerAsked, ownerAsking } from './push-context.js';
import { PushCreates, type AnswerOptions, type CreateOptions, type Created } from './push-creates.js';
import type { PushRow } from './push-tables.js';

/** What a create may come with: an Idempotency-Key and the body's fingerprint (the API's createPush). */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
}

export interface PushService {
  /** Validates with the contract's PushInput schema, then the instance's rules → validation_failed (422). */
  create(input: PushInput, ctx: RequestContext, options?: Pick<CreateOptions, 'workspaceId'>): Promise<Created>;
  /** The same for an input a validator running the same schema has already accepted (the API's openapi-backend). */
  createValidated(input: SchemaValidPushInput, ctx: RequestContext, options?: CreateOptions): Promise<Created>;
  /** Counts a view with one atomic claim; expired → record with payload null; passphrase errors per the spec. */
  retrieve(
    urlToken: string,
    passphrase: string | undefined,
    ctx: RequestContext,
    options?: RetrieveOptions,
  ): Promise<PushRetrieval>;
  /** `requestAccessCode`: mails a code to a listed address in `lang` (access-codes.ts); the same 202 for any other. */
  requestAccessCode(token: string, email: string, ctx: RequestContext, lang?: string): Promise<{ expires_in: number }>;
  /** The link and the encryption marker (a client holding a link without a key learns it cannot open the push). */
  preview(urlToken: string, ctx: RequestContext): Promise<PreviewResponse>;
  expire(urlToken: string, ctx: RequestContext): Promise<Push>;
  /** One page of the audit log, and the push's non-secret handle (`push_id`). */
  audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<AuditEntry> & { pushId?: string }>;
  /** The caller's personal pushes, or with `workspaceId` that workspace's that the caller may see. */
  list(
    state: 'active' | 'expired',
    page: number,
    ctx: RequestContext,
    workspaceId?: number | null,
  ): Promise<Page<PushOwner>>;
  /**
   * Verifies the signed download token and returns the bytes: in memory (kept in PostgreSQL), or as they stream from
   * the object store (each segment checked before it is given out).
   */
  downloadFile(
    urlToken: string,
    fileId: string,
    token: string,
    ctx?: Pick<RequestContext, 'now'>,
  ): Promise<FileDownload>;
  /** A push's record without its secret, from its real state; null for an unknown token. Counts nothing, logs nothing. */
  state(urlToken: string, ctx: RequestContext): Promise<Push | null>;
  /**
   * `state`, and what the recipient's page must offer before its reveal step (issue 42: a network that may not open
   * it, a code or a sign-in to ask for); `signedInEmail` as a retrieval's proof. Counts nothing, logs nothing.
   */
  pageState(urlToken: string, ctx: RequestContext, signedInEmail: string | null): Promise<PageState | null>;
  /**
   * The push of a request's answer: `input` already holds the request's expiry settings and passed the PushInput
   * schema; owned by `answer.ownerId`, counted against that user's storage quota, stored in one transaction with the
   * request's claim (which may refuse, storing nothing).
   */
  createAnswer(input: SchemaValidPushInput, ctx: RequestContext, answer: AnswerOptions): Promise<PushRow>;
}

/** A file's bytes for its download: `size` bytes, in memory or as a stream. */
interface FileDownload {
  filename: string;
  contentType: string;
  size: number;
  body: Buffer | Readable;
}

interface RetrieveOptions {
  /**
   * The caller cannot say that a payload is an end-to-end envelope (the v1 API: its records have no
   * `client_encryption`). An active encrypted push is then refused with 409 `end_to_end_encrypted` before anything is
   * counted: handing out the envelope would spend a view on a secret nobody can read through that caller.
   */
  plaintextOnly?: boolean;
  /** What the caller brings for a push only some may open: an access code, a signed-in address (access-codes.ts). */
  proof?: AccessProof;
}

export { envelopeContexts };
const aad = envelopeContexts;

const endToEndEncrypted = () =>
  new ApiError(
    'end_to_end_encrypted',
    'This push is end-to-end encrypted: open its link (with the key after #) in a browser. No view was counted.',
  );

const fileGone = () => new ApiError('not_found', 'This file is no longer available.');

/** Callers other than the API (which answers 400 invalid_page first) get a 422 for a page outside 1..200. */
function checkPage(page: number): void {
  if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE) {
    throw new ApiError('validation_failed', `page must be an integer from 1 to ${MAX_PAGE}`, {
      fields: { page: [`must be an integer from 1 to ${MAX_PAGE}`] },
    });
  }
}

export interface PushServiceDeps {
  repository: PushRepository;
  settings: Settings;
  keyring: Keyring;
  /** Emailing the link (`notify_emails_to`); without it the fields are ignored (HTTP test doubles). */
  notify?: NotifyService;
  /** Called after a successful retrieval of a push made from a request's answer (the request becomes `collected`). */
  answerRetrieved?: (pushId: string, actor: Actor, now: Date) => Promise<void>;
  /** The events of owned pushes (webhooks, read receipts), queued in each change's transaction; absent: none. */
  events?: PushEvents;
  /** The object store of file bytes (PWPUSH_FILE_STORAGE=s3://…); absent: files are kept in PostgreSQL. */
  files?: FileObjects;
  /** Who may open a push (access-codes.ts); absent: pushes with `recipient_emails` are refused (422). */
  access?: AccessCodes;
  /** Whether a listed person can prove who they are (an SMTP relay for codes, or single sign-on); else 422. */
  recipientLists?: boolean;
  /** Workspaces' memberships (../workspace/); absent: a create or list naming a workspace is refused (403). */
  workspaces?: Pick<WorkspaceService, 'membership' | 'governs'>;
}

/**
 * The push operations: one class, so that an editor jumps from a handler to the operation and from there to the
 * repository's statement. Public methods are the `PushService` contract; the private ones are what they share.
 */
class PushOperations implements PushService {
  private readonly repo: PushRepository;
  private readonly settings: Settings;
  private readonly keyring: Keyring;
  private readonly notify: NotifyService | undefined;
  private readonly answerRetrieved: PushServiceDeps['answerRetrieved'];
  private readonly events: PushEvents | undefined;
  private readonly files: FileObjects | undefined;
  private readonly access: AccessCodes | undefined;
  private readonly workspaces: PushServiceDeps['workspaces'];
  /** The create path (push-creates.ts). */
  private readonly creates: PushCreates;

  constructor(deps: PushServiceDeps) {
    const { repository, settings, keyring, notify, answerRetrieved, events, files } = deps;
    this.access = deps.access;
    this.workspaces = deps.workspaces;
    this.files = files;
    this.repo = repository;
    this.settings = settings;
    this.keyring = keyring;
    this.notify = notify;
    this.answerRetrieved = answerRetrieved;
    this.events = events;
    this.creates = new PushCreates(
      repository,
      settings,
      keyring,
      notify,
      events,
      files,
      {
        baseOf: (ctx) => this.baseOf(ctx),
        ownerView: (row, now, base) => this.ownerView(row, now, base),
      },
      deps.recipientLists === true && deps.access !== undefined,
    );
  }

  // ---- the operations ----

  async create(
    input: PushInput,
    ctx: RequestContext,
    options: Pick<CreateOptions, 'workspaceId'> = {},
  ): Promise<Created> {
    requireMayCreate(this.settings, ctx.actor.userId, input);
    const valid = checkPushSchema(pushSchema(), input ?? {});
    return this.creates.createFrom(valid, ctx, undefined, await this.createsIn(options.workspaceId, ctx));
  }

  async createValidated(
    input: SchemaValidPushInput,
    ctx: RequestContext,
    options: CreateOptions = {},
  ): Promise<Created> {
    requireMayCreate(this.settings, ctx.actor.userId, input);
    const workspaceId = await this.createsIn(options.workspaceId, ctx);
    return options.idempotency
      ? this.creates.createKeyed(input, ctx, options.idempotency, workspaceId)
      : this.creates.createFrom(input, ctx, undefined, workspaceId);
  }

  async createAnswer(input: SchemaValidPushInput, ctx: RequestContext, answer: AnswerOptions): Promise<PushRow> {
    return this.creates.createAnswer(input, ctx, answer);
  }

  /** Retrieve: expired → record without secret; passphrase; the owner's look; else one atomic claim of a view. */
  async retrieve(
    urlToken: string,
    passphrase: string | undefined,
    ctx: RequestContext,
    options: RetrieveOptions = {},
  ): Promise<PushRetrieval> {
    const { repo } = this;
    requireCallerAllowed(this.settings, ctx.actor.userId);
    const now = nowOf(ctx);
    const base = this.baseOf(ctx);
    // One statement for the common view (the row, and the claim when nothing else is needed); the rest decides from
    // the row it read.
    const viewed = validToken(urlToken)
      ? await repo.viewByToken(urlToken, ctx.actor, now, deadlineOf(ctx), {
          keyIds: this.keyring.keyIds,
          plaintextOnly: options.plaintextOnly === true,
          writes: this.events?.viewInStatement() ?? null,
        })
      : null;
    if (!viewed) throw notFound();
    const { row } = viewed;
    if (viewed.won) {
      const payload = this.decryptOptional(row.payloadCiphertext, aad.payload(row.id));
      await this.retrieved(row, ctx, now);
      return { ...pushRecord(lastViewAnswer(viewed.won), now, base), payload, files: [] };
    }
    if (isExpired(row, now)) return this.expiredAnswer(row, ctx, now);
    // Before the passphrase gate: a caller that could never read the push does not spend passphrase attempts either.
    if (options.plaintextOnly && row.clientEncryption) throw endToEndEncrypted();
    // Who may open it (issue 42), first: refused, nothing spent; a right code is used up once the passphrase is too.
    const access = await this.accessGate(row, options, ctx, now);
    if (row.passphraseHash) await this.passphraseGate(row, passphrase, ctx, now);
    await access?.useCode();

    if (isOwner(row, ownerAsked(row, ctx))) {
      // The owner's own look does not count; it is served from the row as read, which was active.
      await repo.recordAudit(row.id, 'owner_view', ctx.actor, now, deadlineOf(ctx));
      const files = row.kind === 'file' ? this.fileLinks(await repo.filesOf(row.id), row.urlToken, base, now) : [];
      await this.retrieved(row, ctx, now);
      return {
        ...pushRecord(row, now, base),
        payload: this.decryptOptional(row.payloadCiphertext, aad.payload(row.id)),
        files,
      };
    }

    // Decrypt first (payload, and file names): if a key is missing, nothing is claimed and no view is burned. What was
    // read with the row is what the claim sees: it only ever changes to null, together with `expired`, which the claim
    // excludes. File bytes stay until the links issued lapse, so the links are made from the list read here.
    const payload = this.decryptOptional(row.payloadCiphertext, aad.payload(row.id));
    const metas = row.kind === 'file' ? await repo.filesOf(row.id) : [];
    // Files in an object store: the store must answer, and have them, before a view is spent on their links.
    await this.files?.requireAvailable(metas.flatMap((f) => (f.objectKey ? [f.objectKey] : [])));
    const files = row.kind === 'file' ? this.fileLinks(metas, row.urlToken, base, now) : [];
    // A listened-to owner's view: its events written by the claim's statement, when they can be; else (or when a view
    // was taken meanwhile) the claim's transaction with them.
    const inClaim = this.events && row.ownerId !== null ? this.events.viewedInClaim(ctx, row, now) : null;
    const won =
      (inClaim && (await repo.claimViewWith(row.id, ctx.actor, now, deadlineOf(ctx), row.viewsUsed, inClaim))) ||
      (await repo.claimView(
        row.id,
        ctx.actor,
        now,
        deadlineOf(ctx),
        this.on(row, (e) => e.viewed(ctx)),
      ));
    // Someone else took the last view (or the time ran out) between our read and our claim.
    if (!won) return this.expiredAnswer((await repo.findById(row.id)) ?? row, ctx, now);
    await this.retrieved(row, ctx, now);
    return { ...pushRecord(lastViewAnswer(won), now, base), payload, files };
  }

  async requestAccessCode(urlToken: string, email: string, ctx: RequestContext, lang?: string) {
    requireCallerAllowed(this.settings, ctx.actor.userId);
    const row = validToken(urlToken) ? await this.repo.findByToken(urlToken) : null;
    if (!this.access) throw notFound();
    return this.access.request(row, email, ctx, lang ?? null);
  }

  async preview(urlToken: string, ctx: RequestContext): Promise<PreviewResponse> {
    requireCallerAllowed(this.settings, ctx.actor.userId);
    const record = pushRecord(await this.findOrThrow(urlToken), nowOf(ctx), this.baseOf(ctx));
    return { url: record.html_url, client_encryption: record.client_encryption };
  }

  async expire(urlToken: string, ctx: RequestContext): Promise<Push> {
    const { repo } = this;
    requireCallerAllowed(this.settings, ctx.actor.userId);
    const now = nowOf(ctx);
    const base = this.baseOf(ctx);
    const row = await this.findOrThrow(urlToken);
    const governed = await this.governed(row, ctx, 'expire');
    if (!governed) requireMayExpire(row, ownerAsking(row, ctx));
    if (isExpired(row, now)) {
      return pushRecord(
        row.expired
          ? row
          : await repo.expireByTime(
              row,
              now,
              this.on(row, (e) => e.expired()),
            ),
        now,
        base,
      );
    }
    const done = await repo.expireByRequest(
      row.id,
      ctx.actor,
      now,
      deadlineOf(ctx),
      this.on(row, (e) => e.deleted(ctx, governed)),
    );
    if (done) return pushRecord(done, now, base);
    // Expired concurrently (or just ran out of time): unchanged, no audit.
    const current = (await repo.findById(row.id)) ?? row;
    return pushRecord(
      !current.expired && isPastTime(current, now)
        ? await repo.expireByTime(
            current,
            now,
            this.on(current, (e) => e.expired()),
          )
        : current,
      now,
      base,
    );
  }

  async audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<AuditEntry> & { pushId: string }> {
    requireAuditCaller(ctx.actor.userId);
    checkPage(page);
    const row = await this.findOrThrow(urlToken);
    if (!(await this.governed(row, ctx, 'audit'))) requireAuditOwner(row, ownerAsking(row, ctx) ?? ctx.actor.userId);
    const result = await this.repo.auditPage(row.id, PAGE_SIZE, (page - 1) * PAGE_SIZE);
    const mailed = result.items.filter((r) => r.kind === 'creation_email_send').map((r) => r.id);
    const details = mailed.length > 0 && this.notify ? await this.notify.details(mailed) : new Map();
    return {
      items: result.items.map((r) => {
        const notifyByEmail = details.get(r.id);
        return {
          kind: r.kind,
          ip: r.ip,
          user_agent: r.userAgent,
          referrer: r.referrer,
          created_at: r.createdAt.toISOString(),
          ...(notifyByEmail ? { notify_by_email: notifyByEmail } : {}),
        };
      }),
      total: result.total,
      page,
      perPage: PAGE_SIZE,
      pushId: row.id,
    };
  }

  async list(
    state: 'active' | 'expired',
    page: number,
    ctx: RequestContext,
    workspaceId: number | null = null,
  ): Promise<Page<PushOwner>> {
    requireListCaller(ctx.actor.userId);
    checkPage(page);
    const now = nowOf(ctx);
    const base = this.baseOf(ctx);
    const offset = (page - 1) * PAGE_SIZE;
    const membership = await this.member(workspaceId, ctx, 'read');
    const result = membership
      ? await this.repo.workspacePage(
          state,
          membership.workspaceId,
          membership.seesAll ? null : ctx.actor.userId,
          now,
          PAGE_SIZE,
          offset,
        )
      : await this.repo.ownerPage(state, ctx.actor.userId, now, PAGE_SIZE, offset);
    return {
      items: result.items.map((r) => this.ownerView(r, now, base)),
      total: result.total,
      page,
      perPage: PAGE_SIZE,
    };
  }

  async downloadFile(
    urlToken: string,
    fileId: string,
    token: string,
    ctx: Pick<RequestContext, 'now'> = {},
  ): Promise<FileDownload> {
    const row = await this.findOrThrow(urlToken);
    const check = verifyDownloadToken(this.settings.signingSecret, token, urlToken, fileId, ctx.now ?? new Date());
    if (!check.ok) throw new ApiError(check.reason === 'link_expired' ? 'link_expired' : 'invalid_link');
    const file = await this.repo.fileOf(row.id, fileId);
    if (!file) throw fileGone();
    const head = {
      filename: safeFilename(this.keyring.decryptText(file.filenameCiphertext, aad.filename(file.id))),
      contentType: file.contentType,
      size: file.size,
    };
    if (file.content) return { ...head, body: this.keyring.decrypt(file.content, aad.content(file.id)) };
    // In an object store (a row names its object only once it was stored).
    if (!this.files)
      throw new ApiError('service_unavailable', 'This file is kept in an object store that is not configured.');
    let body: Readable | null;
    try {
      body = await this.files.open(file.objectKey!, aad.content(file.id));
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw storeUnavailable('download');
      throw error;
    }
    if (!body) throw fileGone();
    return { ...head, body };
  }

  async state(urlToken: string, ctx: RequestContext): Promise<Push | null> {
    const row = await this.findPush(urlToken);
    return row ? pushRecord(row, nowOf(ctx), this.baseOf(ctx)) : null;
  }

  async pageState(urlToken: string, ctx: RequestContext, signedInEmail: string | null): Promise<PageState | null> {
    const row = await this.findPush(urlToken);
    if (!row) return null;
    const push = pushRecord(row, nowOf(ctx), this.baseOf(ctx));
    return { push, access: pageAccessOf(row, ctx, signedInEmail), workspaceId: row.workspaceId };
  }

  // ---- what they share ----

  /** After a successful retrieval: a push made from a request's answer tells its request (the first time moves it). */
  private async retrieved(row: PushRow, ctx: RequestContext, now: Date): Promise<void> {
    if (row.answersRequest && this.answerRetrieved) await this.answerRetrieved(row.id, ctx.actor, now);
  }

  private baseOf(ctx: RequestContext): string {
    return trimBase(this.settings.publicBaseUrl ?? ctx.baseUrl);
  }

  private decryptOptional(ciphertext: string | null, context: string): string {
    return ciphertext ? this.keyring.decryptText(ciphertext, context) : '';
  }

  private encryptOptional(plain: string, context: string): string | null {
    return plain === '' ? null : this.keyring.encryptText(plain, context);
  }

  private async findPush(urlToken: string): Promise<PushRow | null> {
    return validToken(urlToken) ? this.repo.findByToken(urlToken) : null;
  }

  private async findOrThrow(urlToken: string): Promise<PushRow> {
    const row = await this.findPush(urlToken);
    if (!row) throw notFound();
    return row;
  }

  private ownerView(row: PushRow, now: Date, base: string): PushOwner {
    return {
      ...ownerRecord(row, now, base, {
        name: this.decryptOptional(row.nameCiphertext, aad.name(row.id)),
        // Decrypted only while the push is active: the note is erased at expiry.
        note: isExpired(row, now) ? '' : this.decryptOptional(row.noteCiphertext, aad.note(row.id)),
      }),
      push_id: row.id,
    };
  }

  private fileLinks(files: FileMeta[], urlToken: string, base: string, now: Date): PushRetrieval['files'] {
    return files.map((f) => ({
      id: f.id,
      filename: safeFilename(this.keyring.decryptText(f.filenameCiphertext, aad.filename(f.id))),
      content_type: f.contentType,
      size: f.size,
      url: `${jsonUrl(base, urlToken)}/files/${f.id}?token=${signDownloadToken(this.settings.signingSecret, urlToken, f.id, now)}`,
    }));
  }

  /** The answer to a read of an expired push (or a lost race): settle time expiry, log a failed view, no secret. */
  private async expiredAnswer(row: PushRow, ctx: RequestContext, now: Date): Promise<PushRetrieval> {
    const settled =
      !row.expired && isPastTime(row, now)
        ? await this.repo.expireByTime(
            row,
            now,
            this.on(row, (e) => e.expired()),
          )
        : row;
    await this.repo.recordFailedView(settled.id, ctx.actor, now, FAILED_VIEW_DEDUPE_MS, deadlineOf(ctx));
    return { ...pushRecord(settled, now, this.baseOf(ctx)), payload: null, files: [] };
  }

  /** The gates of who may open a push (access-codes.ts); without them (HTTP test doubles) such a push opens for none. */
  private async accessGate(row: PushRow, options: RetrieveOptions, ctx: RequestContext, now: Date) {
    if (row.allowedNetworks.length === 0 && row.recipientEmails.length === 0) return null;
    if (!this.access) throw new ApiError('forbidden', 'This push cannot be opened here.');
    return this.access.gate(row, options.proof ?? {}, ctx, now, deadlineOf(ctx));
  }

  /** The passphrase gate (passphrase-gate.ts), with this request's actor, instant and deadline. */
  private passphraseGate(row: PushRow, passphrase: string | undefined, ctx: RequestContext, now: Date): Promise<void> {
    return checkPassphrase(row, passphrase, {
      repo: this.repo,
      limit: this.settings.passphraseAttemptsPerMinute,
      actor: ctx.actor,
      now,
      deadline: deadlineOf(ctx),
      within: this.on(row, (e) => e.failedPassphrase(ctx)),
    });
  }

  /** The events a change to an owned push queues in its transaction (none for an anonymous push, or without events). */
  private on(row: PushRow, pick: (events: PushEvents) => WithinChange): WithinChange | undefined {
    return this.events && row.ownerId !== null ? pick(this.events) : undefined;
  }

  /**
   * A workspace's push, not the caller's own, that the caller's role in its workspace lets them expire or audit. Asked
   * only for such pushes: the owner's own and personal pushes cost no lookup.
   */
  private async governed(row: PushRow, ctx: RequestContext, doing: 'expire' | 'audit'): Promise<boolean> {
    if (row.workspaceId === null || !this.workspaces || isOwner(row, ownerAsked(row, ctx))) return false;
    return this.workspaces.governs(row.workspaceId, ctx, doing);
  }

  /** The workspace a create names (or its key acts for), once the caller may create in it; null: the personal space. */
  private async createsIn(workspaceId: number | null | undefined, ctx: RequestContext): Promise<number | null> {
    return (await this.member(workspaceId ?? null, ctx, 'create'))?.workspaceId ?? null;
  }

  /** The caller's membership of the workspace named, or its key's (403 without workspaces); null: none, no lookup. */
  private async member(named: number | null, ctx: RequestContext, doing: 'create' | 'read') {
    const workspaceId = named ?? keyWorkspace(ctx);
    if (!workspaceId) return null;
    if (!this.workspaces) throw new ApiError('forbidden', 'This instance has no workspaces.');
    return this.workspaces.membership(workspaceId, ctx, doing);
  }
}

export function createPushService(deps: PushServiceDeps): PushService {
  return new PushOperations(deps);
}

/** No push has a token this long, or holding a NUL (which PostgreSQL could not even compare): unknown, 404. */
function validToken(urlToken: string): boolean {
  return typeof urlToken === 'string' && urlToken.length > 0 && urlToken.length <= 128 && !urlToken.includes('\u0000');
}
