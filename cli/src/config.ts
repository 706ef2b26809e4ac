/**
 * Where the CLI (and the MCP server) find their instance and token: the environment (`SECRET_PUSH_URL`,
 * `SECRET_PUSH_TOKEN`), `--server`, and a config file of named profiles, several instances side by side:
 *
 *   { "default_profile": "work",
 *     "profiles": { "work": { "url": "https://secrets.example.org", "token": "…" } } }
 *
 * at `$SECRET_PUSH_CONFIG`, else `$XDG_CONFIG_HOME/secret-push/config.json` (`~/.config/secret-push/config.json`;
 * `%APPDATA%\secret-push\config.json` on Windows). It is written with mode 0600 in a 0700 folder, and a file that
 * holds a token while group or others may read it is refused. A token is bound to the address it was configured with:
 * `--server` pointing elsewhere never receives it.
 */
import { chmod, lstat, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT } from './exit.js';

export interface Profile {
  url?: string | undefined;
  token?: string | undefined;
}

export interface ConfigFile {
  default_profile?: string | undefined;
  profiles: Record<string, Profile>;
}

/** What the environment says (read once by the caller). */
export interface ConfigEnv {
  SECRET_PUSH_URL?: string | undefined;
  SECRET_PUSH_TOKEN?: string | undefined;
  SECRET_PUSH_PROFILE?: string | undefined;
  SECRET_PUSH_CONFIG?: string | undefined;
  XDG_CONFIG_HOME?: string | undefined;
  APPDATA?: string | undefined;
}

export interface Place {
  env: ConfigEnv;
  home: string;
  platform: NodeJS.Platform;
}

/** The server and credentials one run uses. */
export interface Connection {
  baseUrl: string;
  token: string | undefined;
  /** The profile the server or the token came from, if any. */
  profile: string | undefined;
  /** Why a configured token is not sent (to print as a warning). */
  warnings: string[];
}

const MAX_CONFIG_BYTES = 64 * 1024;
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The folder of the config file and the sealed requests' keys. */
export function configDir(place: Place): string {
  const { env } = place;
  if (env.SECRET_PUSH_CONFIG) return path.dirname(path.resolve(env.SECRET_PUSH_CONFIG));
  if (place.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'secret-push');
  return path.join(env.XDG_CONFIG_HOME || path.join(place.home, '.config'), 'secret-push');
}

export function configPath(place: Place): string {
  return place.env.SECRET_PUSH_CONFIG
    ? path.resolve(place.env.SECRET_PUSH_CONFIG)
    : path.join(configDir(place), 'config.json');
}

/** Whether group or others may read or write it (POSIX modes only; Windows ACLs are not modes). */
export function isExposed(mode: number, platform: NodeJS.Platform): boolean {
  return platform !== 'win32' && (mode & 0o077) !== 0;
}

/** Reads the config file (none: no profiles). Refuses a malformed file, and one that exposes a token. */
export async function loadConfig(place: Place): Promise<ConfigFile> {
  const file = configPath(place);
  const stat = await lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new CliError(`cannot read the config file ${file}: ${error.code ?? error.message}`, EXIT.config);
  });
  if (!stat) return { profiles: {} };
  if (!stat.isFile()) throw new CliError(`the config file ${file} is not a regular file`, EXIT.config);
  if (stat.size > MAX_CONFIG_BYTES)
    throw new CliError(`the config file ${file} is larger than ${MAX_CONFIG_BYTES} bytes`, EXIT.config);
  const config = parseConfig(await readFile(file, 'utf8'), file);
  const hasToken = Object.values(config.profiles).some((p) => p.token);
  if (hasToken && isExposed(stat.mode, place.platform)) {
    throw new CliError(
      `the config file ${file} holds a token and is readable by other users (mode ${(stat.mode & 0o777).toString(8)}): run chmod 600 ${file}`,
      EXIT.config,
      'config_exposed',
    );
  }
  return config;
}

