#!/usr/bin/env node
// The packed package runs its bundle (dist/index.mjs, made by `npm pack`: the server with the SDK and the CLI's
// configuration inlined). In the repository it is TypeScript run through tsx; the workspace packages resolve to their
// sources under the `@secret-push/source` condition.
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/index.mjs', import.meta.url));
if (existsSync(bundle)) {
  const { main } = await import(bundle);
  const outcome = await main(process.argv.slice(2), {
    env: { ...process.env },
    home: os.homedir(),
    platform: process.platform,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  if (outcome !== 'serving') process.exitCode = outcome;
} else {
  const source = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--conditions=@secret-push/source', '--import', import.meta.resolve('tsx'), source, ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  child.on('exit', (code) => (process.exitCode = code ?? 1));
}
