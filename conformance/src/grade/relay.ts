/**
 * The grader's delivery relay. Webhook deliveries go from the server straight to the suite's receiver, not through
 * the proxy, so under `--grade` the proxy registers every webhook aimed at the receiver's host with a relay URL
 * instead (the same path and query on the relay's origin; one relay per receiver origin, on the receiver's host so
 * the target can reach it), and the relay forwards each delivery to the receiver and its answer back to the server.
 * On the way the fault may change the delivery (a wrong signature, another `webhook-id`, a leaked field), send it
 * twice, or drop it (the server is answered 200 and the receiver gets nothing). Answers that show a webhook's URL
 * are rewritten back to the receiver's, so the suite sees the URL it registered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Delivery, type DeliveryRelays, type FaultHooks, type Headers, type ProxyEnv, type Upstream } from './proxy.js';

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
