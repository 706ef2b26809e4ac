/**
 * `npm run mock`: the Prism mock of the bundled spec behind its front (openapi/tooling/mock-front.ts), for frontend
 * teams. Port from MOCK_PORT (default 4010), host from MOCK_HOST (default 127.0.0.1); MOCK_API=v1 serves the legacy v1
 * document instead of v2; MOCK_CORS_ORIGINS (else PWPUSH_CORS_ORIGINS, else every origin) are the origins that get
 * CORS headers. Extra arguments go to Prism, e.g. `npm run mock -- --dynamic` for generated bodies instead of the
 * named examples. The npm script `exec`s this process (no shell in between): SIGTERM or SIGINT closes the port at
 * once and stops Prism.
 */
import { startMock } from '../openapi/tooling/mock-front.js';

const api = process.env.MOCK_API ?? 'v2';
if (api !== 'v1' && api !== 'v2') {
  console.error(`MOCK_API must be one of v2, v1, not ${api}`);
  process.exit(2);
}
const port = Number(process.env.MOCK_PORT ?? '4010');
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`MOCK_PORT must be a port number, not ${process.env.MOCK_PORT}`);
  process.exit(2);
}
const originsText = (process.env.MOCK_CORS_ORIGINS ?? process.env.PWPUSH_CORS_ORIGINS ?? '*').trim();
const corsOrigins =
  originsText === '*'
    ? '*'
    : originsText
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean)
        .map((o) => new URL(o).origin);

try {
  const mock = await startMock({
    port,
    host: process.env.MOCK_HOST ?? '127.0.0.1',
    api,
    corsOrigins,
    prismArgs: process.argv.slice(2),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void mock.close().then(() => process.exit(0));
    });
  }
} catch (error) {
  console.error(`The mock did not start: ${(error as Error).message}`);
  process.exit(1);
}
