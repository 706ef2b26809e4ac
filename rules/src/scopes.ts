/**
 * The scopes of API keys, as the contract lists them (the `ApiKeyScope` schema): what each operation's security
 * requirements name, what a key may be given, and what the account token holds (all of them).
 */
import { ApiKeyScopeSchema } from './generated/schemas.gen.js';
import type { ApiKeyScope } from './generated/types.gen.js';

export type { ApiKeyScope };

/** Every scope, in the contract's order. */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ApiKeyScopeSchema.enum;

const KNOWN: ReadonlySet<string> = new Set(API_KEY_SCOPES);

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === 'string' && KNOWN.has(value);
}

/**
 * The challenge of a 403 `insufficient_scope` (RFC 6750 §3): the scopes the operation needs, space-separated.
 */
export function insufficientScopeChallenge(scopes: readonly string[]): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`;
}

/** The prefix of API keys (the account token's is `spt_`): what secret scanners look for. */
export const API_KEY_PREFIX = 'spk_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Random characters of a key, then checksum characters: `spk_` + 30 + 6 = 40 (the GitHub token layout). */
export const API_KEY_RANDOM_CHARS = 30;
const API_KEY_CHECK_CHARS = 6;
const API_KEY_SHAPE = /^spk_[A-Za-z0-9]{36}$/;

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE, as zlib's) of ASCII text. */
function crc32(text: string): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = crcTable[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The checksum of a key's random part: its CRC-32 in 6 characters of base62 (62^6 > 2^32), zero-padded. */
export function apiKeyChecksum(random: string): string {
  let n = crc32(random);
  let out = '';
  for (let i = 0; i < API_KEY_CHECK_CHARS; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/**
 * A new API key from a source of random bytes: `spk_`, 30 characters of base62 (≈ 178 bits, rejection-sampled so
 * unbiased) and their checksum. The server passes node:crypto's `randomBytes`; the mock WebCrypto's.
 */
export function newApiKeyTokenFrom(randomBytes: (n: number) => Uint8Array): string {
  let random = '';
  while (random.length < API_KEY_RANDOM_CHARS) {
    for (const b of randomBytes(API_KEY_RANDOM_CHARS)) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (b < 248 && random.length < API_KEY_RANDOM_CHARS) random += BASE62[b % 62];
    }
  }
  return `${API_KEY_PREFIX}${random}${apiKeyChecksum(random)}`;
}

/** Whether a text has an API key's shape and checksum: a mistyped or truncated key is refused without a lookup. */
export function isWellFormedApiKey(token: string): boolean {
  if (!API_KEY_SHAPE.test(token)) return false;
  const body = token.slice(API_KEY_PREFIX.length);
  return apiKeyChecksum(body.slice(0, API_KEY_RANDOM_CHARS)) === body.slice(API_KEY_RANDOM_CHARS);
}

/**
 * A key made by an API key stays inside it (issue 45): it expires no later than that key. Given the expiry asked for
 * (ms, or null for none) and the making key's (null: it never expires, or the account itself makes it), the new key's
 * expiry (the maker's when none was asked), or the message for `expires_at` when it would outlive its maker.
 */
export function childKeyExpiry(
  asked: number | null,
  maker: number | null,
): { at: number | null } | { problem: string } {
  if (asked === null) return { at: maker };
  if (maker !== null && asked > maker)
    return {
      problem: `must be no later than ${new Date(maker).toISOString()}, when the API key that makes it expires`,
    };
  return { at: asked };
}
