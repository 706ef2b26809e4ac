/**
 * The parity suite against the real server: createApp(createCore(settings)) on a fresh database of the run's
 * embedded PostgreSQL cluster.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { type RealServer, startRealServer } from '../support/real-server.js';
import { defineEndToEndParitySuite } from './e2e-suite.js';
import { defineParitySuite, type ParityTarget } from './suite.js';

let real: RealServer;

beforeAll(async () => {
  real = await startRealServer();
}, 120_000);
afterAll(async () => {
  await real?.close();
});

const target = (): ParityTarget => ({
  name: 'server',
  baseUrl: real.baseUrl,
  tokenA: real.users[0]!.token,
  tokenB: real.users[1]!.token,
  emailA: real.users[0]!.email,
  backdate: (urlToken, ms) => real.backdate(urlToken, ms),
});

describe('parity: real server', () => {
  defineParitySuite(target);
  defineEndToEndParitySuite(target);
});
