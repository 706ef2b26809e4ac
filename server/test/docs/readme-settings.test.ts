import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { settingsTableMarkdown } from '../../src/config/settings.js';

describe('docs/settings.md', () => {
  it('documents every setting exactly as server/src/config/settings.ts reads it', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../docs/settings.md', import.meta.url)), 'utf8');
    const documented = page.split('<!-- settings:start -->')[1]?.split('<!-- settings:end -->')[0]?.trim();
    expect(documented).toBe(settingsTableMarkdown());
  });
});
