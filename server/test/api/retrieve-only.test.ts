/**
 * The public gateway (PWPUSH_MODE=retrieve-only, issue 38): an internal instance and a gateway on one database. Every
 * operation of both contracts (walked from `contract().routes` and `contractV1().routes`, so a new operation is probed
 * as soon as it exists) and every route of the web router (walked from the router itself) is sent to the gateway: the
 * retrieval side answers as on the internal instance, everything else is an unknown path (404, route `no_route`), and
 * the same request reaches its route on the internal instance. Then the topology end to end: pushes (text and file)
 * and a request made inside are retrieved, downloaded and answered through the gateway, exactly once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contract, contractV1 } from '@secret-push/contract';
import { createPush, getPush } from '@secret-push/sdk/generated';
import { RETRIEVAL_OPERATIONS, isRetrievalPage } from '../../src/http/retrieve-only.js';
import { createWebRouter } from '../../src/web/router.js';
import { createMigratedDatabase, type TestDatabase } from '../support/db.js';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData } from './support/sdk.js';

let db: TestDatabase;
let inside: RealApi;
let gateway: RealApi;
let owner: { token: string };

beforeAll(async () => {
  db = await createMigratedDatabase('sp_gateway');
  // Webhooks on at both (the test settings have them off), so that only the mode tells the two apart.
  const webhooks = { enabled: true, allowPrivate: false, retrySchedule: [5] };
  inside = await startRealApi({ webhooks }, { db });
  gateway = await startRealApi({ webhooks, mode: 'retrieve-only' }, { db });
  owner = await inside.user('owner@example.org');
});
afterEach(() => {
  expect(inside.checker.violations).toEqual([]);
  expect(gateway.checker.violations).toEqual([]);
});
afterAll(async () => {
  await gateway?.stop();
  await inside?.stop();
  await db?.drop();
});

/** A request with its own id, and the route the instance's access log names for it ('no_route': no page or operation). */
async function probe(
  api: RealApi,
  method: string,
  path: string,
  init: { body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; route: string; body: string }> {
  const id = randomUUID();
  const res = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: {
      'x-request-id': id,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.body,
    redirect: 'manual',
  });
  const body = await res.text();
  let route = '';
  for (let i = 0; i < 50 && !route; i++) {
    const line = api.logs
      .map((l) => JSON.parse(l) as { request_id?: string; route?: string; msg?: string })
      .find((l) => l.request_id === id && l.route !== undefined);
    if (line) route = line.route ?? '';
    else await new Promise((r) => setTimeout(r, 20));
  }
  return { status: res.status, route, body };
}

async function textPush(payload: string): Promise<string> {
  const push = expectData(await createPush({ client: inside.client, body: { push: { payload } } }), 201);
  return push.url_token;
}

async function pendingRequest(): Promise<string> {
  const res = await inside.raw('/api/v2/requests', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
    body: JSON.stringify({ request: { request: 'Please send the VPN password', expire_after_views: 1 } }),
  });
  expect(res.status).toBe(201);
  return res.body.url_token as string;
}

