/**
 * The parity suite against the stateful msw mock (msw/node `setupServer`), plus the mock's own controls.
 */
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe } from 'vitest';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { defineEndToEndParitySuite } from './e2e-suite.js';
import { defineParitySuite, type ParityTarget } from './suite.js';

const baseUrl = 'http://secret-push.mock.test';
const mock = createMockServerHandlers({ baseUrl });
const server = setupServer(...mock.handlers);

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());

const target = (): ParityTarget => ({
  name: 'mock',
  baseUrl,
  tokenA: mock.users[0]!.token,
  tokenB: mock.users[1]!.token,
  emailA: mock.users[0]!.email,
  setClock: (date) => mock.setClock(date),
  now: () => mock.now(),
});

describe('parity: stateful mock', () => {
  defineParitySuite(target);
  defineEndToEndParitySuite(target);
});
