/**
 * Every published package (`npm run pack`: @secret-push/sdk, @secret-push/contract, @secret-push/conformance,
 * @secret-push/cli, @secret-push/mcp) has complete metadata, imports no unpublished workspace package (the private
 * `@secret-push/rules` is inlined, and so is the SDK in the CLI and the MCP server), passes publint (strict) and Are
 * The Types Wrong (every entry, every resolution: node10, node16 from CommonJS and from ESM, bundler) and
 * `npm publish --dry-run`; the conformance CLI runs with `npx` from its tarball against the real server, and so do
 * the `secret-push` CLI and the MCP server, each installed into a fresh project; each README gives the install line
 * that works today next to the registry's.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealServer, startRealServer } from '../support/real-server.js';
import { binOf, env, packAll, root, run, type Packed } from './support/packed.js';

/** Each package, the Node it needs, and a text of the workspace package its build must have inlined. */
const PACKAGES = [
  { name: '@secret-push/sdk', folder: 'sdk', node: '>=18', inlined: 'RouteTable' },
  { name: '@secret-push/contract', folder: 'openapi', node: '>=18', inlined: 'RouteTable' },
  { name: '@secret-push/conformance', folder: 'conformance', node: '>=18', inlined: 'RouteTable' },
  // The CLI and the MCP server need a global WebCrypto with X25519 (end to end, sealed requests): Node 20.
  { name: '@secret-push/cli', folder: 'cli', node: '>=20', inlined: 'createSecretPushClient: baseUrl must be' },
  { name: '@secret-push/mcp', folder: 'mcp', node: '>=20', inlined: 'createSecretPushClient: baseUrl must be' },
];

let packed: Packed;

// The run's one pack (support/packed.ts), shared with pack.test.ts; the run removes it.
beforeAll(async () => {
  packed = await packAll();
}, 960_000);

