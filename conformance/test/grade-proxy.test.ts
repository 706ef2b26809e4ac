/**
 * The grader's parts against the in-memory fixture (fast, no database): the proxy's routing and transparency, the
 * delivery relay between a sender and the suite's real webhook receiver, the runner's stop-at-first-failure mode, and
 * the `--grade` CLI. The grade of our real server is grade.test.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startBrokenServer, type BrokenServer } from './broken-server.js';
import { Contract } from '../src/spec.js';
import { runSuite } from '../src/runner.js';
import { main } from '../src/cli.js';
import { Router, startProxy, type RunningProxy } from '../src/grade/proxy.js';
import { FAULTS } from '../src/grade/faults/index.js';
import { FAULT_CLASSES } from '../src/grade/fault.js';
import { REQUIREMENTS } from '../src/runner.js';
import { standardSignature, type DeliveryRelays } from '../src/grade/proxy.js';
import { startDeliveryRelays } from '../src/grade/relay.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../src/receiver.js';
import type { FaultHooks, ProxyEnv } from '../src/grade/proxy.js';

let server: BrokenServer | undefined;
let proxy: RunningProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await server?.close();
  proxy = server = undefined;
});

async function quietly<T>(body: () => Promise<T>): Promise<{ value: T; out: string }> {
  const { log, error } = console;
  let out = '';
  console.log = (...args: unknown[]) => void (out += args.join(' ') + '\n');
  console.error = (...args: unknown[]) => void (out += args.join(' ') + '\n');
  try {
    return { value: await body(), out };
  } finally {
    console.log = log;
    console.error = error;
  }
}

describe('the fault catalogue', () => {
  it('has at least 30 uniquely named faults, each expecting known requirements or explaining why none can see it', () => {
    expect(FAULTS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
    const ids = new Set(REQUIREMENTS.map((r) => r.id));
    for (const f of FAULTS) {
      expect(f.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(Object.keys(FAULT_CLASSES)).toContain(f.class);
      if (f.invisible) expect(f.killers).toEqual([]);
      else expect(f.killers.length, f.name).toBeGreaterThan(0);
      for (const id of f.killers) expect(ids.has(id), `${f.name}: ${id}`).toBe(true);
    }
  });
});

describe('the proxy', () => {
  it('routes requests to operations as the contract does (.json suffix, active before {url_token}, 405, 404)', () => {
    const router = new Router(Contract.load());
    expect(router.match('GET', '/api/v2/pushes/active.json')).toEqual({ op: 'listActivePushes', params: {} });
    expect(router.match('DELETE', '/api/v2/pushes/active')).toEqual({ op: 'methodNotAllowed', params: {} });
    expect(router.match('DELETE', '/api/v2/pushes/abc')).toEqual({ op: 'expirePush', params: { url_token: 'abc' } });
    expect(router.match('GET', '/api/v2/pushes/abc/files/f1')).toEqual({
      op: 'downloadPushFile',
      params: { url_token: 'abc', file_id: 'f1' },
    });
    expect(router.match('GET', '/api/v2/nothing')).toEqual({ op: 'noRoute', params: {} });
  });

  it("routes the legacy v1 paths to the v1 document's operations", () => {
    const router = new Router(Contract.load());
    expect(router.match('POST', '/p.json')).toEqual({ op: 'createPasswordV1', params: {} });
    expect(router.match('GET', '/p/abc-12.json')).toEqual({
      op: 'getPushV1',
      params: { prefix: 'p', url_token: 'abc-12' },
    });
    expect(router.match('GET', '/f/abc/audit.json')).toEqual({
      op: 'getPushAuditV1',
      params: { prefix: 'f', url_token: 'abc' },
    });
    expect(router.match('GET', '/r/active.json')).toEqual({ op: 'listActivePushesV1', params: { prefix: 'r' } });
    expect(router.match('DELETE', '/p/active.json')).toEqual({ op: 'methodNotAllowed', params: {} });
    expect(router.match('GET', '/api/v1/version.json')).toEqual({ op: 'getVersionV1', params: {} });
    expect(router.match('GET', '/p/abc/r.json')).toEqual({ op: 'noRoute', params: {} });
  });

  it('sends a request again on a new socket when the upstream closed the kept-alive one it went out on', async () => {
    // An upstream that answers the first request of each connection and drops the connection at the next one: what a
    // server's keep-alive timeout does to a socket the proxy reuses at that very moment (no answer was started).
    const seen = new WeakMap<object, number>();
    let connections = 0;
    const upstream = createServer((req, res) => {
      const n = (seen.get(req.socket) ?? 0) + 1;
      seen.set(req.socket, n);
      if (n > 1) return void req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ application_name: 'upstream', n }));
    });
    upstream.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      proxy = await startProxy({
        upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        contract: Contract.load(),
        hooks: {},
        env: { journal: new Map(), webhooks: new Map(), otherCaller: () => undefined },
      });
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${proxy.url}/api/v2/version.json`);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { n: number }).n).toBe(1);
      }
      // The first request opened a connection; each later one found it dropped and took a new one.
      expect(connections).toBe(3);
    } finally {
      upstream.closeAllConnections();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });

  it('is transparent without a fault: the suite passes through it, links point at the proxy', async () => {
    server = await startBrokenServer([]);
    proxy = await startProxy({
      upstream: server.baseUrl,
      contract: Contract.load(),
      hooks: {},
      env: { journal: new Map(), webhooks: new Map(), otherCaller: () => undefined },
    });
    const { a, b } = server.users;
    const run = await runSuite({
      baseUrl: proxy.url,
      profile: 'full',
      token: a.token,
      tokenB: b.token,
      email: a.email,
      emailB: b.email,
    });
    expect(run.results.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${r.reason}`)).toEqual([]);
    const created = await fetch(`${proxy.url}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'through the proxy' } }),
    });
    expect(((await created.json()) as { json_url: string }).json_url.startsWith(`${proxy.url}/api/v2/pushes/`)).toBe(
      true,
    );
  });
});

describe('the delivery relay', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  let receiver: WebhookReceiver | undefined;
  let relays: DeliveryRelays | undefined;
  afterEach(async () => {
    await relays?.close();
    await receiver?.close();
    relays = receiver = undefined;
  });

  /** Starts a receiver and relays with `hooks`; registers a webhook for `path` as the proxy would; returns its relay URL. */
  async function setUp(path: string, hooks: FaultHooks): Promise<string> {
    receiver = await startWebhookReceiver('127.0.0.1', 0);
    const env: ProxyEnv = { journal: new Map(), webhooks: new Map(), otherCaller: () => undefined };
    relays = startDeliveryRelays('127.0.0.1', hooks, env);
    const relayed = await relays.wrap(receiver.url(path));
    expect(relayed).toBeDefined();
    env.webhooks.set('w1', { id: 'w1', owner: 'token:a', url: receiver.url(path), secrets: [secret] });
    return relayed!;
  }

  /** POSTs a signed delivery to `url`, as a server does. */
  async function deliver(url: string, body: string): Promise<Response> {
    const [id, timestamp] = ['msg_AAAAAAAAAAAAAAAAAAAAAAAAAA', String(Math.floor(Date.now() / 1000))];
    return fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${standardSignature(secret, id, timestamp, body)}`,
      },
      body,
    });
  }

  it('registers a relay on the receiver host only, forwards deliveries byte for byte and the answers back', async () => {
    const relayed = await setUp('hook-plain', {});
    expect(await relays!.wrap('https://hooks.example.org/x')).toBeUndefined();
    expect(new URL(relayed).hostname).toBe('127.0.0.1');
    expect(relayed).not.toBe(receiver!.url('hook-plain'));
    expect(relays!.unwrap(JSON.stringify({ url: relayed }))).toBe(JSON.stringify({ url: receiver!.url('hook-plain') }));
    receiver!.answer('hook-plain', 500);
    const body = '{"type":"webhook.test","timestamp":"2026-11-26T00:00:00.000Z","data":{"webhook_id":"w1"}}';
    expect((await deliver(relayed, body)).status).toBe(500);
    expect((await deliver(relayed, body)).status).toBe(200);
    const got = await receiver!.waitFor('hook-plain', 2, 5_000);
    expect(got.map((h) => h.body)).toEqual([body, body]);
    expect(got.every((h) => signatureValid(secret, h))).toBe(true);
  });

  it("lets a fault change a delivery (signed again with the journal's secret) or drop it", async () => {
    const relayed = await setUp('hook-fault', {
      delivery(d) {
        const event = d.event;
        if (event.type === 'push.deleted') return d.drop();
        event.data.extra = d.webhook?.id;
        d.event = event;
        d.sign();
      },
    });
    expect((await deliver(relayed, '{"type":"push.deleted","data":{}}')).status).toBe(200);
    expect((await deliver(relayed, '{"type":"push.viewed","data":{}}')).status).toBe(200);
    const got = await receiver!.waitFor('hook-fault', 2, 1_000);
    expect(got.map((h) => JSON.parse(h.body))).toEqual([{ type: 'push.viewed', data: { extra: 'w1' } }]);
    expect(signatureValid(secret, got[0]!)).toBe(true);
  });
});

describe('stopping at the first failure', () => {
  it('runs the named requirements first, stops at the first failure and reports the rest not-run', async () => {
    server = await startBrokenServer(['preview-counts-view']);
    const run = await runSuite({
      baseUrl: server.baseUrl,
      profile: 'full',
      token: server.users.a.token,
      stopOnFailure: true,
      first: ['PREV-003'],
    });
    const ran = run.results.filter(
      (r) => r.status !== 'not-run' || r.reason !== 'the run stopped at the first failure',
    );
    expect(ran.map((r) => [r.id, r.status])).toEqual([['PREV-003', 'fail']]);
  });

  it('checks the aggregates after each requirement, so a fault only they see stops the run at once', async () => {
    server = await startBrokenServer([]);
    proxy = await startProxy({
      upstream: server.baseUrl,
      contract: Contract.load(),
      hooks: { response: (ex) => void delete ex.headers['x-request-id'] },
      env: { journal: new Map(), webhooks: new Map(), otherCaller: () => undefined },
    });
    const run = await runSuite({
      baseUrl: proxy.url,
      profile: 'full',
      token: server.users.a.token,
      stopOnFailure: true,
      first: ['VER-002'],
    });
    const ran = run.results.filter((r) => r.reason !== 'the run stopped at the first failure');
    expect(ran.map((r) => [r.id, r.status])).toEqual([
      ['VER-002', 'pass'],
      ['HDR-004', 'fail'],
    ]);
    expect(run.results.find((r) => r.id === 'HDR-004')?.reason).toMatch(/lacks X-Request-Id/);
  });
});

describe('npm run conformance -- --grade', () => {
  it('prints the kill rate and the survivors, and exits 0 when every survivor is a documented invisible one', async () => {
    server = await startBrokenServer([]);
    const { a, b } = server.users;
    const args = [
      '--grade',
      '--base-url',
      server.baseUrl,
      '--token',
      a.token,
      '--token-b',
      b.token,
      '--email',
      a.email,
      '--email-b',
      b.email,
    ];
    const { value, out } = await quietly(() =>
      main([...args, '--faults', 'expired-as-404,no-www-authenticate,audit-ip-of-a-proxy']),
    );
    expect(out).toMatch(/^expired-as-404\s+status\s+killed\s+VIEW-002/m);
    expect(out).toMatch(/^no-www-authenticate\s+header\s+killed\s+HDR-005/m);
    expect(out).toMatch(/Kill rate: 2\/3 faults killed \(66\.7 %\)/);
    expect(out).toMatch(/audit-ip-of-a-proxy: .*\n\s+not visible black-box: /);
    expect(value).toBe(0);
  });

  it('exits 1 when a fault survives without an explanation, and 2 for an unknown fault', async () => {
    server = await startBrokenServer([]);
    const args = ['--grade', '--base-url', server.baseUrl, '--token', server.users.a.token];
    // Without --token-b the 403 requirements are not-run, so nothing sees forbidden-as-401.
    const { value, out } = await quietly(() => main([...args, '--faults', 'forbidden-as-401']));
    expect(out).toMatch(/forbidden-as-401\s+status\s+SURVIVED/);
    expect(out).toMatch(/NOT EXPLAINED/);
    expect(value).toBe(1);
    expect((await quietly(() => main([...args, '--faults', 'no-such-fault']))).value).toBe(2);
  });

  it('lists the faults', async () => {
    const { value, out } = await quietly(() => main(['--list-faults']));
    expect(value).toBe(0);
    expect(out.trim().split('\n')).toHaveLength(FAULTS.length);
  });
});
