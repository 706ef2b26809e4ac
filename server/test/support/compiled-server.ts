/**
 * The compiled server (server/dist/main.js, what `npm start` runs) as a real OS process, for tests of the process
 * itself: workers, signals, the embedded database's supervisor. Refuses to run a missing or stale build (run
 * `npm run build`; scripts/test does it through scripts/install), so a test never passes against old code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkBuild } from '../../../scripts/build-info.mjs';
import { repoRoot } from '../../src/config/settings.js';
import { freePort } from '../../src/db/embedded.js';
import { NODE_FLAGS } from '../../src/runtime/node-flags.js';

export const COMPILED_MAIN = path.join(repoRoot, 'server', 'dist', 'main.js');

/** The command that runs the compiled server as `npm start` does: this Node (24), its flags and the bundle; throws when the build is stale. */
export function compiledServerCommand(): [string, string[]] {
  const status = checkBuild();
  if (!status.fresh)
    throw new Error(`the compiled server is missing or stale (${status.reason}): run \`npm run build\``);
  return [process.execPath, [...NODE_FLAGS, COMPILED_MAIN]];
}

export interface ServerProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` from the "listening on" line. */
  baseUrl: string;
  dataDir: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** SIGTERM, wait for the exit, remove the data dir. */
  stop(): Promise<number | string>;
}

/**
 * Starts the compiled server with `env` on a free port of 127.0.0.1 and a fresh data dir (embedded PostgreSQL unless
 * env has DATABASE_URL). Resolves once it prints its "listening on" line.
 */
/** The compiled server as a child process on `dataDir`, a free port of 127.0.0.1 and `env`; everything it prints, kept. */
async function spawnCompiled(
  env: Record<string, string>,
  dataDir: string,
): Promise<{ child: ChildProcess; output: () => string }> {
  const [command, args] = compiledServerCommand();
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PWPUSH_ENV: 'test',
      PORT: String(await freePort()),
      PWPUSH_HOST: '127.0.0.1',
      PWPUSH_DATA_DIR: dataDir,
      PWPUSH_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout!.on('data', (c: Buffer) => chunks.push(c.toString()));
  child.stderr!.on('data', (c: Buffer) => chunks.push(c.toString()));
  return { child, output: () => chunks.join('') };
}

export async function startCompiledServer(
  env: Record<string, string>,
  opts: {
    timeoutMs?: number;
    /** Reuse this data dir (and keep it on stop) instead of a fresh one. */
    dataDir?: string;
  } = {},
): Promise<ServerProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'secret-push-proc-'));
  chmodSync(dataDir, 0o755); // the embedded PostgreSQL (user postgres) must enter it
  const { child, output } = await spawnCompiled(env, dataDir);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the server did not start:\n${output()}`)),
      opts.timeoutMs ?? 90_000,
    );
    const check = () => {
      const m = /Secret Push listening on (http:\/\/\S+)/.exec(output());
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(m[1]!.replace('localhost', '127.0.0.1'));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${output()}`));
    });
  });
  let stopped: Promise<number | string> | undefined;
  return {
    child,
    baseUrl,
    dataDir,
    output,
    exited,
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
        const code = await exited;
        clearTimeout(kill);
        if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
        return code;
      })();
      return stopped;
    },
  };
}

/** The pids of `pid`'s descendants, with their command lines (from /proc; Linux). */
export function descendants(pid: number): { pid: number; cmdline: string }[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* exited meanwhile */
    }
  }
  const found: { pid: number; cmdline: string }[] = [];
  for (const [child] of parents) {
    for (let cur = parents.get(child); cur !== undefined && cur > 1; cur = parents.get(cur)) {
      if (cur === pid) {
        try {
          found.push({
            pid: child,
            cmdline: readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim(),
          });
        } catch {
          /* exited meanwhile */
        }
        break;
      }
    }
  }
  return found;
}

/** Polls `fn` until it returns true (or throws after `ms`). */
export async function eventually(fn: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (
      await Promise.resolve()
        .then(fn)
        .catch(() => false)
    )
      return;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Runs the compiled server with `env` (on `dataDir`) expecting it to refuse to start: resolves with its exit code and
 * output once it exits; kills it and throws if it is still running after `timeoutMs` (or prints its "listening" line).
 */
export async function compiledServerExit(
  env: Record<string, string>,
  dataDir: string,
  timeoutMs = 90_000,
): Promise<{ code: number | string; output: string }> {
  const { child, output } = await spawnCompiled(env, dataDir);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not exit within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? -1, output: output() });
    });
  });
}
