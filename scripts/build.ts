/**
 * `npm run build`: compiles the server into plain JavaScript under server/dist, which `npm start` runs (no TypeScript
 * loader or compiler in the running server).
 *
 * - `main.js` (the server), `users.js` (the users CLI) and `files.js` (the file storage CLI): esbuild bundles of server/src with the workspace packages
 *   (`@secret-push/*`, resolved to their TypeScript sources through the `@secret-push/source` condition) and the
 *   bundled contract (a JSON import) inlined; every npm package stays external and loads from node_modules. Code shared
 *   by the two, and code loaded on demand (the worker's HTTP stack), goes into chunks beside them, in the same folder,
 *   so `import.meta.url` names the same folder in every file.
 * - `assets/`: a copy of server/src/web/assets, the browser bundles (server/src/web/browser-bundles.ts) made now
 *   rather than at run time, and the API docs renderer's standalone bundle (from @scalar/api-reference), so the
 *   compiled server runs on the production dependencies alone (the Dockerfile installs only those).
 * - `messages/`: a copy of server/src/i18n/messages, the catalogues other than English, which the server reads on a
 *   language's first use (server/src/i18n/locales.ts) rather than holding all of them in the bundle.
 * - `build-info.json`: the digest of every input (scripts/build-info.mjs checks it).
 */
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { bundledDocument, bundledV1Document } from '@secret-push/contract';
import { validateDocument } from '../server/src/http/openapi-backend.js';
import { MESSAGES_DIR } from '../server/src/i18n/locales.js';
import { ASSETS_DIR, SCALAR_ASSET, scalarStandalonePath } from '../server/src/web/assets.js';
import { BROWSER_BUNDLES, makeBrowserBundle } from '../server/src/web/browser-bundles.js';
import { BUILD_DIR, EXTRA_INPUTS, INFO_FILE, ROOT, sha256 } from './build-info.mjs';

/** npm packages stay external (loaded from node_modules at run time); workspace packages are bundled from source. */
const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@secret-push/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

const ENTRY_POINTS = {
  main: 'server/src/main.ts',
  users: 'server/src/cli/users.ts',
  files: 'server/src/cli/files.ts',
  // Started as a worker thread on the first password check (server/src/account/password-strength.ts).
  'password-strength-worker': 'server/src/account/password-strength-worker.ts',
};
const ENTRY_SOURCES: string[] = Object.values(ENTRY_POINTS);

async function main(): Promise<void> {
  const started = Date.now();
  // The compiled server does not validate its contracts at start-up (server/src/http/openapi-backend.ts): the build
  // does, and fails on an invalid one.
  for (const document of [bundledDocument(), bundledV1Document()]) await validateDocument(document as never);
  rmSync(BUILD_DIR, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRY_POINTS,
    outdir: BUILD_DIR,
    bundle: true,
    splitting: true,
    chunkNames: '[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node24',
    conditions: ['@secret-push/source'],
    plugins: [externalPackages],
    define: { __SECRET_PUSH_COMPILED__: 'true' },
    sourcemap: 'linked',
    // Folds the `__SECRET_PUSH_COMPILED__` branches away (identifiers and layout stay readable).
    minifySyntax: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });

  // A chunk of an import in a branch the build folded away (the browser bundler, for one) is written all the same;
  // nothing reaches it from the entry points, so it goes.
  const outputsMeta = result.metafile.outputs;
  const reachable = new Set<string>();
  const visit = (file: string) => {
    if (reachable.has(file) || !outputsMeta[file]) return;
    reachable.add(file);
    for (const imported of outputsMeta[file].imports) if (!imported.external) visit(imported.path);
  };
  for (const [file, meta] of Object.entries(outputsMeta))
    if (meta.entryPoint && ENTRY_SOURCES.includes(meta.entryPoint)) visit(file);
  for (const file of Object.keys(outputsMeta)) {
    if (file.endsWith('.js') && !reachable.has(file)) {
      rmSync(path.join(ROOT, file));
      rmSync(path.join(ROOT, `${file}.map`), { force: true });
      delete outputsMeta[file];
      delete outputsMeta[`${file}.map`];
    }
  }

  const assetsOut = path.join(BUILD_DIR, 'assets');
  cpSync(ASSETS_DIR, assetsOut, { recursive: true });
  const bundleInputs: string[] = [];
  for (const name of Object.keys(BROWSER_BUNDLES)) {
    const file = path.join(assetsOut, name);
    mkdirSync(path.dirname(file), { recursive: true });
    const { bytes, inputs } = await makeBrowserBundle(name);
    writeFileSync(file, bytes);
    bundleInputs.push(...inputs);
  }

  // The API docs renderer's standalone bundle, copied as it is (its version is package-lock.json's, an input).
  mkdirSync(path.dirname(path.join(assetsOut, SCALAR_ASSET)), { recursive: true });
  cpSync(scalarStandalonePath(), path.join(assetsOut, SCALAR_ASSET));

  const ownAssets = readdirSync(ASSETS_DIR).map((f) => path.relative(ROOT, path.join(ASSETS_DIR, f)));

  // The message catalogues other than English, read on first use (server/src/i18n/locales.ts), beside the bundle.
  cpSync(MESSAGES_DIR, path.join(BUILD_DIR, 'messages'), { recursive: true });
  const catalogues = readdirSync(MESSAGES_DIR).map((f) => path.relative(ROOT, path.join(MESSAGES_DIR, f)));
  const inputs = [
    ...new Set([...Object.keys(result.metafile.inputs), ...bundleInputs, ...ownAssets, ...catalogues, ...EXTRA_INPUTS]),
  ].sort();
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.relative(BUILD_DIR, path.join(ROOT, f)));
  writeFileSync(
    INFO_FILE,
    `${JSON.stringify({ inputs: Object.fromEntries(inputs.map((f) => [f, sha256(f)])), outputs: [...outputs, ...[...Object.keys(BROWSER_BUNDLES), SCALAR_ASSET].map((n) => `assets/${n}`), ...catalogues.map((f) => `messages/${path.basename(f)}`)] }, null, 1)}\n`,
  );
  console.log(
    `Built server/dist (${outputs.filter((f) => f.endsWith('.js')).length} files, ${inputs.length} inputs) in ${Date.now() - started} ms`,
  );
}

await main();
