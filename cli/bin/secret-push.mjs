#!/usr/bin/env node
// The packed package runs its bundle (dist/index.mjs, made by `npm pack`: the CLI with the SDK inlined). In the
// repository the CLI is TypeScript run through tsx, so no build step stands between a change and a run; the workspace
// packages resolve to their sources under the `@secret-push/source` condition.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/index.mjs', import.meta.url));
if (existsSync(bundle)) {
  const { main } = await import(bundle);
  process.exitCode = await main(process.argv.slice(2));
} else {
  const source = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
  const run = spawnSync(
    process.execPath,
    ['--conditions=@secret-push/source', '--import', import.meta.resolve('tsx'), source, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exitCode = run.status ?? 1;
}
