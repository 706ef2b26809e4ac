/**
 * Web page tests: the real app on the real Core and a fresh database of the run's test cluster, listening on
 * 127.0.0.1:0; a cookie-keeping fetch for plain HTTP checks; and headless Debian Chromium driven by playwright-core
 * (./chromium.ts).
 */
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../../src/http/app.js';
import { repoRoot } from '../../src/config/settings.js';
import type { Core, Settings } from '../../src/core.js';
import { createCore } from '../../src/core.js';
import { reserveAddress, withOwnBase } from '../support/address.js';
import { createMigratedDatabase, makeSettings, type TestDatabase } from '../support/db.js';

export { launchChromium } from './chromium.js';
/**
 * Where the browser tests put their screenshots: an ignored folder (test-results/screenshots), so a test run leaves
 * the tree as it found it; `npm run screenshots` (SCREENSHOTS_UPDATE=1) writes the committed ones in docs/screenshots
 * on purpose.
 */
const SCREENSHOTS =
  process.env.SCREENSHOTS_UPDATE === '1'
    ? path.join(repoRoot, 'docs', 'screenshots')
    : path.join(repoRoot, 'test-results', 'screenshots');

export interface WebApp {
  baseUrl: string;
  core: Core;
  db: TestDatabase;
  settings: Settings;
  /** Every log line the app wrote. */
  logs: string[];
  stop(): Promise<void>;
}

export async function listen(
  core: Core,
  logs: string[],
  reserved?: Server,
): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
  const app = createApp(core, { logger });
  await app.locals.ready;
  const server = reserved ?? (await reserveAddress()).server;
  server.on('request', app);
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startWeb(overrides: Partial<Settings> = {}, opts: { db?: TestDatabase } = {}): Promise<WebApp> {
  const db = opts.db ?? (await createMigratedDatabase('sp_web'));
  const { server, baseUrl } = await reserveAddress();
  const settings = makeSettings({ databaseUrl: db.url, ...withOwnBase(overrides, baseUrl) });
  const core = await createCore(settings, { poolMax: 8 });
  const logs: string[] = [];
  const served = await listen(core, logs, server);
  return {
    baseUrl: served.baseUrl,
    core,
    db,
    settings,
    logs,
    async stop() {
      await served.close();
      await core.close();
      if (!opts.db) await db.drop();
    },
  };
}

/** A fetch that keeps cookies like a browser would (one jar per visitor) and never follows redirects. */
export class Visitor {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string> = {},
  ) {}

  async fetch(pathname: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [k, v] of Object.entries(this.headers)) if (!headers.has(k)) headers.set(k, v);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(`${this.baseUrl}${pathname}`, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** GETs a page and returns its HTML and the CSRF token of its forms. */
  async page(pathname: string): Promise<{ response: Response; html: string; csrf: string }> {
    const response = await this.fetch(pathname);
    const html = await response.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    return { response, html, csrf };
  }

  async post(
    pathname: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return this.fetch(pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.baseUrl, ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  async signUp(email: string, password: string): Promise<Response> {
    const { csrf } = await this.page('/users/sign_up');
    return this.post('/users/sign_up', { _csrf: csrf, email, password });
  }

  async signIn(email: string, password: string, next = ''): Promise<Response> {
    const { csrf } = await this.page('/users/sign_in');
    return this.post('/users/sign_in', { _csrf: csrf, email, password, next });
  }
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}
