/**
 * Whole pushes under the end-to-end scheme: `sealPush` turns what a sender gives (plaintext payload, files as bytes
 * or Blobs) into the wire's `PushInput` of envelopes, after the checks that need the plaintext (the server cannot
 * make them); `openPush` turns a retrieved record back into plaintext; `openFile` opens a downloaded file.
 * Browser-safe: no Node built-in, no HTTP client.
 */
import { DecryptionError, MissingKeyError, UnsupportedEncryptionError, ValidationError } from '../errors.js';
import { base64ToBytes, type CreatePushParams, type FileInput, isFileUpload } from '../files.js';
import { bytesToBase64 } from '../files.js';
import type { ClientEncryption, PushFile, PushInput, PushKind, PushRetrieval } from '../generated/types.gen.js';
import { utf8Length } from './encoding.js';
import {
  CLIENT_ENCRYPTION,
  decryptBytes,
  decryptText,
  encryptBytes,
  encryptText,
  generateKey,
  importKey,
} from './envelope.js';

/**
 * The spec's URL rule (PushInput, kind url), applied by the client to an encrypted push's plaintext. A copy (this
 * module stays small, without the generated schemas): sdk/test/mocks/spec-sync.test.ts compares it with the contract.
 */
// eslint-disable-next-line no-useless-escape -- character for character the contract's pattern
export const URL_PAYLOAD = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[A-Za-z0-9\[][^\s]*$/;
/** The spec's file name rule (FileUpload.filename); a copy, compared with the contract like URL_PAYLOAD. */
export const FILENAME = /^[^/\\\x00-\x1f]+$/;
/** The longest text plaintext whose envelope fits the payload's 1,048,576 characters. */
export const MAX_PAYLOAD_PLAINTEXT_BYTES = 786_400;
/** The longest file name plaintext whose envelope fits the file name's 255 characters. */
export const MAX_FILENAME_PLAINTEXT_BYTES = 159;
export const MAX_QR_CHARACTERS = 1024;

/** A push ready to send: the wire input (envelopes, `client_encryption` set) and the key for the link. */
export interface SealedPush {
  push: PushInput;
  /** base64url; goes into the share link's fragment only (`buildShareLink(record.html_url, key)`). */
  key: string;
}

type FieldErrors = Record<string, string[]>;

/** Whether a record (or a preview) is marked as end-to-end encrypted. */
export function isEndToEnd(record: { client_encryption?: ClientEncryption | null | undefined }): boolean {
  return record.client_encryption !== undefined && record.client_encryption !== null;
}

/** Whether this SDK can open a push of this marker. */
export function isSupportedScheme(marker: ClientEncryption | null | undefined): boolean {
  return marker?.scheme === CLIENT_ENCRYPTION.scheme && marker.version === CLIENT_ENCRYPTION.version;
}

function kindOf(params: CreatePushParams): PushKind {
  return params.kind ?? ((params.files?.length ?? 0) > 0 ? 'file' : 'text');
}

function isUrl(text: string): boolean {
  if (!URL_PAYLOAD.test(text)) return false;
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The create rules that need the plaintext, which the server cannot check on an encrypted push (per field, in the
 * API's wording). The rules the server still applies (expiry bounds, file count and size, …) are left to it.
 */
export function plaintextErrors(params: CreatePushParams): FieldErrors {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const kind = kindOf(params);
  const files = params.files ?? [];
  const payload = params.payload;
  if (kind === 'file') {
    if (files.length === 0) add('files', 'needs at least one file for a file push');
  } else {
    if (files.length > 0) add('files', 'are only allowed on file pushes');
    if (payload === undefined) add('payload', 'is required');
    else if (payload === '') add('payload', "can't be blank");
    else if (kind === 'url' && !isUrl(payload)) add('payload', 'must be a valid HTTP or HTTPS URL');
    else if (kind === 'qr' && [...payload].length > MAX_QR_CHARACTERS)
      add('payload', `is too long (at most ${MAX_QR_CHARACTERS} characters)`);
  }
  if (payload !== undefined && utf8Length(payload) > MAX_PAYLOAD_PLAINTEXT_BYTES) {
    add('payload', `is too long for an encrypted push (at most ${MAX_PAYLOAD_PLAINTEXT_BYTES} bytes of UTF-8)`);
  }
  files.forEach((file, i) => {
    const label = `file ${i + 1} filename`;
    const name = file.filename;
    if (typeof name !== 'string' || name === '') add('files', `${label} can't be blank`);
    else if (!FILENAME.test(name)) add('files', `${label} must be a bare file name (no path or control characters)`);
    else if (utf8Length(name) > MAX_FILENAME_PLAINTEXT_BYTES) {
      add(
        'files',
        `${label} is too long for an encrypted push (at most ${MAX_FILENAME_PLAINTEXT_BYTES} bytes of UTF-8)`,
      );
    }
  });
  return errors;
}

async function fileBytes(file: FileInput, index: number): Promise<Uint8Array> {
  if (!isFileUpload(file))
    return file.data instanceof Uint8Array ? file.data : new Uint8Array(await file.data.arrayBuffer());
  try {
    return base64ToBytes(file.content);
  } catch {
    throw new ValidationError('The push is not valid.', {
      code: 'validation_failed',
      errors: { files: [`file ${index + 1} content must be standard base64`] },
    });
  }
}

/**
 * Encrypts a push for `createPush`: the payload (omitted when a file push has no text), every file name and every
 * file's bytes, each under its own IV and role. Files go out as `application/octet-stream`. `name`, `note` and
 * `passphrase` pass through in the clear (the server needs them). Throws `ValidationError` (no status) when the
 * plaintext breaks a rule the server cannot check. `key` defaults to a new random key.
 */
export async function sealPush(params: CreatePushParams, options: { key?: string } = {}): Promise<SealedPush> {
  const errors = plaintextErrors(params);
  if (Object.keys(errors).length > 0)
    throw new ValidationError('The push is not valid.', { code: 'validation_failed', errors });
  const key = options.key ?? generateKey();
  const cryptoKey = await importKey(key);
  const { payload, files, kind: _kind, client_encryption: _marker, ...rest } = params;
  const kind = kindOf(params);
  const push: PushInput = { ...rest, kind, client_encryption: { ...CLIENT_ENCRYPTION } };
  if (payload !== undefined && !(kind === 'file' && payload === '')) {
    push.payload = await encryptText(cryptoKey, payload, { item: 'payload', kind });
  }
  if (files !== undefined) {
    push.files = await Promise.all(
      files.map(async (file, index) => ({
        filename: await encryptText(cryptoKey, file.filename, { item: 'file-name', index }),
        content_type: 'application/octet-stream',
        content: bytesToBase64(
          await encryptBytes(cryptoKey, await fileBytes(file, index), { item: 'file-content', index }),
        ),
      })),
    );
  }
  return { push, key };
}

// Signed download links of encrypted files → what opens their bytes (null: the push was not opened, no key). Kept
// by link rather than on the file object, so the key never becomes a property a caller might log or serialise,
// and copies of a file (spread, JSON, structuredClone) still download decrypted. Links live 5 minutes; entries go
// after twice that.
const LINK_MEMORY_MS = 10 * 60 * 1000;
const fileSecrets = new Map<string, { key: CryptoKey | null; index: number; until: number }>();

function remember(url: string, key: CryptoKey | null, index: number): void {
  const now = Date.now();
  for (const [link, secret] of fileSecrets) if (secret.until <= now) fileSecrets.delete(link);
  fileSecrets.set(url, { key, index, until: now + LINK_MEMORY_MS });
}

function secretOf(file: PushFile | string): { key: CryptoKey | null; index: number } | undefined {
  const secret = fileSecrets.get(typeof file === 'string' ? file : file.url);
  return secret && secret.until > Date.now() ? secret : undefined;
}

/** Remembers that a record's files are envelopes, so `openFile`/`downloadFile` refuse them instead of returning ciphertext. */
export function markSealed(record: PushRetrieval): void {
  if (isEndToEnd(record)) record.files.forEach((file, index) => remember(file.url, null, index));
}

/**
 * Opens a retrieved record with the key of its link: the plaintext payload (null for an expired push, `""` for a
 * file push without text) and the files' real names. Each returned file can then be opened with `openFile` (or
 * the client's `downloadFile`). Refuses a record that is not marked as encrypted: a link with a key promises the
 * sender's encrypted text, and a server could otherwise present text of its own.
 */
export async function openPush(record: PushRetrieval, key: string | CryptoKey): Promise<PushRetrieval> {
  if (!isEndToEnd(record)) {
    throw new DecryptionError(
      "the link carries a key, but the push is not end-to-end encrypted: its content cannot be trusted as the sender's",
      {
        code: 'not_encrypted',
      },
    );
  }
  if (!isSupportedScheme(record.client_encryption)) {
    throw new UnsupportedEncryptionError('the push uses an encryption scheme this SDK does not know', {
      code: 'unsupported_scheme',
      body: record,
    });
  }
  const cryptoKey = await importKey(key);
  const kind = record.kind;
  let payload = record.payload;
  if (payload !== null && !(kind === 'file' && payload === '')) {
    payload = await decryptText(cryptoKey, payload, { item: 'payload', kind });
  }
  const files = await Promise.all(
    record.files.map(async (file, index): Promise<PushFile> => {
      const opened = { ...file, filename: await decryptText(cryptoKey, file.filename, { item: 'file-name', index }) };
      remember(file.url, cryptoKey, index);
      return opened;
    }),
  );
  return { ...record, payload, files };
}

/** Whether a file (or its download link) came from an opened push: its bytes are decrypted on download. */
export function isOpenedFile(file: PushFile | string): boolean {
  return Boolean(secretOf(file)?.key);
}

/** Whether a file (or its download link) belongs to an encrypted push retrieved without a key. */
export function isSealedFile(file: PushFile | string): boolean {
  const secret = secretOf(file);
  return secret !== undefined && secret.key === null;
}

/** Opens the downloaded bytes (the `SPE1` envelope) of a file of an opened push (the file, a copy, or its `url`). */
export async function openFile(file: PushFile | string, envelope: Uint8Array): Promise<Uint8Array> {
  const secret = secretOf(file);
  if (!secret?.key) {
    if (secret)
      throw new MissingKeyError('this file is end-to-end encrypted and its push was retrieved without a key', {
        code: 'missing_key',
      });
    throw new TypeError(
      'openFile: the file does not come from a push opened in the last 10 minutes with openPush or retrieveLink',
    );
  }
  return decryptBytes(secret.key, envelope, { item: 'file-content', index: secret.index });
}