function parseConfig(text: string, file: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not the parser's message: it may quote the file's text, a token with it.
    throw new CliError(`the config file ${file} is not valid JSON`, EXIT.config);
  }
  const bad = (what: string) => new CliError(`the config file ${file}: ${what}`, EXIT.config);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('not a JSON object');
  const { default_profile: defaultProfile, profiles = {} } = raw as Record<string, unknown>;
  if (defaultProfile !== undefined && typeof defaultProfile !== 'string') throw bad('default_profile is not a string');
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles))
    throw bad('profiles is not an object');
  const out: Record<string, Profile> = {};
  for (const [name, value] of Object.entries(profiles as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null) throw bad(`profile ${JSON.stringify(name)} is not an object`);
    const { url, token } = value as Record<string, unknown>;
    if (url !== undefined && typeof url !== 'string') throw bad(`profile ${JSON.stringify(name)}: url is not a string`);
    if (token !== undefined && typeof token !== 'string')
      throw bad(`profile ${JSON.stringify(name)}: token is not a string`);
    out[name] = { url, token };
  }
  return { default_profile: defaultProfile, profiles: out };
}

/** Writes the config file atomically, mode 0600, in a 0700 folder. */
export async function saveConfig(place: Place, config: ConfigFile): Promise<string> {
  const file = configPath(place);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(config, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  // The mode is given on creation; chmod too, in case a umask or an old file left it wider.
  await chmod(temp, 0o600).catch(() => undefined);
  await rename(temp, file).catch(async (error: unknown) => {
    await rm(temp, { force: true });
    throw error;
  });
  return file;
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name))
    throw new CliError('a profile name is 1 to 64 letters, digits, dots, dashes or underscores', EXIT.usage);
  return name;
}

/** An absolute http(s) URL of an instance, without a trailing slash or `/api/v2`. */
export function normalizeServerUrl(text: string, from: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`${from} is not an absolute URL (e.g. https://secrets.example.org)`, EXIT.config);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`${from} is not http(s)`, EXIT.config);
  if (url.username || url.password)
    throw new CliError(
      `${from} must not hold a user name or password (the token goes in SECRET_PUSH_TOKEN)`,
      EXIT.config,
    );
  url.hash = '';
  url.search = '';
  return url
    .toString()
    .replace(/\/+$/, '')
    .replace(/\/api\/v2$/, '');
}

const originOf = (url: string) => new URL(url).origin;

/**
 * The server and token of a run. The server: `--server`, else `SECRET_PUSH_URL`, else the profile's. The token:
 * `SECRET_PUSH_TOKEN` (bound to `SECRET_PUSH_URL` when that is set), else the profile's (bound to the profile's url);
 * a token is sent only to the origin it is bound to, so `--server` pointing elsewhere runs anonymously, with a warning.
 */
export function resolveConnection(
  config: ConfigFile,
  env: ConfigEnv,
  flags: { server?: string | undefined; profile?: string | undefined; anonymous?: boolean | undefined },
): Connection {
  const named = flags.profile ?? (env.SECRET_PUSH_PROFILE || undefined);
  const profileName = named ?? config.default_profile;
  const profile = profileName === undefined ? undefined : config.profiles[profileName];
  if (named !== undefined && !profile)
    throw new CliError(`no profile named ${JSON.stringify(named)} (secret-push config list)`, EXIT.config);
  const envUrl = env.SECRET_PUSH_URL ? normalizeServerUrl(env.SECRET_PUSH_URL, 'SECRET_PUSH_URL') : undefined;
  const profileUrl = profile?.url ? normalizeServerUrl(profile.url, `the url of profile ${profileName}`) : undefined;
  const chosen = flags.server ? normalizeServerUrl(flags.server, '--server') : (envUrl ?? profileUrl);
  if (!chosen) {
    throw new CliError(
      'no server: set SECRET_PUSH_URL, pass --server URL, or add a profile (secret-push config add NAME --server URL)',
      EXIT.config,
      'no_server',
    );
  }
  const warnings: string[] = [];
  let token: string | undefined;
  const offer = (candidate: string | undefined, boundTo: string | undefined, what: string) => {
    if (token !== undefined || !candidate) return;
    if (boundTo === undefined || originOf(boundTo) === originOf(chosen)) token = candidate;
    else warnings.push(`not sending ${what} (configured for ${originOf(boundTo)}) to ${originOf(chosen)}`);
  };
  if (!flags.anonymous) {
    offer(env.SECRET_PUSH_TOKEN || undefined, envUrl, 'SECRET_PUSH_TOKEN');
    offer(profile?.token, profileUrl, `the token of profile ${profileName}`);
  }
  if (token && new URL(chosen).protocol === 'http:' && !isLoopback(new URL(chosen).hostname))
    warnings.push(`sending the token over plain http to ${originOf(chosen)}: anyone on the way can read it`);
  return { baseUrl: chosen, token, profile: profile ? profileName : undefined, warnings };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
