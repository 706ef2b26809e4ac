/**
 * Issue 23: no server-side request forgery. With the default (PWPUSH_WEBHOOKS_ALLOW_PRIVATE off), a target that is
 * or resolves to a loopback, private, link-local, metadata, multicast or unspecified address is refused at
 * registration (422), in every spelling a URL parser accepts, including a host name that resolves to 127.0.0.1
 * (`localhost`, through the system's resolver). At connect time the name is resolved again and the connection goes
 * to the checked address only: a name that resolved to a public address at registration and to loopback later (DNS
 * rebinding, with a resolver the test controls; no request ever leaves loopback) is refused without a connection.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWebhook, listWebhookDeliveries, testWebhook } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { checkTarget, isPublicAddress, TargetRefused } from '../../src/webhooks/targets.js';

let api: RealApi;
let receiver: Receiver;
/** What the test's resolver answers for `hooks.example.test`. */
let rebound = '93.184.216.34';

beforeAll(async () => {
  receiver = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: false, retrySchedule: [1] } },
    {
      core: {
        queue: { pollingIntervalSeconds: 0.5 },
        webhookResolver: async (host) => {
          if (host === 'hooks.example.test') return [rebound];
          const { systemResolver } = await import('../../src/webhooks/targets.js');
          return systemResolver(host);
        },
      },
    },
  );
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

it('refuses private and reserved targets at registration, in every spelling', async () => {
  const owner = await api.user('ssrf@example.org');
  const port = receiver.port;
  const targets = [
    `http://127.0.0.1:${port}/hook`,
    `http://127.1:${port}/hook`,
    `http://0x7f000001:${port}/hook`,
    `http://2130706433:${port}/hook`,
    `http://[::1]:${port}/hook`,
    `http://[::ffff:127.0.0.1]:${port}/hook`,
    `http://localhost:${port}/hook`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://224.0.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
  ];
  for (const url of targets) {
    const error = expectError(
      await createWebhook({
        client: api.client,
        auth: bearer(owner.token),
        body: { webhook: { url, events: ['push.viewed'] } },
      }),
      422,
      'validation_failed',
    );
    expect(error.errors?.url?.[0], url).toMatch(/private or reserved address/);
  }
  const credentials = expectError(
    await createWebhook({
      client: api.client,
      auth: bearer(owner.token),
      body: { webhook: { url: 'https://user:pw@hooks.example.test/x', events: ['push.viewed'] } },
    }),
    422,
    'validation_failed',
  );
  expect(credentials.errors?.url?.[0]).toMatch(/user name or password/);
  expect(receiver.received).toHaveLength(0);
});

it('checks again at connect time: a name rebound to loopback is refused without a connection', async () => {
  const owner = await api.user('rebind@example.org');
  const auth = bearer(owner.token);
  rebound = '93.184.216.34'; // public at registration (never connected to: registration only resolves)
  const hook = expectData(
    await createWebhook({
      client: api.client,
      auth,
      body: { webhook: { url: `http://hooks.example.test:${receiver.port}/hook`, events: ['push.viewed'] } },
    }),
    201,
  );
  rebound = '127.0.0.1'; // the receiver's address, now
  const delivery = expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
  let row;
  const end = Date.now() + 15_000;
  do {
    await new Promise((r) => setTimeout(r, 200));
    row = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } })).deliveries[0];
  } while (row?.attempts === 0 && Date.now() < end);
  expect(row).toMatchObject({ id: delivery.id, last_status_code: null });
  // Not allowed, without the address the name resolved to (issue 45: a refusal never maps internal DNS).
  expect(row?.last_error).toMatch(/address refused: resolves to a private or reserved address, which is not allowed/);
  expect(row?.last_error).not.toContain('127.0.0.1');
  expect(receiver.received).toHaveLength(0);
}, 30_000);

it('classifies addresses by range', () => {
  for (const a of ['93.184.216.34', '2606:2800:220:1::1', '8.8.8.8']) expect(isPublicAddress(a), a).toBe(true);
  for (const a of [
    '127.0.0.1',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '169.254.169.254',
    'fd00:ec2::254',
    '::',
    '255.255.255.255',
    'not-an-ip',
  ])
    expect(isPublicAddress(a), a).toBe(false);
});

it('requires https where the rules say so (production), and refuses a host that does not resolve', async () => {
  const rules = { allowPrivate: false, requireHttps: true, resolve: async () => ['93.184.216.34'] };
  await expect(checkTarget('http://hooks.example.org/x', rules)).rejects.toThrow(TargetRefused);
  await expect(checkTarget('http://hooks.example.org/x', rules)).rejects.toMatchObject({
    reason: 'must be an https URL',
  });
  await expect(checkTarget('https://hooks.example.org/x', rules)).resolves.toMatchObject({ address: '93.184.216.34' });
  const unresolved = { ...rules, resolve: async () => Promise.reject(new Error('ENOTFOUND')) };
  await expect(checkTarget('https://nowhere.invalid/x', unresolved)).rejects.toMatchObject({
    reason: 'names a host that does not resolve',
  });
  // A name with one public and one private address is refused: every address must be public. The refusal does not
  // say which (issue 45).
  const mixed = { ...rules, resolve: async () => ['93.184.216.34', '10.0.0.7'] };
  await expect(checkTarget('https://hooks.example.org/x', mixed)).rejects.toMatchObject({
    reason: expect.not.stringContaining('10.0.0.7'),
  });
  await expect(checkTarget('https://hooks.example.org/x', mixed)).rejects.toMatchObject({
    reason: expect.stringContaining('not allowed'),
  });
});
