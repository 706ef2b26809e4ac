// Regenerates the bundled specs (v2: openapi/bundled/openapi.json, v1: openapi/bundled/openapi-v1.json), the SDK and
// the rules' types and schemas (rules/src/generated) and fails if that changed any generated file: the generated files on disk must be exactly what the specs on disk
// produce. (In CI, on a clean clone, that is what is committed.)
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const generated = ['openapi/bundled', 'sdk/src/generated', 'rules/src/generated'];
// One bundle per document; `npm run bundle` writes both.
const bundles = ['openapi/bundled/openapi.json', 'openapi/bundled/openapi-v1.json'];

function snapshot() {
  const files = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir))) {
      const rel = join(dir, name);
      if (statSync(join(root, rel)).isDirectory()) walk(rel);
      else files.set(rel, readFileSync(join(root, rel), 'utf8'));
    }
  };
  for (const dir of generated) walk(dir);
  return files;
}

const before = snapshot();
execFileSync('npm', ['run', '--silent', 'generate'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
const after = snapshot();
const missing = bundles.filter((f) => !after.has(f));
if (missing.length > 0) {
  console.error(`npm run generate did not write ${missing.join(', ')}: check the bundle script in package.json.`);
  process.exit(1);
}
const changed = [...new Set([...before.keys(), ...after.keys()])].filter((f) => before.get(f) !== after.get(f)).sort();
if (changed.length > 0) {
  console.error(`Generated files were stale (now regenerated; review and commit them):\n  ${changed.join('\n  ')}`);
  process.exit(1);
}
console.log(`Generated files are up to date (${after.size} files).`);
