// What the compiled server (server/dist) was built from, and whether that still matches the files on disk.
// `npm run build` (scripts/build.ts) writes server/dist/build-info.json: the SHA-256 of every source file esbuild read
// (the server's and the workspace packages' TypeScript, the bundled contract), of the copied assets, and of the files
// that decide the rest (package-lock.json: the browser bundles' packages; the build script). `checkBuild()` recomputes
// them; `npm start` and the tests that run the compiled server refuse a build that is missing or stale.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUILD_DIR = path.join(ROOT, 'server', 'dist');
export const INFO_FILE = path.join(BUILD_DIR, 'build-info.json');
/** Inputs besides what esbuild reports reading. */
export const EXTRA_INPUTS = ['package-lock.json', 'scripts/build.ts', 'scripts/build-info.mjs'];

export function sha256(file) {
  return createHash('sha256')
    .update(readFileSync(path.join(ROOT, file)))
    .digest('hex');
}

/** `{ fresh: true }`, or `{ fresh: false, reason }` naming the first input that differs. */
export function checkBuild() {
  if (!existsSync(INFO_FILE))
    return { fresh: false, reason: 'server/dist has no build (server/dist/build-info.json is missing)' };
  let info;
  try {
    info = JSON.parse(readFileSync(INFO_FILE, 'utf8'));
  } catch {
    return { fresh: false, reason: 'server/dist/build-info.json is unreadable' };
  }
  for (const [file, digest] of Object.entries(info.inputs ?? {})) {
    if (!existsSync(path.join(ROOT, file))) return { fresh: false, reason: `${file} was removed since the build` };
    if (sha256(file) !== digest) return { fresh: false, reason: `${file} changed since the build` };
  }
  for (const output of info.outputs ?? []) {
    if (!existsSync(path.join(BUILD_DIR, output))) return { fresh: false, reason: `server/dist/${output} is missing` };
  }
  return { fresh: true };
}

// `node scripts/build-info.mjs`: exit 1 with the reason when the build is missing or stale.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const status = checkBuild();
  if (!status.fresh) {
    console.error(
      `The compiled server is missing or stale: ${status.reason}. Run \`npm run build\` (scripts/install and scripts/start do).`,
    );
    process.exit(1);
  }
}
