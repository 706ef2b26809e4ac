/**
 * End-to-end encrypted pushes in real headless Chromium, through the browser bundles of the SDK (esbuild, IIFE):
 * a sender page creates a text push and a file push with the full SDK (`createPush(…, { endToEnd: true })`), and
 * a second browser context opens the share links, reading the key from `location.href`'s fragment, with the SDK
 * (`retrieveLink`, `downloadFile`) and with the `@secret-push/sdk/e2e` bundle alone plus `fetch` (the way the web
 * pages do). The same round trips run twice: against the stateful mock, answered from Node through Playwright's
 * request interception, and against the REAL server (createApp on a fresh PostgreSQL database), to which the
 * interception forwards the API requests. Every request is recorded there: neither the key nor a plaintext is ever
 * sent.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { getResponse } from 'msw';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../server/test/web/chromium.js';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { startRealServer, type RealServer } from '../support/real-server.js';

const src = fileURLToPath(new URL('../../src/', import.meta.url));
const assets: Record<string, string> = {};
let chromium: Awaited<ReturnType<typeof launchChromium>>;

async function iife(entry: string, globalName: string): Promise<string> {
  const result = await build({
    entryPoints: [`${src}${entry}`],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

const PAGE = (script: string) => `<!doctype html><meta charset="utf-8"><title>push</title>
<pre id="payload"></pre><ul id="files"></ul><p id="error"></p><p id="done" hidden>done</p>
<script src="/assets/sdk.js"></script><script src="/assets/e2e.js"></script><script src="/assets/${script}"></script>`;

// The recipient, with the SDK's client: the link is the page's own address, fragment included.
const RECIPIENT_SDK = `(async () => {
  const $ = (id) => document.getElementById(id);
  try {
    const client = SecretPush.createSecretPushClient({ baseUrl: location.origin });
    const push = await client.retrieveLink(location.href);
    $('payload').textContent = push.expired ? '(expired)' : push.payload;
    for (const file of push.files) {
      const bytes = await client.downloadFile(file);
      const li = document.createElement('li');
      li.textContent = file.filename + ':' + Array.from(bytes).join(',');
      $('files').append(li);
    }
  } catch (error) {
    $('error').textContent = error.name + ' ' + error.code;
  }
  $('done').hidden = false;
})();`;

// The recipient the way the web pages do it (server/src/web/assets/recipient.js): the e2e bundle alone and plain fetch.
const RECIPIENT_E2E_ONLY = `(async () => {
  const $ = (id) => document.getElementById(id);
  const E = SecretPushE2E;
  try {
    const link = E.parseShareLink(location.href);
    if (!link.key) throw new E.MissingKeyError('no key', { code: 'missing_key' });
    const response = await fetch('/api/v2/pushes/' + link.urlToken, { headers: { Accept: 'application/json' } });
    const push = await E.openPush(await response.json(), link.key);
    $('payload').textContent = push.payload;
    for (const file of push.files) {
      const bytes = await E.openFile(file, new Uint8Array(await (await fetch(file.url)).arrayBuffer()));
      const li = document.createElement('li');
      li.textContent = file.filename + ':' + Array.from(bytes).join(',');
      $('files').append(li);
    }
  } catch (error) {
    $('error').textContent = error.name + ' ' + error.code;
  }
  $('done').hidden = false;
})();`;

/** What answers the API: the stateful mock in this process, or the real server on a loopback port. */
interface Api {
  token: string;
  answer(request: Request): Promise<Response | undefined>;
  close(): Promise<void>;
}

function mockApi(origin: string): Api {
  const mock = createMockServerHandlers({ baseUrl: origin });
  return {
    token: mock.users[0]!.token,
    answer: (request) => getResponse(mock.handlers, request),
    close: async () => {},
  };
}

