/**
 * One router (issue 21): every API request through the real app, on both contracts, is matched exactly once, by the
 * one route table (`RouteTable.match`, here `contract().routes` or `contractV1().routes`), whatever it answers: a
 * routed operation, a `.json` suffix or a trailing slash, a 401, a 422, a 405 (whose `Allow` comes from that same
 * match) or a 404; openapi-backend's own router is never asked (its request steps run from the table compiled at
 * start-up). Pages and probes never reach it. Requests go by plain `fetch` (the SDK's spec-checking client
 * asks the route table itself, which would count here).
 */
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { OpenAPIRouter } from 'openapi-backend';
import { contract, contractV1, RouteTable } from '@secret-push/contract';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Edge } from '../../src/http/api.js';
import { startRealApi, type RealApi } from './support/real.js';

describe('each request is matched once', () => {
  let api: RealApi;
  let token: string;
  let urlToken: string;
  let match: MockInstance<RouteTable['match']>;
  let library: MockInstance<OpenAPIRouter['matchOperation']>;

  beforeAll(async () => {
    api = await startRealApi({ rateLimitPerMinute: 0, allowAnonymous: true });
    token = (await api.user('router@example.org')).token;
    match = vi.spyOn(RouteTable.prototype, 'match');
    library = vi.spyOn(OpenAPIRouter.prototype, 'matchOperation');
  });
  afterAll(async () => {
    match?.mockRestore();
    library?.mockRestore();
    await api?.stop();
  });

  /** Sends one request and returns its status, its Allow header and the route tables that matched it. */
  async function send(method: string, path: string, init: { body?: unknown; auth?: boolean } = {}) {
    match.mockClear();
    library.mockClear();
    const headers: Record<string, string> = {};
    if (init.auth) headers.authorization = `Bearer ${token}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${api.baseUrl}${path}`, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await response.text();
    const tables: string[] = match.mock.contexts.map((table) =>
      table === contract().routes ? 'v2' : table === contractV1().routes ? 'v1' : 'other',
    );
    // openapi-backend's router, when asked, shows up as a table of its own.
    for (let i = 0; i < library.mock.calls.length; i += 1) tables.push('openapi-backend');
    return { status: response.status, allow: response.headers.get('allow'), tables, text };
  }

  it('matches every kind of v2 request once, on the v2 table', async () => {
    const created = await send('POST', '/api/v2/pushes', { body: { push: { payload: 'routed once' } }, auth: true });
    expect(created).toMatchObject({ status: 201, tables: ['v2'] });
    urlToken = JSON.parse(created.text).url_token;
    const cases: [string, string, { body?: unknown; auth?: boolean }, number, string | null][] = [
      ['GET', '/api/v2/version', {}, 200, null],
      ['GET', '/api/v2/version.json', {}, 200, null],
      ['GET', `/api/v2/pushes/${urlToken}/preview/`, {}, 200, null],
      ['GET', '/api/v2/pushes/active', { auth: true }, 200, null],
      ['GET', '/api/v2/pushes/active', {}, 401, null],
      ['POST', '/api/v2/pushes', { body: { push: { payload: 'x', expire_after_views: 'many' } } }, 422, null],
      ['DELETE', '/api/v2/pushes/active', { auth: true }, 405, 'GET'],
      ['PUT', `/api/v2/pushes/${urlToken}`, { body: {} }, 405, 'GET, DELETE'],
      ['GET', '/api/v2/nothing', {}, 404, null],
      ['GET', '/api/v2/pushes/a/b/c/d', {}, 404, null],
      ['GET', `/api/v2/pushes/${urlToken}`, {}, 200, null],
    ];
    for (const [method, path, init, status, allow] of cases) {
      const answer = await send(method, path, init);
      expect({
        request: `${method} ${path}`,
        status: answer.status,
        allow: answer.allow,
        tables: answer.tables,
      }).toEqual({
        request: `${method} ${path}`,
        status,
        allow,
        tables: ['v2'],
      });
    }
  });

  it('matches every kind of v1 request once, on the v1 table', async () => {
    const created = await send('POST', '/p.json', { body: { password: { payload: 'v1 routed once' } } });
    expect(created).toMatchObject({ status: 201, tables: ['v1'] });
    const v1Token = JSON.parse(created.text).url_token as string;
    const cases: [string, string, number, string | null][] = [
      ['GET', '/api/v1/version.json', 200, null],
      ['GET', '/api/v1/version', 200, null],
      ['GET', `/p/${v1Token}/preview.json`, 200, null],
      ['DELETE', '/p/active.json', 405, 'GET'],
      ['PUT', '/p.json', 405, 'POST'],
      ['GET', '/p/a/b/c.json', 404, null],
    ];
    for (const [method, path, status, allow] of cases) {
      const answer = await send(method, path);
      expect({
        request: `${method} ${path}`,
        status: answer.status,
        allow: answer.allow,
        tables: answer.tables,
      }).toEqual({
        request: `${method} ${path}`,
        status,
        allow,
        tables: ['v1'],
      });
    }
  });

  it('never asks the route table for a page or a probe', async () => {
    for (const path of ['/', '/healthz', '/api/v2/openapi.json']) {
      const answer = await send('GET', path);
      expect({ path, status: answer.status, tables: answer.tables }).toEqual({ path, status: 200, tables: [] });
    }
  });

  it("runs every API request on Node's own request and response, through one edge, never through express", async () => {
    const answer = vi.spyOn(Edge.prototype, 'answer');
    try {
      for (const [method, path, status] of [
        ['POST', '/api/v2/pushes', 201],
        ['GET', '/api/v2/version', 200],
        ['DELETE', '/api/v2/pushes/active', 405],
        ['GET', '/api/v2/nothing', 404],
        ['GET', '/api/v1/version', 200],
      ] as const) {
        answer.mockClear();
        const sent = await send(
          method,
          path,
          method === 'POST' ? { body: { push: { payload: 'p' } }, auth: true } : {},
        );
        expect(sent.status, `${method} ${path}`).toBe(status);
        expect(answer, `${method} ${path}`).toHaveBeenCalledTimes(1);
        const [req, res] = answer.mock.calls[0]!;
        // Express's request and response set their prototypes onto Node's objects; an API request keeps Node's own.
        expect(Object.getPrototypeOf(req)).toBe(IncomingMessage.prototype);
        expect(Object.getPrototypeOf(res)).toBe(ServerResponse.prototype);
        expect('app' in req || 'app' in res || 'locals' in res).toBe(false);
      }
      // A page is express's, and never reaches an edge.
      answer.mockClear();
      expect((await send('GET', '/')).status).toBe(200);
      expect(answer).not.toHaveBeenCalled();
    } finally {
      answer.mockRestore();
    }
  });
});
