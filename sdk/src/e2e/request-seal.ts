/**
 * Sealed answers to requests (the contract's "Requests", sealed answers): the responder's client encrypts the answer
 * as an end-to-end push (./seal.ts, a random content key) and seals that key to the requester's X25519 public key with
 * HPKE (RFC 9180, base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM), bound to the request by `info`.
 * The HPKE is @hpke/core's, on WebCrypto: browser-safe, and the requester's private key may stay non-extractable.
 */
import { Aes256Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import type { RequestPublicKey } from '../generated/types.gen.js';
import { DecryptionError, UnsupportedEncryptionError } from '../errors.js';
import { base64UrlToBytes, bytesToBase64Url, utf8 } from './encoding.js';
import { KEY_BYTES } from './envelope.js';

export const SEALING_SCHEME = 'hpke-x25519-sha256-aes256gcm';
export const SEALED_KEY_PREFIX = 'sph1.';
const ENC_BYTES = 32;
const SEALED_BYTES = ENC_BYTES + KEY_BYTES + 16;

/** A requester's key pair (keep it: it is the only way to open the answers) and its public half as the wire's JWK. */
export interface RequestKeyPair {
  keyPair: CryptoKeyPair;
  publicKey: RequestPublicKey;
}

function subtle(): SubtleCrypto {
  const s = (globalThis.crypto as Crypto | undefined)?.subtle;
  if (!s) throw new UnsupportedEncryptionError('no WebCrypto in this runtime', { code: 'no_webcrypto' });
  return s;
}

const suite = () => new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
/** Binds a sealed key to its request: it cannot be replayed onto another one. */
const infoOf = (urlToken: string) => utf8(`secret-push:request-seal:1:${urlToken}`);

/**
 * A new X25519 key pair for sealed answers. The private key is non-extractable unless asked (a browser then keeps it
 * in IndexedDB as a CryptoKey whose bytes no script can read).
 */
export async function generateRequestKeyPair(options: { extractable?: boolean } = {}): Promise<RequestKeyPair> {
  const keyPair = (await subtle().generateKey({ name: 'X25519' }, options.extractable ?? false, [
    'deriveBits',
  ])) as CryptoKeyPair;
  const jwk = await subtle().exportKey('jwk', keyPair.publicKey);
  return { keyPair, publicKey: { kty: 'OKP', crv: 'X25519', x: jwk.x! } };
}

/** Seals a 32-byte content key to the requester's public key for the request `urlToken`: the `sph1.` text. */
export async function sealContentKey(publicKey: RequestPublicKey, urlToken: string, key: Uint8Array): Promise<string> {
  if (key.length !== KEY_BYTES) throw new TypeError('sealContentKey: the key must be 32 bytes');
  const recipientPublicKey = await subtle().importKey(
    'jwk',
    { kty: 'OKP', crv: 'X25519', x: publicKey.x },
    { name: 'X25519' },
    true,
    [],
  );
  const { enc, ct } = await suite().seal(
    { recipientPublicKey, info: infoOf(urlToken) },
    key as Uint8Array<ArrayBuffer>,
  );
  const out = new Uint8Array(enc.byteLength + ct.byteLength);
  out.set(new Uint8Array(enc), 0);
  out.set(new Uint8Array(ct), enc.byteLength);
  return SEALED_KEY_PREFIX + bytesToBase64Url(out);
}

/** Opens a sealed key with the requester's key pair: the 32-byte content key, or DecryptionError. */
export async function openContentKey(keyPair: CryptoKeyPair, urlToken: string, sealed: string): Promise<Uint8Array> {
  const bytes = sealed.startsWith(SEALED_KEY_PREFIX) ? base64UrlToBytes(sealed.slice(SEALED_KEY_PREFIX.length)) : null;
  if (!bytes || bytes.length !== SEALED_BYTES)
    throw new DecryptionError('the sealed key is malformed', { code: 'malformed_envelope' });
  try {
    const key = await suite().open(
      { recipientKey: keyPair, enc: bytes.slice(0, ENC_BYTES), info: infoOf(urlToken) },
      bytes.slice(ENC_BYTES),
    );
    return new Uint8Array(key);
  } catch (cause) {
    throw new DecryptionError('the sealed key does not open with this key pair', { code: 'decryption_failed', cause });
  }
}
