/**
 * The `aes-256-gcm` scheme, version 1, of end-to-end encrypted pushes, as the API description specifies it
 * ("End-to-end encrypted pushes"): a random 256-bit key per push, a fresh random 96-bit IV per item, 128-bit tags,
 * and additional data that binds the scheme, the version and the item's role. Only WebCrypto
 * (`globalThis.crypto.subtle`), so the same code runs in Node 19+ (Node 18 with `--experimental-global-webcrypto`) and in browsers (secure contexts).
 */
import { DecryptionError, MissingKeyError, UnsupportedEncryptionError } from '../errors.js';
import type { ClientEncryption, PushKind } from '../generated/types.gen.js';
import { base64UrlToBytes, bytesToBase64Url, fromUtf8, utf8 } from './encoding.js';

/** The marker of a push encrypted with this scheme (`client_encryption` on create and in the records). */
export const CLIENT_ENCRYPTION: Readonly<ClientEncryption> = Object.freeze({ scheme: 'aes-256-gcm', version: 1 });

export const KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
/** `spe1.` + base64url(IV ‖ ciphertext ‖ tag): payloads and file names. */
export const TEXT_PREFIX = 'spe1.';
/** The ASCII bytes `SPE1` that start a binary envelope (file bytes): `SPE1` ‖ IV ‖ ciphertext ‖ tag. */
export const BINARY_MAGIC: readonly number[] = [0x53, 0x50, 0x45, 0x31];
/** Bytes a binary envelope adds to its plaintext (magic, IV, tag). */
export const BINARY_OVERHEAD = BINARY_MAGIC.length + IV_BYTES + TAG_BYTES;
const AAD_PREFIX = 'secret-push:aes-256-gcm:1:';

/** What an encrypted item is, bound into its additional data so it cannot be moved elsewhere. */
export type ItemRole =
  { item: 'payload'; kind: PushKind } | { item: 'file-name'; index: number } | { item: 'file-content'; index: number };

/** The additional authenticated data of an item, e.g. `secret-push:aes-256-gcm:1:file-name:0`. */
export function additionalData(role: ItemRole): string {
  if (role.item === 'payload') return `${AAD_PREFIX}payload:${role.kind}`;
  if (!Number.isSafeInteger(role.index) || role.index < 0)
    throw new TypeError('additionalData: a file index is a non-negative integer');
  return `${AAD_PREFIX}${role.item}:${role.index}`;
}

function describe(role: ItemRole): string {
  return role.item === 'payload'
    ? 'the payload'
    : `the ${role.item === 'file-name' ? 'name' : 'bytes'} of file ${role.index + 1}`;
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) {
    throw new UnsupportedEncryptionError(
      'WebCrypto is not available here (browsers offer it in secure contexts only: https or localhost)',
      {
        code: 'no_webcrypto',
      },
    );
  }
  return s;
}

/** A new random key, as the base64url text that goes into the link's fragment (43 characters). */
export function generateKey(): string {
  return bytesToBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
}

/** Whether a text is a well-formed key (32 bytes of canonical base64url). */
export function isKey(text: string): boolean {
  return base64UrlToBytes(text)?.length === KEY_BYTES;
}

/**
 * The key as a non-extractable CryptoKey (its bytes cannot be read back from it, and logging it shows none).
 * A CryptoKey passes through. A malformed text throws `MissingKeyError` (`invalid_key`).
 */
export async function importKey(key: string | Uint8Array | CryptoKey): Promise<CryptoKey> {
  if (typeof key === 'object' && !(key instanceof Uint8Array)) return key;
  const bytes = typeof key === 'string' ? base64UrlToBytes(key) : key;
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new MissingKeyError('the key of the link is malformed or incomplete (was the link cut short?)', {
      code: 'invalid_key',
    });
  }
  return subtle().importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'AES-GCM' }, false, [
    'encrypt',
    'decrypt',
  ]);
}

async function seal(key: CryptoKey, plaintext: Uint8Array, role: ItemRole): Promise<Uint8Array> {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await subtle().encrypt(
    {
      name: 'AES-GCM',
      iv,
      additionalData: utf8(additionalData(role)) as Uint8Array<ArrayBuffer>,
      tagLength: TAG_BYTES * 8,
    },
    key,
    plaintext as Uint8Array<ArrayBuffer>,
  );
  const out = new Uint8Array(IV_BYTES + sealed.byteLength);
  out.set(iv, 0);
  out.set(new Uint8Array(sealed), IV_BYTES);
  return out;
}

