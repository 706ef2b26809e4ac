/** The instance: its environment, where it listens and keeps its data, its database, processes and sweeper. */
import os from 'node:os';
import path from 'node:path';
import { type Env, httpUrl, integer, oneOf, optionalInteger, raw, secret, SettingsError, text } from '../setting.js';

const ENVS = ['development', 'production', 'test'] as const;
const MODES = ['full', 'retrieve-only'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type AppEnv = (typeof ENVS)[number];
export type Mode = (typeof MODES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];

const ENV = oneOf('PWPUSH_ENV', ENVS, 'development', {
  shown: 'NODE_ENV, else `development`',
  meaning: 'Production refuses to start without a master key and without `PWPUSH_PUBLIC_BASE_URL`.',
});
/** Read only when PWPUSH_ENV is unset; documented under it. */
const NODE_ENV = oneOf('NODE_ENV', ENVS, 'development', { meaning: 'PWPUSH_ENV when that is unset.' });
const PORT = integer('PORT', { default: 5100, min: 1, max: 65535, meaning: 'TCP port the server listens on.' });
const HOST = text('PWPUSH_HOST', {
  shown: '`127.0.0.1`; `0.0.0.0` in production',
  accepts: 'an address or host name',
  meaning:
    'Address the server binds to. Development and test listen on the loopback address only; production (`PWPUSH_ENV=production`) binds what this says, every interface by default.',
});
const DATA_DIR = text('PWPUSH_DATA_DIR', {
  shown: '`<repo>/data`',
  accepts: 'a folder',
  meaning: 'Data directory: embedded PostgreSQL cluster and the development key file.',
});
const DATABASE_URL = secret('DATABASE_URL', {
  shown: 'unset',
  accepts: '`postgres://…` or `postgresql://…`',
  meaning:
    'PostgreSQL connection URL (it holds a password). Unset: an embedded PostgreSQL is started under the data directory.',
  what: "the external PostgreSQL's URL, with its password",
});
const MODE = oneOf('PWPUSH_MODE', MODES, 'full', {
  meaning:
    '`retrieve-only`: the public gateway in front of an internal instance on the same database. It serves what a recipient opens (the pages `/p/…` and `/r/…`, retrieval, preview, file downloads, expiry by a viewer, the answer to a request) and answers 404 to everything else: creating, accounts, API keys, webhooks, lists, audit logs, the API docs. See [docs/deploy.md](deploy.md).',
});
export const PUBLIC_BASE_URL = httpUrl('PWPUSH_PUBLIC_BASE_URL', {
  shown: 'unset',
  meaning:
    "Public base URL used in `json_url`, `html_url` and file links, and the only base of links in email. **Required in production, and wherever `PWPUSH_SMTP_URL` is set** (the server refuses to start without it); elsewhere, unset: answers use the request's own origin (its `Host` header).",
});
const LOG_LEVEL = oneOf('PWPUSH_LOG_LEVEL', LOG_LEVELS, 'info', {
  meaning: 'The least severe log lines written.',
});
const WORKERS = integer('PWPUSH_WORKERS', {
  default: 1,
  min: 1,
  max: 64,
  shown:
    'the number of cores, less one when PostgreSQL runs on this machine (embedded, or `DATABASE_URL` on a loopback address); at least 1',
  meaning:
    'Server processes sharing the port. Above 1, a primary process runs the embedded PostgreSQL, the per-client limit and the metrics sum, and replaces a worker that dies; `1` serves from one process. See [operations.md](operations.md#running-the-server).',
});
const DATABASE_POOL_SIZE = integer('PWPUSH_DATABASE_POOL_SIZE', {
  default: 10,
  min: 1,
  max: 100,
  meaning: 'Most PostgreSQL connections each server process holds: a host uses up to workers × this many.',
});
const SWEEP_INTERVAL_SECONDS = integer('PWPUSH_SWEEP_INTERVAL_SECONDS', {
  default: 30,
  min: 1,
  max: 60,
  meaning:
    'How often the sweeper erases expired secrets and lapsed file bytes (at most a minute, so secrets past their time are gone within a minute).',
});
const PURGE_EXPIRED_AFTER_DAYS = optionalInteger('PWPUSH_PURGE_EXPIRED_AFTER_DAYS', {
  min: 1,
  max: 36500,
  shown: 'unset (never)',
  meaning: 'Delete expired push records (and their audit) this many days after expiry.',
});

export const INSTANCE_SETTINGS = [
  ENV,
  PORT,
  HOST,
  DATA_DIR,
  DATABASE_URL,
  MODE,
  PUBLIC_BASE_URL,
  LOG_LEVEL,
  WORKERS,
  DATABASE_POOL_SIZE,
  SWEEP_INTERVAL_SECONDS,
  PURGE_EXPIRED_AFTER_DAYS,
];

/** PWPUSH_ENV, else NODE_ENV, else development. */
export function readAppEnv(env: Env): AppEnv {
  const nodeEnv = NODE_ENV.read(env);
  return raw(env, ENV.name) === undefined ? nodeEnv : ENV.read(env);
}

/** DATABASE_URL (inline or from its file), checked for its scheme; null: the embedded PostgreSQL. */
export function readDatabaseUrl(env: Env): string | null {
  const database = DATABASE_URL.read(env);
  if (database && !/^postgres(ql)?:\/\//.test(database.value)) {
    throw new SettingsError(database.from, 'DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  return database?.value ?? null;
}

/** The instance's settings (`dataDir` and `databaseUrl` are read first by the loader: other areas need them). */
export function readInstance(env: Env, appEnv: AppEnv, databaseUrl: string | null) {
  return {
    env: appEnv,
    // Development listens on loopback only; production binds what PWPUSH_HOST says (every interface by default).
    host: HOST.read(env) ?? (appEnv === 'production' ? '0.0.0.0' : '127.0.0.1'),
    port: PORT.read(env),
    mode: MODE.read(env),
    logLevel: LOG_LEVEL.read(env),
    sweepIntervalSeconds: SWEEP_INTERVAL_SECONDS.read(env),
    purgeExpiredAfterDays: PURGE_EXPIRED_AFTER_DAYS.read(env),
    workers: WORKERS.readOr(env, defaultWorkers(databaseUrl)),
    databasePoolSize: DATABASE_POOL_SIZE.read(env),
  };
}

/** The data directory: PWPUSH_DATA_DIR, else `<repo>/data`. */
export function readDataDir(env: Env, repoRoot: string): string {
  return path.resolve(DATA_DIR.read(env) ?? path.join(repoRoot, 'data'));
}

/**
 * One server process per core this process may use (cgroup and affinity limits included), less one when PostgreSQL
 * runs on the same machine (the embedded one, or a DATABASE_URL on a loopback address): it needs a core of its own.
 * Why, measured: docs/decisions/0003-default-workers.md.
 */
export function defaultWorkers(databaseUrl: string | null, cores = os.availableParallelism()): number {
  const local = databaseUrl === null || isLoopbackUrl(databaseUrl);
  return Math.min(64, Math.max(1, local ? cores - 1 : cores));
}

function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  // No host (a Unix socket named in the query) is this machine too.
  return host === '' || host === 'localhost' || host === '::1' || /^127\./.test(host);
}
