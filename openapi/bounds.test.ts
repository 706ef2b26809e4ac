/**
 * Bounds in both contracts (issue 19): every string, array and map has a bound and every integer a format, checked
 * two ways: Spectral with the OWASP API Security ruleset (openapi/spectral.yaml, zero findings, every rule turned off
 * justified there), and a walk of every schema of both bundles that does not depend on Spectral's reading.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundledDocument, bundledV1Document } from './src/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
type Json = Record<string, unknown>;

describe('bounds of the contracts', () => {
  it('Spectral (spectral:oas + OWASP API Security Top 10) finds nothing in either bundle', () => {
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'spectral-')), 'findings.json');
    const result = spawnSync(
      process.execPath,
      [
        `${root}node_modules/.bin/spectral`,
        'lint',
        '-r',
        'openapi/spectral.yaml',
        '--fail-severity',
        'hint',
        '-f',
        'json',
        '-o',
        out,
        'openapi/bundled/openapi.json',
        'openapi/bundled/openapi-v1.json',
      ],
      { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
    );
    const findings = JSON.parse(readFileSync(out, 'utf8')) as { code: string; path: string[]; source: string }[];
    expect(findings.map((f) => `${f.code} ${f.source.split('/').pop()} ${f.path.join('/')}`)).toEqual([]);
    expect(result.status).toBe(0);
  }, 120_000);

  it('justifies every rule the ruleset turns off, in a comment right above it', () => {
    const lines = readFileSync(`${root}openapi/spectral.yaml`, 'utf8').split('\n');
    const offs = lines.flatMap((line, i) => (/:\s*off\s*$/.test(line) ? [i] : []));
    expect(offs.length).toBeGreaterThan(0);
    for (const i of offs) {
      // Above the rule: a comment (directly, or above the `rules:` of an override whose `files` list follows one).
      let j = i - 1;
      while (j >= 0 && !lines[j]!.trim().startsWith('#') && /^\s+(-|rules:|files:|owasp|oas3)/.test(lines[j]!)) j -= 1;
      expect(lines[j]?.trim().startsWith('#'), `line ${i + 1}: ${lines[i]}`).toBe(true);
    }
    // The rate-limit rules hold: every answer declares the RateLimit fields, every 429 its Retry-After.
    for (const rule of [
      'owasp:api4:2023-rate-limit',
      'owasp:api4:2023-rate-limit-retry-after',
      'owasp:api4:2023-rate-limit-responses-429',
    ]) {
      expect(
        lines.some((l) => l.trim().startsWith(`${rule}:`)),
        rule,
      ).toBe(false);
    }
  });

  for (const [name, document] of [
    ['v2', bundledDocument()],
    ['v1', bundledV1Document()],
  ] as const) {
    it(`${name}: every string has a maxLength (or enum/const), every array a maxItems, every map a maxProperties, every integer a format`, () => {
      const loose: string[] = [];
      const walk = (node: unknown, where: string) => {
        if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}/${i}`));
        if (node === null || typeof node !== 'object') return;
        const n = node as Json;
        const types = Array.isArray(n.type) ? (n.type as string[]) : typeof n.type === 'string' ? [n.type] : [];
        const isSchema = where.includes('schema') || where.includes('/components/schemas/');
        if (isSchema && !('$ref' in n)) {
          if (types.includes('string') && n.maxLength === undefined && n.enum === undefined && n.const === undefined)
            loose.push(`${where}: string without maxLength`);
          if (types.includes('array') && n.maxItems === undefined) loose.push(`${where}: array without maxItems`);
          if (types.includes('integer') && n.format === undefined) loose.push(`${where}: integer without format`);
          if (typeof n.additionalProperties === 'object' && n.maxProperties === undefined)
            loose.push(`${where}: map without maxProperties`);
        }
        for (const [key, value] of Object.entries(n)) {
          if (key === 'examples' || key === 'example' || key === 'description') continue;
          walk(value, `${where}/${key}`);
        }
      };
      walk(document, '#');
      expect(loose).toEqual([]);
    });
  }
});
