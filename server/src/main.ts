/**
 * The server process (`npm start` runs its compiled bundle, server/dist/main.js). Settings, then one of three roles:
 *
 * - **alone** (`PWPUSH_WORKERS=1`): the embedded PostgreSQL (when DATABASE_URL is not set) and the server, here.
 * - **primary** (`PWPUSH_WORKERS` > 1): the embedded PostgreSQL and the cluster of workers (runtime/primary.ts); it
 *   serves nothing itself.
 * - **worker** (forked by the primary, DATABASE_URL set by it): the server on the shared port (runtime/serve.ts).
 *
 * The embedded PostgreSQL is supervised: restarted when it exits unexpectedly. SIGTERM/SIGINT stop gracefully: every
 * server process drains (in-flight requests finish), then the database is stopped. The HTTP stack is loaded only where
 * it serves (a primary stays small).
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import {
  loadSettings,
  SettingsError,
  unknownVariables,
  unknownVariablesWarning,
  type Settings,
} from './config/settings.js';
import { startEmbeddedPostgres, type EmbeddedDatabase, type SupervisorEvent } from './db/embedded.js';
import { createLogger } from './runtime/logger.js';
import { createPrimaryMetrics } from './runtime/metrics.js';
import { WORKER_SLOT_ENV } from './runtime/primary.js';

const SHUTDOWN_GRACE_MS = 10_000;

function settingsOrExit(): Settings {
  try {
    return loadSettings(process.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`Secret Push cannot start: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Logs the supervisor's events: counts and reasons from PostgreSQL's own fatal line, never a URL or password. */
function logSupervisor(logger: Logger, event: SupervisorEvent, restarted: () => void): void {
  if (event.kind === 'exited')
    logger.error({ code: event.code, signal: event.signal }, 'embedded PostgreSQL exited unexpectedly; restarting it');
  else if (event.kind === 'restart_failed')
    logger.warn(
      { attempt: event.attempt, retry_in_ms: event.retryInMs, reason: event.reason },
      'embedded PostgreSQL did not restart yet',
    );
  else {
    restarted();
    logger.info({ attempt: event.attempt, down_ms: event.downMs }, 'embedded PostgreSQL restarted');
  }
}

/** A worker of the cluster: serves on the shared port until SIGTERM/SIGINT, or until the primary is gone. */
async function runWorker(settings: Settings, parent: Logger): Promise<void> {
  const slot = process.env[WORKER_SLOT_ENV] ?? '0';
  const logger = parent.child({ worker: Number(slot) });
  const [{ serve }, { workerChannel }, { windowCounter }] = await Promise.all([
    import('./runtime/serve.js'),
    import('./runtime/cluster-ipc.js'),
    import('./runtime/window-counter.js'),
  ]);
  let serving: Awaited<ReturnType<typeof serve>> | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    let code = 0;
    try {
      await serving?.drain(SHUTDOWN_GRACE_MS);
    } catch (error) {
      logger.error({ err: { name: (error as Error).name } }, 'error during shutdown');
      code = 1;
    }
    logger.flush();
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // The primary is gone (killed): nothing would restart this worker or count its limits; stop serving.
  process.on('disconnect', () => void stop('disconnect'));
  cluster.worker?.on('error', () => void stop('disconnect'));
  try {
    serving = await serve(settings, {
      logger,
      sweeper: slot === '0',
      worker: slot,
      ownSocket: process.platform === 'linux',
      channel: (collect) => workerChannel(collect, windowCounter()),
    });
  } catch (error) {
    console.error(`Secret Push worker ${slot} failed to start: ${messageOf(error)}`);
    logger.flush();
    process.exit(1);
  }
}

async function main(): Promise<void> {
  let settings = settingsOrExit();
  const logger = createLogger(settings);
  if (cluster.isWorker) return runWorker(settings, logger);
  // A mistyped setting would otherwise be silently ignored: name it, with the closest known name (never its value).
  const unknown = unknownVariablesWarning(process.env);
  if (unknown) logger.warn({ unknown_settings: unknownVariables(process.env) }, unknown);

  const alone = settings.workers === 1;
  const registry = new Registry();
  const metrics = createPrimaryMetrics(registry, alone || !settings.metricsEnabled ? null : 'primary');
  let embedded: EmbeddedDatabase | null = null;
  let stopServing: (() => Promise<void>) | null = null;
  let stopping = false;

  const shutdown = async (signal: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await stopServing?.();
      await embedded?.stop();
    } catch (error) {
      logger.error({ err: { name: (error as Error).name } }, 'error during shutdown');
      exitCode = exitCode || 1;
    } finally {
      logger.flush();
      process.exit(exitCode);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  let url: string;
  try {
    if (!settings.databaseUrl) {
      let restarted = () => {};
      embedded = await startEmbeddedPostgres({
        dataDir: settings.dataDir,
        supervise: { onEvent: (event) => logSupervisor(logger, event, () => restarted()) },
      });
      settings = { ...settings, databaseUrl: embedded.url };
      if (embedded.owner) restarted = metrics.watchEmbedded(embedded.up).restarted;
      logger.info({ port: embedded.port, owner: embedded.owner }, 'embedded PostgreSQL ready');
    }
    if (alone) {
      const { serve } = await import('./runtime/serve.js');
      const serving = await serve(settings, { logger, sweeper: true, worker: '0', registry });
      metrics.workers.set(1);
      stopServing = () => serving.drain(SHUTDOWN_GRACE_MS);
      url = serving.url;
    } else {
      const { startCluster } = await import('./runtime/primary.js');
      const running = startCluster(settings, {
        logger,
        databaseUrl: settings.databaseUrl!,
        metrics,
        graceMs: SHUTDOWN_GRACE_MS,
      });
      stopServing = running.stop;
      url = await running.ready;
    }
  } catch (error) {
    console.error(`Secret Push failed to start: ${messageOf(error)}`);
    await shutdown('startup-failure', 1);
    return;
  }

  logger.info({ workers: settings.workers, url }, 'listening');
  console.log(`Secret Push listening on ${url}${alone ? '' : ` (${settings.workers} workers)`}`);
  console.log(`API base: ${(settings.publicBaseUrl ?? url).replace(/\/+$/, '')}/api/v2`);
}

await main();
