/**
 * A real HTTP receiver of webhooks on loopback (node:http): it records every request (headers and the body's bytes as
 * received) and answers with the statuses it is told, in order (then 200), so a test can make an endpoint fail and
 * recover. Each request is verified by the test with the `standardwebhooks` package, as a receiver would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

export interface Receiver {
  port: number;
  url: string;
  received: Received[];
  /** The statuses of the next answers, in order (afterwards 200). */
  answer(...statuses: number[]): void;
  /** While on, requests are read and recorded (status 0) but never answered: a delivery in flight. */
  hold(on: boolean): void;
  /** Waits until at least `count` requests arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  /** Verifies a request with the `standardwebhooks` package; returns the event (throws on a bad signature). */
  verify(secret: string, request: Received): unknown;
  stop(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const queue: number[] = [];
  let holding = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (holding) {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), status: 0 });
        return;
      }
      const status = queue.shift() ?? 200;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer: (...statuses) => void queue.push(...statuses),
    hold(on) {
      holding = on;
    },
    async waitFor(count, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > end) throw new Error(`${received.length} of ${count} webhook requests arrived`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return received;
    },
    verify: (secret, request) => new Webhook(secret).verify(request.body, request.headers),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