/** A concrete path for a template: each parameter filled from `values`, or a placeholder. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'probe-0'));
}

type Probe = { method: string; path: string; body?: string; status: number };

/** The retrieval side: a well-formed request of each served operation, on fixtures made inside, and its answer. */
async function servedProbes(): Promise<Record<string, Probe>> {
  const [read, preview, expire, readV1, expireV1, request, unlisted] = await Promise.all([
    textPush('read through the gateway'),
    textPush('previewed'),
    textPush('expired by its viewer'),
    textPush('read through v1'),
    textPush('expired through v1'),
    pendingRequest(),
    textPush('listed for nobody'),
  ]);
  const file = expectData(
    await createPush({
      client: inside.client,
      auth: bearer(owner.token),
      body: {
        push: {
          payload: 'with a file',
          files: [{ filename: 'a.txt', content: Buffer.from('file bytes').toString('base64') }],
        },
      },
    }),
    201,
  );
  const retrieved = expectData(await getPush({ client: gateway.client, path: { url_token: file.url_token } }));
  const link = new URL(retrieved.files[0]!.url);
  return {
    getVersion: { method: 'GET', path: '/api/v2/version', status: 200 },
    getPush: { method: 'GET', path: `/api/v2/pushes/${read}`, status: 200 },
    previewPush: { method: 'GET', path: `/api/v2/pushes/${preview}/preview`, status: 200 },
    downloadPushFile: { method: 'GET', path: link.pathname + link.search, status: 200 },
    expirePush: { method: 'DELETE', path: `/api/v2/pushes/${expire}`, status: 200 },
    // A recipient asks for a code: served by the gateway. This instance has no SMTP relay, so no push is listed for
    // named people and the operation itself refuses (422), which is its answer inside too.
    requestAccessCode: {
      method: 'POST',
      path: `/api/v2/pushes/${unlisted}/access_code`,
      body: JSON.stringify({ email: 'ana@example.org' }),
      status: 422,
    },
    getRequest: { method: 'GET', path: `/api/v2/requests/${request}`, status: 200 },
    respondToRequest: {
      method: 'POST',
      path: `/api/v2/requests/${request}/response`,
      body: JSON.stringify({ push: { payload: 'the VPN password' } }),
      status: 201,
    },
    getVersionV1: { method: 'GET', path: '/api/v1/version.json', status: 200 },
    getPushV1: { method: 'GET', path: `/p/${readV1}.json`, status: 200 },
    previewPushV1: { method: 'GET', path: `/p/${readV1}/preview.json`, status: 200 },
    expirePushV1: { method: 'DELETE', path: `/p/${expireV1}.json`, status: 200 },
  };
}

