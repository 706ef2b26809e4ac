/**
 * A browser app on another origin, in headless Chromium, with the SDK's browser build (its published ESM build,
 * made by tsdown as `npm run pack` makes it, loaded by the page as modules): real cross-origin requests, no
 * interception. The app is served from a second local origin (`http://127.0.0.1:<app port>`, listed in
 * PWPUSH_CORS_ORIGINS) and, unlisted, from a third (`http://localhost:<app port>`).
 *
 * Listed, the page creates a push with a token, pages the owner's list through `Link`, retrieves the push with a
 * passphrase, and reads `Retry-After` on a real 429 (the per-client limit); unlisted, the browser blocks it; pages
 * and cookies are never readable cross-origin. The same page passes against the mock (`npm run mock`, with the same
 * origin listed), where the 429 is asked for with `Prefer: code=429`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrism, type PrismProcess } from '../../../openapi/tooling/prism-process.js';
import { repoRoot } from '../../src/config/settings.js';
import { launchChromium } from './chromium.js';
import { startWeb, type WebApp } from './support.js';

const run = promisify(execFile);

// The page's program: every step's outcome goes into window.result.
const APP_JS = `
import { createSecretPushClient, RateLimitError } from '/sdk/index.mjs';
const params = new URLSearchParams(location.search);
const api = params.get('api');
const token = params.get('token');
const seen = [];
// A fetch that records what the page can read of each answer (hidden headers read as null).
const recording = (extra = {}) => async (input, init) => {
  const request = new Request(input, init);
  for (const [name, value] of Object.entries(extra)) request.headers.set(name, value);
  const response = await fetch(request);
  const h = (name) => response.headers.get(name);
  seen.push({ url: request.url, status: response.status, link: h('Link'), total: h('X-Total-Count'), retryAfter: h('Retry-After'),
    rateLimit: h('RateLimit'), rateLimitPolicy: h('RateLimit-Policy'), requestId: h('X-Request-Id') });
  return response;
};
const describeError = (error) => error.name + (error.code ? ':' + error.code : '');
const result = { origin: location.origin };
try {
  if (params.get('step') === 'listed') {
    const owner = createSecretPushClient({ baseUrl: api, token, fetch: recording(), maxRetries: 0 });
    const created = await owner.createPush({ payload: 'from another origin', passphrase: 'open sesame', expire_after_views: 3 });
    result.created = { urlToken: created.url_token, htmlUrl: created.html_url, requestId: seen.at(-1).requestId };
    const tokens = [];
    for await (const push of owner.activePushes()) tokens.push(push.url_token);
    result.listed = { count: tokens.length, includesCreated: tokens.includes(created.url_token), unique: new Set(tokens).size };
    result.pages = seen.filter((s) => s.url.includes('/pushes/active')).map((s) => ({ url: s.url, link: s.link, total: s.total }));
    const anonymous = createSecretPushClient({ baseUrl: api, fetch: recording(), maxRetries: 0 });
    try {
      await anonymous.retrievePush(created.url_token);
      result.withoutPassphrase = 'retrieved';
    } catch (error) {
      result.withoutPassphrase = describeError(error);
    }
    const retrieved = await anonymous.retrievePush(created.url_token, { passphrase: 'open sesame' });
    result.retrieved = { payload: retrieved.payload, viewsRemaining: retrieved.views_remaining };
    const ask429 = params.get('ask429') ? { Prefer: 'code=429' } : {};
    const limited = createSecretPushClient({ baseUrl: api, fetch: recording(ask429), maxRetries: 0 });
    for (let i = 0; i < 400 && !result.rateLimited; i++) {
      try {
        await limited.version();
      } catch (error) {
        if (!(error instanceof RateLimitError)) throw error;
        const last = seen.at(-1);
        result.rateLimited = { status: last.status, retryAfterHeader: last.retryAfter, retryAfterSeconds: error.retryAfterSeconds,
          rateLimit: last.rateLimit, rateLimitPolicy: last.rateLimitPolicy, after: i };
      }
    }
    // Pages and their cookies: never readable from another origin.
    result.pagesReadable = [];
    for (const page of ['/', '/users/sign_in']) {
      try {
        await fetch(api + page, { credentials: 'include' });
        result.pagesReadable.push(page);
      } catch {
        /* blocked, as it must be */
      }
    }
  } else {
    try {
      await createSecretPushClient({ baseUrl: api, maxRetries: 0 }).version();
      result.version = 'read';
    } catch (error) {
      result.version = describeError(error);
    }
    try {
      await createSecretPushClient({ baseUrl: api, token, maxRetries: 0 }).createPush({ payload: 'from an unlisted origin' });
      result.create = 'created';
    } catch (error) {
      result.create = describeError(error);
    }
  }
} catch (error) {
  result.error = describeError(error) + ' ' + error.message;
}
window.result = result;
`;

const INDEX =
  '<!doctype html><meta charset="utf-8"><title>app on another origin</title><script type="module" src="/app.js"></script>';

/** The app's origin: the page, its program and the SDK's ESM build under /sdk/. */
async function serveApp(sdkDist: string): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://app');
    if (url.pathname === '/' || url.pathname === '/index.html')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(INDEX);
    if (url.pathname === '/app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(APP_JS);
    const file = path.join(sdkDist, path.normalize(url.pathname.replace(/^\/sdk\//, '')));
    if (url.pathname.startsWith('/sdk/') && file.startsWith(sdkDist) && file.endsWith('.mjs')) {
      try {
        return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
      } catch {
        /* not found below */
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let chromium: Awaited<ReturnType<typeof launchChromium>>;
let sdkDist: string;
let app: Awaited<ReturnType<typeof serveApp>>;
let listed: string;
let unlisted: string;

beforeAll(async () => {
  // The SDK's browser build: its ESM build as published (tsdown, scripts/library-build.ts), into a folder of this test.
  // Only what the page loads: the ESM files, without the CommonJS build and the declarations (the packaging tests
  // check those), which took most of this file's time and gigabytes of memory (issue 40).
  sdkDist = mkdtempSync(path.join(os.tmpdir(), 'sp-sdk-dist-'));
  await run(
    process.execPath,
    [
      path.join(repoRoot, 'node_modules/tsdown/dist/run.mjs'),
      '--config-loader',
      'tsx',
      '--format',
      'esm',
      '--no-dts',
      '--out-dir',
      sdkDist,
    ],
    {
      cwd: path.join(repoRoot, 'sdk'),
      timeout: 120_000,
    },
  );
  app = await serveApp(sdkDist);
  listed = `http://127.0.0.1:${app.port}`;
  unlisted = `http://localhost:${app.port}`;
  chromium = await launchChromium();
}, 240_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  if (sdkDist) rmSync(sdkDist, { recursive: true, force: true });
});

