/**
 * AES-256-GCM envelopes for everything secret at rest (payload, note, name, file bytes).
 *
 * Binary layout: version (1 byte = 1) | key id length (1 byte) | key id (ASCII) | IV (12) | tag (16) | ciphertext.
 * The text form is the base64 of the same bytes. Each envelope is bound to its purpose and row through GCM's
 * additional data (`aad`), so a ciphertext copied into another column or row does not decrypt.
 * New envelopes use the first (current) key; any listed key decrypts, which is how keys rotate.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class DecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecryptionError';
  }
}

export interface Keyring {
  encrypt(plain: Buffer, aad: string): Buffer;
  decrypt(envelope: Buffer, aad: string): Buffer;
  encryptText(plain: string, aad: string): string;
  decryptText(envelope: string, aad: string): string;
  /** The key id an envelope was written with (for rotation reports). */
  keyIdOf(envelope: Buffer | string): string;
  readonly currentKeyId: string;
  /** The ids of every key this ring holds (the envelopes it can open). */
  readonly keyIds: string[];
  /**
   * A key of its own for one streamed file (./file-stream.ts): derived from the data key of `keyId` (default: the
   * current key) and the file's random `salt`. DecryptionError for a key id this ring does not hold.
   */
  fileKey(salt: Buffer, keyId?: string): { keyId: string; key: KeyObject };
}

/** The HKDF label of the keys of streamed files (`fileKey`). */
const FILE_KEY_INFO = Buffer.from('secret-push file stream v2', 'ascii');

/**
 * Derives the data-encryption key from a master key, so the master key itself never touches a cipher. Held as a
 * KeyObject: a cipher made from a raw Buffer imports the key anew each time (about two thirds of the cost of sealing
 * a short secret), and the key bytes stay out of the JavaScript heap.
 */
function dataKey(master: Buffer): KeyObject {
  return createSecretKey(
    Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'secret-push aes-256-gcm data key v1', 32)),
  );
}

export function createKeyring(masterKeys: { id: string; key: Buffer }[]): Keyring {
  if (masterKeys.length === 0) throw new Error('at least one master key is required');
  const keys = new Map<string, KeyObject>();
  for (const { id, key } of masterKeys) {
    if (key.length !== 32) throw new Error(`master key "${id}" must be 32 bytes`);
    if (Buffer.byteLength(id, 'ascii') > 255) throw new Error('key id too long');
    if (!keys.has(id)) keys.set(id, dataKey(key));
  }
  const current = masterKeys[0]!.id;
  const currentKey = keys.get(current)!;
  const currentIdBytes = Buffer.from(current, 'ascii');

  function parse(envelope: Buffer): { keyId: string; iv: Buffer; tag: Buffer; body: Buffer } {
    if (envelope.length < 2 || envelope[0] !== VERSION) throw new DecryptionError('unknown envelope version');
    const idLen = envelope[1]!;
    const start = 2 + idLen;
    if (envelope.length < start + IV_BYTES + TAG_BYTES) throw new DecryptionError('truncated envelope');
    return {
      keyId: envelope.subarray(2, start).toString('ascii'),
      iv: envelope.subarray(start, start + IV_BYTES),
      tag: envelope.subarray(start + IV_BYTES, start + IV_BYTES + TAG_BYTES),
      body: envelope.subarray(start + IV_BYTES + TAG_BYTES),
    };
  }

  const ring: Keyring = {
    currentKeyId: current,
    keyIds: [...keys.keys()],
    encrypt(plain, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([
        Buffer.from([VERSION, currentIdBytes.length]),
        currentIdBytes,
        iv,
        cipher.getAuthTag(),
        body,
      ]);
    },
    decrypt(envelope, aad) {
      const { keyId, iv, tag, body } = parse(envelope);
      const key = keys.get(keyId);
      if (!key)
        throw new DecryptionError(`no key with id "${keyId}" is configured (set it in PWPUSH_MASTER_KEY_PREVIOUS)`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(Buffer.from(aad, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(body), decipher.final()]);
      } catch {
        throw new DecryptionError(`authentication failed for a ciphertext under key "${keyId}"`);
      }
    },
    encryptText(plain, aad) {
      return ring.encrypt(Buffer.from(plain, 'utf8'), aad).toString('base64');
    },
    decryptText(envelope, aad) {
      return ring.decrypt(Buffer.from(envelope, 'base64'), aad).toString('utf8');
    },
    keyIdOf(envelope) {
      return parse(typeof envelope === 'string' ? Buffer.from(envelope, 'base64') : envelope).keyId;
    },
    fileKey(salt, keyId = current) {
      const key = keys.get(keyId);
      if (!key)
        throw new DecryptionError(`no key with id "${keyId}" is configured (set it in PWPUSH_MASTER_KEY_PREVIOUS)`);
      return { keyId, key: createSecretKey(Buffer.from(hkdfSync('sha256', key, salt, FILE_KEY_INFO, 32))) };
    },
  };
  return ring;
}
