/**
 * The webhook receiver of the HOOK class: an HTTP server the target can reach (`--webhook-receiver host:port`), on
 * which each requirement listens on a path of its own. It records every request (its headers and the body's bytes as
 * received) and answers with the statuses a requirement asks for, in order (then 200). The suite verifies signatures
 * itself (Standard Webhooks: HMAC-SHA256 with node:crypto), from the specification, not from any SDK.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  headers: Record<string, string>;
  body: string;
  status: number;
  at: number;
}

export interface WebhookReceiver {
  /** The URL a requirement registers: `http://host:port/<path>`. */
  url(path: string): string;
  /** The statuses of the next answers on `path`, in order (afterwards 200). */
  answer(path: string, ...statuses: number[]): void;
  /** The requests on `path` once there are `count` of them (or what arrived by `timeoutMs`). */
  waitFor(path: string, count: number, timeoutMs: number): Promise<ReceivedHook[]>;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

export async function startWebhookReceiver(host: string, port: number): Promise<WebhookReceiver> {
  const received = new Map<string, ReceivedHook[]>();
  const plans = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/^\/+/, '');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const status = plans.get(path)?.shift() ?? 200;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const list = received.get(path) ?? [];
      list.push({ headers, body: Buffer.concat(chunks).toString('utf8'), status, at: Date.now() });
      received.set(path, list);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  return {
    url: (path) => `${origin}/${path}`,
    answer: (path, ...statuses) => void plans.set(path, [...(plans.get(path) ?? []), ...statuses]),
    async waitFor(path, count, timeoutMs) {
      const end = Date.now() + timeoutMs;
      while ((received.get(path)?.length ?? 0) < count && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 100));
      }
      return [...(received.get(path) ?? [])];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Whether one `v1,` signature of the request is HMAC-SHA256 of `id.timestamp.body` under the `whsec_` secret. */
export function signatureValid(secret: string, hook: ReceivedHook): boolean {
  const id = hook.headers['webhook-id'];
  const timestamp = hook.headers['webhook-timestamp'];
  const signatures = hook.headers['webhook-signature'];
  if (!id || !timestamp || !signatures || !secret.startsWith('whsec_')) return false;
  const key = Buffer.from(secret.slice(6), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${hook.body}`).digest();
  return signatures.split(' ').some((s) => {
    if (!s.startsWith('v1,')) return false;
    const given = Buffer.from(s.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
