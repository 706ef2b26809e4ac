/**
 * Issue 45: IPv4 embedded in IPv6 does not pass the SSRF filter. `::/96` (IPv4-compatible, `[::7f00:1]`) passed as a
 * public address, and ipaddr.js reads `::a.b.c.d` as IPv4-mapped (`::8.8.8.8` was "public" while a socket connects
 * to the IPv4-compatible `::808:808`). Every embedding of IPv4 in IPv6 that can reach a private IPv4 address is
 * refused, per range:
 *
 * - refused outright: `::/96` (IPv4-compatible, deprecated), `::ffff:0:0:0/96` (IPv4-translated, SIIT),
 *   `64:ff9b:1::/48` (local-use NAT64: the operator's translator, whose embedding depends on its prefix length),
 *   `2002::/16` (6to4), `2001::/32` (Teredo), and everything outside `2000::/3` (not global unicast);
 * - judged by the IPv4 address they embed: `::ffff:0:0/96` (IPv4-mapped), `64:ff9b::/96` (the NAT64 well-known
 *   prefix, which an IPv6-only host reaches IPv4 through), and ISATAP interface ids (`…:0:5efe:a.b.c.d`,
 *   `…:200:5efe:a.b.c.d`) in any prefix.
 *
 * Each spelling is refused at registration: bracketed in the URL (compressed, expanded, mixed dotted notation), and as
 * the answer of a stubbed resolver for a name; and at connect time, for a name that resolved to a public address at
 * registration and to such an address later (DNS rebinding). No request leaves loopback: the refused addresses are
 * loopback's and private ones' spellings, the public ones are only classified, never connected to.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWebhook, listWebhookDeliveries, testWebhook } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { checkTarget, isPublicAddress } from '../../src/webhooks/targets.js';

let api: RealApi;
let receiver: Receiver;
/** What the test's resolver answers, by name (a name not listed does not resolve). */
const answers = new Map<string, string[]>();

