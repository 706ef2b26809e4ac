import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runUsersCli } from '../../src/cli/users.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { createCore } from '../../src/core.js';
import { makeSettings } from '../support/db.js';

const dirs: string[] = [];
function tempDataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-embedded-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runUsersCli(
    args,
    (l) => out.push(l),
    (l) => err.push(l),
    env,
  );
  return { code, out, err, last: out[out.length - 1] ?? '' };
}

async function select1(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('select 1 as one')).rows[0].one as number;
  } finally {
    await c.end();
  }
}

describe('users CLI', () => {
  it('creates a user and rotates the token, printing the token as the last line; a token made offline works for the server', async () => {
    const dataDir = tempDataDir();
    const env = { PWPUSH_DATA_DIR: dataDir };
    const created = await cli(['create', 'Ops@Example.com'], env);
    expect(created.code).toBe(0);
    expect(created.last).toMatch(/^spt_[A-Za-z0-9_-]{32}$/);

    const dup = await cli(['create', 'ops@example.com'], env);
    expect(dup.code).not.toBe(0);
    expect(dup.err.join('\n')).toMatch(/already exists/);
    const unknown = await cli(['token', 'nobody@example.com'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err.join('\n')).toMatch(/no user has the email/);
    expect((await cli(['frobnicate'], env)).code).not.toBe(0);

    const rotated = await cli(['token', 'ops@example.com'], env);
    expect(rotated.code).toBe(0);
    expect(rotated.last).not.toBe(created.last);

    // The "server" starts on the same data dir (and key file): the rotated token works, the first one does not.
    const db = await startEmbeddedPostgres({ dataDir });
    expect(db.owner).toBe(true);
    // While the server runs, the CLI joins its cluster instead of starting another.
    const whileRunning = await cli(['token', 'ops@example.com'], env);
    expect(whileRunning.code).toBe(0);
    expect(whileRunning.out.join('\n')).toMatch(/running server/);
    const core = await createCore({
      ...(await import('../../src/config/settings.js')).loadSettings(env),
      databaseUrl: db.url,
    });
    try {
      expect(await core.users.authenticate(whileRunning.last)).toMatchObject({ email: 'ops@example.com' });
      expect(await core.users.authenticate(rotated.last)).toBeNull();
      expect(await core.users.authenticate(created.last)).toBeNull();
    } finally {
      await core.close();
      await db.stop();
    }
  });
});

describe('embedded PostgreSQL', () => {
  it('keeps data across restarts and writes its password file with mode 0600', async () => {
    const dataDir = tempDataDir();
    const first = await startEmbeddedPostgres({ dataDir, database: 'app' });
    const c = new pg.Client({ connectionString: first.url });
    await c.connect();
    await c.query('create table kept (v int); insert into kept values (42)');
    await c.end();
    await first.stop();
    const second = await startEmbeddedPostgres({ dataDir, database: 'app' });
    try {
      const c2 = new pg.Client({ connectionString: second.url });
      await c2.connect();
      expect((await c2.query('select v from kept')).rows).toEqual([{ v: 42 }]);
      await c2.end();
      const state = path.join(dataDir, 'postgres.json');
      expect((await import('node:fs')).statSync(state).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ port: second.port, pid: process.pid });
    } finally {
      await second.stop();
    }
  });

  it('recovers from a postmaster left running by a process that was killed', async () => {
    const dataDir = tempDataDir();
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve('server/src/db/embedded.ts'))};
      const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)} });
      process.stdout.write('ready ' + db.port + '\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let buf = '';
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        const m = /ready (\d+)/.exec(buf);
        if (m) resolve(Number(m[1]));
      });
      child.on('exit', (code) => reject(new Error(`child exited ${code}`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true);
    const leftover = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    expect(() => process.kill(leftover, 0)).not.toThrow();

    const db = await startEmbeddedPostgres({ dataDir });
    try {
      expect(db.owner).toBe(true);
      expect(await select1(db.url)).toBe(1);
      expect(() => process.kill(leftover, 0)).toThrow();
      expect(port).toBeGreaterThan(0);
    } finally {
      await db.stop();
    }
  });
});

describe('createCore', () => {
  it('refuses settings without a database URL', async () => {
    await expect(createCore(makeSettings({ databaseUrl: null }))).rejects.toThrow(/startEmbeddedPostgres/);
  });
});
