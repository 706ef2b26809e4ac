/**
 * `npm pack -w sdk` makes a package that installs on its own into a fresh TypeScript project, type-checks under
 * `strict` through the `exports` map (".", "./node", "./mocks", "./e2e", "./generated"), and works: the program creates,
 * retrieves, downloads and expires pushes against the real server, then the same flow against the packaged
 * stateful mock in-process (msw/node).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealServer, startRealServer } from '../support/real-server.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const nodeBin = path.dirname(process.execPath);
// npm and its scripts (prepack → tsc) run on the same Node 24 as the tests.
const env = { ...process.env, PATH: `${nodeBin}${path.delimiter}${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' };

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

describe('packaging', () => {
  let dir: string;
  let real: RealServer;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-pack-'));
    real = await startRealServer();
  }, 120_000);
  afterAll(async () => {
    await real?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs, installs into a fresh strict TypeScript project, type-checks and runs against the server and the mock', async () => {
    await run('npm', ['pack', '-w', 'sdk', '--pack-destination', dir, '--silent'], { cwd: root, env, timeout: 120_000 });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    expect(tarball).toMatch(/^secret-push-sdk-\d+\.\d+\.\d+\.tgz$/);

    const { stdout: listing } = await run('tar', ['-tzf', path.join(dir, tarball!)], { env });
    const files = listing.split('\n').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/node.js', 'package/dist/mocks/index.js', 'package/dist/e2e/index.js', 'package/dist/generated/index.d.ts', 'package/README.md']));
    expect(files.filter((f) => f.includes('/src/') || f.includes('/test/'))).toEqual([]);

    const app = path.join(dir, 'app');
    rmSync(app, { recursive: true, force: true });
    await run('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: ['node'],
          strict: true, noUncheckedIndexedAccess: true, outDir: 'out', skipLibCheck: false,
        },
        include: ['main.ts'],
      }),
    );
    writeFileSync(path.join(app, 'main.ts'), program);
    await run(
      'npm',
      [
        'install', path.join(dir, tarball!), 'typescript@6.0.3', '@types/node@24.19.2', 'msw@3.0.5', 'zod@4.6.7', 'ajv@8.20.0', 'ajv-formats@3.0.1',
        '--prefer-offline', '--no-audit', '--no-fund', '--silent',
      ],
      { cwd: app, env, timeout: 240_000 },
    );
    // The SDK brings no runtime dependency of its own (msw, zod, and ajv with ajv-formats for the mock's schema
    // checks, are optional peers the app chose to install).
    const { stdout: tree } = await run('npm', ['ls', '@secret-push/sdk', '--all', '--json'], { cwd: app, env });
    expect(JSON.parse(tree).dependencies['@secret-push/sdk'].dependencies ?? {}).toEqual({});

    await run(process.execPath, [path.join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: app, env, timeout: 120_000 });
    const { stdout } = await run(process.execPath, ['out/main.js'], {
      cwd: app,
      env: { ...env, SP_BASE_URL: real.baseUrl, SP_TOKEN: real.users[0]!.token },
      timeout: 60_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const expected = {
      // The owner's own retrieval does not count as a view.
      payload: 'from the tarball', viewsRemaining: 2, deleted: true, file: [expect.stringMatching(/^sdk-pack-\d+\.bin$/), [1, 2, 3, 254]],
      passphraseError: 'passphrase_required', notFound: true, apiVersion: '2.1',
    };
    expect(result).toEqual({ real: expected, mocked: expected, e2e: { payload: 'sealed in the tarball', sameToken: true, missingKey: true } });
  }, 300_000);
});
