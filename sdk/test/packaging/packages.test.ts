/**
 * Every published package (`npm run pack`: @secret-push/sdk, @secret-push/contract, @secret-push/conformance) has
 * complete metadata, imports no unpublished workspace package (the private `@secret-push/rules` is inlined), passes
 * publint (strict) and Are The Types Wrong (every entry, every resolution: node10, node16 from CommonJS and from
 * ESM, bundler) and `npm publish --dry-run`; the conformance CLI runs with `npx` from its
 * tarball against the real server; each README gives the install line that works today next to the registry's.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealServer, startRealServer } from '../support/real-server.js';
import { binOf, env, packAll, root, run, type Packed } from './support/packed.js';

const PACKAGES = [
  { name: '@secret-push/sdk', folder: 'sdk' },
  { name: '@secret-push/contract', folder: 'openapi' },
  { name: '@secret-push/conformance', folder: 'conformance' },
];

let packed: Packed;

beforeAll(async () => {
  packed = await packAll();
}, 300_000);
afterAll(() => {
  if (packed) rmSync(packed.dir, { recursive: true, force: true });
});

describe.each(PACKAGES)('$name', ({ name, folder }) => {
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
    expect(stdout).toContain('RouteTable');
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
      engines: { node: '>=18' },
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
