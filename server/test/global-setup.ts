/**
 * One throwaway PostgreSQL cluster per test run, shared by every project that lists this file (server, sdk, cli, mcp,
 * conformance). Tests read its admin URL with `inject('pgAdminUrl')` (or the env var SECRET_PUSH_TEST_PG_URL) and
 * make their own databases (server/test/support/db.ts).
 *
 * Migrating a database costs seconds (every migration, then the job queue's schema); copying one costs a fraction of
 * that. So the run migrates one template database once (`inject('pgTemplate')`, env SECRET_PUSH_TEST_PG_TEMPLATE)
 * and each test file's migrated database is a `CREATE DATABASE … TEMPLATE` copy of it (createMigratedDatabase).
 * The throwaway cluster also runs without durability (fsync, synchronous_commit and full_page_writes off): nothing
 * in it must survive a crash of the machine, and every commit no longer waits for the disk.
 *
 * TEST_DATABASE_URL (an admin URL of any PostgreSQL, e.g. the machine's PostgreSQL 15) skips the embedded cluster;
 * its settings are left as they are, and the template is dropped after the run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrateDatabase } from '../src/db/orm.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test cluster's `postgres` database, as a superuser. */
    pgAdminUrl: string;
    /** Name of the run's migrated template database (to copy, never to connect to). */
    pgTemplate: string;
  }
}

interface Shared {
  refs: number;
  url: Promise<string>;
  template: Promise<string>;
  stop: () => Promise<void>;
}

const KEY = Symbol.for('secret-push.test-postgres');
type Holder = { [KEY]?: Shared };

/** Runs statements, one after the other, as the cluster's superuser. */
async function admin(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates and migrates the run's template database, then closes it to connections (a copy needs it idle). */
async function makeTemplate(url: string): Promise<string> {
  const name = `sp_template_${randomBytes(6).toString('hex')}`;
  await admin(url, [`CREATE DATABASE ${name}`]);
  await migrateDatabase(withDatabase(url, name));
  await admin(url, [`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`]);
  return name;
}

async function dropTemplate(url: string, name: string): Promise<void> {
  await admin(url, [`ALTER DATABASE ${name} WITH IS_TEMPLATE false`, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]);
}

async function start(): Promise<{ url: string; stop: () => Promise<void> }> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) return { url: external, stop: async () => {} };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-test-'));
  chmodSync(dir, 0o755); // the postgres user must be able to enter it
  // Every test file opens its own pools (several Cores each), and projects run side by side.
  const db = await startEmbeddedPostgres({ dataDir: dir, maxConnections: 400 });
  await admin(db.adminUrl, [
    'ALTER SYSTEM SET fsync = off',
    'ALTER SYSTEM SET synchronous_commit = off',
    'ALTER SYSTEM SET full_page_writes = off',
    'SELECT pg_reload_conf()',
  ]);
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
    const template = started.then((s) => makeTemplate(s.url));
    holder[KEY] = {
      refs: 0,
      url: started.then((s) => s.url),
      template,
      stop: async () => {
        const s = await started;
        const name = await template.catch(() => null);
        if (name && process.env.TEST_DATABASE_URL) await dropTemplate(s.url, name);
        await s.stop();
      },
    };
  }
  const shared = holder[KEY];
  shared.refs += 1;
  const url = await shared.url;
  const template = await shared.template;
  process.env.SECRET_PUSH_TEST_PG_URL = url;
  process.env.SECRET_PUSH_TEST_PG_TEMPLATE = template;
  project.provide('pgAdminUrl', url);
  project.provide('pgTemplate', template);
  return async () => {
    shared.refs -= 1;
    if (shared.refs === 0) {
      delete holder[KEY];
      await shared.stop();
    }
  };
}
