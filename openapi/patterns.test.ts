/**
 * Every `pattern` of the spec is applied by Ajv to request values of up to 14 MB (file content) or 1 MiB (payload),
 * and on the server that happens on the event loop: a pattern that backtracks super-linearly lets one request stall
 * the server. `recheck` analyses each pattern's automaton and reports its worst-case complexity; all must be linear.
 */
import { checkSync } from 'recheck';
import { describe, expect, it } from 'vitest';
import { contract } from './src/index.js';

const spec = contract().document;

function patterns(node: unknown, path = '#'): { path: string; pattern: string }[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => patterns(v, `${path}/${i}`));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) =>
    k === 'pattern' && typeof v === 'string' ? [{ path, pattern: v }] : patterns(v, `${path}/${k}`),
  );
}

function complexity(pattern: string): string {
  // Ajv compiles patterns with the `u` flag.
  const result = checkSync(pattern, 'u', { checker: 'automaton' });
  return result.status === 'safe' || result.status === 'vulnerable' ? result.complexity.type : result.status;
}

describe('patterns of the spec', () => {
  const all = patterns(spec);

  it('finds the patterns to check', () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
  });

  for (const { path, pattern } of all) {
    it(`match in linear time: ${pattern}`, () => {
      // `safe` is recheck's verdict for bounded repetitions ({11,64}): no super-linear backtracking either.
      expect(complexity(pattern), path).toMatch(/^(constant|linear|safe)$/);
    });
  }

  it('recognise super-linear patterns, so the check can fail', () => {
    expect(complexity('^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+[^\\s]*$')).toBe('polynomial');
    expect(complexity('^(a+)+$')).toBe('exponential');
  });
});