/** Opens the app at `origin` with the query, waits for its program, returns what it found. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- what the page's program reported, read field by field
async function runPage(origin: string, query: Record<string, string>): Promise<Record<string, any>> {
  const context = await chromium.browser.newContext();
  try {
    const page: Page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${origin}/?${new URLSearchParams(query)}`);
    await page.waitForFunction(() => (window as unknown as { result?: unknown }).result !== undefined, undefined, {
      timeout: 60_000,
    });
    expect(problems).toEqual([]);
    const result = await page.evaluate(() => (window as unknown as { result: Record<string, unknown> }).result);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- what the page's program reported, read field by field
    return result as Record<string, any>;
  } finally {
    await context.close();
  }
}

describe('a browser app on another origin against the real server', () => {
  let web: WebApp;
  let token: string;
  const LIMIT = 120;

  beforeAll(async () => {
    web = await startWeb({ corsOrigins: [`http://127.0.0.1:${app.port}`], rateLimitPerMinute: LIMIT });
    const user = await web.core.users.createUser('browser-app@example.org');
    token = user.token;
    // 50 pushes already: the one the page makes is the 51st, so the owner's list has two pages (50 a page).
    const ctx = {
      actor: { userId: user.userId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
      baseUrl: web.baseUrl,
    };
    for (let i = 0; i < 50; i++) await web.core.pushes.create({ kind: 'text', payload: `seed ${i}` }, ctx);
  });
  afterAll(async () => {
    await web?.stop();
  });

  it('from a listed origin: creates with a token, pages through Link, retrieves with a passphrase, reads Retry-After on a real 429', async () => {
    const result = await runPage(listed, { step: 'listed', api: web.baseUrl, token });
    expect(result.error).toBeUndefined();
    expect(result.origin).toBe(listed);
    expect(result.created.htmlUrl).toMatch(new RegExp(`^${web.baseUrl}/p/`));
    expect(result.created.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.listed).toEqual({ count: 51, includesCreated: true, unique: 51 });
    // Two pages, read through Link (exposed to the page), and X-Total-Count.
    expect(result.pages).toEqual([
      {
        url: `${web.baseUrl}/api/v2/pushes/active?page=1`,
        link: `<${web.baseUrl}/api/v2/pushes/active?page=2>; rel="next"`,
        total: '51',
      },
      {
        url: `${web.baseUrl}/api/v2/pushes/active?page=2`,
        link: `<${web.baseUrl}/api/v2/pushes/active?page=1>; rel="prev"`,
        total: '51',
      },
    ]);
    expect(result.withoutPassphrase).toBe('PassphraseRequiredError:passphrase_required');
    expect(result.retrieved).toEqual({ payload: 'from another origin', viewsRemaining: 2 });
    // The per-client limit (120 a minute for this client address), read from the header the page can see.
    expect(result.rateLimited.status).toBe(429);
    expect(Number(result.rateLimited.retryAfterHeader)).toBeGreaterThan(0);
    expect(result.rateLimited.retryAfterSeconds).toBe(Number(result.rateLimited.retryAfterHeader));
    expect(result.rateLimited.after).toBeLessThan(LIMIT);
    // RateLimit / RateLimit-Policy are exposed (Access-Control-Expose-Headers): the page reads the policy and that
    // nothing is left, with the same reset as Retry-After.
    expect(result.rateLimited.rateLimitPolicy).toBe(`"requests";q=${LIMIT};w=60`);
    expect(result.rateLimited.rateLimit).toBe(`"requests";r=0;t=${result.rateLimited.retryAfterHeader}`);
    expect(result.pagesReadable).toEqual([]);
  }, 120_000);

  it('from an unlisted origin: the browser blocks every call, and nothing is created', async () => {
    const before = await web.db.query('select count(*)::int as n from pushes');
    const result = await runPage(unlisted, { step: 'unlisted', api: web.baseUrl, token });
    expect(result.error).toBeUndefined();
    expect(result.origin).toBe(unlisted);
    expect(result.version).toBe('NetworkError');
    // The create needs a preflight (Authorization, JSON): refused without CORS headers, so the POST is never sent.
    expect(result.create).toBe('NetworkError');
    expect(await web.db.query('select count(*)::int as n from pushes')).toEqual(before);
  }, 120_000);
});

describe('the same browser app against the mock (npm run mock)', () => {
  let mock: PrismProcess;

  beforeAll(async () => {
    mock = await startPrism({ corsOrigins: `http://127.0.0.1:${app.port}` });
  }, 120_000);
  afterAll(() => mock?.stop());

  it('from a listed origin: the same calls pass, lists end, links name the mock, Retry-After is readable', async () => {
    const result = await runPage(listed, { step: 'listed', api: mock.baseUrl, token: 'spt_any_token', ask429: '1' });
    expect(result.error).toBeUndefined();
    expect(result.created.htmlUrl).toMatch(new RegExp(`^${mock.baseUrl}/p/`));
    // The examples' list: two pages through Link, the second (last) empty and without rel="next".
    expect(result.pages).toEqual([
      {
        url: `${mock.baseUrl}/api/v2/pushes/active?page=1`,
        link: `<${mock.baseUrl}/api/v2/pushes/active?page=2>; rel="next"`,
        total: '2',
      },
      {
        url: `${mock.baseUrl}/api/v2/pushes/active?page=2`,
        link: `<${mock.baseUrl}/api/v2/pushes/active?page=1>; rel="prev"`,
        total: '2',
      },
    ]);
    expect(result.listed).toMatchObject({ count: 2, unique: 2 });
    // Prism checks no passphrase: it answers the retrieval example either way.
    expect(result.withoutPassphrase).toBe('retrieved');
    expect(typeof result.retrieved.payload).toBe('string');
    expect(result.rateLimited.status).toBe(429);
    expect(Number(result.rateLimited.retryAfterHeader)).toBeGreaterThan(0);
    expect(result.rateLimited.after).toBe(0);
    expect(result.pagesReadable).toEqual([]);
  }, 120_000);

  it('from an unlisted origin: blocked as by the server', async () => {
    const result = await runPage(unlisted, { step: 'unlisted', api: mock.baseUrl, token: 'spt_any_token' });
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ version: 'NetworkError', create: 'NetworkError' });
  }, 120_000);
});
