/**
 * The published packages as `npm run pack` makes them (scripts/pack.mjs: build, LICENSE, tarball, clean-up), once per
 * test run and state of the source tree; and the tools the packaging tests run on them, each on this Node (24) as npm
 * runs them.
 *
 * Building and packing is most of the packaging tests' time (the SDK was packed twice per run: by pack.test.ts and
 * by packages.test.ts). So the packs are kept in the run's folder (support/pack-cache-setup.ts, removed after the
 * run) under the hash of every file git does not ignore (tracked or not: contents and paths) and of the Node version:
 * any change of a source, a config or the lock file makes another hash, hence a fresh pack, never a stale one. The
 * hash is taken again after packing; a tree that changed meanwhile leaves its pack uncached.
 * Why and what it saved: docs/decisions/0009-one-pack-per-test-run.md.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';

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

/** The hash of the source tree the packs are made from: every file git does not ignore, and the Node version. */
async function treeHash(): Promise<string> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  const hash = createHash('sha256').update(process.version);
  for (const file of [...new Set(stdout.split('\0').filter(Boolean))].sort()) {
    const full = path.join(root, file);
    // A tracked file deleted in the working tree counts by its absence.
    hash.update(`\0${file}\0`).update(existsSync(full) ? readFileSync(full) : 'deleted');
  }
  return hash.digest('hex').slice(0, 24);
}

function tarballsIn(dir: string): Packed {
  const tarballs: Record<string, string> = {};
  for (const file of readdirSync(dir)) {
    const match = /^(secret-push-[a-z]+)-\d+\.\d+\.\d+\.tgz$/.exec(file);
    if (match && NAMES[match[1]!]) tarballs[NAMES[match[1]!]!] = path.join(dir, file);
  }
  return { dir, tarballs };
}

/** Runs `npm run pack` into a new folder of `cache`; keeps it under the tree's hash when the tree did not change. */
async function pack(cache: string, hash: string): Promise<Packed> {
  const fresh = mkdtempSync(path.join(cache, 'packing-'));
  // Five packages, each built by tsdown (ESM, CommonJS, declarations): under a minute on a quiet machine, but many
  // minutes on a shared 2-core one where other builds and tests run.
  await run(process.execPath, [path.join(root, 'scripts/pack.mjs'), fresh], { cwd: root, env, timeout: 900_000 });
  if ((await treeHash()) !== hash) return tarballsIn(fresh);
  const kept = path.join(cache, hash);
  try {
    renameSync(fresh, kept);
  } catch {
    // Another worker of the run kept the same tree's pack first: use that one.
    rmSync(fresh, { recursive: true, force: true });
  }
  return tarballsIn(kept);
}

const packs = new Map<string, Promise<Packed>>();

/**
 * The published packages of the source tree as it is now, packed by `npm run pack` at most once per run and tree
 * (the run's folder removes them: callers must not).
 */
export async function packAll(): Promise<Packed> {
  const cache = inject('packCacheDir');
  if (!cache) throw new Error('packAll: no packCacheDir (run the packaging tests through vitest.config.ts)');
  const hash = await treeHash();
  if (existsSync(path.join(cache, hash))) return tarballsIn(path.join(cache, hash));
  // A pack that failed (or ran past its limit) fails the worker's other packaging files too, at once: packing the
  // same tree again would cost as long and most likely fail the same way.
  let packing = packs.get(hash);
  if (!packing) {
    packing = pack(cache, hash);
    packs.set(hash, packing);
  }
  return packing;
}

/** A package's CLI script (from the repository's node_modules), run with this Node: its shebang would pick the machine's older one. */
export function binOf(pkg: string, bin: string): string {
  const folder = path.join(root, 'node_modules', pkg);
  const bins = (
    JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { bin: string | Record<string, string> }
  ).bin;
  return path.join(folder, typeof bins === 'string' ? bins : bins[bin]!);
}
