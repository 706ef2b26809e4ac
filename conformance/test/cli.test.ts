/**
 * Issue 39: the conformance CLI as the README runs it, on any machine. The compiled server (what `scripts/start` runs)
 * starts with its development defaults on a fresh data dir, only the per-client request limit off (the suite sends
 * some 620 requests in a minute; the README's command says so); two users are made with `npm run users`, as the
 * README does; then `npm run conformance -- --base-url …` runs as a subprocess with the tokens and emails in the
 * environment (SECRET_PUSH_*), never on the command line. This machine has no outside DNS, so HOOK-001/002 cannot
 * register the public example host: they must say `not-run` with the flag to add, not fail. The output must say
 * "conformant", and hold neither token (npm's banner included).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCompiledServer, type ServerProcess } from '@secret-push/server/testing';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

let server: ServerProcess;
const env: Record<string, string> = {};

/** `npm run users -- create <email>` against the server's data dir; the token is the last line it prints. */
async function makeUser(email: string): Promise<string> {
  const { stdout } = await run('npm', ['run', '--silent', 'users', '--', 'create', email], {
    cwd: repoRoot,
    env: { ...process.env, PWPUSH_ENV: 'development', PWPUSH_DATA_DIR: server.dataDir },
  });
  return stdout.trim().split('\n').at(-1)!;
}

beforeAll(async () => {
  server = await startCompiledServer({ PWPUSH_ENV: 'development', PWPUSH_RATE_LIMIT_PER_MINUTE: '0' });
  env.SECRET_PUSH_TOKEN = await makeUser('alice@example.org');
  env.SECRET_PUSH_TOKEN_B = await makeUser('bob@example.org');
  env.SECRET_PUSH_EMAIL = 'alice@example.org';
  env.SECRET_PUSH_EMAIL_B = 'bob@example.org';
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

describe('npm run conformance against a local server', () => {
  it('says conformant with no failure, HOOK-001/002 not-run with the flag to add, and prints no token', async () => {
    expect(env.SECRET_PUSH_TOKEN).toMatch(/^spt_/);
    expect(env.SECRET_PUSH_TOKEN_B).toMatch(/^spt_/);
    const { stdout, stderr } = await run('npm', ['run', 'conformance', '--', '--base-url', server.baseUrl], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string; code?: number }) => {
      throw new Error(`exit ${error.code}:\n${error.stdout}\n${error.stderr}`);
    });
    const output = stdout + stderr;
    expect(output).toContain('RESULT: conformant (no failures)');
    expect(output).not.toMatch(/^\S+\s+fail\s/m);
    for (const id of ['HOOK-001', 'HOOK-002']) {
      expect(output).toMatch(new RegExp(`^${id}\\s+not-run\\s+needs --webhook-receiver host:port`, 'm'));
    }
    expect(output).not.toContain(env.SECRET_PUSH_TOKEN);
    expect(output).not.toContain(env.SECRET_PUSH_TOKEN_B);
  });

  it('quotes the target’s own error text on a failure line and still prints no token', async () => {
    // The receiver on loopback, which the default server refuses as a webhook target: HOOK-001 fails quoting why.
    const { stdout } = await run(
      'npm',
      [
        'run',
        '--silent',
        'conformance',
        '--',
        '--base-url',
        server.baseUrl,
        '--only',
        'HOOK-001',
        '--webhook-receiver',
        '127.0.0.1:0',
      ],
      { cwd: repoRoot, env: { ...process.env, ...env } },
    ).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    const line = stdout.split('\n').find((l) => l.startsWith('HOOK-001'));
    expect(line).toMatch(/HOOK-001\s+fail\s+createWebhook: expected 201, got 422 \(validation_failed: "url: /);
    expect(stdout).not.toContain(env.SECRET_PUSH_TOKEN);
  });
});
