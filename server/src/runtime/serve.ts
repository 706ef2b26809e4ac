/**
 * One server process: the core (pool, sweeper when asked) and the HTTP app on the configured port, with its metrics.
 * main.ts runs it in the main process (`PWPUSH_WORKERS=1`) or in each cluster worker (./worker.ts), where the port is
 * shared and the per-client limit and the metrics go through the primary.
 *
 * `drain()` is the graceful stop: `/readyz` answers 503 at once (a load balancer stops sending), answers carry
 * `Connection: close`, the listener closes, in-flight requests finish (idle keep-alive sockets are closed; after
 * `graceMs` the rest are cut), then the pool and the sweeper stop.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ApiError } from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import { createCore } from '../core.js';
import { createApp } from '../http/app.js';
import { sendError } from '../http/errors.js';
import { state, type Part } from '../http/middleware.js';
import { targetPath } from '../http/request-target.js';
import type { WorkerChannel } from './cluster-ipc.js';
import { createServerMetrics, metricsMiddleware, type MetricsJson } from './metrics.js';
import { answerClientErrors } from '../http/client-error.js';

export interface ServeOptions {
  logger: Logger;
  /** Run the sweeper in this process (one process of a host does). */
  sweeper: boolean;
  /** This process's `worker` label in the metrics. */
  worker: string;
  /** The registry to add this process's metrics to (serving alone, main.ts shares it with the database's). */
  registry?: Registry;
  /**
   * Listen on a socket of this process's own with SO_REUSEPORT (Linux): the kernel spreads new connections over the
   * workers' sockets, instead of the primary accepting each one and handing it over (which costs the primary a round
   * trip per connection, and leaves a connection handed to a worker at the instant it dies hanging).
   */
  ownSocket?: boolean;
  /** Set in a cluster worker: the limit's counter and the metrics go through the primary. */
  channel?: (collect: () => Promise<MetricsJson>) => WorkerChannel;
}

export interface Serving {
  /** `http://host:port` as bound (0.0.0.0 shown as localhost). */
  url: string;
  server: Server;
  drain(graceMs: number): Promise<void>;
}

export async function serve(settings: Settings, opts: ServeOptions): Promise<Serving> {
  const { logger } = opts;
  // Metrics only when they are served: their collectors (GC observer, event-loop monitor, per-request series) cost.
  const metrics = settings.metricsEnabled ? createServerMetrics(opts.worker, opts.registry) : undefined;
  const channel = opts.channel?.(async () => (metrics ? metrics.registry.getMetricsAsJSON() : []));
  let listening!: () => void;
  const sweepAfter = new Promise<void>((resolve) => (listening = resolve));
  const core = await createCore(settings, {
    sweeper: opts.sweeper,
    sweepAfter,
    logger,
    poolMax: settings.databasePoolSize,
    metrics,
  });

  let draining = false;
  const recordAndScrape = metrics
    ? metricsMiddleware(metrics, settings, channel ? channel.scrape : () => metrics.registry.metrics())
    : undefined;
  const runtime: Part = (req, res, next) => {
    if (draining) {
      res.setHeader('Connection', 'close');
      if (targetPath(req.url ?? '') === '/readyz') {
        state(res).route = '/readyz';
        sendError(res, new ApiError('service_unavailable'), state(res).requestId);
        return;
      }
    }
    if (recordAndScrape) return recordAndScrape(req, res, next);
    next();
  };

  let server: Server;
  try {
    const app = createApp(core, { logger, runtime, ...(channel ? { rateLimitCounter: channel.hit } : {}) });
    await app.locals.ready;
    server = await new Promise<Server>((resolve, reject) => {
      const s = createServer(app);
      s.once('error', reject);
      s.listen(
        { port: settings.port, host: settings.host, ...(opts.ownSocket ? { reusePort: true, exclusive: true } : {}) },
        () => {
          s.off('error', reject);
          resolve(s);
        },
      );
    });
  } catch (error) {
    await core.close().catch(() => undefined);
    throw error;
  }
  // Keep-alive sockets outliving the load balancer's idle timeout cause spurious resets; keep the defaults sane.
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 120_000;
  answerClientErrors(server);

  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${address.port}`;
  channel?.listening(url);
  listening();

  let drained: Promise<void> | undefined;
  return {
    url,
    server,
    drain(graceMs) {
      drained ??= (async () => {
        draining = true;
        const force = setTimeout(() => {
          logger.error('in-flight requests did not finish in time; closing their connections');
          server.closeAllConnections();
        }, graceMs);
        force.unref();
        try {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            // Idle keep-alive sockets would hold close() open; in-flight ones finish first.
            server.closeIdleConnections();
          });
        } finally {
          clearTimeout(force);
        }
        await core.close();
      })();
      return drained;
    },
  };
}
