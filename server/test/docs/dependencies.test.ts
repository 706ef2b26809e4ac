/**
 * No import circle anywhere, and no import from a lower floor of ARCHITECTURE.md ("Floors") to a higher one (issue
 * 40): dependency-cruiser with the rules of .dependency-cruiser.cjs over every workspace's sources, type-only imports
 * included. A failure lists each violation as `from → to (rule)`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCES = [
  'server/src',
  'rules/src',
  'sdk/src',
  'conformance/src',
  'cli/src',
  'mcp/src',
  'openapi/src',
  'openapi/tooling',
];

interface Cruise {
  summary: { violations: { from: string; to: string; rule: { name: string }; cycle?: { name: string }[] }[] };
  modules: { source: string; dependencies: { module: string; resolved: string }[] }[];
}

/** Runs the cruiser (on this Node) over the sources; its JSON report. */
function cruise(): Promise<Cruise> {
  const bin = `${root}node_modules/dependency-cruiser/bin/dependency-cruiser.mjs`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--output-type', 'json', ...SOURCES], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => {
      try {
        resolve(JSON.parse(out) as Cruise);
      } catch {
        reject(new Error(`dependency-cruiser exited ${status}: ${err || out}`));
      }
    });
  });
}

/** One line a violation: `from → to (rule)`, and the whole circle for a circle. */
function describeViolation(v: Cruise['summary']['violations'][number]): string {
  const circle = v.cycle && v.cycle.length > 0 ? `: ${[v.from, ...v.cycle.map((c) => c.name)].join(' → ')}` : '';
  return `${v.from} → ${v.to} (${v.rule.name})${circle}`;
}

describe('the import graph', () => {
  it('has no import circle and no import from a lower floor to a higher one', { timeout: 120_000 }, async () => {
    const report = await cruise();
    // The cruise saw the code: every workspace's sources, and workspace packages resolved to their sources.
    expect(report.modules.length).toBeGreaterThan(300);
    const core = report.modules.find((m) => m.source === 'server/src/core.ts');
    expect(core?.dependencies.find((d) => d.module === '@secret-push/rules')?.resolved).toBe('rules/src/index.ts');
    const lines = report.summary.violations.map(describeViolation);
    if (lines.length > 0) console.log(lines.join('\n'));
    expect(lines, lines.join('\n')).toEqual([]);
  });
});
