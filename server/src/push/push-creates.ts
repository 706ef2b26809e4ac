/**
 * A push's create (push-service.ts's `create`, `createValidated` and `createAnswer`): its rows made (secrets
 * encrypted, files sealed in the row or stored as objects), stored counted against the storage quota that governs the
 * caller, with its events and email in its transaction; an Idempotency-Key's replay; the push of a request's answer.
 */
import { randomUUID } from 'node:crypto';
import type { PushOwner } from '@secret-push/sdk/generated';
import {
  bytesInMemory,
  newPushState,
  normalizePushInput,
  notFound,
  ownerRecord,
  type SchemaValidPushInput,
  type ValidFile,
  turnOn,
  type ValidPush,
  validationFailed,
} from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import { hashPassphrase } from '../crypto/passphrase.js';
import { newFileId, newUrlToken } from '../crypto/tokens.js';
import type { Db } from '../db/sql.js';
import { storeUnavailable, StreamedFile, type FileObjects } from '../files/file-objects.js';
import { StoreUnavailableError } from '../files/object-store.js';
import type { NotifyService, PreparedNotify } from '../mail/notify-service.js';
import type { RequestContext } from '../request-context.js';
import { keyScope, presentKey, type IdempotencyRequest } from './idempotency.js';
import { envelopeContexts as aad, deadlineOf, decodeBase64, nowOf } from './push-context.js';
import type { PushEvents } from './push-followers.js';
import type { CreateWrites, KeyRef, PushRepository, WithinCreate } from './push-repository.js';
import type { PushFileRow, PushRow } from './push-tables.js';
import {
  addressQuota,
  answerDoesNotFit,
  answerLargerThanQuota,
  governingQuota,
  largerThanQuota,
  quotaExceeded,
  windowResetSeconds,
  type StorageQuotaState,
} from './storage-quota.js';

export interface CreateOptions {
  idempotency?: IdempotencyRequest;
  /** The workspace the create names (`workspace_id` / `account_id`); absent or null: the caller's personal space. */
  workspaceId?: number | null;
}

/**
 * A created push, or the push a replayed Idempotency-Key made; `storage` says where the create left the storage quota
 * that governs it (not part of the record: the API answers it as RateLimit fields).
 */
export type Created = PushOwner & { readonly replayed?: true; readonly storage?: StorageQuotaState };

/** A push made from the answer to a request (../request/request-service.ts): its owner, and the request's claim. */
export interface AnswerOptions {
  /** The requester, who owns the push (and whose storage quota counts its bytes). */
  ownerId: string;
  /**
   * The request's workspace (issue 41), or null: the requester's personal space. The answer is a push of that
   * workspace, counted against the workspace's storage quota (its owners and admins see it, its webhooks get its events).
   */
  workspaceId: number | null;
  /** Bytes of the quota that `claim.after` frees in the same transaction (the request's ask, erased). */
  releases: number;
  /** Inside the create's transaction: before the push is stored (lock and check the request), and after (link it). */
  claim: AnswerClaim;
}

interface AnswerClaim {
  before(tx: Db): Promise<void>;
  after(tx: Db, push: PushRow): Promise<void>;
}

/** Retry-After of a user's refused create when no expiry by time frees enough (only while pushes change under it). */
const QUOTA_FALLBACK_RETRY_SECONDS = 3600;

/** What a create needs of the service around it: the links' base and the owner's view of a push (a replay's answer). */
export interface CreateViews {
  baseOf(ctx: RequestContext): string;
  ownerView(row: PushRow, now: Date, base: string): PushOwner;
}

/** The create path of the push operations (push-service.ts's PushOperations holds one). */
export class PushCreates {
  constructor(
    private readonly repo: PushRepository,
    private readonly settings: Settings,
    private readonly keyring: Keyring,
    private readonly notify: NotifyService | undefined,
    private readonly events: PushEvents | undefined,
    private readonly files: FileObjects | undefined,
    private readonly views: CreateViews,
    /** Whether a listed person can prove who they are (push-service.ts's `recipientLists`); else 422. */
    private readonly recipientLists: boolean,
  ) {}

  async createAnswer(input: SchemaValidPushInput, ctx: RequestContext, answer: AnswerOptions): Promise<PushRow> {
    const now = nowOf(ctx);
    const valid = normalizePushInput(input, this.settings, decodeBase64);
    const { push, files, uploaded } = await this.newRows(valid, answer.ownerId, now, answer.workspaceId);
    push.answersRequest = true;
    return this.storingObjects(valid, uploaded, async () => {
      const limit = governingQuota(this.settings, answer.ownerId) ? this.settings.userStorageBytes : null;
      // The one who answers may be anyone: the refusals say nothing of what the requester holds (storage-quota.ts).
      if (limit !== null && push.storedBytes > limit) throw answerLargerThanQuota(push.storedBytes, limit);
      const quota = limit === null ? null : { limit, released: answer.releases };
      const counted = await this.repo.insertAnswer(push, files, ctx.actor, deadlineOf(ctx), quota, now, answer.claim);
      if ('refused' in counted) throw answerDoesNotFit(push.storedBytes);
      return counted.row;
    });
  }

