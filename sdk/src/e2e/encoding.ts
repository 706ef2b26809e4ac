/**
 * Byte encodings of the end-to-end scheme: base64url without padding (RFC 4648 §5) for keys and text envelopes,
 * and UTF-8. Decoding is strict and canonical (one string per byte sequence), so no character of an envelope or a
 * key can change without changing the bytes: an edited envelope always fails, it never decodes "close enough".
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUES: Record<string, number> = Object.fromEntries([...ALPHABET].map((c, i) => [c, i]));

/** base64url without padding. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}

/** The bytes of a canonical unpadded base64url string, or null for anything else (padding, other characters, spare bits). */
export function base64UrlToBytes(text: string): Uint8Array | null {
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const v = VALUES[text[i]!];
    if (v === undefined) return null;
    value = ((value << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 0xff;
    }
  }
  // The bits left over after the last whole byte must be zero, or two strings would give the same bytes.
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Strict UTF-8 decoding: invalid sequences throw instead of turning into U+FFFD. */
export function fromUtf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
}

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}
