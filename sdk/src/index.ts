/**
 * @secret-push/sdk: a typed client for the Secret Push JSON API v2 (Password Pusher compatible).
 * Runs in Node 18+ (ESM or CommonJS) and browsers; this entry imports no Node built-in (file paths: `@secret-push/sdk/node`,
 * mocks: `@secret-push/sdk/mocks`, end-to-end encryption without the HTTP client: `@secret-push/sdk/e2e`).
 */
export {
  createSecretPushClient,
  type CreatedPush,
  type CreatePushOptions,
  type NotifyEmailsParams,
  type PagedList,
  type RequestOptions,
  type RetrieveLinkOptions,
  type RetrieveOptions,
  type SecretPushClient,
  type SecretPushClientOptions,
} from './client.js';
export {
  AuthenticationError,
  BadRequestError,
  DecryptionError,
  EndToEndError,
  ForbiddenError,
  MissingKeyError,
  NetworkError,
  NotFoundError,
  PassphraseError,
  PassphraseIncorrectError,
  PassphraseRequiredError,
  PayloadTooLargeError,
  RateLimitError,
  RequestAbortedError,
  SecretPushError,
  ServerError,
  ServiceUnavailableError,
  StorageQuotaError,
  TimeoutError,
  UnexpectedResponseError,
  UnsupportedEncryptionError,
  ValidationError,
} from './errors.js';
export {
  type CreatePushParams,
  type FileAttachment,
  type FileInput,
  fileFromBlob,
  fileFromBytes,
  toFileUpload,
} from './files.js';
// The end-to-end helpers (also on their own, without the HTTP client, as `@secret-push/sdk/e2e`).
export {
  buildShareLink,
  CLIENT_ENCRYPTION,
  isEndToEnd,
  openFile,
  openPush,
  parseShareLink,
  sealPush,
  type SealedPush,
  type ShareLink,
} from './e2e/index.js';
export { type Page, parseLinkHeader } from './pagination.js';
// Receiving webhooks: the Standard Webhooks signature checked with WebCrypto, the typed event returned.
export {
  verifyWebhook,
  type VerifyWebhookOptions,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
  type WebhookHeaders,
} from './webhooks.js';
export type {
  AuditEntry,
  AuditLog,
  ClientEncryption,
  ClientEncryptionFeature,
  ErrorResponse,
  FileUpload,
  PreviewResponse,
  Push,
  PushFile,
  PushInput,
  PushKind,
  PushOwner,
  PushRetrieval,
  VersionReport,
  Webhook,
  WebhookDelivery,
  WebhookEvent,
  WebhookEventType,
  PushCreatedEvent,
  PushViewedEvent,
  PushFailedPassphraseEvent,
  PushExpiredEvent,
  PushDeletedEvent,
  WebhookTestEvent,
} from './generated/types.gen.js';
