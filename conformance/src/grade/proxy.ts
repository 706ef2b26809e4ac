/**
 * A small HTTP proxy that sits between the suite and a correct implementation and injects one fault: it forwards
 * every request upstream, lets the fault change the request before and the answer after, and keeps a journal of
 * the pushes made through it (who made each, what was asked) so that faults can model stateful server bugs
 * (an owner's view that counts, an option that is ignored, a payload served after expiry), and of the webhooks
 * registered through it (their owner and secrets), whose deliveries the grader's relay carries past the fault
 * (relay.ts). A delivery as a fault sees it (`Delivery`) is described here, below the relay that carries it, since
 * the faults' hooks name it.
 *
 * Links the upstream builds from the Host it was sent (json_url, html_url, Link, download urls) are rewritten to
 * the proxy's own origin, so the suite keeps talking to the proxy.
 */
import {
  createServer,
  request as httpRequest,
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { v1Contract } from '../context.js';
import type { Contract } from '../spec.js';

export type Headers = Record<string, string>;

/** One try of requestWhole: the answer read whole, or the error marked with whether its socket was a reused one. */
function requestOnce(start: () => ClientRequest, body: Buffer): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const req = start();
    let answered = false;
    req.on('response', (res: IncomingMessage) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 502,
          headers: { ...res.headers } as Upstream['headers'],
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', (error) =>
      reject(Object.assign(error, { beforeAnswerOnReusedSocket: req.reusedSocket && !answered })),
    );
    req.end(body);
  });
}

/**
 * An HTTP request (made by `start`, not yet ended) with `body`, its answer read whole. A kept-alive socket the other
 * side closed while it sat idle (its keep-alive timeout, which a loaded machine can let pass before this side
 * notices) fails the request before any answer: it is sent again once on a new socket, as Node's documentation
 * advises (`request.reusedSocket`), so that a fault-free run never sees a 502 of the proxy's or the relay's making.
 */
async function requestWhole(start: () => ClientRequest, body: Buffer): Promise<Upstream> {
  try {
    return await requestOnce(start, body);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!(error as { beforeAnswerOnReusedSocket?: boolean }).beforeAnswerOnReusedSocket) throw error;
    if (code !== 'ECONNRESET' && code !== 'EPIPE') throw error;
    return requestOnce(start, body);
  }
}

/** What an upstream answered. */
export interface Upstream {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** A push made through the proxy, as the client asked for it. */
export interface Journaled {
  /** The `push` object the client sent (before any fault changed it). */
  input: Record<string, any>;
  /** Who made it: `token:<token>` or `anon` (see `identityOf`). */
  owner: string;
  /** The create answer as the client received it. */
  created: Record<string, any>;
}

/** What the proxy shares with a fault over one run. */
export interface ProxyEnv {
  /** Pushes made through the proxy, by url_token. */
  journal: Map<string, Journaled>;
  /**
   * Credentials of a caller that is not `identity` and may retrieve pushes (anonymous when the instance allows it,
   * else user A or B), for faults that spend a view behind the client's back; undefined when there is none.
   */
  otherCaller(identity: string): Headers | undefined;
  /** Webhooks registered through the proxy, by id (with the secrets its answers showed). */
  webhooks: Map<string, JournaledWebhook>;
  /**
   * The delivery relays (when the suite runs a webhook receiver): the proxy registers webhooks aimed at the receiver
   * with a relay's URL, so that deliveries pass the fault too (relay.ts).
   */
  relays?: DeliveryRelays;
}

export interface FaultHooks {
  /** Changes the request before it goes upstream (a server that ignores an option, a lenient parser). */
  request?(ex: Exchange): void | Promise<void>;
  /** Changes the answer before the client sees it (a wrong status, a dropped header, a leaked field). */
  response?(ex: Exchange): void | Promise<void>;
  /** Changes or drops a webhook delivery on its way to the receiver (a wrong signature, a leaked field). */
  delivery?(delivery: Delivery): void | Promise<void>;
}

const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'host',
  'accept-encoding',
];

/** The caller a request speaks for: its bearer or legacy token, else anonymous. */
export function identityOf(headers: Headers): string {
  const bearer = /^bearer\s+(\S+)/i.exec(headers.authorization ?? '')?.[1];
  const token = bearer ?? headers['x-user-token'];
  return token ? `token:${token}` : 'anon';
}