beforeAll(async () => {
  receiver = await startReceiver();
  api = await startRealApi(
    { webhooks: { enabled: true, allowPrivate: false, retrySchedule: [1] } },
    {
      core: {
        queue: { pollingIntervalSeconds: 0.5 },
        webhookResolver: async (host) => {
          const found = answers.get(host);
          if (!found) throw new Error(`ENOTFOUND ${host}`);
          return found;
        },
      },
    },
  );
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

/** Loopback and private IPv4 addresses embedded in IPv6, in every spelling and range. */
const EMBEDDED_PRIVATE = [
  // ::/96, IPv4-compatible: compressed, expanded, mixed dotted notation, leading zeros.
  '::7f00:1',
  '::127.0.0.1',
  '0:0:0:0:0:0:7f00:1',
  '0:0:0:0:0:0:127.0.0.1',
  '0000:0000:0000:0000:0000:0000:7f00:0001',
  '::a00:1',
  '::10.0.0.1',
  '::a9fe:a9fe',
  '::169.254.169.254',
  // ::ffff:0:0/96, IPv4-mapped (hex and dotted).
  '::ffff:7f00:1',
  '::ffff:127.0.0.1',
  '0:0:0:0:0:ffff:a00:1',
  // ::ffff:0:0:0/96, IPv4-translated.
  '::ffff:0:7f00:1',
  '::ffff:0:127.0.0.1',
  // 64:ff9b::/96, the NAT64 well-known prefix, and 64:ff9b:1::/48, local-use NAT64.
  '64:ff9b::7f00:1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a00:1',
  '64:ff9b::c0a8:101',
  '64:ff9b:1::7f00:1',
  '64:ff9b:1:7f00:1::',
  // 2002::/16, 6to4, and 2001::/32, Teredo.
  '2002:7f00:1::',
  '2002:a00:1::1',
  '2001:0:7f00:1::1',
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
  // ISATAP interface ids, in a global prefix.
  '2600:1f18:1:2:0:5efe:7f00:1',
  '2600:1f18:1:2::5efe:10.1.2.3',
  '2600:1f18:1:2:200:5efe:a9fe:a9fe',
];

it('classifies every embedding of a private IPv4 address in IPv6 as not public', () => {
  for (const address of EMBEDDED_PRIVATE) expect(isPublicAddress(address), address).toBe(false);
  // Refused outright, whatever the IPv4 they embed: IPv4-compatible, IPv4-translated, local-use NAT64, 6to4, Teredo,
  // and anything outside 2000::/3.
  for (const address of [
    '::808:808',
    '::8.8.8.8',
    '::ffff:0:808:808',
    '64:ff9b:1::808:808',
    '2002:808:808::1',
    '2001:0:808:808::1',
    '100::1',
    '1::1',
    'c000::1',
  ])
    expect(isPublicAddress(address), address).toBe(false);
  // Judged by the IPv4 they embed: a public one passes (an IPv6-only host reaches IPv4 through NAT64).
  for (const address of ['::ffff:808:808', '::ffff:8.8.8.8', '64:ff9b::808:808', '64:ff9b::8.8.8.8'])
    expect(isPublicAddress(address), address).toBe(true);
  expect(isPublicAddress('2600:1f18:1:2:0:5efe:808:808')).toBe(true);
  expect(isPublicAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(true);
  // A zone id is no public address.
  expect(isPublicAddress('fe80::1%eth0')).toBe(false);
});

it('refuses each spelling at registration, bracketed in the URL', async () => {
  const owner = await api.user('embedded-literal@example.org');
  for (const address of EMBEDDED_PRIVATE) {
    const url = `http://[${address}]:${receiver.port}/hook`;
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
  expect(receiver.received).toHaveLength(0);
});

it('refuses each spelling at registration, as what a name resolves to', async () => {
  const owner = await api.user('embedded-name@example.org');
  for (const [i, address] of EMBEDDED_PRIVATE.entries()) {
    const host = `embedded-${i}.example.test`;
    answers.set(host, [address]);
    const rules = { allowPrivate: false, requireHttps: false, resolve: async () => [address] };
    await expect(checkTarget(`http://${host}/hook`, rules), address).rejects.toMatchObject({
      reason: expect.stringMatching(/private or reserved address/),
    });
    const error = expectError(
      await createWebhook({
        client: api.client,
        auth: bearer(owner.token),
        body: { webhook: { url: `http://${host}:${receiver.port}/hook`, events: ['push.viewed'] } },
      }),
      422,
      'validation_failed',
    );
    expect(error.errors?.url?.[0], address).toMatch(/private or reserved address/);
  }
  expect(receiver.received).toHaveLength(0);
});

it('refuses at connect time a name rebound to loopback as IPv4-compatible IPv6, without a connection', async () => {
  const owner = await api.user('embedded-rebind@example.org');
  const auth = bearer(owner.token);
  answers.set('rebound.example.test', ['2606:2800:220:1:248:1893:25c8:1946']); // public at registration
  const hook = expectData(
    await createWebhook({
      client: api.client,
      auth,
      body: { webhook: { url: `http://rebound.example.test:${receiver.port}/hook`, events: ['push.viewed'] } },
    }),
    201,
  );
  answers.set('rebound.example.test', ['::7f00:1']); // loopback's IPv4-compatible spelling, now
  const delivery = expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
  let row;
  const end = Date.now() + 15_000;
  do {
    await new Promise((r) => setTimeout(r, 200));
    row = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } })).deliveries[0];
  } while (row?.attempts === 0 && Date.now() < end);
  expect(row).toMatchObject({ id: delivery.id, attempts: 1, last_status_code: null });
  expect(row?.last_error).toMatch(/^address refused: .*private or reserved address/);
  expect(receiver.received).toHaveLength(0);
}, 30_000);