async function open(key: CryptoKey, ivAndSealed: Uint8Array, role: ItemRole): Promise<Uint8Array> {
  if (ivAndSealed.length < IV_BYTES + TAG_BYTES) {
    throw new DecryptionError(`${describe(role)} is not a valid envelope (too short)`, { code: 'malformed_envelope' });
  }
  try {
    const plain = await subtle().decrypt(
      {
        name: 'AES-GCM',
        iv: ivAndSealed.subarray(0, IV_BYTES) as Uint8Array<ArrayBuffer>,
        additionalData: utf8(additionalData(role)) as Uint8Array<ArrayBuffer>,
        tagLength: TAG_BYTES * 8,
      },
      key,
      ivAndSealed.subarray(IV_BYTES) as Uint8Array<ArrayBuffer>,
    );
    return new Uint8Array(plain);
  } catch (cause) {
    throw new DecryptionError(
      `${describe(role)} could not be decrypted: the key is wrong, or the data was altered or moved`,
      {
        code: 'decryption_failed',
        cause,
      },
    );
  }
}

function unsupportedVersion(role: ItemRole): UnsupportedEncryptionError {
  return new UnsupportedEncryptionError(`${describe(role)} uses an envelope version this SDK does not know`, {
    code: 'unsupported_scheme',
  });
}

/** Encrypts a text (UTF-8) into a text envelope `spe1.…`. */
export async function encryptText(key: CryptoKey, plaintext: string, role: ItemRole): Promise<string> {
  return TEXT_PREFIX + bytesToBase64Url(await seal(key, utf8(plaintext), role));
}

/** Opens a text envelope. Throws `DecryptionError` or `UnsupportedEncryptionError`, never returns altered text. */
export async function decryptText(key: CryptoKey, envelope: string, role: ItemRole): Promise<string> {
  if (!envelope.startsWith(TEXT_PREFIX)) {
    if (/^spe\d+\./.test(envelope)) throw unsupportedVersion(role);
    throw new DecryptionError(`${describe(role)} is not a text envelope`, { code: 'malformed_envelope' });
  }
  const bytes = base64UrlToBytes(envelope.slice(TEXT_PREFIX.length));
  if (!bytes) throw new DecryptionError(`${describe(role)} is not valid base64url`, { code: 'malformed_envelope' });
  const plain = await open(key, bytes, role);
  try {
    return fromUtf8(plain);
  } catch {
    throw new DecryptionError(`${describe(role)} is not UTF-8 text`, { code: 'malformed_envelope' });
  }
}

/** Encrypts bytes into a binary envelope `SPE1` ‖ IV ‖ ciphertext ‖ tag. */
export async function encryptBytes(key: CryptoKey, plaintext: Uint8Array, role: ItemRole): Promise<Uint8Array> {
  const sealed = await seal(key, plaintext, role);
  const out = new Uint8Array(BINARY_MAGIC.length + sealed.length);
  out.set(BINARY_MAGIC, 0);
  out.set(sealed, BINARY_MAGIC.length);
  return out;
}

/** Opens a binary envelope. Throws `DecryptionError` or `UnsupportedEncryptionError`. */
export async function decryptBytes(key: CryptoKey, envelope: Uint8Array, role: ItemRole): Promise<Uint8Array> {
  const magic = BINARY_MAGIC;
  const sameFamily =
    envelope.length >= magic.length && envelope[0] === magic[0] && envelope[1] === magic[1] && envelope[2] === magic[2];
  if (!sameFamily)
    throw new DecryptionError(`${describe(role)} is not a binary envelope`, { code: 'malformed_envelope' });
  if (envelope[3] !== magic[3]) {
    if (envelope[3]! >= 0x30 && envelope[3]! <= 0x39) throw unsupportedVersion(role);
    throw new DecryptionError(`${describe(role)} is not a binary envelope`, { code: 'malformed_envelope' });
  }
  return open(key, envelope.subarray(magic.length), role);
}
