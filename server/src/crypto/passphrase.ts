/**
 * Passphrases are stored only as scrypt hashes: `scrypt$N$r$p$<salt b64>$<hash b64>`, so the parameters can be
 * raised later without breaking old hashes. Comparison is constant time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const DEFAULTS = { N: 16384, r: 8, p: 1 };
const KEY_BYTES = 32;

function scryptAsync(secret: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, keylen, options, (err, derived) => (err ? reject(err) : resolve(derived)));
  });
}

export async function hashPassphrase(passphrase: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p } = DEFAULTS;
  const hash = await scryptAsync(passphrase, salt, KEY_BYTES, { N, r, p, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassphrase(passphrase: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || expected.length === 0) return false;
  let actual: Buffer;
  try {
    actual = await scryptAsync(passphrase, salt, expected.length, { N, r, p, maxmem: 256 * 1024 * 1024 });
  } catch {
    return false; // parameters scrypt refuses (a damaged hash): it opens nothing
  }
  return timingSafeEqual(actual, expected);
}
