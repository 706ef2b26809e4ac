/**
 * Issue 23, the delivery's limits, against real endpoints on loopback (PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true lets the
 * server reach them): a redirect is a failure and is not followed (the target it names sees nothing); an answer is
 * read to 64 KB at most (an endpoint that streams megabytes has its connection cut early, the 2xx still counts); an
 * endpoint that never answers fails the try after 10 s.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook, listWebhookDeliveries, testWebhook, type WebhookDelivery } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData } from '../api/support/sdk.js';

interface Endpoint {
  url: string;
  hits: number;
  /** Bytes of answer the endpoint got onto the socket before the server hung up. */
  written: number;
  stop(): Promise<void>;
}

/** A loopback endpoint that answers every request with `answer`. */
async function endpoint(answer: (res: http.ServerResponse, self: Endpoint) => void): Promise<Endpoint> {
  const self: Endpoint = { url: '', hits: 0, written: 0, stop: async () => undefined };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      self.hits++;
      answer(res, self);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  self.stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return self;
}

let api: RealApi;
let auth: ReturnType<typeof bearer>;

beforeAll(async () => {
  // One try only: the first outcome is the delivery's last.
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: true, retrySchedule: [] } },
    { core: { queue: { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 } } },
  );
  auth = bearer((await api.user('limits@example.org')).token);
});

afterAll(async () => {
  await api?.stop();
});

/** Registers `url`, sends it a test event and waits until that delivery has made a try. */
async function oneTry(url: string, timeoutMs = 30_000): Promise<WebhookDelivery> {
  const hook = expectData(
    await createWebhook({ client: api.client, auth, body: { webhook: { url, events: ['push.viewed'] } } }),
    201,
  );
  expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { deliveries } = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } }));
    const tried = deliveries.find((d) => d.attempts > 0 && d.status !== 'pending');
    if (tried) return tried;
    if (Date.now() > end) throw new Error(`no try of ${url} within ${timeoutMs} ms: ${JSON.stringify(deliveries)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a delivery’s limits', () => {
  it('does not follow a redirect: the try fails with its status, and the target it names sees nothing', async () => {
    const elsewhere = await endpoint((res) => res.end('ok'));
    const redirecting = await endpoint((res) => {
      res.writeHead(307, { location: elsewhere.url });
      res.end();
    });
    try {
      const delivery = await oneTry(redirecting.url);
      expect(delivery).toMatchObject({ status: 'failed', last_status_code: 307, delivered_at: null });
      expect(delivery.last_error).toMatch(/307/);
      expect(redirecting.hits).toBe(1);
      expect(elsewhere.hits).toBe(0);
    } finally {
      await redirecting.stop();
      await elsewhere.stop();
    }
  });

  it('reads at most 64 KB of an answer: a 2xx that streams megabytes is cut short and still counts', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    const streaming = await endpoint((res, self) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // Up to 8 MB, a chunk whenever the socket drains; stops as soon as the server hangs up.
      const pump = () => {
        while (self.written < 8 * 1024 * 1024 && !res.destroyed) {
          self.written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    try {
      const delivery = await oneTry(streaming.url);
      expect(delivery).toMatchObject({ status: 'delivered', last_status_code: 200, last_error: null });
      // The server hung up long before the 8 MB (socket buffers let some megabytes at most through).
      await new Promise((r) => setTimeout(r, 300));
      expect(streaming.written).toBeLessThan(8 * 1024 * 1024);
    } finally {
      await streaming.stop();
    }
  });

  it('fails a try that gets no answer within 10 s', async () => {
    const silent = await endpoint(() => undefined);
    try {
      const started = Date.now();
      const delivery = await oneTry(silent.url, 40_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
      expect(delivery).toMatchObject({ status: 'failed', last_status_code: null, delivered_at: null });
      expect(delivery.last_error).toMatch(/timeout/);
      expect(silent.hits).toBe(1);
    } finally {
      await silent.stop();
    }
  }, 60_000);
});