describe.each(PACKAGES)('$name', ({ name, folder, node, inlined }) => {
  const manifest = () =>
    JSON.parse(readFileSync(path.join(root, folder, 'package.json'), 'utf8')) as Record<string, unknown>;

  it('is packed by npm run pack, with its LICENSE, and leaves no build behind', async () => {
    expect(packed.tarballs[name]).toBeDefined();
    const { stdout } = await run('tar', ['-tzf', packed.tarballs[name]!], { env });
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['package/package.json', 'package/README.md', 'package/LICENSE']));
    expect(
      files.filter(
        (f) => /\/(src|test)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.mts') && !f.endsWith('.d.cts')),
      ),
    ).toEqual([]);
    const { stdout: status } = await run('git', ['status', '--porcelain', '--ignored', '--', folder], {
      cwd: root,
      env,
    });
    expect(status.split('\n').filter((l) => /\/(dist|LICENSE)/.test(l))).toEqual([]);
  });

  it('imports no workspace package that is not published (the private @secret-push/rules is inlined)', async () => {
    const { stdout } = await run('tar', ['-xzOf', packed.tarballs[name]!, '--wildcards', 'package/dist/*'], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    // Import and require specifiers, and declaration imports, are quoted; the comments name the package in backticks.
    const specifiers = new Set([...stdout.matchAll(/["'](@secret-push\/[a-z-]+)(?:\/[^"']*)?["']/g)].map((m) => m[1]));
    expect(stdout).toContain(inlined);
    expect([...specifiers].filter((s) => !PACKAGES.some((p) => p.name === s))).toEqual([]);
  });

  it('has complete metadata: name, version, license, repository, files, engines, types, sideEffects, public access', () => {
    const pkg = manifest();
    expect(pkg).toMatchObject({
      name,
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      license: 'Apache-2.0',
      repository: { type: 'git', url: expect.stringMatching(/^git\+https:\/\//), directory: folder },
      files: expect.arrayContaining(['dist', 'README.md', 'LICENSE']),
      engines: { node },
      types: './dist/index.d.cts',
      main: './dist/index.cjs',
      sideEffects: false,
      publishConfig: { access: 'public' },
    });
    expect(pkg.private).toBeUndefined();
    // Every entry has an ESM and a CommonJS build, each with its own declarations.
    for (const [entry, target] of Object.entries(pkg.exports as Record<string, unknown>)) {
      if (entry === './package.json' || typeof target === 'string') continue;
      expect(target, entry).toMatchObject({
        import: { types: expect.stringMatching(/\.d\.mts$/), default: expect.stringMatching(/\.mjs$/) },
        require: { types: expect.stringMatching(/\.d\.cts$/), default: expect.stringMatching(/\.cjs$/) },
      });
    }
    // Published dependencies are registry packages, never a workspace that is not itself published.
    for (const dep of Object.keys((pkg.dependencies ?? {}) as Record<string, string>)) {
      if (dep.startsWith('@secret-push/')) expect(PACKAGES.map((p) => p.name)).toContain(dep);
    }
  });

  it('passes publint in strict mode', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      [binOf('publint', 'publint'), '--strict', packed.tarballs[name]!],
      { cwd: root, env, timeout: 60_000 },
    );
    expect(stdout + stderr).toContain('All good!');
  });

  it('passes Are The Types Wrong with no problem, for every entry and resolution', async () => {
    const { stdout } = await run(
      process.execPath,
      [binOf('@arethetypeswrong/cli', 'attw'), packed.tarballs[name]!, '--format', 'json'],
      { cwd: root, env, timeout: 120_000 },
    );
    const report = JSON.parse(stdout) as {
      analysis: {
        problems: unknown[];
        entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName: string } }> }>;
      };
    };
    expect(report.analysis.problems).toEqual([]);
    for (const [entry, { resolutions }] of Object.entries(report.analysis.entrypoints)) {
      for (const kind of ['node10', 'node16-cjs', 'node16-esm', 'bundler'])
        expect(resolutions[kind]?.resolution?.fileName, `${entry} ${kind}`).toBeDefined();
    }
  });

  it('passes npm publish --dry-run', async () => {
    const { stdout, stderr } = await run('npm', ['publish', '--dry-run', packed.tarballs[name]!], {
      cwd: os.tmpdir(),
      env,
      timeout: 60_000,
    });
    expect(stdout + stderr).toContain(`+ ${name}@`);
    expect(stdout + stderr).toMatch(/Publishing to .* with tag latest and public access \(dry-run\)/);
  });

  it('says in its README how to install it today (the tarball of npm run pack) and from the registry once published', () => {
    const readme = readFileSync(path.join(root, folder, 'README.md'), 'utf8');
    const tarball = path.basename(packed.tarballs[name]!).replace(/\d+\.\d+\.\d+/, '<version>');
    expect(readme).toContain('npm run pack');
    expect(readme).toContain(tarball);
    expect(readme).toContain(`npm install ${name}`);
    expect(readme).toMatch(/not (yet )?(published|on the npm registry)/i);
  });
});

describe('the conformance CLI from its tarball', () => {
  let real: RealServer;
  let dir: string;

  beforeAll(async () => {
    real = await startRealServer({ rateLimitPerMinute: 0 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'sp-npx-'));
  }, 120_000);
  afterAll(async () => {
    await real?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs with npx from the tarball alone (the contract inside it) against the real server', async () => {
    const { stdout } = await run(
      'npx',
      [
        '--yes',
        '--prefer-offline',
        '--package',
        packed.tarballs['@secret-push/conformance']!,
        'secret-push-conformance',
        '--base-url',
        real.baseUrl,
        '--token',
        real.users[0]!.token,
        '--only',
        'VER,CRE',
      ],
      { cwd: dir, env, timeout: 180_000 },
    );
    expect(stdout).toContain(`Conformance run against ${real.baseUrl}`);
    expect(stdout).toContain('RESULT: conformant (no failures)');
    expect(stdout).toMatch(/VER-001\s+pass/);
  }, 240_000);
});

/** The machine's own Node (20 here: npm runs on it), the oldest the CLI and the MCP server claim to run on. */
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p));

