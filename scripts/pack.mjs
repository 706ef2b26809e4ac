// `npm run pack`: builds and packs every published package into one folder, `packages/` (or the folder given as the
// first argument), as the tarballs the READMEs install from until the packages are on the registry:
//   npm install ./packages/secret-push-sdk-<version>.tgz
//   npx ./packages/secret-push-conformance-<version>.tgz --base-url …
// Each `npm pack` runs the package's prepack (tsdown build, LICENSE) and postpack (clean-up): the tree stays as it was.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withPackLock } from './pack-lock.mjs';

/** The published workspaces, in dependency order (a new package is one more line here). */
export const PUBLISHED = ['sdk', 'openapi', 'conformance', 'cli', 'mcp'];

const root = fileURLToPath(new URL('..', import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(root, 'packages'));
mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) if (/^secret-push-.*\.tgz$/.test(name)) rmSync(path.join(out, name));
// Each package takes a while (its prepack builds ESM and CommonJS with types): say which one, and how long it took,
// on stderr, so a long run shows progress and stdout stays the list of tarballs.
// The declarations' bundle of a package that inlines the contract toolkit (conformance: the generated types of both
// contracts) peaks above 4.5 GB, past Node's default heap limit on a 16 GB+ machine (measured: 4.6 GB resident, and
// out of memory once the workspace operations of issue 41 came): its build gets 8 GB. One package builds at a time.
const buildEnv = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=8192`.trim() };
const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
for (const [i, workspace] of PUBLISHED.entries()) {
  const name = JSON.parse(readFileSync(path.join(root, workspace, 'package.json'), 'utf8')).name;
  const since = Date.now();
  const step = `[${i + 1}/${PUBLISHED.length}] ${name}`;
  process.stderr.write(`${step}: building (ESM, CommonJS, types) and packing…\n`);
  // A line every 15 s while it builds: a busy machine can take minutes per package.
  const beat = setInterval(() => process.stderr.write(`${step}: still building (${seconds(since)})\n`), 15_000);
  const code = await withPackLock(
    root,
    () =>
      new Promise((resolve) =>
        spawn('npm', ['pack', '-w', workspace, '--pack-destination', out, '--silent'], {
          cwd: root,
          env: buildEnv,
          stdio: ['ignore', 'ignore', 'inherit'],
        }).once('exit', (exit) => resolve(exit)),
      ),
  );
  clearInterval(beat);
  if (code !== 0) {
    process.stderr.write(`${step}: npm pack failed (exit ${code})\n`);
    process.exit(1);
  }
  process.stderr.write(`${step}: packed in ${seconds(since)}\n`);
}
process.stderr.write(`${PUBLISHED.length} packages in ${seconds(started)}, into ${out}:\n`);
for (const name of readdirSync(out)
  .filter((n) => n.endsWith('.tgz'))
  .sort())
  console.log(path.join(out, name));
