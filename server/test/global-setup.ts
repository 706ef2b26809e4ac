/**
 * One throwaway PostgreSQL cluster per test run, shared by every project that lists this file (server, sdk,
 * conformance). Tests read its admin URL with `inject('pgAdminUrl')` (or the env var SECRET_PUSH_TEST_PG_URL) and
 * make their own databases (server/test/support/db.ts).
 *
 * TEST_DATABASE_URL (an admin URL of any PostgreSQL, e.g. the machine's PostgreSQL 15) skips the embedded cluster.
 */
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/db/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test cluster's `postgres` database, as a superuser. */
    pgAdminUrl: string;
  }
}

interface Shared {
  refs: number;
  url: Promise<string>;
  stop: () => Promise<void>;
}

const KEY = Symbol.for('secret-push.test-postgres');
type Holder = { [KEY]?: Shared };

async function start(): Promise<{ url: string; stop: () => Promise<void> }> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) return { url: external, stop: async () => {} };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-test-'));
  chmodSync(dir, 0o755); // the postgres user must be able to enter it
  // Every test file opens its own pools (several Cores each), and projects run side by side.
  const db = await startEmbeddedPostgres({ dataDir: dir, maxConnections: 400 });
  return {
    url: db.adminUrl,
    stop: async () => {
      await db.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const holder = globalThis as Holder;
  if (!holder[KEY]) {
    const started = start();
    holder[KEY] = {
      refs: 0,
      url: started.then((s) => s.url),
      stop: async () => (await started).stop(),
    };
  }
  const shared = holder[KEY];
  shared.refs += 1;
  const url = await shared.url;
  process.env.SECRET_PUSH_TEST_PG_URL = url;
  project.provide('pgAdminUrl', url);
  return async () => {
    shared.refs -= 1;
    if (shared.refs === 0) {
      delete holder[KEY];
      await shared.stop();
    }
  };
}