/** Speaks MCP's JSON-RPC over a child's stdio (newline-delimited), as any MCP host does. */
function mcpSession(command: string, args: string[], childEnv: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let buffered = '';
  let log = '';
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const message = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
      buffered = buffered.slice(nl + 1);
      waiting.get(message.id as number)?.(message);
    }
  });
  let next = 1;
  return {
    log: () => log,
    request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
      const id = next++;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    notify(method: string) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
    },
    close() {
      child.stdin.end();
      child.kill();
    },
  };
}

describe('the secret-push CLI and the MCP server, installed from their tarballs into a fresh project', () => {
  let real: RealServer;
  let app: string;

  beforeAll(async () => {
    real = await startRealServer();
    app = mkdtempSync(path.join(os.tmpdir(), 'sp-cli-app-'));
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'cli-consumer', private: true }));
    // The CLI has no dependency; the MCP server's (the MCP SDK and zod) come from npm's cache or the registry.
    await run(
      'npm',
      [
        'install',
        packed.tarballs['@secret-push/cli']!,
        packed.tarballs['@secret-push/mcp']!,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--silent',
      ],
      { cwd: app, env, timeout: 240_000 },
    );
  }, 300_000);
  afterAll(async () => {
    await real?.close();
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('runs secret-push --version and an end-to-end push round trip from the tarball, on this Node and the machine’s own', async () => {
    const bin = path.join(app, 'node_modules/.bin/secret-push');
    const { stdout: tree } = await run('npm', ['ls', '@secret-push/cli', '--all', '--json'], { cwd: app, env });
    expect(JSON.parse(tree).dependencies['@secret-push/cli'].dependencies ?? {}).toEqual({});
    const nodes = [process.execPath];
    if (systemNode) {
      const { stdout: old } = await run(systemNode, ['--version'], { env });
      if (Number(/^v(\d+)/.exec(old)![1]) >= 20) nodes.push(systemNode);
    }
    const server = { ...env, SECRET_PUSH_URL: real.baseUrl, SECRET_PUSH_TOKEN: real.users[0]!.token };
    for (const node of nodes) {
      expect((await run(node, [bin, '--version'], { cwd: app, env })).stdout).toBe('0.1.0\n');
      const { stdout: pushed } = await run(node, [bin, 'push', `from the cli tarball on ${node}`, '--json'], {
        cwd: app,
        env: server,
      });
      const record = JSON.parse(pushed) as { share_link: string; end_to_end: boolean };
      expect(record).toMatchObject({ end_to_end: true, share_link: expect.stringMatching(/#k=/) });
      const { stdout: got } = await run(node, [bin, 'get', record.share_link], { cwd: app, env: { PATH: env.PATH } });
      expect(got).toBe(`from the cli tarball on ${node}`);
    }
  }, 120_000);

  it('starts secret-push-mcp, which answers initialize, tools/list and create_push over stdio', async () => {
    const session = mcpSession(path.join(app, 'node_modules/.bin/secret-push-mcp'), [], {
      PATH: env.PATH,
      HOME: app,
      SECRET_PUSH_URL: real.baseUrl,
      SECRET_PUSH_TOKEN: real.users[0]!.token,
    });
    try {
      const init = await session.request('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'packaging-test', version: '1.0.0' },
      });
      expect(init.result).toMatchObject({ serverInfo: { name: 'secret-push', version: '0.1.0' } });
      session.notify('notifications/initialized');
      const listed = (await session.request('tools/list', {})).result as { tools: { name: string }[] };
      expect(listed.tools.map((t) => t.name)).toContain('create_push');
      expect(listed.tools.map((t) => t.name)).not.toContain('retrieve_push');
      const created = (
        await session.request('tools/call', {
          name: 'create_push',
          arguments: { payload: 'from the mcp tarball' },
        })
      ).result as { structuredContent: { share_link: string } };
      const { createSecretPushClient } = await import('@secret-push/sdk');
      const opened = await createSecretPushClient({ baseUrl: real.baseUrl }).retrieveLink(
        created.structuredContent.share_link,
      );
      expect(opened.payload).toBe('from the mcp tarball');
      expect(session.log()).toMatch(/create_push ok \d+ms/);
      expect(session.log()).not.toContain('from the mcp tarball');
    } finally {
      session.close();
    }
  }, 120_000);
});