async function realApi(origin: string): Promise<Api> {
  // Its links (html_url, file links) name the browsers' origin, which the interception forwards here.
  const real: RealServer = await startRealServer({ publicBaseUrl: origin });
  return {
    token: real.users[0]!.token,
    async answer(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.delete('host');
      const body = request.body ? await request.arrayBuffer() : undefined;
      return fetch(`${real.baseUrl}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body,
        redirect: 'manual',
      });
    },
    close: () => real.close(),
  };
}

function defineRoundTrips(name: 'mock' | 'server', ORIGIN: string): void {
  let api: Api;
  let TOKEN = '';
  /** Every request the browsers made: method, URL, headers and body. */
  const sent: string[] = [];

  async function serve(route: Route): Promise<void> {
    const request = route.request();
    const url = new URL(request.url());
    const body = request.postDataBuffer();
    const headers = await request.allHeaders();
    sent.push([request.method(), request.url(), JSON.stringify(headers), body?.toString('utf8') ?? ''].join('\n'));
    if (url.pathname.startsWith('/api/v2/')) {
      const answer = await api.answer(
        new Request(url, { method: request.method(), headers, body: body ? new Uint8Array(body) : undefined }),
      );
      if (!answer) return route.fulfill({ status: 599, body: 'no answer' });
      const answerHeaders = Object.fromEntries(answer.headers);
      delete answerHeaders['content-encoding'];
      delete answerHeaders['content-length'];
      delete answerHeaders['transfer-encoding'];
      return route.fulfill({
        status: answer.status,
        headers: answerHeaders,
        body: Buffer.from(await answer.arrayBuffer()),
      });
    }
    const asset = /^\/assets\/(.+)$/.exec(url.pathname)?.[1];
    if (asset !== undefined && assets[asset] !== undefined) {
      return route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body: assets[asset] });
    }
    if (url.pathname === '/sender')
      return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: PAGE('none.js') });
    // /p/<token>[/r] answers the SDK recipient; /pages/p/<token> the e2e-only one.
    if (/^\/p\/[a-z2-7]+(\/r)?$/.test(url.pathname))
      return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: PAGE('recipient-sdk.js') });
    if (/^\/pages\/p\/[a-z2-7]+$/.test(url.pathname))
      return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: PAGE('recipient-e2e.js') });
    return route.fulfill({ status: 404, body: 'not found' });
  }

  let sender: BrowserContext;
  let recipient: BrowserContext;
  let senderPage: Page;
  const pageErrors: string[] = [];

  async function context(): Promise<BrowserContext> {
    const ctx = await chromium.browser.newContext();
    await ctx.route(`${ORIGIN}/**`, serve);
    return ctx;
  }

  /** Opens a link in the recipient's browser and returns what its page showed. */
  async function open(link: string): Promise<{ payload: string; files: string[]; error: string }> {
    const page = await recipient.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(link);
    await page.locator('#done').waitFor({ state: 'visible' });
    const result = {
      payload: (await page.locator('#payload').textContent()) ?? '',
      files: await page.locator('#files li').allTextContents(),
      error: (await page.locator('#error').textContent()) ?? '',
    };
    await page.close();
    return result;
  }

  beforeAll(async () => {
    api = name === 'mock' ? mockApi(ORIGIN) : await realApi(ORIGIN);
    TOKEN = api.token;
    sender = await context();
    recipient = await context();
    senderPage = await sender.newPage();
    senderPage.on('pageerror', (e) => pageErrors.push(e.message));
    await senderPage.goto(`${ORIGIN}/sender`);
  }, 300_000);

  afterAll(async () => {
    await sender?.close();
    await recipient?.close();
    await api?.close();
  });

  /** Creates an encrypted push in the sender's page with the SDK bundle; returns the share link. */
  function createInPage(args: {
    payload?: string;
    file?: { name: string; bytes: number[] };
    retrievalStep?: boolean;
    views?: number;
  }): Promise<string> {
    return senderPage.evaluate(
      async ({ args, token }) => {
        const sdk = (window as unknown as { SecretPush: typeof import('../../src/index.js') }).SecretPush;
        const client = sdk.createSecretPushClient({ baseUrl: location.origin, token });
        const push = await client.createPush(
          {
            payload: args.payload,
            files: args.file ? [sdk.fileFromBytes(new Uint8Array(args.file.bytes), args.file.name)] : undefined,
            retrieval_step: args.retrievalStep,
            expire_after_views: args.views ?? 5,
          },
          { endToEnd: true },
        );
        return push.shareLink;
      },
      { args, token: TOKEN },
    );
  }

  describe(`end-to-end encrypted pushes in headless Chromium (browser bundles) against the ${name === 'mock' ? 'stateful mock' : 'real server'}`, () => {
    it('bundles both entries, and the page has WebCrypto in this secure context', async () => {
      expect(assets['e2e.js']!.length).toBeLessThan(assets['sdk.js']!.length);
      expect(await senderPage.evaluate(() => typeof crypto.subtle.encrypt)).toBe('function');
    });

    it("round-trips a text push: created in one browser, read in another from the link's fragment", async () => {
      const plaintext = 'correct horse battery staple — 🔑';
      const link = await createInPage({ payload: plaintext });
      expect(link).toMatch(new RegExp(`^${ORIGIN}/p/[a-z2-7]{24}#k=[A-Za-z0-9_-]{43}$`));
      expect(await open(link)).toEqual({ payload: plaintext, files: [], error: '' });
      const key = link.split('#k=')[1]!;
      for (const request of sent) {
        expect(request).not.toContain(key);
        expect(request).not.toContain('correct horse');
      }
    });

    it('round-trips a file push with its real name and bytes, through the retrieval-step link', async () => {
      const bytes = [0, 1, 2, 127, 128, 254, 255];
      const link = await createInPage({
        payload: 'the key file',
        file: { name: 'clé privée.pem', bytes },
        retrievalStep: true,
      });
      expect(link).toMatch(/\/p\/[a-z2-7]{24}\/r#k=/);
      expect(await open(link)).toEqual({
        payload: 'the key file',
        files: [`clé privée.pem:${bytes.join(',')}`],
        error: '',
      });
      const key = link.split('#k=')[1]!;
      for (const request of sent)
        for (const secret of [key, 'the key file', 'privée', 'clé']) expect(request).not.toContain(secret);
    });

    it('opens a push with the e2e bundle alone and plain fetch, the way the web pages do', async () => {
      const link = await createInPage({
        payload: 'opened by the page code',
        file: { name: 'a.txt', bytes: [104, 105] },
      });
      const pageLink = link.replace(`${ORIGIN}/p/`, `${ORIGIN}/pages/p/`);
      expect(await open(pageLink)).toEqual({ payload: 'opened by the page code', files: ['a.txt:104,105'], error: '' });
    });

    it('shows a typed error for a link without its key (no view spent) and for a wrong key, never garbage', async () => {
      const link = await createInPage({ payload: 'one view only', views: 1 });
      const [page, key] = link.split('#k=') as [string, string];
      expect(await open(page)).toEqual({ payload: '', files: [], error: 'MissingKeyError missing_key' });
      expect(await open(`${page}#k=${key.slice(0, 30)}`)).toEqual({
        payload: '',
        files: [],
        error: 'MissingKeyError invalid_key',
      });
      // The one view is still there (an expired record has nothing to decrypt, so a wrong key would pass unnoticed).
      const wrong = (key[0] === 'A' ? 'B' : 'A') + key.slice(1);
      expect(await open(`${page}#k=${wrong}`)).toEqual({
        payload: '',
        files: [],
        error: 'DecryptionError decryption_failed',
      });
      // That retrieval spent the only view, as any retrieval does: the push is gone, even for the right key.
      expect(await open(link)).toEqual({ payload: '(expired)', files: [], error: '' });
    });

    it('sent no key, no plaintext, and raised no page error', () => {
      expect(sent.length).toBeGreaterThan(20);
      expect(
        sent.some(
          (r) => r.startsWith('POST\n') && r.includes('"client_encryption":{"scheme":"aes-256-gcm","version":1}'),
        ),
      ).toBe(true);
      expect(sent.filter((r) => r.includes('#'))).toEqual([]); // no fragment ever reached the network
      expect(pageErrors).toEqual([]);
    });
  });
}

beforeAll(async () => {
  assets['sdk.js'] = await iife('index.ts', 'SecretPush');
  assets['e2e.js'] = await iife('e2e/index.ts', 'SecretPushE2E');
  assets['none.js'] = '';
  assets['recipient-sdk.js'] = RECIPIENT_SDK;
  assets['recipient-e2e.js'] = RECIPIENT_E2E_ONLY;
  chromium = await launchChromium();
}, 300_000);

afterAll(async () => {
  await chromium?.close();
});

// localhost is a secure context, so WebCrypto's subtle is there (as on an https instance).
defineRoundTrips('mock', 'http://localhost:47931');
defineRoundTrips('server', 'http://localhost:47932');
