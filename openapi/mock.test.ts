/**
 * `npm run mock` as a stand-in for the server (Prism behind openapi/tooling/mock-front.ts): the same CORS headers as
 * the server's policy, links at the mock's own origin, lists that end, end-to-end creates answered as encrypted, and
 * a process that prints one line with its own URL and one per request, and frees its port at once on SIGTERM. The SDK against it: sdk/test/contract/prism.test.ts; in Chromium
 * from another origin: server/test/web/cross-origin.test.ts.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, corsRules } from './src/index.js';
import { EXAMPLE_ORIGIN } from './tooling/mock-front.js';
import { freePort, startPrism, type PrismProcess } from './tooling/prism-process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const APP = 'http://app.localhost:3000';
const rules = corsRules(contract().document);
const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
const corsHeaders = (response: Response) =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));

describe('the mock with listed origins', () => {
  let mock: PrismProcess;

  beforeAll(async () => {
    mock = await startPrism({ corsOrigins: APP });
  }, 120_000);
  afterAll(() => mock?.stop());

  it('answers preflights as the server does: 204, the contract methods and headers (and Prefer), max-age, no credentials', async () => {
    const response = await fetch(`${mock.baseUrl}/api/v2/pushes`, {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,prefer',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(list(response.headers.get('access-control-allow-methods'))).toEqual(
      rules.methods.map((m) => m.toLowerCase()),
    );
    expect(list(response.headers.get('access-control-allow-headers'))).toEqual(
      [...rules.allowedHeaders, 'Prefer'].map((h) => h.toLowerCase()),
    );
    expect(response.headers.get('access-control-max-age')).toBe(String(rules.maxAgeSeconds));
    expect(list(response.headers.get('vary'))).toContain('origin');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('exposes the same headers on answers, errors included, and gives an unlisted origin none', async () => {
    for (const [path, status] of [
      ['/api/v2/version', 200],
      ['/api/v2/pushes/active', 401],
    ] as const) {
      const response = await fetch(`${mock.baseUrl}${path}`, { headers: { origin: APP } });
      expect(response.status).toBe(status);
      expect(response.headers.get('access-control-allow-origin')).toBe(APP);
      expect(list(response.headers.get('access-control-expose-headers'))).toEqual(
        rules.exposedHeaders.map((h) => h.toLowerCase()),
      );
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const other = await fetch(`${mock.baseUrl}/api/v2/version`, { headers: { origin: 'http://other.localhost:4000' } });
    expect(other.status).toBe(200);
    expect(corsHeaders(other)).toEqual({});
    const limited = await fetch(`${mock.baseUrl}/api/v2/version`, { headers: { origin: APP, prefer: 'code=429' } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('access-control-allow-origin')).toBe(APP);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('names its own origin in links and URLs, never the examples’ host', async () => {
    const created = await fetch(`${mock.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'x' } }),
    });
    const text = await created.text();
    expect(created.status).toBe(201);
    expect(text).not.toContain(EXAMPLE_ORIGIN);
    expect(JSON.parse(text)).toMatchObject({
      html_url: expect.stringMatching(new RegExp(`^${mock.baseUrl}/p/`)),
      json_url: expect.stringMatching(new RegExp(`^${mock.baseUrl}/api/v2/pushes/`)),
    });
  });

  it('ends every list: page 1 has the example’s items and rel="next", page 2 none and no next (with or without .json)', async () => {
    for (const path of [
      '/api/v2/pushes/active',
      '/api/v2/pushes/expired.json',
      '/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c/audit',
    ]) {
      const first = await fetch(`${mock.baseUrl}${path}?page=1`, { headers: { authorization: 'Bearer spt_any' } });
      const firstBody = (await first.json()) as unknown[] | { logs: unknown[] };
      expect(first.status, path).toBe(200);
      expect(first.headers.get('link')).toBe(`<${mock.baseUrl}${path}?page=2>; rel="next"`);
      expect((Array.isArray(firstBody) ? firstBody : firstBody.logs).length).toBeGreaterThan(0);
      const last = await fetch(`${mock.baseUrl}${path}?page=2`, { headers: { authorization: 'Bearer spt_any' } });
      const lastBody = (await last.json()) as unknown[] | { logs: unknown[] };
      expect(last.headers.get('link')).toBe(`<${mock.baseUrl}${path}?page=1>; rel="prev"`);
      expect(Array.isArray(lastBody) ? lastBody : lastBody.logs).toEqual([]);
    }
  });

  it('answers an end-to-end create with a record marked client_encryption, an ordinary one with null', async () => {
    const post = (push: Record<string, unknown>) =>
      fetch(`${mock.baseUrl}/api/v2/pushes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ push }),
      }).then((r) => r.json() as Promise<{ client_encryption: unknown }>);
    const sealed = await post({
      kind: 'text',
      payload: 'spe1.oKGio6SlpqeoqaqrhXcOXyCodp8KCvWgYlqivwTYPGLrlzEY_X5K41axRA4UM6ZRfVL17vzqxcw',
      client_encryption: { scheme: 'aes-256-gcm', version: 1 },
    });
    expect(sealed.client_encryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });
    expect((await post({ payload: 'plain' })).client_encryption).toBeNull();
  });
});

describe('npm run mock as a process', () => {
  it('frees its port at once and stops Prism on SIGTERM to npm', async () => {
    const port = await freePort();
    const npm = spawn('npm', ['run', '--silent', 'mock'], {
      cwd: root,
      env: {
        ...process.env,
        MOCK_PORT: String(port),
        PATH: `${fileURLToPath(new URL('../node_modules/.bin', import.meta.url))}:${process.env.PATH}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: false,
    });
    let output = '';
    npm.stdout!.on('data', (d) => (output += d));
    npm.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 90_000;
    while (!output.includes('Mock listening on')) {
      if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`the mock did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await fetch(`http://127.0.0.1:${port}/api/v2/version`)).status).toBe(200);
    const refused = await fetch(`http://127.0.0.1:${port}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"push":{}}',
    });
    expect(refused.status).toBe(422);
    // One line with its own URL, then one line per request (method, path, status, and what an error said); none of
    // Prism's own lines (its routes, its internal port).
    while (output.trim().split('\n').length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^Mock listening on http://127\\.0\\.0\\.1:${port} `));
    expect(lines[1]).toBe('GET /api/v2/version → 200');
    expect(lines[2]).toMatch(/^POST \/api\/v2\/pushes → 422 \(validation_failed: /);
    // The processes under npm: the mock (exec'd by the script, no shell between) and its Prism.
    const children = (pid: number) =>
      readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    const mockPid = children(npm.pid!)[0]!;
    expect(readFileSync(`/proc/${mockPid}/cmdline`, 'utf8')).toContain('scripts/mock.ts');
    const prismPid = children(mockPid)[0]!;
    expect(readFileSync(`/proc/${prismPid}/cmdline`, 'utf8')).toContain('prism-cli');

    const stopped = Date.now();
    npm.kill('SIGTERM');
    const bindable = () =>
      new Promise<boolean>((resolve) => {
        const probe = createServer()
          .once('error', () => resolve(false))
          .listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
      });
    while (!(await bindable())) {
      expect(Date.now() - stopped, 'the port is still taken').toBeLessThan(2_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Gone (or a zombie waiting to be reaped by init: it holds nothing) within 2 s.
    const alive = (pid: number) => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    while (alive(prismPid) || alive(mockPid)) {
      expect(Date.now() - stopped, `still running: ${[prismPid, mockPid].filter(alive).join(', ')}`).toBeLessThan(
        2_000,
      );
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 120_000);
});