/**
 * Matches a request to an operation of the contract and a legacy v1 path (`/p.json`, `/p/{url_token}.json`,
 * `/api/v1/…`) to an operation of the v1 document, with the contracts' own route tables (`Contract.routes`: the
 * project's one `RouteTable`, the server's rules): a literal path before the template it also fits, 405 for a path
 * without the method, path parameters percent-decoded. A v2 path's `.json` suffix is dropped first, as the server does.
 */
export class Router {
  constructor(
    private readonly contract: Contract,
    private readonly v1: Contract = v1Contract(),
  ) {}

  /** The operationId, `methodNotAllowed` (the path exists), or `noRoute`; with the path parameters. */
  match(method: string, pathname: string): { op: string; params: Record<string, string> } {
    if (/^\/(api\/v1\/|[pfr](\.json|\/))/.test(pathname)) {
      const v1 = this.v1.routes.match(method, pathname);
      if (v1.kind === 'ok') return { op: v1.operation.operationId, params: v1.params };
      if (v1.kind === 'method_not_allowed') return { op: 'methodNotAllowed', params: {} };
    }
    const match = this.contract.routes.match(method, pathname.replace(/\.json$/, ''));
    if (match.kind === 'no_route') return { op: 'noRoute', params: {} };
    if (match.kind === 'method_not_allowed') return { op: 'methodNotAllowed', params: {} };
    return { op: match.operation.operationId, params: match.params };
  }
}

