// `npm run mock`: serves the bundled spec's examples with Prism for frontend teams.
// Port from MOCK_PORT (default 4010), host from MOCK_HOST (default 127.0.0.1); MOCK_API=v1 serves the legacy v1
// document (openapi/bundled/openapi-v1.json) instead of v2. Extra arguments go to Prism,
// e.g. `npm run mock -- --dynamic` for generated bodies instead of the named examples.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const port = process.env.MOCK_PORT ?? '4010';
const host = process.env.MOCK_HOST ?? '127.0.0.1';
const documents = { v2: 'openapi.json', v1: 'openapi-v1.json' };
const api = process.env.MOCK_API ?? 'v2';
if (!(api in documents)) {
  console.error(`MOCK_API must be one of ${Object.keys(documents).join(', ')}, not ${api}`);
  process.exit(2);
}
const prism = `${root}node_modules/@stoplight/prism-cli/dist/index.js`;
const child = spawn(process.execPath, [prism, 'mock', `${root}openapi/bundled/${documents[api]}`, '-p', port, '-h', host, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
