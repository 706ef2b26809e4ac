/**
 * BENCH_WEBHOOK: the receiver of the bench's webhook deliveries (node:http on loopback, in the bench process), the
 * webhook registered through ours' API for the second bench user, and the delivery latency: for each delivery, the
 * instant it arrived minus its event's `timestamp` (the instant of the change, written in the same transaction).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

export interface BenchReceiver {
  url: string;
  /** Each first receipt of a `webhook-id`: the push its event names, and the milliseconds from the event to it. */
  receipts: { pushId: string; ms: number }[];
  /** Receipts of a `webhook-id` that had arrived before (a delivery sent again). */
  duplicates: number;
  close(): Promise<void>;
}

export async function startBenchReceiver(): Promise<BenchReceiver> {
  const receipts: { pushId: string; ms: number }[] = [];
  const seen = new Set<string>();
  const receiver = { duplicates: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = Date.now();
      const id = String(req.headers['webhook-id']);
      if (seen.has(id)) {
        receiver.duplicates++;
        res.writeHead(204).end();
        return;
      }
      seen.add(id);
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          timestamp: string;
          data: { push_id: string };
        };
        receipts.push({ pushId: event.data.push_id, ms: arrived - Date.parse(event.timestamp) });
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
    receipts,
    get duplicates() {
      return receiver.duplicates;
    },
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

/**
 * Waits (at most `timeoutMs`) until the deliveries `expected` (by server) arrived; prints, for each server, how many
 * and their latency. Every server of a run shares the database, so each one sends the deliveries of the pushes it made:
 * a receipt is counted for the server that made its push (`serverOf`, by push_id). Then the deliveries sent more than
 * once (a `webhook-id` received again) and the delivery rows by status, read through `databaseUrl`: a run whose sent
 * deliveries stay `pending` would send them all again when their lease lapses (60 s), after a short run has ended.
 */
export async function reportDeliveries(
  receiver: BenchReceiver,
  expected: Map<string, number>,
  serverOf: Map<string, string>,
  databaseUrl: string,
  timeoutMs = 180_000,
): Promise<void> {
  const total = [...expected.values()].reduce((a, b) => a + b, 0);
  const end = Date.now() + timeoutMs;
  while (receiver.receipts.length < total && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
  for (const [server, count] of expected) {
    const sorted = receiver.receipts
      .filter((r) => serverOf.get(r.pushId) === server)
      .map((r) => r.ms)
      .sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
    console.log(
      `Webhook deliveries of ${server}: ${sorted.length} of ${count} expected arrived; latency from event to receipt ` +
        `p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms, max ${pct(100).toFixed(0)} ms`,
    );
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; n: number }>(
      'select status, count(*)::int as n from webhook_deliveries group by status order by status',
    );
    // Rows rewritten after their insert (a try recorded apart from it): how many deliveries missed the outbox's
    // first-try write (a slow answer, or a webhook not waited for). The statistics may lag by a second.
    const { rows: writes } = await client.query<{ ins: string; upd: string }>(
      `select n_tup_ins::text as ins, n_tup_upd::text as upd from pg_stat_user_tables where relname = 'webhook_deliveries'`,
    );
    console.log(
      `Webhook deliveries received again (same webhook-id): ${receiver.duplicates}; delivery rows: ` +
        (rows.map((r) => `${r.status} ${r.n}`).join(', ') || 'none') +
        `; rows inserted ${writes[0]?.ins ?? '?'}, updated ${writes[0]?.upd ?? '?'}`,
    );
  } finally {
    await client.end();
  }
}