describe('a retrieve-only instance (the public gateway)', () => {
  it('names only operations the contracts have', () => {
    const ids = new Set(
      [...contract().routes.operations(), ...contractV1().routes.operations()].map((o) => o.operationId),
    );
    for (const id of RETRIEVAL_OPERATIONS) expect(ids, id).toContain(id);
  });

  it('serves every retrieval operation as the internal instance does, and answers 404 no_route to every other one', async () => {
    const served = await servedProbes();
    expect(Object.keys(served).sort()).toEqual([...RETRIEVAL_OPERATIONS].sort());
    const operations = [...contract().routes.operations(), ...contractV1().routes.operations()];
    expect(operations.length).toBeGreaterThan(35);
    for (const op of operations) {
      const known = served[op.operationId];
      if (known) {
        const answer = await probe(gateway, known.method, known.path, { body: known.body });
        expect([op.operationId, answer.status, answer.route]).toEqual([op.operationId, known.status, op.path]);
        continue;
      }
      // An owner's credential, so that nothing but the mode stops the request; the body is read only where routed.
      const path = fill(op.path, { prefix: 'p' });
      const init = {
        headers: { authorization: `Bearer ${owner.token}` },
        ...(op.method === 'post' ? { body: '{}' } : {}),
      };
      const refused = await probe(gateway, op.method.toUpperCase(), path, init);
      expect([op.operationId, refused.status, refused.route]).toEqual([op.operationId, 404, 'no_route']);
      if (op.path.startsWith('/api/v2/')) expect(JSON.parse(refused.body)).toMatchObject({ code: 'no_route' });
      const inside_ = await probe(inside, op.method.toUpperCase(), path, init);
      expect([op.operationId, inside_.route]).toEqual([op.operationId, op.path]);
    }
  });

  it("never offers a refused operation's method in a 405's Allow, and 404s a path whose methods are all refused", async () => {
    // PUT is no operation anywhere: the internal instance answers 405 with the path's methods; the gateway keeps the
    // retrieval ones, or answers 404 when none is left.
    const token = await textPush('allow header');
    const pushPath = `/api/v2/pushes/${token}`;
    expect((await probe(inside, 'PUT', pushPath)).status).toBe(405);
    const res = await fetch(`${gateway.baseUrl}${pushPath}`, { method: 'PUT' });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, DELETE']);
    await res.arrayBuffer();
    for (const path of ['/api/v2/pushes', '/api/v2/api_keys', '/api/v2/webhooks', '/api/v2/pushes/active']) {
      expect((await probe(inside, 'PUT', path)).status, path).toBe(405);
      expect(await probe(gateway, 'PUT', path), path).toMatchObject({ status: 404, route: 'no_route' });
    }
  });

  it("serves the recipients' pages and answers 404 to every other route of the web router", async () => {
    const push = await textPush('a page');
    const request = await pendingRequest();
    const layers = (
      createWebRouter(inside.core) as unknown as {
        stack: { route?: { path: string; methods: Record<string, boolean> } }[];
      }
    ).stack;
    const routes = layers.flatMap((l) =>
      l.route
        ? Object.keys(l.route.methods)
            .filter((m) => m !== '_all')
            .map((m) => ({ method: m.toUpperCase(), template: l.route!.path }))
        : [],
    );
    expect(routes.length).toBeGreaterThan(40);
    let servedPages = 0;
    for (const { method, template } of routes) {
      const path = template
        .replace(/^\/p\/:url_token/, `/p/${push}`)
        .replace(/^\/r\/:url_token/, `/r/${request}`)
        .replace(/:url_token/, push)
        .replace(/:id/, 'probe-0')
        .replace(/\*name/, 'style.css')
        .replace(/:brand\/:file/, 'instance/theme.css');
      const answer = await probe(gateway, method, path, method === 'POST' ? { body: '{}' } : {});
      if (isRetrievalPage(method, path)) {
        servedPages += 1;
        expect([method, template, answer.route]).toEqual([
          method,
          template,
          template === '/assets/*name' ? '/assets/*' : template,
        ]);
        // The brand's files: this unbranded instance has none, so its own route answers 404 (not `no_route`, above).
        if (template !== '/brand/:brand/:file') expect(answer.status, `${method} ${template}`).not.toBe(404);
      } else {
        expect([method, template, answer.status, answer.route]).toEqual([method, template, 404, 'no_route']);
        expect((await probe(inside, method, path, method === 'POST' ? { body: '{}' } : {})).route, template).not.toBe(
          'no_route',
        );
      }
    }
    // /p/{token}, /p/{token}/r, reveal, delete, the code forms (access_code, open: issue 42), the responder's page and
    // its answer, the assets, the brand's files.
    expect(servedPages).toBe(10);
    // Its pages link to nothing it does not serve (the internal instance's pages link home and to the API docs).
    for (const path of [`/p/${push}`, `/r/${request}`, '/p/no-such-push']) {
      const page = await (await fetch(`${gateway.baseUrl}${path}`)).text();
      expect(page, path).toMatch(/Secret Push/);
      expect(
        [...page.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]!).filter((h) => !h.startsWith('/assets/')),
        path,
      ).toEqual([]);
    }
    expect(await (await fetch(`${inside.baseUrl}/p/${push}`)).text()).toMatch(/href="\/help\/api"/);
    for (const path of ['/healthz', '/readyz']) expect((await probe(gateway, 'GET', path)).status, path).toBe(200);
  });

  it('takes a push made inside to its recipient once, and a request answered outside back to its requester', async () => {
    const push = expectData(
      await createPush({ client: inside.client, body: { push: { payload: 'once only', expire_after_views: 1 } } }),
      201,
    );
    const got = expectData(await getPush({ client: gateway.client, path: { url_token: push.url_token } }));
    expect([got.payload, got.views_remaining]).toEqual(['once only', 0]);
    const again = expectData(await getPush({ client: inside.client, path: { url_token: push.url_token } }));
    expect([again.expired, again.payload ?? null]).toEqual([true, null]);
    // Creating is refused outside, whoever asks.
    const refused = await probe(gateway, 'POST', '/api/v2/pushes', {
      body: JSON.stringify({ push: { payload: 'x' } }),
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect([refused.status, refused.route]).toEqual([404, 'no_route']);

    const request = await pendingRequest();
    const answered = await gateway.raw(`/api/v2/requests/${request}/response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'handed in from outside' } }),
    });
    expect(answered.status).toBe(201);
    const seen = await inside.raw(`/api/v2/requests/${request}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(seen.body).toMatchObject({ state: 'fulfilled' });
  });
});
