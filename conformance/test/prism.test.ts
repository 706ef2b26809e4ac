/**
 * Target 2: the Prism mock of the bundled spec, run with --profile stateless. Prism answers the first example of
 * a documented response, validates requests (422 for a bad body, 400 for a bad query parameter, 415 for a wrong
 * content type) and answers 401 when an operation's security is unmet; it keeps no state. Every requirement of the
 * stateless profile must pass against it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SPEC_PATH } from '../src/spec.js';
import { runSuite, REQUIREMENTS, type RunOutput } from '../src/runner.js';

const require = createRequire(import.meta.url);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Prism did not answer ${url} in time`);
}

describe('conformance against the Prism mock (stateless profile)', () => {
  let prism: ChildProcess;
  let dir: string;
  let baseUrl: string;
  let run: RunOutput;
  let output = '';

  beforeAll(async () => {
    // Prism watches its spec file and restarts on change; a private copy keeps concurrent regenerations away.
    dir = mkdtempSync(path.join(os.tmpdir(), 'conformance-prism-'));
    const spec = path.join(dir, 'openapi.json');
    copyFileSync(DEFAULT_SPEC_PATH, spec);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const cli = require.resolve('@stoplight/prism-cli/dist/index.js');
    prism = spawn(process.execPath, [cli, 'mock', spec, '-p', String(port), '-h', '127.0.0.1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    prism.stdout?.on('data', (d) => (output += d));
    prism.stderr?.on('data', (d) => (output += d));
    await waitFor(`${baseUrl}/api/v2/version`, Date.now() + 60_000);
    run = await runSuite({ baseUrl, token: 'spt_mock_user_a', profile: 'stateless', specPath: spec });
  }, 120_000);

  afterAll(() => {
    prism?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes every requirement of the stateless profile', () => {
    const failed = run.results.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${r.reason}`);
    expect(failed, output.slice(-2000)).toEqual([]);
    const stateless = REQUIREMENTS.filter((r) => r.stateless)
      .map((r) => r.id)
      .sort();
    const passed = run.results
      .filter((r) => r.status === 'pass')
      .map((r) => r.id)
      .sort();
    expect(passed).toEqual(stateless);
  });

  it('skips the rest with the reason, never passes them', () => {
    for (const r of run.results.filter((x) => !REQUIREMENTS.find((q) => q.id === x.id)?.stateless)) {
      expect(r.status).toBe('skip');
      expect(r.reason).toMatch(/stateless profile/);
    }
  });
});
