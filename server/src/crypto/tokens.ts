/**
 * Random identifiers and credentials: url tokens, file ids, API tokens (stored as SHA-256 digests only) and the
 * signed, short-lived download links of files.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { newApiKeyTokenFrom } from '@secret-push/rules';
import jwt from 'jsonwebtoken';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** 24 characters of [a-z2-7] (120 bits), matching the spec's `^[a-z0-9_-]{11,64}$`. */
export function newUrlToken(): string {
  const bytes = randomBytes(24);
  let out = '';
  // 256 is a multiple of 32, so `byte & 31` is unbiased.
  for (const b of bytes) out += BASE32[b & 31];
  return out;
}

/** A file id within a push: 16 characters of base64url (96 bits). */
export function newFileId(): string {
  return randomBytes(12).toString('base64url');
}

export const API_TOKEN_PREFIX = 'spt_';

/** `spt_` + 32 characters of base64url (192 bits of randomness). Shown once; only its digest is stored. */
export function newApiToken(): string {
  return `${API_TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
}

/** An API key (`spk_…`, with its checksum: `@secret-push/rules`, which the mock uses too). Shown once; only its digest is stored. */
export function newApiKeyToken(): string {
  return newApiKeyTokenFrom((n) => randomBytes(n));
}

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const DOWNLOAD_LINK_SECONDS = 5 * 60;

export type DownloadLinkCheck = { ok: true } | { ok: false; reason: 'invalid_link' | 'link_expired' };

/** A JWT bound to one push and one file, valid for five minutes. */
export function signDownloadToken(secret: Buffer, urlToken: string, fileId: string, now: Date = new Date()): string {
  const iat = Math.floor(now.getTime() / 1000);
  return jwt.sign({ p: urlToken, f: fileId, iat, exp: iat + DOWNLOAD_LINK_SECONDS }, secret, {
    algorithm: 'HS256',
    audience: 'secret-push:file',
    // A random id so two links issued in the same second differ.
    jwtid: randomInt(0, 2 ** 47).toString(36),
  });
}

export function verifyDownloadToken(
  secret: Buffer,
  token: string,
  urlToken: string,
  fileId: string,
  now: Date = new Date(),
): DownloadLinkCheck {
  let claims: jwt.JwtPayload | string;
  try {
    claims = jwt.verify(token, secret, {
      algorithms: ['HS256'],
      audience: 'secret-push:file',
      clockTimestamp: Math.floor(now.getTime() / 1000),
    });
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) return { ok: false, reason: 'link_expired' };
    return { ok: false, reason: 'invalid_link' };
  }
  if (typeof claims === 'string' || claims.p !== urlToken || claims.f !== fileId) {
    return { ok: false, reason: 'invalid_link' };
  }
  return { ok: true };
}

/** A workspace invitation's token: 43 characters of base64url (256 bits). Shown once; only its digest is stored. */
export function newInvitationToken(): string {
  return randomBytes(32).toString('base64url');
}
