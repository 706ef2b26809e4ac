/**
 * The mock as a process for tests, exactly as `npm run mock` runs it (scripts/mock.ts: Prism behind its front,
 * ./mock-front.ts), on a free local port, for the v2 document or, with `api: 'v1'`, the v1 one.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface PrismProcess {
  baseUrl: string;
  stop(): void;
  /** Everything the process printed. */
  output(): string;
}

/** The command line of `npm run mock` (package.json), without its `exec`. */
export const MOCK_COMMAND = [
  process.execPath,
  '--conditions=@secret-push/source',
  '--import',
  'tsx',
  'scripts/mock.ts',
] as const;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Starts Prism and resolves once it listens (it takes a while to load the document); fails with its output. */
export async function startPrism(
  options: { api?: 'v1'; timeoutMs?: number; corsOrigins?: string } = {},
): Promise<PrismProcess> {
  const port = await freePort();
  const [command, ...args] = MOCK_COMMAND;
  const prism = spawn(command, args, {
    cwd: root,
    env: {
      ...process.env,
      MOCK_PORT: String(port),
      MOCK_HOST: '127.0.0.1',
      ...(options.api ? { MOCK_API: options.api } : {}),
      ...(options.corsOrigins !== undefined ? { MOCK_CORS_ORIGINS: options.corsOrigins } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  prism.stdout!.on('data', (d) => (log += d));
  prism.stderr!.on('data', (d) => (log += d));
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  while (!log.includes('Mock listening on')) {
    if (prism.exitCode !== null || Date.now() > deadline) {
      prism.kill('SIGTERM');
      throw new Error(`Prism did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => prism.kill('SIGTERM'), output: () => log };
}
