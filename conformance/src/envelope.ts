/**
 * The `aes-256-gcm` v1 envelopes of end-to-end encrypted pushes, written here from the API description ("End-to-end
 * encrypted pushes") with node:crypto, independently of the SDK: the suite makes real envelopes, sends them, and
 * checks that what comes back is byte for byte what it sent and still opens with its key (a changed bit fails the
 * tag). Text envelope: `spe1.` + base64url(IV ‖ ciphertext ‖ tag); binary: `SPE1` ‖ IV ‖ ciphertext ‖ tag; the
 * additional data is `secret-push:aes-256-gcm:1:` + the item's role.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const MARKER = { scheme: 'aes-256-gcm', version: 1 } as const;
const AAD = 'secret-push:aes-256-gcm:1:';
const MAGIC = Buffer.from('SPE1', 'latin1');

export type Role = `payload:${'text' | 'url' | 'qr' | 'file'}` | `file-name:${number}` | `file-content:${number}`;

export function newKey(): Buffer {
  return randomBytes(32);
}

function seal(key: Buffer, plain: Buffer, role: Role): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(AAD + role, 'latin1'));
  return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Buffer, sealed: Buffer, role: Role): Buffer | null {
  if (sealed.length < 28) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
    decipher.setAAD(Buffer.from(AAD + role, 'latin1'));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
  } catch {
    return null;
  }
}

/** A text envelope (payload, file name) of `text`. */
export function sealText(key: Buffer, text: string, role: Role): string {
  return `spe1.${seal(key, Buffer.from(text, 'utf8'), role).toString('base64url')}`;
}

/** The plaintext of a text envelope, or null when it does not open (wrong key, any bit changed, not an envelope). */
export function openText(key: Buffer, envelope: unknown, role: Role): string | null {
  if (typeof envelope !== 'string' || !/^spe1\.[A-Za-z0-9_-]+$/.test(envelope)) return null;
  return open(key, Buffer.from(envelope.slice(5), 'base64url'), role)?.toString('utf8') ?? null;
}

/** A binary envelope (file bytes). */
export function sealBytes(key: Buffer, bytes: Buffer, role: Role): Buffer {
  return Buffer.concat([MAGIC, seal(key, bytes, role)]);
}

export function openBytes(key: Buffer, envelope: Buffer, role: Role): Buffer | null {
  if (!envelope.subarray(0, 4).equals(MAGIC)) return null;
  return open(key, envelope.subarray(4), role);
}
