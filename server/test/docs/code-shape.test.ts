/**
 * The code stays easy to change (issue 9): no hand-written function over 150 lines in any workspace's source.
 * Generated code, built output and tests aside.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCES = [
  'server/src',
  'sdk/src',
  'rules/src',
  'conformance/src',
  'openapi/src',
  'openapi/tooling',
  'cli/src',
  'mcp/src',
  'scripts',
];
const SKIP_DIRS = new Set(['node_modules', 'generated', 'dist', 'test']);
const MAX_LINES = 150;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : sourceFiles(full);
    return /\.(ts|mts)$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name) ? [full] : [];
  });
}

/** Every function-like node with a body, and its length in lines. */
function functionLengths(file: string): { where: string; lines: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { where: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.end).line;
      const name = 'name' in node && node.name ? node.name.getText(source) : '(anonymous)';
      found.push({ where: `${path.relative(root, file)}:${start + 1} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the shape of the code', () => {
  it(`has no hand-written function over ${MAX_LINES} lines`, () => {
    const files = SOURCES.flatMap((dir) => sourceFiles(path.join(root, dir)));
    expect(files.length).toBeGreaterThan(50);
    const all = files.flatMap(functionLengths);
    // The check sees real functions: the longest are over 100 lines, so a broken parser cannot pass it.
    expect(Math.max(...all.map((f) => f.lines))).toBeGreaterThan(100);
    expect(all.filter((f) => f.lines > MAX_LINES).map((f) => `${f.where}: ${f.lines} lines`)).toEqual([]);
  });
});
