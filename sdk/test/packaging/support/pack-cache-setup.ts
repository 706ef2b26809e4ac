/**
 * The sdk project's run-wide folder for the packed packages (support/packed.ts): one `npm run pack` per run, shared by
 * the packaging tests (packages.test.ts, pack.test.ts) instead of one build and pack of the SDK each (issue 40). The
 * folder is made here and removed when the run ends; tests read it with `inject('packCacheDir')`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folder of this run's packs, one subfolder per hash of the source tree (support/packed.ts). */
    packCacheDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-pack-cache-'));
  project.provide('packCacheDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
