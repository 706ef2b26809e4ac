/**
 * The bench's servers: its PostgreSQL (embedded, with pg_stat_statements), and each server BENCH_SERVERS names as a
 * child process against it: ours (compiled, or from its sources), the two floors (bare-floor.ts, physical-floor.ts)
 * and a BENCH_BASELINE checkout's server. Each one is ready when its output says where it listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { defaultWorkers } from '../../server/src/config/settings.js';
import { NODE_FLAGS, PROCESS_ENV } from '../../server/src/runtime/node-flags.js';
import { checkBuild } from '../build-info.mjs';
import { options, repoRoot } from './options.js';

const { nodeOptions: NODE_OPTIONS, outputDir: OUTPUT_DIR, servers: SERVERS, baseline: BASELINE } = options;

/** A started server: its display name, its process and where it listens. */
export interface Started {
  name: string;
  child: ChildProcess;
  url: string;
  startupMs: number;
}

/** Spawns `node <args>` and resolves once its output matches `ready` (the URL is the match's first group). */
function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  cwd = repoRoot,
): Promise<{ child: ChildProcess; url: string; startupMs: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(NODE_OPTIONS ? { NODE_OPTIONS } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start:\n${output}`));
    }, 90_000);
    const onData = (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        // Our server logs one JSON line per request to stdout, as in production, into a pipe that this process
        // drains (what a container runtime or journald does with it), or writes to a file when asked.
        if (OUTPUT_DIR) {
          mkdirSync(OUTPUT_DIR, { recursive: true });
          const file = createWriteStream(path.join(OUTPUT_DIR, `${name.replace(/[^A-Za-z0-9.-]+/g, '_')}.log`));
          child.stdout!.pipe(file);
          child.stderr!.pipe(file);
        } else child.stdout!.resume();
        resolve({ child, url: m[1]!.replace('localhost', '127.0.0.1'), startupMs: performance.now() - t0 });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => {
      if (output.length < 100_000) output += c.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Node arguments that run a TypeScript entry with tsx's loader in the same process (tsx's CLI would add a parent
 * process, whose memory the RSS columns would count), workspace packages resolving to their TypeScript sources (a
 * checkout without the condition ignores it). A checkout whose tsx has no loader entry runs through tsx's CLI.
 */
const tsxArgs = (cwd: string, entry: string) => {
  const loader = path.join(cwd, 'node_modules/tsx/dist/loader.mjs');
  return existsSync(loader)
    ? ['--conditions=@secret-push/source', `--import=${pathToFileURL(loader).href}`, entry]
    : [path.join(cwd, 'node_modules/tsx/dist/cli.mjs'), '--conditions=@secret-push/source', entry];
};

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The superuser's URL of the bench database (pg_stat_statements: the extension, and every role's statistics). */
export function benchAdminUrl(db: { adminUrl: string }): string {
  const url = new URL(db.adminUrl);
  url.pathname = '/bench';
  return url.toString();
}

/** The bench's PostgreSQL: embedded, in a temp folder, with pg_stat_statements (loading it needs a restart). */
export async function benchDatabase(dir: string) {
  const { startEmbeddedPostgres, openOrm, migrate } = await import('@secret-push/server');
  const first = await startEmbeddedPostgres({ dataDir: dir, database: 'bench', maxConnections: 200 });
  const setup = new pg.Client({ connectionString: first.adminUrl });
  await setup.connect();
  await setup.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
  await setup.end();
  await first.stop();
  const db = await startEmbeddedPostgres({ dataDir: dir, database: 'bench', maxConnections: 200 });
  // The extension and its statistics need the superuser; the servers connect as the application role (db.url).
  const ext = new pg.Client({ connectionString: benchAdminUrl(db) });
  await ext.connect();
  await ext.query('create extension if not exists pg_stat_statements');
  await ext.end();
  const orm = await openOrm(db.url);
  await migrate(orm);
  await orm.close(true);
  return db;
}

/**
 * Starts the servers named in BENCH_SERVERS (and the baseline) against `databaseUrl`, adding each to `started` as it
 * is up: when one fails to start, the caller still has the others to stop.
 */
export async function startServers(
  databaseUrl: string,
  dir: string,
  keyHex: string,
  started: Started[],
): Promise<void> {
  const { freePort } = await import('@secret-push/server');
  const ourEnv = async (workers = options.workers): Promise<NodeJS.ProcessEnv> => ({
    // As `npm start` runs it (BENCH_SERVER_ENV may override).
    ...PROCESS_ENV,
    PWPUSH_ENV: 'production',
    DATABASE_URL: databaseUrl,
    PORT: String(await freePort()),
    PWPUSH_HOST: '127.0.0.1',
    PWPUSH_DATA_DIR: dir,
    PWPUSH_MASTER_KEY: `bench:${keyHex}`,
    // Production refuses to start without it; the bench's links are never opened.
    PWPUSH_PUBLIC_BASE_URL: 'http://127.0.0.1',
    PWPUSH_LOG_LEVEL: options.logLevel,
    // The bench drives everything from one address: the per-client limit would answer 429.
    PWPUSH_RATE_LIMIT_PER_MINUTE: options.rateLimit,
    // Several client addresses (BENCH_ADDRESSES): the driver sends them as X-Forwarded-For, as a proxy in front would.
    ...(options.addresses > 1 ? { PWPUSH_TRUST_PROXY: 'true' } : {}),
    ...(workers ? { PWPUSH_WORKERS: workers } : {}),
    // BENCH_WEBHOOK: the bench's receiver listens on loopback.
    ...(options.webhook
      ? {
          PWPUSH_WEBHOOKS_ALLOW_PRIVATE: 'true',
          // One owner sends everything: the budgets are counted but never reached (BENCH_WEBHOOK_BUDGET).
          PWPUSH_WEBHOOK_SENDS_PER_MINUTE: options.webhookBudget,
          PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE: options.webhookBudget,
        }
      : {}),
    // BENCH_SWEEP: the sweeper's pass starts within a second of the due pushes' load.
    ...(options.sweep > 0 ? { PWPUSH_SWEEP_INTERVAL_SECONDS: '1' } : {}),
    ...options.serverEnv,
  });
  const LISTENING = /Secret Push listening on (http:\/\/\S+)/;
  /** Our server as `npm start` runs it; `flags` replace its Node flags (a server named `ours1@--a=1+--b=2`). */
  const oursArgs = (flags: readonly string[] = NODE_FLAGS) => {
    if (options.source) return tsxArgs(repoRoot, 'server/src/main.ts');
    const status = checkBuild();
    if (!status.fresh) throw new Error(`the compiled server is missing or stale (${status.reason}): run npm run build`);
    return [...flags, 'server/dist/main.js'];
  };
  const add = async (name: string, start: () => Promise<{ child: ChildProcess; url: string; startupMs: number }>) => {
    started.push({ name, ...(await start()) });
  };
  // One at a time: start-up times are not measured against each other's start-up.
  // By default: ours as `npm start` runs it (its default workers), ours with the other of 1 or 2 workers, both floors.
  const defaultWorkersHere = defaultWorkers(databaseUrl);
  const servers = SERVERS ?? ['ours', defaultWorkersHere === 1 ? 'ours2' : 'ours1', 'bare', 'physical'];
  for (const spec of servers) {
    const [name, flagList] = spec.split('@') as [string, string | undefined];
    const flags = flagList === undefined ? undefined : flagList.split('+').filter(Boolean);
    const label = flags === undefined ? '' : `@${flags.join(' ') || 'no flags'}`;
    const ours = /^ours(\d*)$/.exec(name);
    if (ours) {
      const workers = ours[1] || undefined;
      const title = workers
        ? `ours×${workers}${label}`
        : `ours (${defaultWorkersHere} worker${defaultWorkersHere === 1 ? '' : 's'})${label}`;
      await add(title, async () => startChild(title, oursArgs(flags), await ourEnv(workers), LISTENING));
    } else if (name === 'bare') {
      await add('bare', async () =>
        startChild(
          'bare server',
          tsxArgs(repoRoot, 'scripts/bench/bare-floor.ts').concat([databaseUrl, String(await freePort()), keyHex]),
          {},
          /bare listening on (http:\/\/\S+)/,
        ),
      );
    } else if (name === 'physical') {
      await add('physical', async () =>
        startChild(
          'physical floor',
          tsxArgs(repoRoot, 'scripts/bench/physical-floor.ts').concat([databaseUrl, String(await freePort())]),
          {},
          /physical listening on (http:\/\/\S+)/,
        ),
      );
    } else throw new Error(`BENCH_SERVERS: unknown server ${name} (ours, ours<N>, bare, physical)`);
  }
  if (BASELINE) {
    // A checkout with a build runs as its `npm start` does; an older one (no build) from its sources.
    const compiled = existsSync(path.join(BASELINE, 'server/dist/main.js'));
    const args = compiled ? [...NODE_FLAGS, 'server/dist/main.js'] : tsxArgs(BASELINE, 'server/src/main.ts');
    await add('base', async () => startChild('baseline server', args, await ourEnv(), LISTENING, BASELINE));
  }
}
