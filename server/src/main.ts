/**
 * The server process: settings → database (embedded PostgreSQL when DATABASE_URL is not set) → core with the
 * sweeper → HTTP. SIGTERM/SIGINT stop accepting connections, let in-flight requests finish, then close everything.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { createApp } from './http/app.js';
import { loadSettings, SettingsError, type Settings } from './config/settings.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { createCore, type Core } from './core.js';
import { answerClientErrors } from './http/client-error.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let settings: Settings;
  try {
    settings = loadSettings(process.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`Secret Push cannot start: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const logger = pino({ level: settings.logLevel, base: { service: 'secret-push' } });

  let embedded: EmbeddedDatabase | null = null;
  let core: Core | null = null;
  let server: Server | null = null;
  let stopping = false;

  const shutdown = async (signal: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('in-flight requests did not finish in time; closing their connections');
      server?.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      if (server) {
        const s = server;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          // Idle keep-alive sockets would hold close() open; in-flight ones finish first.
          s.closeIdleConnections();
        });
      }
      await core?.close();
      await embedded?.stop();
    } catch (error) {
      logger.error({ err: { name: (error as Error).name } }, 'error during shutdown');
      exitCode = exitCode || 1;
    } finally {
      clearTimeout(force);
      logger.flush();
      process.exit(exitCode);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    if (!settings.databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: settings.dataDir });
      settings = { ...settings, databaseUrl: embedded.url };
      logger.info({ port: embedded.port, owner: embedded.owner }, 'embedded PostgreSQL ready');
    }
    const started = await createCore(settings, { sweeper: true, logger });
    core = started;
    const app = createApp(started, { logger });
    await app.locals.ready;
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(settings.port, settings.host, (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    // Keep-alive sockets outliving the load balancer's idle timeout cause spurious resets; keep the defaults sane.
    server.keepAliveTimeout = 5_000;
    server.requestTimeout = 120_000;
    answerClientErrors(server);
  } catch (error) {
    console.error(`Secret Push failed to start: ${error instanceof Error ? error.message : String(error)}`);
    await shutdown('startup-failure', 1);
    return;
  }

  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const shownHost = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
  const origin = `http://${shownHost}:${address.port}`;
  console.log(`Secret Push listening on ${origin}`);
  console.log(`API base: ${(settings.publicBaseUrl ?? origin).replace(/\/+$/, '')}/api/v2`);
}

await main();
