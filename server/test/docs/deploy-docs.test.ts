/**
 * docs/deploy.md (issue 38) says what the repository holds: its table of secret settings is the one the settings
 * module makes, and every file and command it names for the image, compose and Kubernetes exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, secretSettingsMarkdown } from '../../src/config/settings.js';

const page = readFileSync(path.join(repoRoot, 'docs/deploy.md'), 'utf8');

describe('docs/deploy.md', () => {
  it('lists every secret setting and its _FILE exactly as server/src/config/settings.ts reads them', () => {
    const documented = page
      .split('<!-- secret-settings:start -->')[1]
      ?.split('<!-- secret-settings:end -->')[0]
      ?.trim();
    expect(documented).toBe(secretSettingsMarkdown());
  });

  it('names only files the repository has', () => {
    const named = [
      ...page.matchAll(/`((?:deploy|server|scripts|docs)\/[A-Za-z0-9_./-]+|compose\.yaml|\.env\.example|Dockerfile)`/g),
    ].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(5);
    for (const file of named) expect(existsSync(path.join(repoRoot, file)), file).toBe(true);
    for (const match of page.matchAll(/\]\(([a-z-]+\.md)(?:#[a-z-]+)?\)/g)) {
      const link = match[1]!;
      expect(existsSync(path.join(repoRoot, 'docs', link)), link).toBe(true);
    }
  });
});
