/**
 * Start-ups that must refuse, as the real process (`npm start`'s compiled bundle) does them (issue 19):
 *
 * - a master key that does not open what the data directory's database holds: exit code 1, a message naming
 *   PWPUSH_MASTER_KEY / PWPUSH_MASTER_KEY_PREVIOUS and `npm run key`, and no key material; the data is untouched
 *   (the right key reads it afterwards), and a rotation (new key, old one in PWPUSH_MASTER_KEY_PREVIOUS) starts;
 * - production without PWPUSH_PUBLIC_BASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compiledServerExit, startCompiledServer, type ServerProcess } from '../support/compiled-server.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sp-start-refusals-'));
chmodSync(dataDir, 0o755);
const running: ServerProcess[] = [];
afterAll(async () => {
  for (const s of running) await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const RIGHT = randomBytes(32);
const WRONG = randomBytes(32);
const NEW = randomBytes(32);
const one = { PWPUSH_WORKERS: '1' };

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startCompiledServer({ ...one, ...env }, { dataDir });
  running.push(server);
  return server;
}
async function stop(server: ServerProcess): Promise<void> {
  expect(await server.stop()).toBe(0);
  running.splice(running.indexOf(server), 1);
}

async function createPush(base: string, payload: string): Promise<string> {
  const res = await fetch(`${base}/api/v2/pushes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ push: { payload, expire_after_views: 5 } }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { url_token: string }).url_token;
}
async function retrieve(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/api/v2/pushes/${token}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { payload: string }).payload;
}

/** Every form a key of these bytes could be written in. */
const materialOf = (key: Buffer) => [
  key.toString('hex'),
  key.toString('hex').toUpperCase(),
  key.toString('base64'),
  key.toString('base64url'),
];

describe('the master key', () => {
  it('refuses to start with a key that does not open the stored pushes, names the settings and `npm run key`, and shows no key', async () => {
    const first = await serve({ PWPUSH_MASTER_KEY: RIGHT.toString('hex') });
    const tokens = [await createPush(first.baseUrl, 'kept secret 1'), await createPush(first.baseUrl, 'kept secret 2')];
    await stop(first);

    const wrongStarts: Record<string, string>[] = [
      { PWPUSH_MASTER_KEY: WRONG.toString('hex') },
      // The same id as before with other bytes: the id matches, the key does not.
      {
        PWPUSH_MASTER_KEY: `${(await import('../../src/config/settings.js')).parseMasterKey(RIGHT.toString('hex'), 'x').id}:${WRONG.toString('base64')}`,
      },
      // A wrong previous key does not help either.
      { PWPUSH_MASTER_KEY: WRONG.toString('hex'), PWPUSH_MASTER_KEY_PREVIOUS: NEW.toString('hex') },
      // More than one worker: the cluster's start fails the same way, it does not keep replacing workers.
      { PWPUSH_MASTER_KEY: WRONG.toString('hex'), PWPUSH_WORKERS: '2' },
    ];
    for (const env of wrongStarts) {
      const { code, output } = await compiledServerExit({ ...one, ...env }, dataDir);
      expect(code, output).toBe(1);
      // Alone: "Secret Push failed to start: …"; in a cluster the worker says it ("Secret Push worker 1 failed to start: …").
      expect(output).toMatch(
        /Secret Push (worker \d+ )?failed to start: the configured master keys cannot decrypt what this database holds/,
      );
      expect(output).toContain('PWPUSH_MASTER_KEY');
      expect(output).toContain('PWPUSH_MASTER_KEY_PREVIOUS');
      expect(output).toContain('`npm run key`');
      expect(output).not.toMatch(/listening on/);
      for (const key of [RIGHT, WRONG, NEW]) for (const text of materialOf(key)) expect(output).not.toContain(text);
    }

    // Nothing was spent or changed: the right key reads both pushes; a rotation (new key, the old one kept as a
    // previous key) starts and reads them too.
    const again = await serve({ PWPUSH_MASTER_KEY: RIGHT.toString('hex') });
    expect(await retrieve(again.baseUrl, tokens[0]!)).toBe('kept secret 1');
    await stop(again);
    const rotated = await serve({
      PWPUSH_MASTER_KEY: NEW.toString('hex'),
      PWPUSH_MASTER_KEY_PREVIOUS: RIGHT.toString('hex'),
    });
    expect(await retrieve(rotated.baseUrl, tokens[1]!)).toBe('kept secret 2');
    await stop(rotated);
  }, 240_000);

  it('`npm run key` prints a new 64-hex-character key the server accepts', async () => {
    const { execFileSync } = await import('node:child_process');
    const printed = execFileSync('npm', ['run', '--silent', 'key'], { encoding: 'utf8' });
    expect(printed).toMatch(/^[0-9a-f]{64}\n$/);
    expect(execFileSync('npm', ['run', '--silent', 'key'], { encoding: 'utf8' })).not.toBe(printed);
    const { parseMasterKey } = await import('../../src/config/settings.js');
    expect(parseMasterKey(printed, 'PWPUSH_MASTER_KEY').key.toString('hex')).toBe(printed.trim());
  });
});

describe('production', () => {
  it('refuses to start without PWPUSH_PUBLIC_BASE_URL, saying what to set', async () => {
    const { code, output } = await compiledServerExit(
      { PWPUSH_ENV: 'production', PWPUSH_MASTER_KEY: RIGHT.toString('hex') },
      dataDir,
    );
    expect(code).toBe(1);
    expect(output).toMatch(/Secret Push cannot start: PWPUSH_PUBLIC_BASE_URL is required in production: set it to/);
    for (const text of materialOf(RIGHT)) expect(output).not.toContain(text);
  });
});
