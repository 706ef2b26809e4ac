/**
 * The published packages as `npm run pack` makes them (scripts/pack.mjs: build, LICENSE, tarball, clean-up), into a
 * throwaway folder; and the tools the packaging tests run on them, each on this Node (24) as npm runs them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const root = fileURLToPath(new URL('../../../../', import.meta.url));
const nodeBin = path.dirname(process.execPath);
// npm and the scripts it runs (prepack → tsdown) on the same Node 24 as the tests; npm's update check off.
export const env = {
  ...process.env,
  PATH: `${nodeBin}${path.delimiter}${process.env.PATH ?? ''}`,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};

export interface Packed {
  dir: string;
  /** Tarball path by package name (`@secret-push/sdk` → …/secret-push-sdk-0.1.0.tgz). */
  tarballs: Record<string, string>;
}

const NAMES: Record<string, string> = {
  'secret-push-sdk': '@secret-push/sdk',
  'secret-push-contract': '@secret-push/contract',
  'secret-push-conformance': '@secret-push/conformance',
  'secret-push-cli': '@secret-push/cli',
  'secret-push-mcp': '@secret-push/mcp',
};

/** Runs `npm run pack` into a new temporary folder. */
export async function packAll(): Promise<Packed> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-packages-'));
  // Five packages, each built by tsdown (ESM, CommonJS, declarations): under a minute on a quiet machine, but many
  // minutes on a shared 2-core one where other builds and tests run.
  await run(process.execPath, [path.join(root, 'scripts/pack.mjs'), dir], { cwd: root, env, timeout: 900_000 });
  const tarballs: Record<string, string> = {};
  for (const file of readdirSync(dir)) {
    const match = /^(secret-push-[a-z]+)-\d+\.\d+\.\d+\.tgz$/.exec(file);
    if (match && NAMES[match[1]!]) tarballs[NAMES[match[1]!]!] = path.join(dir, file);
  }
  return { dir, tarballs };
}

/** A package's CLI script (from the repository's node_modules), run with this Node: its shebang would pick the machine's older one. */
export function binOf(pkg: string, bin: string): string {
  const folder = path.join(root, 'node_modules', pkg);
  const bins = (
    JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { bin: string | Record<string, string> }
  ).bin;
  return path.join(folder, typeof bins === 'string' ? bins : bins[bin]!);
}
