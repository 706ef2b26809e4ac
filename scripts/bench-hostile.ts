/**
 * `npm run bench:hostile`: how fast the compiled server (as `npm start` runs it, one process) refuses hostile bodies,
 * and what they cost it (issue 19). Every hostile body of server/test/support/hostile-bodies.ts (5,000,000-item
 * arrays, 200,000 keys or fields, deep nesting, a 50 MB string in each field; JSON, multipart and urlencoded; v2 and
 * v1's `/p.json` and `/f.json`; anonymous and with a token) is streamed to it, one after the other, while ordinary
 * creates run alongside; the table gives each one's status, the time to its answer and how much of the body had been
 * handed to the connection by then (after its answer the server reads and discards what still comes for up to 2 s,
 * so on loopback this can exceed what it had read when it answered), then the server's resident memory before, at
 * its peak and after, and the ordinary creates' latency before and during the run.
 *
 * One process tree: an embedded PostgreSQL in a temp folder, the compiled server against it (DATABASE_URL), this
 * process as the client, all on loopback. Options (env): BENCH_HOSTILE_ROUNDS (default 1: each body once per caller),
 * BENCH_HOSTILE_FILTER (a substring of the case names to run, e.g. `50 MB`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS, PROCESS_ENV } from '../server/src/runtime/node-flags.js';
import { checkBuild } from './build-info.mjs';
import { CREATE_PATHS, hostileBodies, stream, type Answer } from '../server/test/support/hostile-bodies.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Math.max(1, Number(process.env.BENCH_HOSTILE_ROUNDS ?? 1));
const FILTER = process.env.BENCH_HOSTILE_FILTER ?? '';

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

async function startServer(
  databaseUrl: string,
  dir: string,
  keyHex: string,
): Promise<{ child: ChildProcess; base: string }> {
  const status = checkBuild();
  if (!status.fresh) throw new Error(`the compiled server is missing or stale (${status.reason}): run npm run build`);
  const { freePort } = await import('@secret-push/server');
  const child = spawn(process.execPath, [...NODE_FLAGS, 'server/dist/main.js'], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...PROCESS_ENV,
      PWPUSH_ENV: 'production',
      DATABASE_URL: databaseUrl,
      PORT: String(await freePort()),
      PWPUSH_HOST: '127.0.0.1',
      PWPUSH_DATA_DIR: dir,
      PWPUSH_MASTER_KEY: `bench:${keyHex}`,
      PWPUSH_PUBLIC_BASE_URL: 'http://127.0.0.1',
      PWPUSH_WORKERS: '1',
      PWPUSH_LOG_LEVEL: 'warn',
      PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (c: Buffer) => void (output += c.toString()));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 90_000);
    child.stdout!.on('data', (c: Buffer) => {
      output += c.toString();
      const m = /Secret Push listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!.replace('localhost', '127.0.0.1'));
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
  child.stdout!.resume();
  return { child, base };
}

async function ordinary(base: string): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${base}/api/v2/pushes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"push":{"payload":"ordinary"}}',
  });
  await r.arrayBuffer();
  if (r.status !== 201) throw new Error(`an ordinary create answered ${r.status}`);
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-bench-hostile-'));
  chmodSync(dir, 0o755);
  const { startEmbeddedPostgres, createCore, loadSettings } = await import('@secret-push/server');
  const db = await startEmbeddedPostgres({ dataDir: dir, database: 'bench', maxConnections: 50 });
  const keyHex = randomBytes(32).toString('hex');
  let server: { child: ChildProcess; base: string } | undefined;
  try {
    server = await startServer(db.url, dir, keyHex);
    const { base, child } = server;
    const pid = child.pid!;
    // A token for the cases "with a token" (the body limit is then the file limit, about 140 MB).
    const settings = loadSettings({
      PWPUSH_ENV: 'production',
      DATABASE_URL: db.url,
      PWPUSH_MASTER_KEY: `bench:${keyHex}`,
      PWPUSH_PUBLIC_BASE_URL: 'http://127.0.0.1',
      PWPUSH_DATA_DIR: dir,
    });
    const core = await createCore(settings, { sweeper: false });
    const token = (await core.users.createUser('bench-hostile@example.org')).token;
    await core.close();

    // Ordinary creates before the run: the latency the hostile ones are compared with.
    for (let i = 0; i < 50; i++) await ordinary(base);
    const quiet: number[] = [];
    for (let i = 0; i < 200; i++) quiet.push(await ordinary(base));
    const before = rssMb(pid);
    let peak = before;

    const during: number[] = [];
    let running = true;
    const background = (async () => {
      while (running) {
        during.push(await ordinary(base));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();

    const rows: { what: string; caller: string; answer: Answer }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of CREATE_PATHS) {
        for (const type of ['json', 'urlencoded', 'multipart'] as const) {
          for (const body of hostileBodies(target, type)) {
            const what = `${target.path} ${type}: ${body.name}`;
            if (FILTER && !what.includes(FILTER)) continue;
            for (const caller of ['anonymous', 'token'] as const) {
              const headers: Record<string, string> = { 'content-type': body.contentType };
              if (caller === 'token') headers.authorization = `Bearer ${token}`;
              const answer = await stream(base, 'POST', target.path, headers, body.chunks());
              rows.push({ what, caller, answer });
              peak = Math.max(peak, rssMb(pid));
            }
          }
        }
      }
    }
    running = false;
    await background;
    const after = rssMb(pid);
    if (child.exitCode !== null) throw new Error('the server died during the run');

    const lines = ['| body | caller | status | ms to the answer | MB sent by then |', '|---|---|---|---|---|'];
    for (const r of rows) {
      lines.push(
        `| ${r.what} | ${r.caller} | ${r.answer.status} | ${r.answer.ms.toFixed(1)} | ${(r.answer.sent / 1024 / 1024).toFixed(2)} |`,
      );
    }
    console.log(lines.join('\n'));
    const times = rows.map((r) => r.answer.ms);
    const not4xx = rows.filter((r) => r.answer.status < 400 || r.answer.status >= 500);
    console.log(
      `\n${rows.length} hostile bodies: ${rows.length - not4xx.length} refused with a 4xx; time to the answer p50 ${quantile(times, 0.5).toFixed(1)} ms, ` +
        `p99 ${quantile(times, 0.99).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms; at most ${Math.max(...rows.map((r) => r.answer.sent / 1024 / 1024)).toFixed(1)} MB handed to the connection before an answer`,
    );
    console.log(
      `server RSS: ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at the peak, ${after.toFixed(0)} MB after; the same process throughout (pid ${pid})`,
    );
    console.log(
      `ordinary creates (one at a time): p50 ${quantile(quiet, 0.5).toFixed(1)} ms, p99 ${quantile(quiet, 0.99).toFixed(1)} ms before; ` +
        `p50 ${quantile(during, 0.5).toFixed(1)} ms, p99 ${quantile(during, 0.99).toFixed(1)} ms, max ${Math.max(...during).toFixed(1)} ms during the run (${during.length} creates)`,
    );
    if (not4xx.length > 0) {
      console.error(
        `not refused with a 4xx:\n${not4xx.map((r) => `  ${r.what} (${r.caller}): ${r.answer.status}`).join('\n')}`,
      );
      process.exitCode = 1;
    }
  } finally {
    if (server && server.child.exitCode === null) {
      const exited = new Promise((r) => server!.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
