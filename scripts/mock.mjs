// `npm run mock`: serves the bundled spec's examples with Prism for frontend teams.
// Port from MOCK_PORT (default 4010), host from MOCK_HOST (default 127.0.0.1). Extra arguments go to Prism,
// e.g. `npm run mock -- --dynamic` for generated bodies instead of the named examples.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const port = process.env.MOCK_PORT ?? '4010';
const host = process.env.MOCK_HOST ?? '127.0.0.1';
const prism = `${root}node_modules/@stoplight/prism-cli/dist/index.js`;
const child = spawn(process.execPath, [prism, 'mock', `${root}openapi/bundled/openapi.json`, '-p', port, '-h', host, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
