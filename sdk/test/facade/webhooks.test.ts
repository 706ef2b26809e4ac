/**
 * The facade's webhook methods (issue 39) against the real server (webhooks on, targets on loopback allowed) and a
 * real receiver on loopback: register, list, read, send a test event that arrives signed, read the delivery log, send
 * it again, rotate the secret, delete; another user sees none of it; typed errors on the way.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient, NotFoundError, ValidationError, verifyWebhook } from '../../src/index.js';
import { type RealServer, startRealServer } from '../support/real-server.js';

let real: RealServer;
let receiver: http.Server;
let receiverUrl = '';
const arrived: { headers: http.IncomingHttpHeaders; body: Buffer }[] = [];

beforeAll(async () => {
  real = await startRealServer({
    webhooks: { enabled: true, allowPrivate: true, retrySchedule: [5, 300] },
  });
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrived.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}, 120_000);

afterAll(async () => {
  receiver?.closeAllConnections();
  receiver?.close();
  await real?.close();
});

async function arrivals(count: number): Promise<typeof arrived> {
  const until = Date.now() + 20_000;
  while (arrived.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return arrived;
}

describe('the facade’s webhook methods on the real server', () => {
  it('registers, lists, reads, tests, logs, retries, rotates and deletes a webhook', async () => {
    const alice = createSecretPushClient({ baseUrl: real.baseUrl, token: real.users[0]!.token });
    const bob = createSecretPushClient({ baseUrl: real.baseUrl, token: real.users[1]!.token });

    const made = await alice.createWebhook({ url: receiverUrl, events: ['push.viewed'], description: 'facade' });
    expect(made.secret).toMatch(/^whsec_/);
    expect(made).toMatchObject({ url: receiverUrl, events: ['push.viewed'], description: 'facade' });

    const listed = await alice.listWebhooks();
    expect(listed.map((w) => w.id)).toEqual([made.id]);
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    expect(await alice.getWebhook(made.id)).toMatchObject({ id: made.id, url: receiverUrl });
    await expect(bob.getWebhook(made.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await bob.listWebhooks()).toEqual([]);

    const queued = await alice.testWebhook(made.id);
    const [first] = await arrivals(1);
    expect(first?.headers['webhook-id']).toBe(queued.id);
    const event = await verifyWebhook(made.secret, first!.headers, first!.body);
    expect(event.type).toBe('webhook.test');

    const log: string[] = [];
    for await (const delivery of alice.webhookDeliveries(made.id)) log.push(delivery.id);
    expect(log).toEqual([queued.id]);
    expect((await alice.webhookDeliveries.page(made.id, 1)).items.map((d) => d.id)).toEqual([queued.id]);

    const again = await alice.retryWebhookDelivery(made.id, queued.id);
    expect(again.id).toBe(queued.id);
    const [, second] = await arrivals(2);
    expect(second?.headers['webhook-id']).toBe(queued.id);

    const rotated = await alice.rotateWebhookSecret(made.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(made.secret);

    const deleted = await alice.deleteWebhook(made.id);
    expect(deleted.id).toBe(made.id);
    await expect(alice.getWebhook(made.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await alice.listWebhooks()).toEqual([]);
  });

  it('throws ValidationError naming the field for a webhook the server refuses', async () => {
    const alice = createSecretPushClient({ baseUrl: real.baseUrl, token: real.users[0]!.token });
    const refused = await alice.createWebhook({ url: 'ftp://127.0.0.1/x', events: ['push.viewed'] }).catch((e) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).status).toBe(422);
    expect(Object.keys((refused as ValidationError).errors)).toContain('url');
  });
});
