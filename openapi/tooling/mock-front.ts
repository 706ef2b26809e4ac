/**
 * The mock frontend teams build against (`npm run mock`): Prism on the bundled document, behind a small front that
 * makes it a stand-in for the server as a client sees it. Prism answers the named examples and validates requests;
 * the front, on the mock's public port, adds what static examples cannot say:
 *
 * - **CORS as the server sends it**: the contract's `x-cors` policy through the same decision (`corsAnswer`) and the
 *   same `cors` library as the server (server/src/http/cors.ts); preflights 204, the headers clients read exposed,
 *   never credentials, `POST /p.json` answering `*`. Origins: `MOCK_CORS_ORIGINS`, else `PWPUSH_CORS_ORIGINS`, else
 *   every origin (a development convenience, said at start-up). `Prefer` (Prism's example selector) is allowed too.
 *   Prism's own CORS (every origin, with credentials) is off.
 * - **Links at the mock's own origin**: the examples' `https://pwpush.example.org` becomes the origin the request
 *   came to, in bodies and in `Link` / `Location`, so `json_url`, `html_url` and file links lead back to the mock.
 * - **Lists that end**: every paged operation (a `page` parameter) has two pages, the example's items on page 1
 *   (`Link: <…?page=2>; rel="next"`) and none on page 2, the last (`rel="prev"` only), so iterators stop.
 * - **End-to-end creates**: a create whose body carries `client_encryption` answers the encrypted example
 *   (`CreatedEncryptedTextPush`, marked `client_encryption`), so the SDK's `endToEnd` accepts it.
 *
 * The process owns the public port and Prism is its child: SIGTERM / SIGINT close the port at once and stop Prism.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as netServer } from 'node:net';
import cors from 'cors';
import { contract, contractV1, corsAnswer, corsRules, type Contract, type CorsSettings } from '@secret-push/contract';

/** The origin the examples are written for; the front answers with the mock's own instead. */
export const EXAMPLE_ORIGIN = 'https://pwpush.example.org';
/** The example an end-to-end create answers (its record is marked `client_encryption`). */
export const ENCRYPTED_CREATE_EXAMPLE = 'CreatedEncryptedTextPush';

export interface MockOptions {
  port: number;
  host: string;
  /** `v2` (default) or `v1`: which bundled document Prism serves. */
  api?: 'v1' | 'v2';
  /** Exact origins, or `*` for every origin. */
  corsOrigins: readonly string[] | '*';
  /** Further arguments for Prism (`--dynamic`, …). */
  prismArgs?: string[];
  /** Where Prism's and the front's lines go (default: this process's stdout). */
  log?: (line: string) => void;
}

export interface RunningMock {
  baseUrl: string;
  close(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

/**
 * Starts Prism on a loopback port of its own and waits until it listens. Its own lines (one per route at start, its
 * internal port, several per request) are kept, not printed: the front prints one line with its own URL and one per
 * request. They are printed only when Prism fails to start or exits before the front closes it.
 */
async function startPrism(
  document: string,
  args: string[],
  log: (line: string) => void,
): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const cli = new URL('../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url);
  const child = spawn(
    process.execPath,
    [cli.pathname, 'mock', document, '-p', String(port), '-h', '127.0.0.1', '--cors=false', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let listening = false;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      // The last 64 KiB are enough to say why it stopped.
      output = (output + chunk.toString()).slice(-65_536);
      if (!listening && output.includes('Prism is listening')) {
        listening = true;
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      if (!listening) reject(new Error(`Prism exited (${code}) before listening:\n${output}`));
      else if (signal !== 'SIGTERM') log(`Prism stopped (${code ?? signal}); its last lines:\n${output.slice(-4096)}`);
    });
  });
  return { child, port };
}

/** The path's operation, if it takes a `page` query parameter (the lists and the audit log). */
function pagedOperation(c: Contract, method: string, path: string): boolean {
  const match = c.routes.match(method, path);
  if (match.kind !== 'ok') return false;
  return c.parameters(match.operation.operationId).some((p) => p.in === 'query' && p.name === 'page');
}

/** The body of the last page: the example's list emptied (a top-level array, or the arrays of an object). */
function emptied(body: unknown): unknown {
  if (Array.isArray(body)) return [];
  if (body && typeof body === 'object')
    return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, Array.isArray(v) ? [] : v]));
  return body;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Whether a JSON create body asks for an end-to-end encrypted push. */
function asksEndToEnd(contentType: string | undefined, body: Buffer): boolean {
  if (!contentType?.includes('json') || body.length === 0) return false;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { push?: { client_encryption?: unknown } };
    return parsed.push?.client_encryption != null;
  } catch {
    return false;
  }
}

/** What an error answer says, for the request's log line: ` (code: error)` or Prism's problem title; else nothing. */
function refusalOf(status: number, text: string | null): string {
  if (status < 400 || text === null) return '';
  try {
    const body = JSON.parse(text) as { code?: unknown; error?: unknown; title?: unknown; detail?: unknown };
    const said = [body.code, body.error ?? body.title].filter((v) => typeof v === 'string').join(': ');
    return said ? ` (${said.length > 160 ? `${said.slice(0, 159)}…` : said})` : '';
  } catch {
    return '';
  }
}

