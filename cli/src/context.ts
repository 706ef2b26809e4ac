/**
 * What a command runs with: the I/O, the output mode, the config (read once, lazily: `config` and `completion` need
 * no server), and the SDK client for the resolved server and token.
 */
import { createSecretPushClient, type SecretPushClient, type VersionReport } from '@secret-push/sdk';
import type { Args } from './args.js';
import { type Connection, configDir, type ConfigFile, loadConfig, type Place, resolveConnection } from './config.js';
import { requestKeyStore, type RequestKeyStore } from './key-store.js';
import type { CliIo } from './io.js';
import { progressFetch } from './progress.js';
import { VERSION } from './version.js';

export interface Context {
  io: CliIo;
  args: Args;
  json: boolean;
  quiet: boolean;
  place: Place;
  config(): Promise<ConfigFile>;
  /** The connection for this run; `server` (a link's own origin) is used when `--server` is not given. */
  connection(server?: string): Promise<Connection>;
  /** The SDK client for that connection (uploads and downloads show a progress bar on a terminal). */
  client(server?: string): Promise<{ client: SecretPushClient; connection: Connection }>;
  /** The instance's version report, asked once. */
  version(client: SecretPushClient): Promise<VersionReport>;
  keys(): RequestKeyStore;
  /** Writes a note for people on stderr (not with --quiet or --json). */
  note(text: string): void;
  /** Writes the result on stdout: JSON with --json, else the text. */
  result(json: unknown, text: string | (() => string)): void;
}

export function createContext(io: CliIo, args: Args): Context {
  const json = args.flag('json');
  const quiet = args.flag('quiet');
  const place: Place = { env: io.env, home: io.home, platform: io.platform };
  let config: Promise<ConfigFile> | undefined;
  const versions = new WeakMap<SecretPushClient, Promise<VersionReport>>();
  const note = (text: string) => {
    if (!quiet && !json) io.stderr.write(`${text}\n`);
  };
  const ctx: Context = {
    io,
    args,
    json,
    quiet,
    place,
    config: () => (config ??= loadConfig(place)),
    async connection(server) {
      const connection = resolveConnection(await ctx.config(), io.env, {
        server: args.string('server') ?? server,
        profile: args.string('profile'),
        anonymous: args.flag('anonymous'),
      });
      // Always shown (also with --quiet): a token that is not sent changes what the command can do.
      for (const warning of connection.warnings) io.stderr.write(`secret-push: warning: ${warning}\n`);
      return connection;
    },
    async client(server) {
      const connection = await ctx.connection(server);
      const showProgress = !quiet && !json && io.stderr.isTTY === true;
      const client = createSecretPushClient({
        baseUrl: connection.baseUrl,
        token: connection.token,
        userAgent: `secret-push-cli/${VERSION}`,
        ...(showProgress ? { fetch: progressFetch(io.stderr) } : {}),
      });
      return { client, connection };
    },
    version(client) {
      let report = versions.get(client);
      if (!report) versions.set(client, (report = client.version()));
      return report;
    },
    keys: () => requestKeyStore(configDir(place), io.platform),
    note,
    result(value, text) {
      if (json) io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      else {
        const out = typeof text === 'function' ? text() : text;
        if (out !== '') io.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
      }
    },
  };
  return ctx;
}
