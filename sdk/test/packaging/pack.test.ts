/**
 * The consumer test: `npm pack -w sdk` (as `npm run pack` runs it: the run's one pack, support/packed.ts, shared with
 * packages.test.ts) makes a package that installs on its own into fresh projects of every kind and
 * works in each against the real server:
 * - CommonJS JavaScript with `require` (type-checked with `checkJs` against the `.d.cts` declarations), run on this
 *   Node and on the machine's older one;
 * - ESM JavaScript with `import` (checked against the `.d.mts` ones);
 * - TypeScript with `moduleResolution` `node16` in a CommonJS package (compiled to `require`);
 * - TypeScript with `moduleResolution` `bundler` (compiled as ESM, as a bundler reads it);
 * - and a strict NodeNext TypeScript project through every entry (".", "./node", "./mocks", "./e2e",
 *   "./generated"): the program creates, retrieves, downloads and expires pushes against the real server, then the
 *   same flow against the packaged stateful mock in-process (msw/node).
 * The four small projects install only the tarball (the SDK has no dependency) and type-check with the repository's
 * TypeScript, so they need nothing from the registry.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealServer, startRealServer } from '../support/real-server.js';
import { packAll } from './support/packed.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const nodeBin = path.dirname(process.execPath);
// npm and its scripts (prepack → tsc) run on the same Node 24 as the tests.
const env = {
  ...process.env,
  PATH: `${nodeBin}${path.delimiter}${process.env.PATH ?? ''}`,
  npm_config_update_notifier: 'false',
};

const program = `
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setupServer } from 'msw/node';
import {
  createSecretPushClient, NotFoundError, PassphraseRequiredError, SecretPushError, type PushOwner, type SecretPushClient,
} from '@secret-push/sdk';
import { fileFromPath } from '@secret-push/sdk/node';
import { createMockServerHandlers, handleGetVersion, type MockServer } from '@secret-push/sdk/mocks';
import type { VersionReport } from '@secret-push/sdk/generated';
import { parseShareLink, MissingKeyError as E2EMissingKeyError } from '@secret-push/sdk/e2e';

async function flow(client: SecretPushClient): Promise<Record<string, unknown>> {
  const push: PushOwner = await client.createPush({ payload: 'from the tarball', expire_after_views: 2 });
  const retrieved = await client.retrievePush(push.url_token);
  const expired = await client.expirePush(push.url_token);
  const filePath = join(tmpdir(), 'sdk-pack-' + process.pid + '.bin');
  await writeFile(filePath, new Uint8Array([1, 2, 3, 254]));
  const attachment = await fileFromPath(filePath);
  await rm(filePath);
  const withFile = await client.createPush({ files: [attachment] });
  const got = await client.retrievePush(withFile.url_token);
  const bytes = await client.downloadFile(got.files[0]!);
  const locked = await client.createPush({ payload: 'p', passphrase: 'pw' });
  let passphraseError = '';
  try {
    await client.retrievePush(locked.url_token);
  } catch (error) {
    if (error instanceof PassphraseRequiredError && error instanceof SecretPushError) passphraseError = error.code ?? '';
  }
  let notFound = false;
  try {
    await client.previewPush('zzzzzzzzzzzzzzzzzzzzzzzz');
  } catch (error) {
    notFound = error instanceof NotFoundError && error.status === 404;
  }
  const version: VersionReport = await client.version();
  return {
    payload: retrieved.payload, viewsRemaining: retrieved.views_remaining, deleted: expired.deleted,
    file: [got.files[0]!.filename, Array.from(bytes)], passphraseError, notFound, apiVersion: version.api_version,
  };
}

const real = await flow(createSecretPushClient({ baseUrl: process.env.SP_BASE_URL!, token: process.env.SP_TOKEN! }));

const mock: MockServer = createMockServerHandlers({ baseUrl: 'http://mock.example' });
const server = setupServer(...mock.handlers, handleGetVersion());
server.listen({ onUnhandledFrame: 'error' });
const mocked = await flow(createSecretPushClient({ baseUrl: 'http://mock.example', token: mock.users[0]!.token }));
// End to end (the mock stores encrypted pushes; the real server does not know them yet).
const anon = createSecretPushClient({ baseUrl: 'http://mock.example' });
const sealed = await anon.createPush({ payload: 'sealed in the tarball' }, { endToEnd: true });
const opened = await anon.retrieveLink(sealed.shareLink);
let missingKey = false;
try {
  await anon.retrieveLink(sealed.html_url);
} catch (error) {
  missingKey = error instanceof E2EMissingKeyError && error instanceof SecretPushError;
}
const e2e = { payload: opened.payload, sameToken: parseShareLink(sealed.shareLink).urlToken === sealed.url_token, missingKey };
server.close();

console.log(JSON.stringify({ real, mocked, e2e }));
`;

/** The machine's own Node (20 here: npm runs on it), older than the repository's 24. */
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p));

