#!/usr/bin/env node
// The packed package runs its bundle (dist/cli.mjs: the suite and the contract toolkit in one file, made by
// `npm pack`). In the repository the suite is TypeScript run through tsx, so no build step stands between a change
// and a run; the workspace packages resolve to their sources under the `@secret-push/source` condition.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/cli.mjs', import.meta.url));
if (existsSync(bundle)) {
  const { main } = await import(bundle);
  process.exit(await main(process.argv.slice(2)));
}
const source = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const run = spawnSync(
  process.execPath,
  ['--conditions=@secret-push/source', '--import', 'tsx', source, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
