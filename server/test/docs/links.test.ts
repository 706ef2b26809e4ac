/**
 * Issue 39: the docs stay true. Every relative link of every Markdown file in git (the README, SECURITY.md, the
 * guides in docs/, the workspaces' READMEs) resolves: the file exists, and a `#fragment` names one of its headings
 * (GitHub's anchors). And the docs make no "not yet" claim the contract has outgrown: a scope the API-keys page says
 * has "no such operation yet" must have none in the contract (and one it lists operations for must have some), and
 * every other "not yet" in the docs is one of the few listed here, each with why it is still true.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { contract } from '@secret-push/contract';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/config/settings.js';

const MARKDOWN = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
  cwd: repoRoot,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f && !f.includes('node_modules/') && existsSync(path.join(repoRoot, f)));

const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');
/** The text outside fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` there no link). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The relative links of a Markdown text: `[text](target)` and `![alt](target)`, outside code. */
function relativeLinks(text: string): string[] {
  const withoutInlineCode = prose(text).replace(/`[^`\n]*`/g, '');
  return [...withoutInlineCode.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('the docs', () => {
  it('are found (the README, SECURITY.md, the guides and the workspaces’ READMEs)', () => {
    for (const file of ['README.md', 'SECURITY.md', 'CHANGELOG.md', 'docs/README.md', 'docs/settings.md'])
      expect(MARKDOWN).toContain(file);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      for (const target of relativeLinks(read(file))) {
        const [pathPart, fragment] = target.split('#') as [string, string | undefined];
        const resolved = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), pathPart));
        const full = path.join(repoRoot, resolved);
        if (!existsSync(full)) {
          broken.push(`${file}: ${target} (no ${resolved})`);
          continue;
        }
        if (fragment && resolved.endsWith('.md') && statSync(full).isFile() && !anchors(read(resolved)).has(fragment))
          broken.push(`${file}: ${target} (no heading #${fragment} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('say "no such operation yet" of a scope only when the contract has none, and list operations otherwise', () => {
    const page = read('docs/api-keys.md');
    const rows = [...page.matchAll(/^\| (`[a-z_]+:[a-z_]+`(?:, `[a-z_]+:[a-z_]+`)*) \| (.+) \|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const c = contract();
    const withScope = (scope: string) => c.operations().filter((op) => c.scopes(op.operationId).includes(scope));
    const wrong: string[] = [];
    for (const [, scopes, said] of rows) {
      for (const scope of [...scopes!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)) {
        const claimsNone = /no such operation|not yet/i.test(said!);
        const has = withScope(scope).length > 0;
        if (claimsNone === has)
          wrong.push(`${scope}: the page says "${said}", the contract has ${withScope(scope).length}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('make no other "not yet" claim than the ones listed here, each still true', () => {
    /** Each claim that may stay, with why it is still true. */
    const ALLOWED: [RegExp, string][] = [
      [/not yet published on the npm registry/i, 'the packages go to the registry with the first release'],
      [/not yet flagged/i, "the sweeper's own term: a push past its time that the sweeper has not marked expired"],
      [
        /Not yet \(issue 41\)/,
        'issue 41 (workspaces) lands in parts: docs/workspaces.md "Status" lists what is still to come, removed as it lands',
      ],
    ];
    const pattern = /not (yet|implemented yet)|no such operations? yet|coming soon|\bTODO\b/gi;
    const found: string[] = [];
    for (const file of MARKDOWN) {
      const lines = prose(read(file)).split('\n');
      lines.forEach((line, i) => {
        // A claim may run over a line break: look at the line with its neighbours.
        const around = [lines[i - 1] ?? '', line, lines[i + 1] ?? ''].join(' ');
        if (!pattern.test(line)) return;
        pattern.lastIndex = 0;
        if (!ALLOWED.some(([allowed]) => allowed.test(around))) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
      pattern.lastIndex = 0;
    }
    expect(found).toEqual([]);
  });
});
