/**
 * Issue 39, the front door. The README stays short (at most 250 lines, none over 160 characters, a table of contents
 * whose entries are its sections), and its "Try it" section runs as written: every fenced `sh` block of the section is
 * run by bash, in order, in the clone, against a fresh compiled server (what `scripts/start` runs) with its development
 * defaults. The one substitution is the line `BASE=http://localhost:5100`, which the section itself asks to set,
 * pointed at the test's server (whose data dir `npm run users` is given in PWPUSH_DATA_DIR, as the section's server
 * would use `./data`). A command whose line ends in `# → <answer>` must print that answer: its text, in order, where
 * `…` stands for anything, with the README's base URL read as the server's. So the README cannot drift from the product.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/config/settings.js';
import { startCompiledServer, type ServerProcess } from '../support/compiled-server.js';

const README = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const README_BASE = 'http://localhost:5100';
const BASE_LINE = `BASE=${README_BASE}`;
const ANSWER = ' # → ';

/** The section under `## <title>`, up to the next `## ` heading. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`README has no section "## ${title}"`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

interface Step {
  command: string;
  /** The answer the README shows for it, split at `…`; null when it shows none. */
  answer: string[] | null;
}

/** The section's `sh` blocks as commands (a line ending in `\` continues on the next), each with its answer. */
function steps(text: string): Step[] {
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const out: Step[] = [];
  for (const block of blocks) {
    let pending = '';
    for (const line of block.split('\n')) {
      if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
      pending += (pending ? '\n' : '') + line;
      if (line.endsWith('\\')) continue;
      const at = pending.lastIndexOf(ANSWER);
      const answer = at === -1 ? null : pending.slice(at + ANSWER.length).trim();
      out.push({ command: pending, answer: answer === null ? null : answer.split('…') });
      pending = '';
    }
  }
  return out;
}

describe('the README', () => {
  it('is at most 250 lines, none over 160 characters', () => {
    const lines = README.split('\n');
    expect(lines.length).toBeLessThanOrEqual(250);
    expect(lines.map((l, i) => [i + 1, l.length]).filter(([, n]) => n! > 160)).toEqual([]);
  });

  it('has a table of contents listing each of its sections, in order', () => {
    const headings = [...README.matchAll(/^## (.+)$/gm)].map((m) => m[1]!).filter((h) => h !== 'Contents');
    const contents = [...section('Contents').matchAll(/^- \[(.+?)\]\(#([^)]+)\)$/gm)];
    expect(contents.map((m) => m[1])).toEqual(headings);
  });

  it('shows docker run and docker compose on its first screen', () => {
    const firstScreen = README.split('\n').slice(0, 20).join('\n');
    expect(firstScreen).toMatch(/^docker run .+$/m);
    expect(firstScreen).toContain('docker compose up -d');
  });
});

describe('the README’s "Try it", run as written against a fresh server', () => {
  let server: ServerProcess;
  const tried = section('Try it');

  beforeAll(async () => {
    server = await startCompiledServer({ PWPUSH_ENV: 'development' });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('gives every command the answer the README shows', async () => {
    expect(tried.split('\n').filter((l) => l === BASE_LINE)).toHaveLength(1);
    const all = steps(tried);
    const shown = all.filter((s) => s.answer !== null);
    // A user and token, a create, a preview, a retrieval, an expiry and the expired record at least.
    expect(shown.length).toBeGreaterThanOrEqual(6);
    const script = [
      'set -euo pipefail',
      ...all.flatMap((s, i) => [
        s.command === BASE_LINE ? `BASE=${server.baseUrl}` : s.command,
        `printf '\\n@@step ${i}@@\\n'`,
      ]),
    ].join('\n');
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PWPUSH_ENV: 'development',
        PWPUSH_DATA_DIR: server.dataDir,
      },
      timeout: 120_000,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the "Try it" commands failed:\n${error.stdout}\n${error.stderr}`);
    });
    const outputs = stdout.split(/\n?@@step \d+@@\n/);
    all.forEach((step, i) => {
      if (step.answer === null) return;
      const output = outputs[i]!.trim();
      let from = 0;
      for (const fragment of step.answer.map((f) => f.replaceAll(README_BASE, server.baseUrl))) {
        const at = output.indexOf(fragment, from);
        expect(
          at,
          `"${step.command}" printed:\n${output}\nwhich lacks, in order, ${JSON.stringify(fragment)}`,
        ).not.toBe(-1);
        from = at + fragment.length;
      }
    });
  });

  it('points at the API reference, which the server serves', async () => {
    expect(tried).toContain(`${README_BASE}/help/api`);
    const page = await fetch(`${server.baseUrl}/help/api`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>');
  });
});
