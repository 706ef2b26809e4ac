/**
 * The server's log lines go to stdout; whoever takes them (a container runtime, journald, a pipe into a log shipper,
 * a file on a disk) may fail. Every stream the server opens has an error path (issue 19): a stdout whose reader is
 * gone (EPIPE) or whose disk is full (ENOSPC, here /dev/full) loses the lines, never the process, which keeps
 * answering. (With stdout on a full disk the server used to die before it listened.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, chmodSync, rmSync, closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/config/settings.js';
import { freePort } from '../../src/db/embedded.js';
import {
  compiledServerCommand,
  eventually,
  startCompiledServer,
  type ServerProcess,
} from '../support/compiled-server.js';
import { createMigratedDatabase, TEST_KEY_A, type TestDatabase } from '../support/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createMigratedDatabase('sp_logpipe');
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const env = () => ({
  DATABASE_URL: db.url,
  PWPUSH_WORKERS: '1',
  PWPUSH_LOG_LEVEL: 'info',
  PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
  PWPUSH_MASTER_KEY: TEST_KEY_A.key.toString('hex'),
});

async function createsSucceed(base: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const r = await fetch(`${base}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"push":{"payload":"line ${i}"}}`,
    });
    expect(r.status).toBe(201);
  }
}

describe('a log destination that fails', () => {
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('a reader that goes away (EPIPE): the lines are lost, the server answers on', async () => {
    server = await startCompiledServer(env());
    server.child.stdout!.destroy();
    await createsSucceed(server.baseUrl, 40);
    // Buffered lines are written every 200 ms: let the failed writes happen, then ask again.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await fetch(`${server.baseUrl}/api/v2/version`)).status).toBe(200);
    expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
  });

  it('a full disk (ENOSPC on every write): the server starts, answers, and stays up', async () => {
    const [command, args] = compiledServerCommand();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-proc-'));
    chmodSync(dataDir, 0o755);
    const full = openSync('/dev/full', 'w');
    const port = await freePort();
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PWPUSH_ENV: 'test',
        PORT: String(port),
        PWPUSH_HOST: '127.0.0.1',
        PWPUSH_DATA_DIR: dataDir,
        ...env(),
      },
      stdio: ['ignore', full, 'pipe'],
    });
    closeSync(full);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => void (stderr += c.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      const died = new Promise<never>((_, reject) =>
        child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${stderr}`))),
      );
      died.catch(() => undefined); // once it has answered, its stop at the end is no failure
      await Promise.race([
        eventually(async () => (await fetch(`${base}/healthz`)).ok, 60_000, `the server on ${base}`),
        died,
      ]);
      await createsSucceed(base, 40);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect((await fetch(`${base}/api/v2/version`)).status).toBe(200);
      expect(child.exitCode, stderr).toBeNull();
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