  private encryptOptional(plain: string, context: string): string | null {
    return plain === '' ? null : this.keyring.encryptText(plain, context);
  }

  private baseOf(ctx: RequestContext): string {
    return this.views.baseOf(ctx);
  }

  private ownerView(row: PushRow, now: Date, base: string): PushOwner {
    return this.views.ownerView(row, now, base);
  }

  /**
   * Runs a create whose file objects are stored (`uploaded`: those this service stored from bytes in memory; the
   * StreamedFiles of `valid` were stored by the HTTP edge as it read the body): once it committed, the streamed ones
   * are adopted (kept); if it failed, what this service uploaded is deleted (the edge deletes the rest).
   */
  private async storingObjects<T>(valid: ValidPush, uploaded: string[], create: () => Promise<T>): Promise<T> {
    let created: T;
    try {
      created = await create();
    } catch (error) {
      void this.files?.remove(uploaded);
      throw error;
    }
    for (const file of valid.files) if (file.bytes instanceof StreamedFile) file.bytes.adopted = true;
    return created;
  }

  /** A file's row: its bytes sealed in the row (PostgreSQL), or in an object (stored now, or already streamed). */
  private async newFile(
    file: ValidFile,
    pushId: string,
    position: number,
    now: Date,
    uploaded: string[],
  ): Promise<PushFileRow> {
    const { keyring } = this;
    const streamed = file.bytes instanceof StreamedFile ? file.bytes : null;
    const fileId = streamed?.fileId ?? newFileId();
    const row = {
      id: fileId,
      pushId,
      position,
      filenameCiphertext: keyring.encryptText(file.filename, aad.filename(fileId)),
      contentType: file.contentType,
      size: file.bytes.length,
      createdAt: now,
    };
    if (streamed) return { ...row, content: null, objectKey: streamed.key };
    const bytes = bytesInMemory(file.bytes);
    if (!this.files) {
      const content = keyring.encrypt(
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        aad.content(fileId),
      );
      return { ...row, content, objectKey: null };
    }
    const objectKey = this.files.keyFor('push', fileId);
    uploaded.push(objectKey);
    try {
      await this.files.storeBytes(objectKey, aad.content(fileId), bytes);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw storeUnavailable('create');
      throw error;
    }
    return { ...row, content: null, objectKey };
  }

  /** The row of a new push (secrets encrypted) and its files (their objects stored first, when in an object store). */
  private async newRows(
    valid: ValidPush,
    ownerId: string | null,
    now: Date,
    workspaceId: number | null = null,
  ): Promise<{ push: PushRow; files: PushFileRow[]; uploaded: string[] }> {
    const id = randomUUID();
    const passphraseHash = valid.passphrase !== null ? await hashPassphrase(valid.passphrase) : null;
    const push: PushRow = {
      ...newPushState(valid, { urlToken: newUrlToken(), ownerId, workspaceId }, now),
      id,
      payloadCiphertext: this.encryptOptional(valid.payload, aad.payload(id)),
      nameCiphertext: this.encryptOptional(valid.name, aad.name(id)),
      noteCiphertext: this.encryptOptional(valid.note, aad.note(id)),
      passphraseHash,
      storedBytes:
        Buffer.byteLength(valid.payload, 'utf8') + valid.files.reduce((sum, file) => sum + file.bytes.length, 0),
      answersRequest: false,
    };
    const uploaded: string[] = [];
    const files: PushFileRow[] = [];
    try {
      for (const [position, file] of valid.files.entries())
        files.push(await this.newFile(file, id, position, now, uploaded));
    } catch (error) {
      void this.files?.remove(uploaded);
      throw error;
    }
    return { push, files, uploaded };
  }

  /** Stores the rows, counted against the storage quota that governs the caller (if any). */
  private async store(
    push: PushRow,
    files: PushFileRow[],
    ctx: RequestContext,
    now: Date,
    key?: KeyRef,
    writes?: CreateWrites,
  ): Promise<{ row: PushRow; storage?: StorageQuotaState }> {
    const { repo, settings } = this;
    const quota = governingQuota(settings, ctx.actor.userId);
    if (!quota) return { row: await repo.insert(push, files, ctx.actor, deadlineOf(ctx), key, writes) };
    const limit = quota === 'anonymous' ? settings.anonymousStoragePerHour : settings.userStorageBytes;
    if (push.storedBytes > limit) throw largerThanQuota(quota, push.storedBytes, limit);
    const counted =
      quota === 'anonymous'
        ? await repo.insertCountedByAddress(
            push,
            files,
            ctx.actor,
            deadlineOf(ctx),
            addressQuota(settings, ctx.actor.ip, now),
            key,
          )
        : await repo.insertCountedForUser(push, files, ctx.actor, deadlineOf(ctx), limit, now, key, writes);
    if ('refused' in counted) {
      // The anonymous window starts again on the hour; a user's space frees as pushes expire (by time at the latest).
      const retryAfter = counted.freeAt
        ? Math.max(1, Math.ceil((counted.freeAt.getTime() - now.getTime()) / 1000))
        : QUOTA_FALLBACK_RETRY_SECONDS;
      throw quotaExceeded(quota, push.storedBytes, limit, counted.usedBytes, retryAfter);
    }
    const remaining = limit - counted.usedBytes;
    return {
      row: counted.row,
      storage: { quota, limit, remaining, ...(quota === 'anonymous' ? { resetSeconds: windowResetSeconds(now) } : {}) },
    };
  }

