/**
 * The grader's delivery relay. Webhook deliveries go from the server straight to the suite's receiver, not through
 * the proxy, so under `--grade` the proxy registers every webhook aimed at the receiver's host with a relay URL
 * instead (the same path and query on the relay's origin; one relay per receiver origin, on the receiver's host so
 * the target can reach it), and the relay forwards each delivery to the receiver and its answer back to the server.
 * On the way the fault may change the delivery (a wrong signature, another `webhook-id`, a leaked field), send it
 * twice, or drop it (the server is answered 200 and the receiver gets nothing). Answers that show a webhook's URL
 * are rewritten back to the receiver's, so the suite sees the URL it registered.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestWhole, type FaultHooks, type Headers, type ProxyEnv, type Upstream } from './proxy.js';

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

interface Relay {
  origin: string;
  server: Server;
}

/** Relays for deliveries to `host` (the receiver's host), each started on a free port of it when first needed. */
export function startDeliveryRelays(host: string, hooks: FaultHooks, env: ProxyEnv): DeliveryRelays {
  const relays = new Map<string, Promise<Relay>>();
  const bare = host.replace(/^\[|\]$/g, '');

  async function start(target: URL): Promise<Relay> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Headers = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        const path = req.url ?? '/';
        const webhook = [...env.webhooks.values()].find((w) => w.url === new URL(path, target).href);
        const delivery = new Delivery(path, headers, Buffer.concat(chunks), webhook, target, env);
        const answer = async (): Promise<Upstream> => {
          await hooks.delivery?.(delivery);
          return delivery.answer ?? delivery.forward();
        };
        answer().then(
          (a) => res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body),
          (error: unknown) => res.writeHead(502, { 'content-type': 'text/plain' }).end((error as Error).message),
        );
      });
    });
    server.keepAliveTimeout = 60_000; // as the proxy's: the sender never reuses a socket the relay is closing
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, bare, resolve);
    });
    const port = (server.address() as AddressInfo).port;
    return { origin: `http://${bare.includes(':') ? `[${bare}]` : bare}:${port}`, server };
  }

  const targets = new Map<string, string>();
  return {
    async wrap(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return undefined;
      }
      if (parsed.protocol !== 'http:' || parsed.hostname.replace(/^\[|\]$/g, '') !== bare) return undefined;
      const target = new URL(parsed.origin);
      let relay = relays.get(target.origin);
      if (!relay) relays.set(target.origin, (relay = start(target)));
      const { origin } = await relay;
      targets.set(origin, target.origin);
      return origin + parsed.pathname + parsed.search;
    },
    unwrap(text) {
      let out = text;
      for (const [relay, target] of targets) {
        out = out.split(relay).join(target).split(relay.replace(/\//g, '\\/')).join(target.replace(/\//g, '\\/'));
      }
      return out;
    },
    async close() {
      for (const relay of relays.values()) {
        const server = (await relay.catch(() => undefined))?.server;
        if (!server) continue;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
