/**
 * The tables of the request area, each described once: requests, the files attached to their asks, and their audit
 * entries. The migration (Migration20261227000000_requests) creates them; server/test/domain/schema.test.ts checks
 * these column lists against the migrated database.
 */
import type { RequestAuditEntry, RequestPublicKey, RequestState } from '@secret-push/sdk/generated';
import { column, defineTable } from '../db/table.js';

/** A request as stored: the ask, name and note as AES-256-GCM envelopes under the master key. */
export interface RequestRow {
  id: string;
  urlToken: string;
  ownerId: string;
  state: RequestState;
  askCiphertext: string | null;
  nameCiphertext: string | null;
  noteCiphertext: string | null;
  notifyEmailsTo: string;
  notifyEmailsToLocale: string;
  expireAfterDays: number;
  expireAfterSeconds: number;
  expireAfterViews: number;
  deletableByViewer: boolean;
  retrievalStep: boolean;
  /** The requester's X25519 public key (a JWK): answers must be sealed to it. */
  publicKey: RequestPublicKey | null;
  answerPushId: string | null;
  answerUrlToken: string | null;
  /** The sealed content key of a sealed answer (`sph1.`), as the responder's client sent it. */
  sealedKey: string | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  fulfilledAt: Date | null;
  collectedAt: Date | null;
  closedAt: Date | null;
  /** The instance's address as the create saw it (`PWPUSH_PUBLIC_BASE_URL`, else the request's): the links in emails. */
  baseUrl: string;
  /**
   * What the request's attachments store as sent (their contents). Counted against the requester's storage quota
   * while it is pending (triggers keep `user_storage`: Migration20270111000000_request_storage).
   */
  storedBytes: number;
  /** The workspace the request belongs to, or null: its requester's personal space. */
  workspaceId: number | null;
}

export const REQUESTS = defineTable<RequestRow>('requests', {
  id: column.text('id'),
  urlToken: column.text('url_token'),
  ownerId: column.text('user_id'),
  state: column.oneOf<RequestState>('state'),
  askCiphertext: column.textOrNull('ask_ciphertext'),
  nameCiphertext: column.textOrNull('name_ciphertext'),
  noteCiphertext: column.textOrNull('note_ciphertext'),
  notifyEmailsTo: column.text('notify_emails_to'),
  notifyEmailsToLocale: column.text('notify_emails_to_locale'),
  expireAfterDays: column.int('expire_after_days'),
  expireAfterSeconds: column.int('expire_after_seconds'),
  expireAfterViews: column.int('expire_after_views'),
  deletableByViewer: column.bool('deletable_by_viewer'),
  retrievalStep: column.bool('retrieval_step'),
  publicKey: column.jsonOrNull<RequestPublicKey>('public_key'),
  answerPushId: column.uuidOrNull('answer_push_id'),
  answerUrlToken: column.textOrNull('answer_url_token'),
  sealedKey: column.textOrNull('sealed_key'),
  createdAt: column.date('created_at'),
  updatedAt: column.date('updated_at'),
  expiresAt: column.date('expires_at'),
  fulfilledAt: column.dateOrNull('fulfilled_at'),
  collectedAt: column.dateOrNull('collected_at'),
  closedAt: column.dateOrNull('closed_at'),
  baseUrl: column.text('base_url'),
  storedBytes: column.int('stored_bytes'),
  workspaceId: column.intOrNull('workspace_id'),
});

export interface RequestFileRow {
  id: string;
  requestId: string;
  position: number;
  filenameCiphertext: string;
  contentType: string;
  size: number;
  /** The bytes as an AES-256-GCM envelope, when kept in PostgreSQL; else null. */
  content: Buffer | null;
  /** The object holding the bytes (a streamed envelope, ../files/), when kept in an object store; else null. */
  objectKey: string | null;
}

export const REQUEST_FILES = defineTable<RequestFileRow>('request_files', {
  id: column.text('id'),
  requestId: column.text('request_id'),
  position: column.int('position'),
  filenameCiphertext: column.text('filename_ciphertext'),
  contentType: column.text('content_type'),
  size: column.int('size'),
  content: column.bytesOrNull('content'),
  objectKey: column.textOrNull('object_key'),
});

export type RequestAuditKind = RequestAuditEntry['kind'];

export interface RequestAuditRow {
  id: string;
  requestId: string;
  kind: RequestAuditKind;
  ip: string;
  userAgent: string;
  referrer: string;
  userId: string | null;
  createdAt: Date;
}

export const REQUEST_AUDIT_ENTRIES = defineTable<RequestAuditRow>('request_audit_entries', {
  id: column.bigint('id'),
  requestId: column.text('request_id'),
  kind: column.oneOf<RequestAuditKind>('kind'),
  ip: column.text('ip'),
  userAgent: column.text('user_agent'),
  referrer: column.text('referrer'),
  userId: column.uuidOrNull('user_id'),
  createdAt: column.date('created_at'),
});

/** Every table the request area owns (the schema test walks them). */
export const REQUEST_AREA_TABLES = [REQUESTS, REQUEST_FILES, REQUEST_AUDIT_ENTRIES];
