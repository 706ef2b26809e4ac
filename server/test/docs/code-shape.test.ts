/**
 * The code stays easy to change: no hand-written function over 150 lines (issue 9) and no hand-written source file
 * over 600 lines (issue 40: a file one can hold in one's head; split a longer one by what its parts serve) in any
 * workspace's source, the scripts and the web pages' scripts.
 * Not counted: generated code (`generated/` folders: regenerated, never edited), built output, and tests (`test/`
 * folders, `*.test.ts`: a test reads top to bottom as a list of cases, and its length is what it covers, not a room
 * one must hold in one's head to change the code).
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
const MAX_FILE_LINES = 600;
const TYPESCRIPT = /\.(ts|mts)$/;
/** What a file's line count covers: TypeScript and JavaScript (the scripts, the pages' scripts in web/assets). */
const SOURCE = /\.(ts|mts|js|mjs|cjs)$/;

function sourceFiles(dir: string, kind = TYPESCRIPT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : sourceFiles(full, kind);
    return kind.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name) ? [full] : [];
  });
}

function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
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

  it(`has no hand-written source file over ${MAX_FILE_LINES} lines`, () => {
    const files = SOURCES.flatMap((dir) => sourceFiles(path.join(root, dir), SOURCE));
    expect(files.some((file) => file.endsWith('.js'))).toBe(true);
    const sizes = files.map((file) => ({ file: path.relative(root, file), lines: lineCount(file) }));
    // The count sees real files: the longest are over 400 lines, so a broken walk cannot pass it.
    expect(Math.max(...sizes.map((s) => s.lines))).toBeGreaterThan(400);
    expect(sizes.filter((s) => s.lines > MAX_FILE_LINES).map((s) => `${s.file}: ${s.lines} lines`)).toEqual([]);
  });
});
