/**
 * The private keys of sealed requests: made by `request create` (or the MCP server's `create_request`), kept until
 * the answer is collected, one file per request (`<config dir>/request-keys/<url_token>.json`, mode 0600 in a 0700
 * folder, like an SSH key), so a later run (the CLI, or the MCP server after a restart) opens the answer. The server
 * only ever gets the public half.
 */
import { lstat, mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { generateRequestKeyPair } from '@secret-push/sdk';
import { CliError, EXIT } from './exit.js';
import { isExposed } from './config.js';

const TOKEN = /^[A-Za-z0-9_-]{11,64}$/;
const MAX_KEY_FILE_BYTES = 16 * 1024;

/** A request's X25519 public key as the wire's JWK (the SDK's `RequestPublicKey`). */
export interface RequestPublicJwk {
  kty: 'OKP';
  crv: 'X25519';
  x: string;
}

/** A key pair and its public half as a JWK (the SDK's `RequestKeyPair`). */
export interface RequestKeys {
  keyPair: CryptoKeyPair;
  publicKey: RequestPublicJwk;
}

interface StoredKey {
  version: 1;
  server: string;
  url_token: string;
  created_at: string;
  public_key: RequestPublicJwk;
  private_key: JsonWebKey;
}

export interface RequestKeyStore {
  /** The folder the keys are kept in. */
  readonly dir: string;
  /** A new extractable key pair for a request about to be made; `save` it once the request exists. */
  create(): Promise<RequestKeys>;
  save(server: string, urlToken: string, pair: RequestKeys): Promise<string>;
  /** The key pair of a request, or null when this store does not hold it. */
  load(urlToken: string): Promise<CryptoKeyPair | null>;
  remove(urlToken: string): Promise<void>;
}

function fileOf(dir: string, urlToken: string): string {
  // The token becomes a file name: only the characters a token has (never a path).
  if (!TOKEN.test(urlToken)) throw new CliError('not a request token', EXIT.usage);
  return path.join(dir, `${urlToken}.json`);
}

export function requestKeyStore(configDir: string, platform: NodeJS.Platform): RequestKeyStore {
  const dir = path.join(configDir, 'request-keys');
  return {
    dir,
    create: () => generateRequestKeyPair({ extractable: true }),
    async save(server, urlToken, pair) {
      const file = fileOf(dir, urlToken);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const stored: StoredKey = {
        version: 1,
        server,
        url_token: urlToken,
        created_at: new Date().toISOString(),
        public_key: pair.publicKey,
        private_key: await crypto.subtle.exportKey('jwk', pair.keyPair.privateKey),
      };
      const handle = await open(file, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(stored, null, 2)}\n`);
      } finally {
        await handle.close();
      }
      return file;
    },
    async load(urlToken) {
      const file = fileOf(dir, urlToken);
      const stat = await lstat(file).catch(() => null);
      if (!stat) return null;
      if (!stat.isFile() || stat.size > MAX_KEY_FILE_BYTES)
        throw new CliError(`${file} is not a key file`, EXIT.config);
      if (isExposed(stat.mode, platform))
        throw new CliError(`${file} is readable by other users: run chmod 600 ${file}`, EXIT.config, 'config_exposed');
      let stored: StoredKey;
      try {
        stored = JSON.parse(await readFile(file, 'utf8')) as StoredKey;
      } catch {
        throw new CliError(`${file} is not a key file`, EXIT.config);
      }
      if (stored.version !== 1 || stored.url_token !== urlToken || !stored.private_key || !stored.public_key)
        throw new CliError(`${file} is not the key of request ${urlToken}`, EXIT.config);
      const privateKey = await crypto.subtle.importKey('jwk', stored.private_key, { name: 'X25519' }, false, [
        'deriveBits',
      ]);
      const publicKey = await crypto.subtle.importKey(
        'jwk',
        { kty: 'OKP', crv: 'X25519', x: stored.public_key.x },
        { name: 'X25519' },
        true,
        [],
      );
      return { privateKey, publicKey };
    },
    async remove(urlToken) {
      await rm(fileOf(dir, urlToken), { force: true });
    },
  };
}
