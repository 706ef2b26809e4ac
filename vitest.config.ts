import os from 'node:os';
import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/** Workspace packages resolve to their TypeScript sources (package.json `exports`), never to a build. */
const SOURCE = '@secret-push/source';

/**
 * A worker runs its files one after the other in one module graph (no fresh import of the server, the contract and
 * the SDK per file: about a third of the run's time before) and keeps one Chromium for them (server/test/web/chromium.ts).
 * Files must share no mutable module state: each makes its own database, app, ports and browser contexts (the
 * repository has no vi.mock, vi.stubEnv or fake timers; the module-level caches hold statements, schemas and the
 * contract). A file that needs a fresh graph gets its own project with `isolate: true`.
 */
const SHARED_WORKER = { isolate: false } as const;

// One project per part of the repository, so each part keeps its own set-up (the server's embedded PostgreSQL
// cluster is started only for the projects that need it).
export default defineConfig({
  resolve: { conditions: [SOURCE, ...defaultClientConditions] },
  // Without bundlers' `module` condition, as Node itself resolves: a package whose `module` build is not valid ESM
  // for Node (@opentelemetry/api 1.9, which pg-boss imports) would otherwise fail to load in the tests only.
  ssr: { resolve: { conditions: [SOURCE, ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    reporters: ['default'],
    // vitest's cores − 1 workers. One per core was tried (issue 40): CPU time fell, but on this 2-core machine the
    // CPU-heavy files (ESLint over the repository, add-a-field's scratch copies) then ran past their limits beside a
    // second worker. Measure again on more cores before raising it.
    maxWorkers: Math.max(1, os.availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        test: {
          ...SHARED_WORKER,
          name: 'contract',
          include: ['openapi/**/*.test.ts', 'sdk/test/contract/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          ...SHARED_WORKER,
          name: 'server',
          include: ['server/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          ...SHARED_WORKER,
          name: 'sdk',
          include: ['sdk/test/**/*.test.ts'],
          exclude: ['sdk/test/contract/**'],
          // The run's one pack of the published packages, shared by the packaging tests (issue 40).
          globalSetup: ['server/test/global-setup.ts', 'sdk/test/packaging/support/pack-cache-setup.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          ...SHARED_WORKER,
          name: 'cli',
          include: ['cli/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          ...SHARED_WORKER,
          name: 'mcp',
          include: ['mcp/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          ...SHARED_WORKER,
          name: 'conformance',
          include: ['conformance/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 180_000,
        },
      },
    ],
  },
});
