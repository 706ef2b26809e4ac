/**
 * The streamed envelope of file bytes kept in an object store (../files/): sealed and opened as the bytes flow, so a
 * file is never held whole in memory, and still authenticated throughout (no byte of plaintext leaves `openStream`
 * before the tag of its segment has been checked).
 *
 * Layout (ARCHITECTURE.md, "Files in object storage"):
 *
 *   header:  version (1 byte = 2) | key id length (1) | key id (ASCII) | salt (16) | nonce prefix (7) | segment size (4, BE)
 *   then:    segment 0 | segment 1 | … | segment n-1, each its ciphertext followed by its GCM tag (16)
 *
 * Every segment but the last holds exactly `segment size` bytes of plaintext (64 KiB); the last holds 0 to that many
 * (0 only for an empty file). Each file has a key of its own, HKDF-SHA256 of the master key's data key with the
 * file's random salt (`Keyring.fileKey`), so nonces never repeat under one key; segment i is sealed with AES-256-GCM
 * under the nonce `nonce prefix | i (4 bytes, BE) | 1 if last else 0`, and with the purpose and row of the file
 * (`push_files.content:<id>`) as its additional data, as the whole-content envelope (./envelope.ts) is. A segment moved,
 * dropped or repeated, a stream cut at a segment's end or extended past its last, a header changed, or an object
 * given to another row all fail the tag. Deleting the master key erases these files as it does every other envelope.
 */
import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { DecryptionError, type Keyring } from './envelope.js';

const VERSION = 2;
const SALT_BYTES = 16;
const PREFIX_BYTES = 7;
const TAG_BYTES = 16;
/** Plaintext bytes of every segment but the last. */
export const SEGMENT_BYTES = 64 * 1024;

/** The size of the sealed stream of `plainBytes` bytes under `keyId` (what the object store holds). */
export function sealedSize(plainBytes: number, keyId: string): number {
  const segments = plainBytes === 0 ? 1 : Math.ceil(plainBytes / SEGMENT_BYTES);
  return headerSize(Buffer.byteLength(keyId, 'ascii')) + plainBytes + segments * TAG_BYTES;
}

const headerSize = (idBytes: number) => 2 + idBytes + SALT_BYTES + PREFIX_BYTES + 4;

function nonce(prefix: Buffer, index: number, last: boolean): Buffer {
  const iv = Buffer.alloc(12);
  prefix.copy(iv, 0);
  iv.writeUInt32BE(index, PREFIX_BYTES);
  iv[11] = last ? 1 : 0;
  return iv;
}

/** Gathers chunks until `size` bytes are there, without copying them more than once. */
class Pending {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `size` bytes (as one buffer), removed. */
  take(size: number): Buffer {
    const all = this.joined();
    const head = all.subarray(0, size);
    const rest = all.subarray(size);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return head;
  }

  /** The first `size` bytes, left in place. */
  peek(size: number): Buffer {
    return this.joined().subarray(0, size);
  }

  private joined(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.length)];
    return this.chunks[0]!;
  }
}

/** A Transform that seals what is written to it, for the row `aad` names, under the ring's current key. */
export function sealStream(keyring: Keyring, aad: string): Transform {
  const salt = randomBytes(SALT_BYTES);
  const prefix = randomBytes(PREFIX_BYTES);
  const { keyId, key } = keyring.fileKey(salt);
  const idBytes = Buffer.from(keyId, 'ascii');
  const header = Buffer.alloc(headerSize(idBytes.length));
  header[0] = VERSION;
  header[1] = idBytes.length;
  idBytes.copy(header, 2);
  salt.copy(header, 2 + idBytes.length);
  prefix.copy(header, 2 + idBytes.length + SALT_BYTES);
  header.writeUInt32BE(SEGMENT_BYTES, 2 + idBytes.length + SALT_BYTES + PREFIX_BYTES);
  const additional = Buffer.from(aad, 'utf8');
  const pending = new Pending();
  let index = 0;
  let started = false;
  const seal = (plain: Buffer, last: boolean): Buffer => {
    const cipher = createCipheriv('aes-256-gcm', key, nonce(prefix, index++, last));
    cipher.setAAD(additional);
    return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (!started) {
        started = true;
        this.push(header);
      }
      pending.push(chunk);
      // A full segment is sealed once a byte after it has come: only then is it known not to be the last.
      while (pending.length > SEGMENT_BYTES) this.push(seal(pending.take(SEGMENT_BYTES), false));
      done();
    },
    flush(done: TransformCallback) {
      if (!started) this.push(header);
      this.push(seal(pending.take(pending.length), true));
      done();
    },
  });
}

/** A Transform that opens a sealed stream of the row `aad` names; it fails (DecryptionError) on any tampering. */
export function openStream(keyring: Keyring, aad: string): Transform {
  const additional = Buffer.from(aad, 'utf8');
  const pending = new Pending();
  let opened: { key: KeyObject; prefix: Buffer; sealed: number } | null = null;
  let index = 0;
  const open = (sealed: Buffer, last: boolean): Buffer => {
    const { key, prefix } = opened!;
    if (sealed.length < TAG_BYTES) throw new DecryptionError('truncated file stream');
    const body = sealed.subarray(0, sealed.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce(prefix, index++, last));
      decipher.setAAD(additional);
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new DecryptionError('authentication failed for a file stream');
    }
  };
  /** Reads the header once enough bytes are there; false while more are needed. */
  const readHeader = (): boolean => {
    if (pending.length < 2) return false;
    const start = pending.peek(2);
    if (start[0] !== VERSION) throw new DecryptionError('unknown file stream version');
    const idLen = start[1]!;
    const size = headerSize(idLen);
    if (pending.length < size) return false;
    const header = pending.take(size);
    const keyId = header.subarray(2, 2 + idLen).toString('ascii');
    const salt = header.subarray(2 + idLen, 2 + idLen + SALT_BYTES);
    const prefix = Buffer.from(header.subarray(2 + idLen + SALT_BYTES, 2 + idLen + SALT_BYTES + PREFIX_BYTES));
    const segment = header.readUInt32BE(2 + idLen + SALT_BYTES + PREFIX_BYTES);
    if (segment < 1 || segment > 16 * 1024 * 1024) throw new DecryptionError('bad segment size in a file stream');
    opened = { key: keyring.fileKey(Buffer.from(salt), keyId).key, prefix, sealed: segment + TAG_BYTES };
    return true;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      try {
        pending.push(chunk);
        if (!opened && !readHeader()) return done();
        const sealed = opened!.sealed;
        while (pending.length > sealed) this.push(open(pending.take(sealed), false));
        done();
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        if (!opened && !readHeader()) throw new DecryptionError('truncated file stream');
        this.push(open(pending.take(pending.length), true));
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
}