describe('packaging', () => {
  let dir: string;
  let real: RealServer;
  let tarball: string;
  let tarballPath: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-pack-'));
    real = await startRealServer();
    // The SDK's tarball of the run's one pack (a busy machine takes minutes to build the packages).
    tarballPath = (await packAll()).tarballs['@secret-push/sdk']!;
    tarball = path.basename(tarballPath);
  }, 960_000);
  afterAll(async () => {
    await real?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs, installs into a fresh strict TypeScript project, type-checks and runs against the server and the mock', async () => {
    expect(tarball).toMatch(/^secret-push-sdk-\d+\.\d+\.\d+\.tgz$/);

    const { stdout: listing } = await run('tar', ['-tzf', tarballPath], { env });
    const files = listing.split('\n').filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining(
        ['index', 'node', 'mocks/index', 'e2e/index', 'rules/index', 'generated/index', 'generated/client/index']
          .flatMap((entry) => ['mjs', 'cjs', 'd.mts', 'd.cts'].map((ext) => `package/dist/${entry}.${ext}`))
          .concat(['package/README.md', 'package/LICENSE']),
      ),
    );
    expect(files.filter((f) => f.includes('/src/') || f.includes('/test/'))).toEqual([]);

    const app = path.join(dir, 'app');
    rmSync(app, { recursive: true, force: true });
    await run('mkdir', ['-p', app]);
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }),
    );
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          outDir: 'out',
          skipLibCheck: false,
        },
        include: ['main.ts'],
      }),
    );
    writeFileSync(path.join(app, 'main.ts'), program);
    await run(
      'npm',
      [
        'install',
        tarballPath,
        'typescript@6.0.3',
        '@types/node@24.19.2',
        'msw@3.0.5',
        'zod@4.6.7',
        'ajv@8.20.0',
        'ajv-formats@3.0.1',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--silent',
      ],
      { cwd: app, env, timeout: 240_000 },
    );
    // The SDK brings no runtime dependency of its own (msw, zod, and ajv with ajv-formats for the mock's schema
    // checks, are optional peers the app chose to install).
    const { stdout: tree } = await run('npm', ['ls', '@secret-push/sdk', '--all', '--json'], { cwd: app, env });
    expect(JSON.parse(tree).dependencies['@secret-push/sdk'].dependencies ?? {}).toEqual({});

    await run(process.execPath, [path.join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
      cwd: app,
      env,
      timeout: 120_000,
    });
    const { stdout } = await run(process.execPath, ['out/main.js'], {
      cwd: app,
      env: { ...env, SP_BASE_URL: real.baseUrl, SP_TOKEN: real.users[0]!.token },
      timeout: 60_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const expected = {
      // The owner's own retrieval does not count as a view.
      payload: 'from the tarball',
      viewsRemaining: 2,
      deleted: true,
      file: [expect.stringMatching(/^sdk-pack-\d+\.bin$/), [1, 2, 3, 254]],
      passphraseError: 'passphrase_required',
      notFound: true,
      apiVersion: '2.1',
    };
    expect(result).toEqual({
      real: expected,
      mocked: expected,
      e2e: { payload: 'sealed in the tarball', sameToken: true, missingKey: true },
    });
  }, 300_000);

  /** The same calls in every kind of project: what each prints. */
  const flowBody = (kind: string) => `
  const client = createSecretPushClient({ baseUrl: BASE, token: TOKEN });
  const anonymous = createSecretPushClient({ baseUrl: BASE });
  const made = await client.createPush({ payload: 'from ${kind}', passphrase: 'open sesame', expire_after_views: 3 });
  let required = '';
  try {
    await anonymous.retrievePush(made.url_token);
  } catch (error) {
    if (error instanceof PassphraseRequiredError) required = error.code || '';
  }
  const retrieved = await anonymous.retrievePush(made.url_token, { passphrase: 'open sesame' });
  const first = await client.activePushes.page(1);
  let listed = 0;
  for await (const push of client.activePushes()) if (push.url_token === made.url_token) listed++;
  const version = await client.version();
  return { kind: '${kind}', payload: retrieved.payload, viewsRemaining: retrieved.views_remaining, required, listed, total: first.totalCount, api: version.api_version };
`;
  const baked = (real: RealServer) =>
    `const BASE = ${JSON.stringify(real.baseUrl)};\nconst TOKEN = ${JSON.stringify(real.users[1]!.token)};\n`;
  const compilerOptions = { target: 'ES2022', lib: ['ES2022', 'DOM'], types: [], strict: true, skipLibCheck: false };

  interface Project {
    name: string;
    type: 'commonjs' | 'module';
    file: string;
    source: string;
    tsconfig: Record<string, unknown>;
    /** The file node runs (the emitted one for TypeScript). */
    runs: string;
  }

  const projects = (real: RealServer): Project[] => [
    {
      name: 'cjs',
      type: 'commonjs',
      file: 'main.js',
      source: `// @ts-check\nconst { createSecretPushClient, PassphraseRequiredError } = require('@secret-push/sdk');\n${baked(real)}async function main() {${flowBody('cjs')}}\nmain().then((result) => console.log(JSON.stringify(result)));\n`,
      tsconfig: {
        compilerOptions: {
          ...compilerOptions,
          module: 'node16',
          moduleResolution: 'node16',
          allowJs: true,
          checkJs: true,
          noEmit: true,
        },
        include: ['main.js'],
      },
      runs: 'main.js',
    },
    {
      name: 'esm',
      type: 'module',
      file: 'main.js',
      source: `// @ts-check\nimport { createSecretPushClient, PassphraseRequiredError } from '@secret-push/sdk';\n${baked(real)}async function main() {${flowBody('esm')}}\nconsole.log(JSON.stringify(await main()));\n`,
      tsconfig: {
        compilerOptions: {
          ...compilerOptions,
          module: 'node16',
          moduleResolution: 'node16',
          allowJs: true,
          checkJs: true,
          noEmit: true,
        },
        include: ['main.js'],
      },
      runs: 'main.js',
    },
    {
      name: 'ts-node16',
      type: 'commonjs',
      file: 'main.ts',
      source: `import { createSecretPushClient, PassphraseRequiredError, type PushOwner, type SecretPushClient } from '@secret-push/sdk';\n${baked(real)}async function main(): Promise<Record<string, unknown>> {${flowBody('ts-node16')}}\nconst typed: (c: SecretPushClient) => Promise<PushOwner> = (c) => c.createPush({ payload: 'typed' });\nvoid typed;\nmain().then((result) => console.log(JSON.stringify(result)));\n`,
      tsconfig: {
        compilerOptions: { ...compilerOptions, module: 'node16', moduleResolution: 'node16', outDir: 'out' },
        include: ['main.ts'],
      },
      runs: 'out/main.js',
    },
    {
      name: 'ts-bundler',
      type: 'module',
      file: 'main.ts',
      source: `import { createSecretPushClient, PassphraseRequiredError, type PushOwner, type SecretPushClient } from '@secret-push/sdk';\nimport { parseShareLink } from '@secret-push/sdk/e2e';\n${baked(real)}async function main(): Promise<Record<string, unknown>> {${flowBody('ts-bundler')}}\nconst typed: (c: SecretPushClient) => Promise<PushOwner> = (c) => c.createPush({ payload: 'typed' });\nvoid typed;\nvoid parseShareLink;\nconsole.log(JSON.stringify(await main()));\n`,
      tsconfig: {
        compilerOptions: { ...compilerOptions, module: 'ES2022', moduleResolution: 'bundler', outDir: 'out' },
        include: ['main.ts'],
      },
      runs: 'out/main.js',
    },
  ];

  it('installs into fresh CommonJS, ESM, TypeScript node16 and bundler projects; each type-checks and calls the server', async () => {
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const results: Record<string, unknown>[] = [];
    for (const project of projects(real)) {
      const app = path.join(dir, project.name);
      rmSync(app, { recursive: true, force: true });
      await run('mkdir', ['-p', app]);
      writeFileSync(
        path.join(app, 'package.json'),
        JSON.stringify({ name: `sdk-consumer-${project.name}`, private: true, type: project.type }),
      );
      writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(project.tsconfig));
      writeFileSync(path.join(app, project.file), project.source);
      // Only the tarball: the SDK has no dependency, so nothing comes from the registry.
      await run('npm', ['install', tarballPath, '--offline', '--no-audit', '--no-fund', '--silent'], {
        cwd: app,
        env,
        timeout: 120_000,
      });
      const check = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
        cwd: app,
        env,
        timeout: 120_000,
      }).catch((e: { stdout: string }) => e);
      expect(check.stdout, `${project.name} type-check`).toBe('');
      const { stdout } = await run(process.execPath, [project.runs], { cwd: app, env, timeout: 60_000 });
      results.push(JSON.parse(stdout.trim()) as Record<string, unknown>);
    }
    const expected = (kind: string) => ({
      kind,
      payload: `from ${kind}`,
      viewsRemaining: 2,
      required: 'passphrase_required',
      listed: 1,
      total: expect.any(Number),
      api: '2.1',
    });
    expect(results).toEqual(['cjs', 'esm', 'ts-node16', 'ts-bundler'].map(expected));
    // The TypeScript node16 project in a CommonJS package compiled to require(); the bundler one stayed ESM.
    expect(readFileSync(path.join(dir, 'ts-node16/out/main.js'), 'utf8')).toContain('require("@secret-push/sdk")');
    expect(readFileSync(path.join(dir, 'ts-bundler/out/main.js'), 'utf8')).toContain("from '@secret-push/sdk'");
  }, 300_000);

  it.skipIf(!systemNode)(
    "loads with require on the oldest Node at hand (the machine's own, below the 24 the repository runs on)",
    async () => {
      const system = systemNode!;
      const { stdout: version } = await run(system, ['--version'], { env });
      expect(Number(/^v(\d+)/.exec(version)![1])).toBeGreaterThanOrEqual(18);
      const { stdout } = await run(system, ['main.js'], { cwd: path.join(dir, 'cjs'), env, timeout: 60_000 });
      expect(JSON.parse(stdout.trim())).toMatchObject({
        kind: 'cjs',
        payload: 'from cjs',
        required: 'passphrase_required',
      });
    },
    120_000,
  );
});
