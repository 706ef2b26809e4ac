/**
 * @secret-push/sdk: a typed client for the Secret Push JSON API v2 (Password Pusher compatible).
 * Runs in Node 22+ and browsers; this entry imports no Node built-in (file paths: `@secret-push/sdk/node`,
 * mocks: `@secret-push/sdk/mocks`).
 */
export {
  createSecretPushClient,
  type CreateOptions,
  type CreatePushParams,
  type PagedList,
  type RequestOptions,
  type RetrieveOptions,
  type SecretPushClient,
  type SecretPushClientOptions,
} from './client.js';
export {
  AuthenticationError,
  BadRequestError,
  ForbiddenError,
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
  TimeoutError,
  UnexpectedResponseError,
  ValidationError,
} from './errors.js';
export { type FileAttachment, type FileInput, fileFromBlob, fileFromBytes, toFileUpload } from './files.js';
export { type Page, parseLinkHeader } from './pagination.js';
export type {
  AuditEntry,
  AuditLog,
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
} from './generated/types.gen.js';
