/**
 * The domain's entry point. `createCore(settings)` connects to `settings.databaseUrl` (main.ts and the tests start
 * the embedded PostgreSQL first when there is no DATABASE_URL, and pass its url in), applies the migrations and
 * returns the services of contract.ts.
 *
 * Database outages: every service method, `ping()` and `sweep()` throw `DomainError('service_unavailable')` when
 * PostgreSQL cannot be reached (connection refused/reset/timeout, server shutting down); `createCore` itself lets
 * the original connection error surface (start-up should fail loudly).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../config/settings.js';
import { createKeyring } from '../crypto/envelope.js';
import { migrate, openOrm } from '../db/orm.js';
import type { Core, Settings, VersionReport } from './contract.js';
import { guard, guarded } from './database-errors.js';
import { createPushService } from './push-service.js';
import { sweep as runSweep } from './sweeper.js';
import { createUserService } from './user-service.js';
import { createWebServices } from './web-services.js';

export * from './contract.js';
export { isConnectionError } from './database-errors.js';

export interface CoreOptions {
  /** Run the sweeper every `settings.sweepIntervalSeconds` (and once at start). Default false. */
  sweeper?: boolean;
  /** Where the sweeper reports counts and failures (never secrets). Default: silent. */
  logger?: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Size of the connection pool (default 10). */
  poolMax?: number;
}

export const API_VERSION = '2.1';

function applicationVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

export function versionReport(settings: Settings, version = applicationVersion()): VersionReport {
  return {
    application_version: version,
    api_version: API_VERSION,
    edition: 'oss',
    features: {
      anonymous_access: settings.allowAnonymous,
      api_token_authentication: true,
      accounts: { enabled: false },
      pushes: {
        enabled: true,
        email_auto_dispatch: false,
        file_attachments: { enabled: settings.enableFilePushes, requires_authentication: settings.filesRequireAuth },
        url_pushes: { enabled: settings.enableUrlPushes },
        qr_code_pushes: { enabled: settings.enableQrPushes },
      },
      requests: { enabled: false },
    },
  };
}

export async function createCore(settings: Settings, opts: CoreOptions = {}): Promise<Core> {
  if (!settings.databaseUrl) {
    throw new Error('settings.databaseUrl is not set: start the embedded PostgreSQL (startEmbeddedPostgres) and pass its url');
  }
  const keyring = createKeyring(settings.masterKeys);
  const orm = await openOrm(settings.databaseUrl, { poolMax: opts.poolMax });
  try {
    await migrate(orm);
  } catch (err) {
    await orm.close(true).catch(() => undefined);
    throw err;
  }

  const pushes = guarded(createPushService({ orm, settings, keyring }));
  const users = guarded(createUserService(orm));
  const report = versionReport(settings);

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  let closed = false;

  const sweepOnce = (now?: Date) =>
    guard(async () => {
      const result = await runSweep(orm, settings, now ?? new Date());
      if (result.erasedPushes + result.erasedFiles + result.purgedPushes > 0) opts.logger?.info(result, 'sweep');
      return result;
    });

  const tick = () => {
    if (running || closed) return;
    running = sweepOnce()
      .catch((err: unknown) => {
        opts.logger?.error({ err: err instanceof Error ? { name: err.name, code: (err as { code?: string }).code } : {} }, 'sweep failed');
      })
      .finally(() => {
        running = null;
      });
  };

  if (opts.sweeper) {
    timer = setInterval(tick, settings.sweepIntervalSeconds * 1000);
    timer.unref();
    tick();
  }

  return {
    settings,
    pushes,
    users,
    web: createWebServices(orm, settings),
    version: () => structuredClone(report),
    ping: () =>
      guard(async () => {
        await orm.em.fork().getConnection().execute('select 1');
      }),
    sweep: async (now?: Date) => {
      const { erasedPushes, erasedFiles } = await sweepOnce(now);
      return { erasedPushes, erasedFiles };
    },
    close: async () => {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await running;
      await orm.close(true);
    },
  };
}
