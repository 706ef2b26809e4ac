/** The keys: the master key (and older ones after a rotation) and the signing secret. */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Env, secret, SettingsError } from '../setting.js';

export const MASTER_KEY = secret('PWPUSH_MASTER_KEY', {
  shown: 'unset',
  accepts: '64 hex characters or base64 of 32 bytes, optionally prefixed `id:`',
  meaning:
    'Encryption key (`npm run key` makes one). Required in production. Development without a key: `<data dir>/master.key` is generated.',
  what: 'the master key: every secret at rest is sealed under it',
});
const MASTER_KEY_PREVIOUS = secret('PWPUSH_MASTER_KEY_PREVIOUS', {
  shown: 'unset',
  accepts: 'comma-separated keys (the same form)',
  meaning: 'Older keys, used only to decrypt after a rotation.',
  what: 'older master keys, kept after a rotation to read what they sealed',
});
const SIGNING_SECRET = secret('PWPUSH_SIGNING_SECRET', {
  shown: 'derived from the master key',
  accepts: 'at least 32 characters',
  meaning: 'Signs file download links and (through a derived key) sign-in sessions.',
  what: 'signs file download links and sign-in sessions (derived from the master key when unset)',
});

export const KEY_SETTINGS = [MASTER_KEY, MASTER_KEY_PREVIOUS, SIGNING_SECRET];

export interface MasterKey {
  id: string;
  key: Buffer;
}

/** The master keys (current first) and the signing secret. */
export function readKeys(env: Env, dataDir: string): { masterKeys: MasterKey[]; signingSecret: Buffer } {
  const masterKeys = readMasterKeys(env, dataDir);
  const signing = SIGNING_SECRET.read(env);
  if (signing !== undefined && signing.value.length < 32) {
    throw new SettingsError(signing.from, 'PWPUSH_SIGNING_SECRET must be at least 32 characters');
  }
  const signingSecret = signing
    ? Buffer.from(signing.value, 'utf8')
    : createHmac('sha256', masterKeys[0]!.key).update('secret-push download-link signing v1').digest();
  return { masterKeys, signingSecret };
}

/** Parses one key: `[id:]<64 hex | base64 of 32 bytes>`. The id defaults to a fingerprint of the key. */
export function parseMasterKey(text: string, variable: string): MasterKey {
  const value = text.trim();
  let id: string | undefined;
  let material = value;
  const colon = value.indexOf(':');
  if (colon > 0) {
    id = value.slice(0, colon);
    material = value.slice(colon + 1);
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) {
      throw new SettingsError(variable, `${variable}: a key id must be 1 to 32 characters of [A-Za-z0-9_-]`);
    }
  }
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(material)) key = Buffer.from(material, 'hex');
  else if (/^[A-Za-z0-9+/]{43}=?$/.test(material) || /^[A-Za-z0-9_-]{43}=?$/.test(material)) {
    const decoded = Buffer.from(material.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (decoded.length === 32) key = decoded;
  }
  if (!key) {
    throw new SettingsError(
      variable,
      `${variable} must be 64 hex characters or base64 of 32 bytes, optionally prefixed with "id:"`,
    );
  }
  return { id: id ?? createHash('sha256').update(key).digest('hex').slice(0, 8), key };
}

function readKeyFile(file: string, variable: string): MasterKey {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SettingsError(
      variable,
      `${variable}: cannot read the key file ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseMasterKey(text, `${variable} (${file})`);
}

/** Development convenience: a random key, generated once under the data dir and reused. */
function developmentKey(dataDir: string): MasterKey {
  const file = path.join(dataDir, 'master.key');
  if (existsSync(file)) return readKeyFile(file, 'PWPUSH_MASTER_KEY_FILE');
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const key = randomBytes(32);
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(file, 'PWPUSH_MASTER_KEY_FILE');
    throw err;
  }
  chmodSync(file, 0o600);
  return parseMasterKey(key.toString('hex'), 'PWPUSH_MASTER_KEY_FILE');
}

function readMasterKeys(env: Env, dataDir: string): MasterKey[] {
  const given = MASTER_KEY.read(env);
  // Production without a key was refused before (productionRefusals); elsewhere a key is made once under the data dir.
  const current = given ? parseMasterKey(given.value, given.from) : developmentKey(dataDir);

  const keys = [current];
  const previous = MASTER_KEY_PREVIOUS.read(env);
  if (previous) {
    for (const part of previous.value.split(',')) {
      if (part.trim() === '') continue;
      const key = parseMasterKey(part, previous.from);
      const clash = keys.find((k) => k.id === key.id);
      if (clash) {
        if (clash.key.equals(key.key)) continue;
        throw new SettingsError(previous.from, `${previous.from}: key id "${key.id}" is used by two different keys`);
      }
      keys.push(key);
    }
  }
  return keys;
}
