/**
 * The tables of the push area, each described once: pushes, their files, their audit entries and the passphrase
 * attempts. The migrations create them; server/test/domain/schema.test.ts checks these column lists against the
 * migrated database, and the compiler checks them against the row types (a PushState field without a column does
 * not compile).
 */
import type { AuditEntry, ClientEncryption, PushKind } from '@secret-push/sdk/generated';
import type { PushState } from '@secret-push/rules';
import { column, defineTable } from '../db/table.js';

/** A push as stored: its state plus its id and secrets (AES-256-GCM envelopes and a scrypt hash). */
export interface PushRow extends PushState {
  id: string;
  payloadCiphertext: string | null;
  nameCiphertext: string | null;
  noteCiphertext: string | null;
  passphraseHash: string | null;
  /** Bytes of secrets the push stores (payload and file contents, as sent): what the storage quotas count. */
  storedBytes: number;
  /** Made from the answer to a request: its first retrieval moves the request to `collected` (../request/). */
  answersRequest: boolean;
  /** The workspace the push belongs to (Migration20270121000000_workspaces), or null: its owner's personal space. */
  workspaceId: number | null;
}

export const PUSHES = defineTable<PushRow>('pushes', {
  id: column.text('id'),
  urlToken: column.text('url_token'),
  kind: column.oneOf<PushKind>('kind'),
  ownerId: column.uuidOrNull('user_id'),
  payloadCiphertext: column.textOrNull('payload_ciphertext'),
  nameCiphertext: column.textOrNull('name_ciphertext'),
  noteCiphertext: column.textOrNull('note_ciphertext'),
  passphraseHash: column.textOrNull('passphrase_hash'),
  passphraseProtected: column.bool('passphrase_protected'),
  clientEncryption: column.jsonOrNull<ClientEncryption>('client_encryption'),
  expireAfterDays: column.int('expire_after_days'),
  expireAfterSeconds: column.int('expire_after_seconds'),
  expireAfterViews: column.int('expire_after_views'),
  viewsUsed: column.int('views_used'),
  deletableByViewer: column.bool('deletable_by_viewer'),
  retrievalStep: column.bool('retrieval_step'),
  expired: column.bool('expired'),
  expiredOn: column.dateOrNull('expired_on'),
  deleted: column.bool('deleted'),
  createdAt: column.date('created_at'),
  updatedAt: column.date('updated_at'),
  expiresAt: column.date('expires_at'),
  storedBytes: column.int('stored_bytes'),
  answersRequest: column.bool('answers_request'),
  allowedNetworks: column.textArray('allowed_networks'),
  recipientEmails: column.textArray('recipient_emails'),
  workspaceId: column.intOrNull('workspace_id'),
});

export interface PushFileRow {
  id: string;
  pushId: string;
  position: number;
  filenameCiphertext: string;
  contentType: string;
  size: number;
  /** The bytes as an AES-256-GCM envelope (../crypto/envelope.ts), when they are kept in PostgreSQL; else null. */
  content: Buffer | null;
  /** The object holding the bytes (a streamed envelope, ../files/), when they are kept in an object store; else null. */
  objectKey: string | null;
  createdAt: Date;
}

export const PUSH_FILES = defineTable<PushFileRow>('push_files', {
  id: column.text('id'),
  pushId: column.text('push_id'),
  position: column.int('position'),
  filenameCiphertext: column.text('filename_ciphertext'),
  contentType: column.text('content_type'),
  size: column.int('size'),
  content: column.bytesOrNull('content'),
  objectKey: column.textOrNull('object_key'),
  createdAt: column.date('created_at'),
});

export type AuditKind = AuditEntry['kind'];

export interface AuditRow {
  id: string;
  pushId: string;
  kind: AuditKind;
  ip: string;
  userAgent: string;
  referrer: string;
  userId: string | null;
  createdAt: Date;
  /**
   * The webhooks' outbox (webhooks/outbox.ts): the id of the transaction that wrote a `creation` or `view` entry of
   * an owner with an enabled webhook, whose events the dispatcher makes from the entry; null otherwise.
   */
  tx: string | null;
  /** With `tx`: the push's count of views after this entry (its events' counters). */
  viewsUsed: number | null;
}

export const AUDIT_ENTRIES = defineTable<AuditRow>('audit_entries', {
  id: column.bigint('id'),
  pushId: column.text('push_id'),
  kind: column.oneOf<AuditKind>('kind'),
  ip: column.text('ip'),
  userAgent: column.text('user_agent'),
  referrer: column.text('referrer'),
  userId: column.uuidOrNull('user_id'),
  createdAt: column.date('created_at'),
  tx: column.textOrNull('tx'),
  viewsUsed: column.intOrNull('views_used'),
});

/** A passphrase attempt: a failure (counted against the push for a minute), or one being checked (holds a place). */
export interface PassphraseAttemptRow {
  id: string;
  pushId: string;
  attemptedAt: Date;
  failed: boolean;
}

export const PASSPHRASE_ATTEMPTS = defineTable<PassphraseAttemptRow>('passphrase_attempts', {
  id: column.bigint('id'),
  pushId: column.text('push_id'),
  attemptedAt: column.date('attempted_at'),
  failed: column.bool('failed'),
});

/**
 * An idempotency key of a create: who sent it (`scope`), its SHA-256, the body it came with, and, once the create has
 * committed, the push it made (a replay is answered from that push; no secret is kept here).
 */
export interface IdempotencyKeyRow {
  scope: string;
  keyDigest: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  pushId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export const IDEMPOTENCY_KEYS = defineTable<IdempotencyKeyRow>('idempotency_keys', {
  scope: column.text('scope'),
  keyDigest: column.text('key_digest'),
  fingerprint: column.text('fingerprint'),
  state: column.oneOf<'in_flight' | 'done'>('state'),
  pushId: column.uuidOrNull('push_id'),
  createdAt: column.date('created_at'),
  expiresAt: column.date('expires_at'),
});

/** Bytes anonymous creators stored, per client address (`scope`) and clock hour (`window_start`). */
interface StorageWindowRow {
  scope: string;
  windowStart: Date;
  bytes: number;
}

const STORAGE_WINDOWS = defineTable<StorageWindowRow>('storage_windows', {
  scope: column.text('scope'),
  windowStart: column.date('window_start'),
  bytes: column.int('bytes'),
});

/** Every table the push area owns (the schema test walks them). */
export const PUSH_AREA_TABLES = [
  PUSHES,
  PUSH_FILES,
  AUDIT_ENTRIES,
  PASSPHRASE_ATTEMPTS,
  IDEMPOTENCY_KEYS,
  STORAGE_WINDOWS,
];