export async function startMock(options: MockOptions): Promise<RunningMock> {
  const log = options.log ?? ((line: string) => console.log(line));
  const api = options.api ?? 'v2';
  const c = api === 'v1' ? contractV1() : contract();
  const document = new URL(`../bundled/${api === 'v1' ? 'openapi-v1.json' : 'openapi.json'}`, import.meta.url).pathname;
  const rules = corsRules(contract().document);
  rules.allowedHeaders = [...rules.allowedHeaders, 'Prefer'];
  const everyOrigin = options.corsOrigins === '*';
  const settings: CorsSettings = {
    origins: options.corsOrigins === '*' ? [] : options.corsOrigins,
    anyOriginPaths: true,
  };
  const answerCors = cors((req, callback) => {
    const origin = req.headers.origin;
    const path = new URL((req as IncomingMessage).url ?? '/', 'http://mock').pathname;
    const choice = everyOrigin && origin !== undefined ? { ...settings, origins: [origin] } : settings;
    const answer = corsAnswer(rules, choice, {
      method: req.method ?? 'GET',
      path,
      origin,
      requestMethod: req.headers['access-control-request-method'] as string | undefined,
    });
    callback(null, answer ?? { origin: false });
  });

  const prism = await startPrism(document, options.prismArgs ?? [], log);

  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const ownOrigin = `http://${req.headers.host ?? `${options.host}:${options.port}`}`;
    const body = await readAll(req);
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: `127.0.0.1:${prism.port}` };
    delete headers.origin;
    // v2 paths answer with a `.json` suffix too (x-json-suffix); v1 paths are written with theirs.
    const opPath = api === 'v2' ? url.pathname.replace(/\.json$/, '') : url.pathname;
    const match = c.routes.match(req.method ?? 'GET', opPath);
    if (
      match.kind === 'ok' &&
      match.operation.operationId === 'createPush' &&
      !headers.prefer &&
      asksEndToEnd(req.headers['content-type'], body)
    ) {
      headers.prefer = `example=${ENCRYPTED_CREATE_EXAMPLE}`;
    }
    const paged = req.method === 'GET' && pagedOperation(c, 'GET', opPath);
    const page = Number(url.searchParams.get('page') ?? '1');
    const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
      // Prism knows no `.json` suffix (x-json-suffix): v2 requests go to it without one, as the server reads them.
      const out = httpRequest(
        { host: '127.0.0.1', port: prism.port, method: req.method, path: `${opPath}${url.search}`, headers },
        resolve,
      );
      out.on('error', reject);
      out.end(body);
    });
    const raw = await readAll(upstream);
    const outHeaders: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value === undefined || ['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name))
        continue;
      if (name.startsWith('access-control-') || name === 'vary') continue;
      outHeaders[name] = Array.isArray(value)
        ? value.map((v) => v.replaceAll(EXAMPLE_ORIGIN, ownOrigin))
        : value.replaceAll(EXAMPLE_ORIGIN, ownOrigin);
    }
    let text = (upstream.headers['content-type'] ?? '').includes('json')
      ? raw.toString('utf8').replaceAll(EXAMPLE_ORIGIN, ownOrigin)
      : null;
    if (paged && upstream.statusCode === 200 && text !== null && Number.isInteger(page) && page >= 1) {
      const listUrl = `${ownOrigin}${url.pathname}`;
      if (page >= 2) text = JSON.stringify(emptied(JSON.parse(text)));
      outHeaders.link = page === 1 ? `<${listUrl}?page=2>; rel="next"` : `<${listUrl}?page=${page - 1}>; rel="prev"`;
    }
    const bytes = text === null ? raw : Buffer.from(text, 'utf8');
    const status = upstream.statusCode ?? 502;
    res.writeHead(status, { ...outHeaders, 'content-length': String(bytes.length) });
    res.end(bytes);
    log(`${req.method} ${url.pathname} → ${status}${refusalOf(status, text)}`);
  };

  const server: Server = createServer((req, res) => {
    answerCors(req, res, (error?: unknown) => {
      if (error) {
        res.writeHead(500).end();
        return;
      }
      if (req.headers.origin !== undefined && (settings.origins.length > 0 || everyOrigin))
        res.setHeader('Vary', 'Origin');
      forward(req, res).catch((failure: unknown) => {
        log(`mock front: ${(failure as Error).message}`);
        if (!res.headersSent)
          res
            .writeHead(502, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: 'The mock failed.', code: 'internal_error' }));
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  const baseUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  const corsNote = everyOrigin
    ? 'every origin; MOCK_CORS_ORIGINS=<your app’s origin> answers as the server will'
    : settings.origins.join(', ') || 'no origin';
  log(`Mock listening on ${baseUrl} (the ${api} API's examples; CORS: ${corsNote}); one line per request follows`);

  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        prism.child.kill('SIGTERM');
      });
      return closing;
    },
  };
}
