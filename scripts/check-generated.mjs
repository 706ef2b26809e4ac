// Regenerates the bundled spec and the SDK, then fails if anything differs from what is committed.
import { execFileSync } from 'node:child_process';

const generated = ['openapi/bundled', 'sdk/src/generated'];
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

run('npm', ['run', '--silent', 'generate']);
const status = run('git', ['status', '--porcelain', '--', ...generated]).trim();
if (status) {
  const diff = run('git', ['diff', '--stat', '--', ...generated]);
  console.error(`Generated files are stale; run \`npm run generate\` and commit:\n${status}\n${diff}`);
  process.exit(1);
}
console.log('Generated files are up to date.');
