/** Mounts createApp on an ephemeral loopback port, with every log line captured and every response spec-checked. */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { createApp } from '../../../src/http/app.js';
import type { Core } from '../../../src/core.js';
import { createClient, type Client } from '@secret-push/sdk/generated/client';
import { SpecChecker } from './spec-check.js';
import { answerClientErrors } from '../../../src/http/client-error.js';
import { reserveAddress } from '../../support/address.js';

export interface Served {
  baseUrl: string;
  client: Client;
  checker: SpecChecker;
  /** Every log line the app wrote (level trace and up). */
  logs: string[];
  /** A raw request through the spec-checking fetch (for bodies the SDK would never send). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw JSON answer, whatever its shape
  raw(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

export async function serve(
  core: Core,
  opts: { clientHeaders?: Record<string, string>; clock?: () => Date; server?: Server } = {},
): Promise<Served> {
  const logs: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) });
  const app = createApp(core, { logger, validateResponses: true, clock: opts.clock });
  await app.locals.ready;
  const server = opts.server ?? (await reserveAddress()).server;
  server.on('request', app);
  answerClientErrors(server);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const checker = await SpecChecker.create();
  const checkedFetch = checker.fetch();
  const client = createClient({ baseUrl, fetch: checkedFetch, headers: opts.clientHeaders });
  return {
    baseUrl,
    client,
    checker,
    logs,
    async raw(path, init) {
      const response = await checkedFetch(`${baseUrl}${path}`, init);
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: response.status, headers: response.headers, body };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
