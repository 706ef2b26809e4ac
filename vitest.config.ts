import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/** Workspace packages resolve to their TypeScript sources (package.json `exports`), never to a build. */
const SOURCE = '@secret-push/source';

// One project per part of the repository, so each part keeps its own set-up (the server's embedded PostgreSQL
// cluster is started only for the projects that need it).
export default defineConfig({
  resolve: { conditions: [SOURCE, ...defaultClientConditions] },
  // Without bundlers' `module` condition, as Node itself resolves: a package whose `module` build is not valid ESM
  // for Node (@opentelemetry/api 1.9, which pg-boss imports) would otherwise fail to load in the tests only.
  ssr: { resolve: { conditions: [SOURCE, ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    reporters: ['default'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        test: {
          name: 'contract',
          include: ['openapi/**/*.test.ts', 'sdk/test/contract/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'server',
          include: ['server/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'sdk',
          include: ['sdk/test/**/*.test.ts'],
          exclude: ['sdk/test/contract/**'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'cli',
          include: ['cli/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'mcp',
          include: ['mcp/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'conformance',
          include: ['conformance/**/*.test.ts'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 180_000,
        },
      },
    ],
  },
});
