// `npm run pack`: builds and packs every published package into one folder, `packages/` (or the folder given as the
// first argument), as the tarballs the READMEs install from until the packages are on the registry:
//   npm install ./packages/secret-push-sdk-<version>.tgz
//   npx ./packages/secret-push-conformance-<version>.tgz --base-url …
// Each `npm pack` runs the package's prepack (tsdown build, LICENSE) and postpack (clean-up): the tree stays as it was.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The published workspaces, in dependency order (a new package is one more line here). */
export const PUBLISHED = ['sdk', 'openapi', 'conformance'];

const root = fileURLToPath(new URL('..', import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(root, 'packages'));
mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) if (/^secret-push-.*\.tgz$/.test(name)) rmSync(path.join(out, name));
for (const workspace of PUBLISHED) {
  execFileSync('npm', ['pack', '-w', workspace, '--pack-destination', out, '--silent'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
for (const name of readdirSync(out)
  .filter((n) => n.endsWith('.tgz'))
  .sort())
  console.log(path.join(out, name));
