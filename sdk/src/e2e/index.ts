/**
 * `@secret-push/sdk/e2e`: the end-to-end encryption of pushes on its own, for code that talks to the API itself
 * (the server's web pages bundle it with esbuild as `window.SecretPushE2E`; see sdk/README.md). Browser-safe: no
 * Node built-in and no HTTP client, only WebCrypto. The client (`createPush(…, { endToEnd: true })`,
 * `retrieveLink`, `downloadFile`) uses the very same functions.
 */
export {
  additionalData,
  BINARY_MAGIC,
  BINARY_OVERHEAD,
  CLIENT_ENCRYPTION,
  decryptBytes,
  decryptText,
  encryptBytes,
  encryptText,
  generateKey,
  importKey,
  isKey,
  type ItemRole,
  IV_BYTES,
  KEY_BYTES,
  TAG_BYTES,
  TEXT_PREFIX,
} from './envelope.js';
export { buildShareLink, parseShareLink, type ShareLink } from './link.js';
export {
  isEndToEnd,
  isOpenedFile,
  isSupportedScheme,
  MAX_FILENAME_PLAINTEXT_BYTES,
  MAX_PAYLOAD_PLAINTEXT_BYTES,
  MAX_QR_CHARACTERS,
  openFile,
  openPush,
  plaintextErrors,
  sealPush,
  type SealedPush,
} from './seal.js';
export {
  generateRequestKeyPair,
  openContentKey,
  type RequestKeyPair,
  SEALED_KEY_PREFIX,
  SEALING_SCHEME,
  sealContentKey,
} from './request-seal.js';
export { base64UrlToBytes, bytesToBase64Url } from './encoding.js';
export { base64ToBytes, bytesToBase64 } from '../files.js';
export {
  DecryptionError,
  EndToEndError,
  MissingKeyError,
  SecretPushError,
  UnsupportedEncryptionError,
  ValidationError,
} from '../errors.js';
export type { ClientEncryption, PushFile, PushInput, PushRetrieval } from '../generated/types.gen.js';
