/**
 * BENCH_WEBHOOK: the receiver of the bench's webhook deliveries (node:http on loopback, in the bench process), the
 * webhook registered through ours' API for the second bench user, and the delivery latency: for each delivery, the
 * instant it arrived minus its event's `timestamp` (the instant of the change, written in the same transaction).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BenchReceiver {
  url: string;
  /** Milliseconds from each event to its receipt. */
  latencies: number[];
  close(): Promise<void>;
}

export async function startBenchReceiver(): Promise<BenchReceiver> {
  const latencies: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = Date.now();
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
        latencies.push(arrived - Date.parse(event.timestamp));
      } catch {
        /* not counted */
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench`,
    latencies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Registers the webhook (push.created and push.viewed) of the owner `token` through a server of ours. */
export async function registerBenchWebhook(base: string, token: string, url: string): Promise<void> {
  const res = await fetch(`${base}/api/v2/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ webhook: { url, events: ['push.created', 'push.viewed'] } }),
  });
  if (res.status !== 201) throw new Error(`registering the bench webhook answered ${res.status}: ${await res.text()}`);
}

/** Waits (at most `timeoutMs`) until `expected` deliveries arrived; prints how many and their latency. */
export async function reportDeliveries(receiver: BenchReceiver, expected: number, timeoutMs = 180_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (receiver.latencies.length < expected && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
  const sorted = [...receiver.latencies].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  console.log(
    `Webhook deliveries: ${sorted.length} of ${expected} expected arrived; latency from event to receipt ` +
      `p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms, max ${pct(100).toFixed(0)} ms`,
  );
}
