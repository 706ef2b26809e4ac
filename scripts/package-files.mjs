// prepack / postpack of the published packages (sdk, openapi, conformance): `prepack` builds the package
// (`npm run build`: tsdown, scripts/library-build.ts) and copies the repository's LICENSE beside its package.json
// so the tarball carries it; `postpack` removes that copy and the build again, leaving the work tree as it was (the
// repository runs the packages' sources; a `dist/` left behind could only be stale).
// Usage (from a package folder): node ../scripts/package-files.mjs prepack|postpack
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const license = fileURLToPath(new URL('../LICENSE', import.meta.url));
const step = process.argv[2];
if (step === 'prepack') {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  copyFileSync(license, 'LICENSE');
} else if (step === 'postpack') {
  rmSync('LICENSE', { force: true });
  rmSync('dist', { recursive: true, force: true });
} else {
  console.error('usage: node ../scripts/package-files.mjs prepack|postpack');
  process.exit(2);
}