function parseJson(buffer: Buffer): any {
  if (buffer.length === 0) return undefined;
  try {
    return JSON.parse(buffer.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** One request and its answer, as a fault sees and changes them. */
export class Exchange {
  /** When the proxy received the request (ms, monotonic). */
  readonly arrivedAt = performance.now();
  status = 0;
  /** Response headers, lower-case names. */
  headers: Record<string, string | string[]> = {};
  body: Buffer = Buffer.alloc(0);
  /** The JSON body the client sent, before any fault changed it (undefined when none). */
  readonly sentJson: any;
  /** The caller the client's request speaks for (before any fault changed it). */
  readonly identity: string;

  constructor(
    readonly op: string,
    readonly params: Record<string, string>,
    readonly method: string,
    /** Path and query as sent upstream (a request hook may change the query). */
    readonly url: URL,
    /** Request headers, lower-case names (a request hook may change them). */
    public requestHeaders: Headers,
    public requestBody: Buffer,
    private readonly upstream: (method: string, url: URL, headers: Headers, body: Buffer) => Promise<Upstream>,
    readonly env: ProxyEnv,
  ) {
    this.sentJson = parseJson(requestBody);
    this.identity = identityOf(requestHeaders);
  }

  get requestJson(): any {
    return parseJson(this.requestBody);
  }

  set requestJson(value: unknown) {
    this.requestBody = Buffer.from(JSON.stringify(value));
  }

  /** The answer's JSON body (a fresh parse each time: change it, then assign it back). */
  get json(): any {
    return parseJson(this.body);
  }

  set json(value: unknown) {
    this.body = Buffer.from(JSON.stringify(value));
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** The push this exchange is about (path parameter), and what the journal knows of it. */
  get push(): Journaled | undefined {
    return this.params.url_token ? this.env.journal.get(this.params.url_token) : undefined;
  }

  /** True when the caller is the push's owner (anonymous creators own nothing). */
  get byOwner(): boolean {
    const owner = this.push?.owner;
    return owner !== undefined && owner !== 'anon' && owner === this.identity;
  }

  /** Sends a request upstream behind the client's back (this request again unless told otherwise), e.g. an extra view. */
  async send(
    opts: { method?: string; headers?: Headers; url?: URL; body?: Buffer } = {},
  ): Promise<Upstream & { json: any }> {
    const res = await this.upstream(
      opts.method ?? this.method,
      opts.url ?? this.url,
      opts.headers ?? this.requestHeaders,
      opts.body ?? this.requestBody,
    );
    return { ...res, json: parseJson(res.body) };
  }

  /** Answers the client with another upstream answer instead. */
  adopt(answer: Upstream): void {
    this.status = answer.status;
    this.headers = answer.headers;
    this.body = answer.body;
  }

  /**
   * Replaces the answer by an error body of the contract's shape, keeping the request id. Called from a request
   * hook, it answers without asking the upstream.
   */
  fail(status: number, code: string, error: string): void {
    const previous = this.json as { request_id?: string } | undefined;
    this.status = status;
    this.headers['content-type'] = 'application/json; charset=utf-8';
    this.json = { error, code, ...(previous?.request_id ? { request_id: previous.request_id } : {}) };
  }
}

/**
 * A webhook registration aimed at the receiver goes upstream with the relay's URL instead (relay.ts); returns the URL
 * the client asked for, when it was rewritten.
 */
async function relayWebhook(ex: Exchange, env: ProxyEnv): Promise<string | undefined> {
  const body = ex.requestJson;
  const url = body?.webhook?.url;
  if (ex.op !== 'createWebhook' || !env.relays || typeof url !== 'string') return undefined;
  const relayed = await env.relays.wrap(url);
  if (!relayed) return undefined;
  body.webhook.url = relayed;
  ex.requestJson = body;
  return url;
}

/** Keeps the journal of webhooks: who registered each, for which URL, and the secrets its answers showed. */
function journalWebhook(ex: Exchange, env: ProxyEnv, registered: string | undefined): void {
  const body = ex.json;
  if (typeof body?.id !== 'string' || typeof body.secret !== 'string') return;
  if (ex.op === 'createWebhook' && ex.status === 201) {
    const url = registered ? new URL(registered).href : String(ex.requestJson?.webhook?.url ?? '');
    env.webhooks.set(body.id, { id: body.id, owner: ex.identity, url, secrets: [body.secret] });
  } else if (ex.op === 'rotateWebhookSecret' && ex.status === 200) {
    const known = env.webhooks.get(body.id);
    if (known) known.secrets = [body.secret, known.secrets[0]!];
  }
}

export interface ProxyOptions {
  /** The implementation to put the fault in front of. */
  upstream: string;
  contract: Contract;
  hooks: FaultHooks;
  env: ProxyEnv;
}

export interface RunningProxy {
  url: string;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (a free port) in front of `upstream`. */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const upstreamUrl = new URL(options.upstream);
  const router = new Router(options.contract);
  const secure = upstreamUrl.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  let origin = '';

  /** One request upstream, read whole (see requestWhole). */
  const send = (method: string, url: URL, headers: Headers, body: Buffer): Promise<Upstream> => {
    const out: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.includes(k)) out[k] = v;
    out.host = upstreamUrl.host;
    if (body.length > 0 || !['GET', 'HEAD', 'DELETE'].includes(method)) out['content-length'] = body.length;
    const target = new URL(url.pathname + url.search, upstreamUrl);
    return requestWhole(() => (secure ? httpsRequest : httpRequest)(target, { method, headers: out, agent }), body);
  };

  const rewrite = (text: string) =>
    text
      .split(upstreamUrl.origin)
      .join(origin)
      .split(upstreamUrl.origin.replace(/\//g, '\\/'))
      .join(origin.replace(/\//g, '\\/'));

  /** Sends upstream and turns the upstream's links in the answer into the proxy's. */
  const exchange = async (method: string, url: URL, headers: Headers, body: Buffer): Promise<Upstream> => {
    const answer = await send(method, url, headers, body);
    const type = String(answer.headers['content-type'] ?? '');
    const relays = options.env.relays;
    if (/json|text/i.test(type)) {
      const text = rewrite(answer.body.toString('utf8'));
      answer.body = Buffer.from(relays ? relays.unwrap(text) : text);
    }
    for (const name of ['link', 'location']) {
      const value = answer.headers[name];
      if (typeof value === 'string') answer.headers[name] = rewrite(value);
    }
    return answer;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', origin);
    const headers: Headers = {};
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const { op, params } = router.match(req.method ?? 'GET', url.pathname);
    const ex = new Exchange(
      op,
      params,
      req.method ?? 'GET',
      url,
      headers,
      Buffer.concat(chunks),
      exchange,
      options.env,
    );
    await options.hooks.request?.(ex);
    const registered = ex.status === 0 ? await relayWebhook(ex, options.env) : undefined;
    if (ex.status === 0) {
      ex.adopt(await exchange(ex.method, ex.url, ex.requestHeaders, ex.requestBody));
    } else {
      // The request hook answered itself (a server that refuses before doing anything): the headers every answer has.
      const id = ex.requestHeaders['x-request-id'];
      ex.headers = {
        'cache-control': 'no-store',
        'x-request-id': id && /^[A-Za-z0-9._-]{1,128}$/.test(id) ? id : randomUUID(),
        ...ex.headers,
      };
    }
    if (op === 'createPush' && ex.status === 201) {
      const created = ex.json;
      const input = ex.sentJson?.push;
      if (created?.url_token && input && typeof input === 'object') {
        options.env.journal.set(created.url_token, { input, owner: ex.identity, created });
      }
    }
    journalWebhook(ex, options.env, registered);
    await options.hooks.response?.(ex);
    if (op === 'createPush' && ex.status === 201 && ex.json?.url_token) {
      const entry = options.env.journal.get(ex.json.url_token);
      if (entry) entry.created = ex.json;
    }
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(ex.headers)) if (!HOP_BY_HOP.includes(k) && v !== undefined) out[k] = v;
    out['content-length'] = String(ex.body.length);
    res.writeHead(ex.status, out);
    res.end(ex.body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `fault proxy: ${(error as Error).message}`, code: 'bad_gateway' }));
      } else res.destroy();
    });
  });
  // Idle connections stay open for a minute. The suite's client (undici) reuses a socket until shortly before the
  // server's keep-alive timeout; with Node's 5 s, a request after a pause of about 4 s (a webhook wait) could meet the
  // close on a loaded machine and fail with "fetch failed". No pause in a run comes near a minute.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

/** A webhook registered through the proxy (the grader's journal of webhooks). */
export interface JournaledWebhook {
  id: string;
  /** Who registered it: `token:<token>` (see `identityOf`). */
  owner: string;
  /** The URL the client registered (the receiver's), before the proxy put the relay's in. */
  url: string;
  /** The secrets the server signs with now, as its answers showed them: the current one, then the previous one. */
  secrets: string[];
}

/** A Standard Webhooks `v1` signature: base64 of HMAC-SHA256 of `id.timestamp.body`, keyed with the secret's bytes. */
export function standardSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** A fresh `webhook-id` of the shape the contract gives (`msg_` and 26 letters or digits). */
export function messageId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `msg_${[...randomBytes(26)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

/** One delivery on its way from the server to the receiver, as a fault sees and changes it. */
export class Delivery {
  /** Set (by `drop`, or to what a hook's own `forward()` got) to answer the server so, without forwarding again. */
  answer: Upstream | undefined;

  constructor(
    /** Path and query, as the server sent them (the same as at the receiver). */
    readonly path: string,
    /** Request headers, lower-case names. */
    public headers: Headers,
    public body: Buffer,
    /** The webhook this delivery is for, when the journal knows it. */
    readonly webhook: JournaledWebhook | undefined,
    private readonly target: URL,
    readonly env: ProxyEnv,
  ) {}

  /** The event (a fresh parse each time: change it, then assign it back and `sign()`). */
  get event(): any {
    try {
      return JSON.parse(this.body.toString('utf8'));
    } catch {
      return undefined;
    }
  }

  set event(value: unknown) {
    this.body = Buffer.from(JSON.stringify(value));
  }

  /**
   * Signs the delivery again after a change, as the server would have: `v1,` signatures under `secrets` (default: the
   * webhook's, as the journal knows them), made by `signer` (default: the Standard Webhooks signature).
   */
  sign(secrets = this.webhook?.secrets ?? [], signer = standardSignature): void {
    const id = this.headers['webhook-id'] ?? '';
    const timestamp = this.headers['webhook-timestamp'] ?? '';
    const body = this.body.toString('utf8');
    this.headers['webhook-signature'] = secrets.map((s) => `v1,${signer(s, id, timestamp, body)}`).join(' ');
  }

  /** The server's delivery never reaches the receiver: the server is answered 200, as if it had. */
  drop(): void {
    this.answer = { status: 200, headers: {}, body: Buffer.from('ok') };
  }

  /** Sends the delivery (as it is now) to the receiver. */
  forward(): Promise<Upstream> {
    const headers: Record<string, string | number> = { ...this.headers, 'content-length': this.body.length };
    delete headers.host;
    delete headers.connection;
    delete headers['transfer-encoding'];
    return requestWhole(() => httpRequest(new URL(this.path, this.target), { method: 'POST', headers }), this.body);
  }
}

/** The relays of one fault's run. */
export interface DeliveryRelays {
  /** The relay URL to register instead of `url`, when `url` is on the receiver's host (else undefined). */
  wrap(url: string): Promise<string | undefined>;
  /** `text` with every relay origin turned back into its receiver's origin (plain and JSON-escaped). */
  unwrap(text: string): string;
  close(): Promise<void>;
}
