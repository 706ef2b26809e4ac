/**
 * `npm run settings:docs`: writes the settings' tables, made from their declarations (server/src/config/areas/), into
 * docs/settings.md (between `<!-- settings:start -->` and `<!-- settings:end -->`) and the secret settings' table into
 * docs/deploy.md (`<!-- secret-settings:… -->`). server/test/docs/readme-settings.test.ts and deploy-docs.test.ts
 * fail when either page differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, secretSettingsMarkdown, settingsTableMarkdown } from '../server/src/config/settings.js';

function writeBetween(file: string, marker: string, content: string): void {
  const full = path.join(repoRoot, file);
  const page = readFileSync(full, 'utf8');
  const start = `<!-- ${marker}:start -->`;
  const end = `<!-- ${marker}:end -->`;
  const [before, rest] = page.split(start);
  const after = rest?.split(end)[1];
  if (before === undefined || after === undefined) throw new Error(`${file} has no ${start} … ${end}`);
  writeFileSync(full, `${before}${start}\n${content}\n${end}${after}`);
  console.log(`${file}: ${marker} written`);
}

writeBetween('docs/settings.md', 'settings', settingsTableMarkdown());
writeBetween('docs/deploy.md', 'secret-settings', secretSettingsMarkdown());
