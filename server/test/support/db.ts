/**
 * Test helpers: a fresh database per test file on the run's cluster (see ../global-setup.ts), settings for tests,
 * and direct SQL access for assertions about what is stored.
 *
 * createMigratedDatabase copies the run's migrated template (milliseconds) instead of migrating (seconds); every
 * Core made on it still runs the migrations at start, and finds none pending. createTestDatabase stays empty, for
 * the tests of the migrations themselves and of a first start.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { Settings } from '../../src/core.js';
import { defaultBrand } from '../../src/config/brand-settings.js';
import { migrate, openOrm } from '../../src/db/orm.js';

export function adminUrl(): string {
  let url: string | undefined;
  try {
    url = inject('pgAdminUrl');
  } catch {
    url = undefined;
  }
  url ??= process.env.SECRET_PUSH_TEST_PG_URL;
  if (!url) throw new Error('no test PostgreSQL: run through vitest with server/test/global-setup.ts');
  return url;
}

/** The run's migrated template database (../global-setup.ts), or null outside such a run. */
function templateName(): string | null {
  let name: string | undefined;
  try {
    name = inject('pgTemplate');
  } catch {
    name = undefined;
  }
  return name ?? process.env.SECRET_PUSH_TEST_PG_TEMPLATE ?? null;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface TestDatabase {
  name: string;
  url: string;
  /** Runs SQL on the test database (one statement, autocommit, on a connection of a small per-database pool). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** Creates an empty database with a random name on the test cluster. */
export function createTestDatabase(prefix = 'sp_test'): Promise<TestDatabase> {
  return newDatabase(prefix, null);
}

/** Creates a database with a random name on the test cluster, empty or as a copy of `template`. */
async function newDatabase(prefix: string, template: string | null): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    const from = template ? ` TEMPLATE ${admin.escapeIdentifier(template)}` : '';
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}${from}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl(), name);
  // A small pool per database, not a connection per call (issue 40): opening a PostgreSQL connection (a backend's
  // fork and its catalogue caches) cost 100–150 ms on the loaded 2-core machine, and files read the tables before
  // and after each request (workspace-role-matrix: 20 reads per test). Each call is still one statement on its own
  // (autocommit); a file that needs a session of its own (begin … commit, locks) opens its own pg.Client.
  // Idle connections close by themselves, so a file that never drops its database keeps no worker alive.
  const pool = new pg.Pool({ connectionString: url, max: 4, idleTimeoutMillis: 5_000, allowExitOnIdle: true });
  // An idle connection ended from the server's side (the database dropped WITH (FORCE)) is not the test's failure.
  pool.on('error', () => undefined);
  return {
    name,
    url,
    async query(sql, params) {
      return (await pool.query(sql, params as unknown[])).rows;
    },
    async drop() {
      if (!pool.ended) await pool.end();
      const admin2 = new pg.Client({ connectionString: adminUrl() });
      await admin2.connect();
      try {
        await admin2.query(`DROP DATABASE IF EXISTS ${admin2.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await admin2.end();
      }
    },
  };
}

/**
 * A fresh database with every migration applied and the job queue's schema installed, as a Core leaves it at its
 * first start: a copy of the run's template, or (outside a run of ../global-setup.ts) migrated here.
 */
export async function createMigratedDatabase(prefix = 'sp_test'): Promise<TestDatabase> {
  const template = templateName();
  if (template) return newDatabase(prefix, template);
  const db = await createTestDatabase(prefix);
  const orm = await openOrm(db.url, { poolMax: 2, noTimeouts: true });
  try {
    await migrate(orm);
  } finally {
    await orm.close(true);
  }
  return db;
}

export const TEST_KEY_A = { id: 'a', key: Buffer.alloc(32, 0xa1) };
export const TEST_KEY_B = { id: 'b', key: Buffer.alloc(32, 0xb2) };

/** Settings as loadSettings would give them in tests, with a fixed key; override anything. */
export function makeSettings(overrides: Partial<Settings> = {}): Settings {
  return {
    env: 'test',
    host: '127.0.0.1',
    port: 0,
    dataDir: path.join(os.tmpdir(), 'secret-push-test-data'),
    databaseUrl: null,
    publicBaseUrl: null,
    mode: 'full',
    trustProxy: false,
    logLevel: 'silent',
    allowAnonymous: true,
    enableFilePushes: true,
    enableUrlPushes: true,
    enableQrPushes: true,
    enableRequests: true,
    filesRequireAuth: true,
    fileMaxCount: 10,
    fileMaxBytes: 10 * 1024 * 1024,
    expireAfterDays: { default: 7, min: 1, max: 90 },
    expireAfterDurationMin: 0,
    expireAfterViews: { default: 5, min: 1, max: 100 },
    deletableByViewerDefault: true,
    retrievalStepDefault: false,
    passphraseAttemptsPerMinute: 5,
    clientEncryption: { enabled: true, default: false, required: false },
    rateLimitPerMinute: 0,
    anonymousStoragePerHour: 100 * 1024 * 1024,
    userStorageBytes: 1024 * 1024 * 1024,
    userOpenRequests: 100,
    bodyLimitBytes: 8 * 1024 * 1024,
    sweepIntervalSeconds: 30,
    purgeExpiredAfterDays: null,
    masterKeys: [TEST_KEY_A],
    signingSecret: Buffer.alloc(32, 0x5e),
    enableSignups: true,
    sessionLifetimeHours: 24,
    loginAttemptsPer15Minutes: 5,
    workers: 1,
    databasePoolSize: 10,
    metricsEnabled: false,
    metricsToken: null,
    corsOrigins: [],
    corsV1Create: true,
    brand: defaultBrand(),
    mail: {
      smtpUrl: null,
      from: 'Secret Push <no-reply@localhost>',
      notifyByEmail: true,
      notifyDailyLimit: 500,
      instanceName: 'Secret Push',
      attempts: 10,
      retrySeconds: 30,
    },
    oidc: null,
    require2fa: false,
    adminEmails: [],
    fileStorage: { kind: 'postgres' },
    // Off by default in tests: on, every core starts the job queue (its own connections and timers). The webhook
    // tests turn it on.
    webhooks: { enabled: false, allowPrivate: false, retrySchedule: [5, 300, 1800, 7200, 18000, 36000] },
    webhookBudget: { perAccount: 600, perAddress: 3000 },
    webhookCalls: { testsPerMinute: 5, redeliveriesPerMinute: 20 },
    ...overrides,
  };
}