  async createFrom(
    input: SchemaValidPushInput,
    ctx: RequestContext,
    key?: KeyRef,
    workspaceId: number | null = null,
  ): Promise<Created> {
    const now = nowOf(ctx);
    const valid = normalizePushInput(input, this.settings, decodeBase64);
    if (valid.recipientEmails.length > 0 && !this.recipientLists) {
      const field = input.recipient_emails ? 'recipient_emails' : 'authenticated_recipients';
      throw validationFailed({ [field]: [`are not available: ${turnOn('email', this.settings.env)}`] });
    }
    // Checked before anything is written: a refused notification refuses the create (nothing stored, nothing sent).
    const notify = this.notify?.prepareForCreate(input, ctx) ?? null;
    const created = this.events?.prepareCreate(input, ctx);
    const { push, files, uploaded } = await this.newRows(valid, ctx.actor.userId, now, workspaceId);
    const mail = notify ? this.mailWithin(notify, ctx) : undefined;
    const after: WithinCreate | undefined =
      mail && created?.after
        ? async (tx, row) => {
            await mail(tx, row);
            await created.after!(tx, row);
          }
        : (mail ?? created?.after);
    const writes: CreateWrites = {
      ...(created?.ahead ? { ahead: created.ahead } : {}),
      ...(created?.inStatement ? { inStatement: created.inStatement } : {}),
      ...(after ? { after } : {}),
    };
    const { row, storage } = await this.storingObjects(valid, uploaded, () =>
      this.storeWithFreshToken(push, files, ctx, now, key, writes),
    );
    const record: PushOwner = {
      ...ownerRecord(row, now, this.baseOf(ctx), { name: valid.name, note: valid.note }),
      push_id: row.id,
      // Echoed as the reference does, only when asked for.
      ...(notify ? { notify_emails_to: input.notify_emails_to!, notify_emails_to_locale: notify.locale } : {}),
    };
    // Not enumerable: the record is what clients get; the quota's state travels beside it, as RateLimit fields.
    return storage ? Object.defineProperty(record, 'storage', { value: storage, enumerable: false }) : record;
  }

  /** `store`, with another url_token after a collision (23505 on url_token: 120 random bits; at most 3 times). */
  private async storeWithFreshToken(
    push: PushRow,
    files: PushFileRow[],
    ctx: RequestContext,
    now: Date,
    key: KeyRef | undefined,
    writes: CreateWrites,
  ): Promise<{ row: PushRow; storage?: StorageQuotaState }> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.store(push, files, ctx, now, key, writes);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === '23505' && attempt < 3 && /url_token/.test(String((err as Error).message))) {
          push.urlToken = newUrlToken();
          continue;
        }
        throw err;
      }
    }
  }

  /** The create's email notification, written in its transaction (the entry, the notification, the job). */
  private mailWithin(notify: PreparedNotify, ctx: RequestContext): WithinCreate {
    return (tx, row) => this.notify!.enqueueWithPush(tx, row, notify, ctx);
  }

  /** A create with an Idempotency-Key: fresh (create, marking the key in the same statement), or a replay. */
  async createKeyed(
    input: SchemaValidPushInput,
    ctx: RequestContext,
    idempotency: IdempotencyRequest,
    workspaceId: number | null = null,
  ): Promise<Created> {
    const { repo } = this;
    const outcome = await presentKey(repo, idempotency, keyScope(ctx.actor.userId, ctx.actor.ip), nowOf(ctx));
    if (outcome.kind === 'replay') {
      const row = await repo.findById(outcome.pushId);
      if (!row) throw notFound();
      return Object.assign(this.ownerView(row, nowOf(ctx), this.baseOf(ctx)), { replayed: true as const });
    }
    try {
      return await this.createFrom(input, ctx, outcome.ref, workspaceId);
    } catch (error) {
      // A create that failed made nothing: its key may be used again (a 503 after the deadline made nothing either).
      await repo.releaseKey(outcome.ref).catch(() => undefined);
      throw error;
    }
  }
}
