/**
 * The linter, the formatter and the dead-code check are part of the tests (issue 21): `npm run lint` (ESLint,
 * type-aware, zero warnings), `npm run format:check` (Prettier over the code; `npm run format` writes it) and
 * `npm run knip` (unused files, exports, types, dependencies) must report nothing, so a new finding
 * fails the run (and CI) with the tool's own report. Type-aware ESLint over the repository takes about 35 s alone on
 * a 2-core machine, more beside the other test files: hence the long timeouts.
 *
 * Each tool keeps a cache in node_modules/.cache (gitignored; a fresh clone, as CI's, starts without one): a warm run
 * looks again only at the files whose content changed. One limit: ESLint's cache is per file, so a type change in one
 * file does not re-lint an unchanged file whose type-aware findings it alters; `rm -rf node_modules/.cache/eslint`
 * (or CI's fresh clone) lints everything again.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs a command at the repository root; resolves with its exit status and everything it printed. */
function run(command: string, args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

const npmRun = (script: string) => run('npm', ['run', '--silent', script]);

describe('the linter and the dead-code check', () => {
  it('npm run lint reports no problem (ESLint, type-aware, --max-warnings 0)', { timeout: 600_000 }, async () => {
    const { status, output } = await npmRun('lint');
    expect(output.trim(), output).toBe('');
    expect(status, output).toBe(0);
  });

  it('lints with the promise and exhaustiveness rules as errors', { timeout: 120_000 }, async () => {
    const eslint = `${root}node_modules/eslint/bin/eslint.js`;
    const { status, output } = await run(process.execPath, [eslint, '--print-config', 'server/src/main.ts']);
    expect(status, output).toBe(0);
    const rules = (JSON.parse(output) as { rules: Record<string, unknown[]> }).rules;
    for (const rule of [
      '@typescript-eslint/no-floating-promises',
      '@typescript-eslint/no-misused-promises',
      '@typescript-eslint/switch-exhaustiveness-check',
    ]) {
      expect(rules[rule]?.[0], rule).toBe(2); // 2: error
    }
  });

  it(
    'npm run format:check finds every code file formatted by Prettier (.prettierrc.json; npm run format fixes it)',
    { timeout: 300_000 },
    async () => {
      const { status, output } = await run(process.execPath, [
        `${root}node_modules/prettier/bin/prettier.cjs`,
        '--check',
        '--cache',
        '--cache-strategy',
        'content',
        '--log-level',
        'warn',
        '.',
      ]);
      expect(output.trim(), output).toBe('');
      expect(status, output).toBe(0);
    },
  );

  it('npm run knip finds no unused file, export, type or dependency', { timeout: 300_000 }, async () => {
    const { status, output } = await npmRun('knip');
    expect(output.trim(), output).toBe('');
    expect(status, output).toBe(0);
  });
});
