import { describe, expect, it } from 'vitest';
import { createKeyring, DecryptionError } from './envelope.js';
import { hashPassphrase, verifyPassphrase } from './passphrase.js';
import {
  API_TOKEN_PREFIX,
  newApiToken,
  newFileId,
  newUrlToken,
  signDownloadToken,
  tokenDigest,
  verifyDownloadToken,
} from './tokens.js';

const A = { id: 'a', key: Buffer.alloc(32, 1) };
const B = { id: 'b', key: Buffer.alloc(32, 2) };

describe('envelope (AES-256-GCM)', () => {
  it('round-trips text and bytes and never contains the plaintext', () => {
    const ring = createKeyring([A]);
    const c = ring.encryptText('top secret', 'ctx');
    expect(c).not.toContain('top secret');
    expect(Buffer.from(c, 'base64').toString('latin1')).not.toContain('top secret');
    expect(ring.decryptText(c, 'ctx')).toBe('top secret');
    const bytes = Buffer.from([0, 255, 1, 254]);
    expect(ring.decrypt(ring.encrypt(bytes, 'f'), 'f')).toEqual(bytes);
  });

  it('uses a fresh IV each time', () => {
    const ring = createKeyring([A]);
    expect(ring.encryptText('same', 'ctx')).not.toBe(ring.encryptText('same', 'ctx'));
  });

  it('binds a ciphertext to its context and detects tampering', () => {
    const ring = createKeyring([A]);
    const c = ring.encrypt(Buffer.from('x'), 'pushes.payload:1');
    expect(() => ring.decrypt(c, 'pushes.payload:2')).toThrow(DecryptionError);
    const tampered = Buffer.from(c);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => ring.decrypt(tampered, 'pushes.payload:1')).toThrow(DecryptionError);
  });

  it('writes with the current key and reads with any configured key (rotation)', () => {
    const oldRing = createKeyring([A]);
    const oldCipher = oldRing.encryptText('old', 'c');
    const rotated = createKeyring([B, A]);
    expect(rotated.keyIdOf(oldCipher)).toBe('a');
    expect(rotated.decryptText(oldCipher, 'c')).toBe('old');
    const newCipher = rotated.encryptText('new', 'c');
    expect(rotated.keyIdOf(newCipher)).toBe('b');
    expect(() => oldRing.decryptText(newCipher, 'c')).toThrow(/no key with id "b"/);
  });
});

describe('passphrases (scrypt)', () => {
  it('hashes with a random salt and stored parameters, and verifies only the right passphrase', async () => {
    const h1 = await hashPassphrase('correct');
    const h2 = await hashPassphrase('correct');
    expect(h1).not.toBe(h2);
    expect(h1).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(await verifyPassphrase('correct', h1)).toBe(true);
    expect(await verifyPassphrase('Correct', h1)).toBe(false);
    expect(await verifyPassphrase('correct', 'garbage')).toBe(false);
  });
});

describe('tokens', () => {
  it('makes url tokens of 24 characters of [a-z2-7] that match the spec pattern', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i += 1) {
      const t = newUrlToken();
      expect(t).toMatch(/^[a-z2-7]{24}$/);
      expect(t).toMatch(/^[a-z0-9_-]{11,64}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(200);
    expect(newFileId()).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('makes API tokens with the spt_ prefix and 192 random bits, digested with SHA-256', () => {
    const t = newApiToken();
    expect(t.startsWith(API_TOKEN_PREFIX)).toBe(true);
    expect(Buffer.from(t.slice(4), 'base64url')).toHaveLength(24);
    expect(tokenDigest(t)).toMatch(/^[0-9a-f]{64}$/);
    expect(newApiToken()).not.toBe(t);
  });

  it('signs download links bound to push and file that last five minutes', () => {
    const secret = Buffer.alloc(32, 9);
    const now = new Date('2030-01-01T00:00:00Z');
    const jwt = signDownloadToken(secret, 'push1', 'file1', now);
    const at = (s: number) => new Date(now.getTime() + s * 1000);
    expect(verifyDownloadToken(secret, jwt, 'push1', 'file1', at(299))).toEqual({ ok: true });
    expect(verifyDownloadToken(secret, jwt, 'push1', 'file1', at(301))).toEqual({ ok: false, reason: 'link_expired' });
    expect(verifyDownloadToken(secret, jwt, 'push1', 'file2', at(1))).toEqual({ ok: false, reason: 'invalid_link' });
    expect(verifyDownloadToken(secret, jwt, 'push2', 'file1', at(1))).toEqual({ ok: false, reason: 'invalid_link' });
    expect(verifyDownloadToken(Buffer.alloc(32, 8), jwt, 'push1', 'file1', at(1))).toEqual({
      ok: false,
      reason: 'invalid_link',
    });
    // A forged token is invalid even once it would have expired.
    expect(verifyDownloadToken(Buffer.alloc(32, 8), jwt, 'push1', 'file1', at(400))).toEqual({
      ok: false,
      reason: 'invalid_link',
    });
  });
});
