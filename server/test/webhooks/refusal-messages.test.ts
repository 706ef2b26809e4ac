/**
 * Issue 45: a webhook's refusal never reveals the address an internal name resolves to. A registration refused for a
 * private target said which private address the name resolved to (`resolves to a private or reserved address
 * (10.…)`), and so did the delivery log after a rebinding: a user could map the instance's internal DNS. Now every
 * such refusal says the target is "not allowed" and names `PWPUSH_WEBHOOKS_ALLOW_PRIVATE` (the setting that allows
 * private targets, for development), without the address: at registration through the API and on the page, and in
 * the delivery log (`last_error`) of a try refused at connect time. The names resolve through a stubbed resolver; no
 * request leaves loopback.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWebhook, listWebhookDeliveries, testWebhook } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startWeb, Visitor, type WebApp } from '../web/support.js';

let api: RealApi;
let web: WebApp;
let receiver: Receiver;
/** What the test's resolver answers, by name. */
const answers = new Map<string, string[]>([
  ['internal.example.test', ['10.20.30.40']],
  ['metadata.example.test', ['169.254.169.254']],
  ['ula.example.test', ['fd12:3456:789a::7']],
  ['mixed.example.test', ['93.184.216.34', '10.20.30.41']],
]);
/** Every private address the resolver gives, none of which an answer may show. */
const SECRET_ADDRESSES = ['10.20.30.40', '10.20.30.41', '169.254.169.254', 'fd12:3456:789a::7', '127.0.0.1'];

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
  web = await startWeb({ webhooks: { enabled: true, allowPrivate: false, retrySchedule: [1] } });
});

afterAll(async () => {
  await api?.stop();
  await web?.stop();
  await receiver?.stop();
});

function expectNoAddress(text: string, what: string): void {
  for (const address of SECRET_ADDRESSES) expect(text, what).not.toContain(address);
}

it('a registration refused for a private target says "not allowed" and names the setting, never the address', async () => {
  const owner = await api.user('refusal@example.org');
  for (const url of [
    'http://internal.example.test/hook',
    'http://metadata.example.test/latest/meta-data/',
    'http://ula.example.test/hook',
    'http://mixed.example.test/hook',
    'http://10.20.30.40/hook',
  ]) {
    const error = expectError(
      await createWebhook({
        client: api.client,
        auth: bearer(owner.token),
        body: { webhook: { url, events: ['push.viewed'] } },
      }),
      422,
      'validation_failed',
    );
    const message = error.errors?.url?.[0] ?? '';
    expect(message, url).toMatch(/private or reserved address, which is not allowed/);
    expect(message, url).toContain('PWPUSH_WEBHOOKS_ALLOW_PRIVATE');
    expect(error.error, url).toBe(`url: ${message}`);
    expectNoAddress(JSON.stringify(error).replace(url, ''), url);
  }
});

it('the page says the same, without the address', async () => {
  const visitor = new Visitor(web.baseUrl);
  expect((await visitor.signUp('refusal-page@example.org', 'correct horse battery staple')).status).toBe(303);
  const { csrf } = await visitor.page('/users/webhooks');
  const refused = await visitor.fetch('/users/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: web.baseUrl },
    body: new URLSearchParams([
      ['_csrf', csrf],
      ['url', 'http://localhost:9/hook'],
      ['events', 'push.viewed'],
    ]).toString(),
  });
  expect(refused.status).toBe(422);
  const html = await refused.text();
  expect(html).toContain('private or reserved address, which is not allowed');
  expect(html).toContain('PWPUSH_WEBHOOKS_ALLOW_PRIVATE');
  expect(html).not.toContain('127.0.0.1');
  expect(html).not.toMatch(/\(::1\)/);
});

it('the delivery log of a try refused at connect time shows no address', async () => {
  const owner = await api.user('refusal-rebind@example.org');
  const auth = bearer(owner.token);
  answers.set('rebind.example.test', ['93.184.216.34']); // public at registration (never connected to)
  const hook = expectData(
    await createWebhook({
      client: api.client,
      auth,
      body: { webhook: { url: `http://rebind.example.test:${receiver.port}/hook`, events: ['push.viewed'] } },
    }),
    201,
  );
  answers.set('rebind.example.test', ['10.20.30.40']);
  expectData(await testWebhook({ client: api.client, auth, path: { id: hook.id } }), 202);
  let log;
  const end = Date.now() + 15_000;
  do {
    await new Promise((r) => setTimeout(r, 200));
    log = expectData(await listWebhookDeliveries({ client: api.client, auth, path: { id: hook.id } }));
  } while (log.deliveries[0]?.attempts === 0 && Date.now() < end);
  const row = log.deliveries[0];
  expect(row?.last_error).toMatch(/^address refused: .*private or reserved address, which is not allowed/);
  expect(row?.last_error).toContain('PWPUSH_WEBHOOKS_ALLOW_PRIVATE');
  expectNoAddress(JSON.stringify(log), 'delivery log');
  expect(receiver.received).toHaveLength(0);
}, 30_000);
