/**
 * End-to-end encrypted pushes through the web pages, in real headless Chromium (issue 13, "done when"): a signed-in
 * sender creates a text push and a file push with "Encrypt in my browser"; a second browser context (the recipient)
 * opens the links and reads the plaintext, decrypted in the page from the link's fragment. Every request both
 * browsers make is recorded, and afterwards the test reads every table and every line of the server's log directly:
 * neither the plaintexts nor the keys are anywhere, and what the server keeps under its own at-rest encryption is the
 * sender's envelope. Also: missing, damaged and wrong keys, no WebCrypto, URL and QR display, the passphrase gate,
 * the retrieval step, the strict CSP, and the operator's choice (default, required, off).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { buildShareLink, sealPush } from '@secret-push/sdk/e2e';
import { generate } from 'otplib';
import { createKeyring } from '../../src/crypto/envelope.js';
import { envelopeContexts } from '../../src/push/push-service.js';
import { launchChromium, startWeb, Visitor, type WebApp } from './support.js';

const EMAIL = 'sender@example.org';
const PASSWORD = 'a long enough password';

let app: WebApp;
/** The browsers talk to the app through this recorder, which keeps every request exactly as the server got it. */
let proxy: { baseUrl: string; received: string[]; close(): Promise<void> };
/** Where the browsers go: the recorder in front of the app. */
let base = '';
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let sender: BrowserContext;
let recipient: BrowserContext;
let senderPage: Page;
/** Every request either browser made, as the browser reports it (method, URL, headers). */
const requests: string[] = [];
const problems: string[] = [];
/** Plaintexts and keys of this file's pushes: none of them may reach the server. */
const secrets: string[] = [];

function watch(page: Page): Page {
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return page;
}

async function record(context: BrowserContext): Promise<void> {
  context.on('request', (request) => {
    requests.push([request.method(), request.url(), JSON.stringify(request.headers())].join('\n'));
  });
}

/**
 * A recording reverse proxy: each request (method, path, headers, the whole body as latin1 text, so multipart file
 * parts show as sent) is kept, then passed on unchanged, Host included, so the app builds its links for the proxy.
 */
async function recordingProxy(target: string): Promise<typeof proxy> {
  const received: string[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push([req.method, req.url, JSON.stringify(req.headers), body.toString('latin1')].join('\n'));
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface CreateOptions {
  kind?: 'text' | 'url' | 'qr' | 'file';
  payload?: string;
  views?: number;
  passphrase?: string;
  retrievalStep?: boolean;
  file?: { name: string; mimeType: string; buffer: Buffer };
  encrypt?: boolean;
}

/** Fills and submits the create form in the sender's page; returns the share link shown. */
async function createInPage(opts: CreateOptions, page: Page = senderPage): Promise<string> {
  await page.goto(`${base}/`);
  await page
    .getByRole('radio', {
      name: { url: 'URL', qr: 'QR code', file: 'Files', text: 'Text' }[opts.kind ?? 'text'],
      exact: true,
    })
    .check();
  if (opts.payload !== undefined) await page.locator('#payload').fill(opts.payload);
  if (opts.file) await page.locator('#files').setInputFiles(opts.file);
  await page.getByLabel('Expire after views').fill(String(opts.views ?? 5));
  if (opts.passphrase) await page.getByLabel('Passphrase (optional)').fill(opts.passphrase);
  await page.getByLabel(/Ask the recipient to click/).setChecked(opts.retrievalStep ?? false);
  const box = page.getByLabel(/Encrypt in my browser/);
  if (await box.isEnabled()) await box.setChecked(opts.encrypt ?? true);
  await page.getByRole('button', { name: 'Make the secret link' }).click();
  await page.getByRole('heading', { name: 'Your secret link' }).waitFor();
  return (await page.locator('#share-link').textContent())!.trim();
}

/** An end-to-end encrypted push of `ownerId` with a retrieval step, sealed here: its share link and key (both secrets). */
async function ownedSealedLink(
  web: WebApp,
  ownerId: string,
  plaintext: string,
): Promise<{ link: string; key: string }> {
  const sealed = await sealPush({ payload: plaintext, retrieval_step: true });
  secrets.push(plaintext, sealed.key);
  const push = await web.core.pushes.create(sealed.push, {
    actor: { userId: ownerId, ip: '127.0.0.1', userAgent: 'test', referrer: '' },
    baseUrl: web.baseUrl,
  });
  return { link: buildShareLink(push.html_url, sealed.key), key: sealed.key };
}

function tokenOf(link: string): string {
  return new URL(link).pathname.split('/')[2]!;
}

function keyOf(link: string): string {
  const key = /#k=([A-Za-z0-9_-]{43})$/.exec(link)?.[1];
  expect(key, 'the link carries a key').toBeDefined();
  secrets.push(key!);
  return key!;
}

async function viewsRemaining(link: string): Promise<number> {
  const [row] = await app.db.query<{ n: number }>(
    'select expire_after_views - views_used as n from pushes where url_token = $1',
    [tokenOf(link)],
  );
  return row!.n;
}

/** Opens a link in the recipient's browser (a new page of the second context). */
async function openAsRecipient(link: string, init?: (page: Page) => Promise<void>): Promise<Page> {
  const page = watch(await recipient.newPage());
  if (init) await init(page);
  await page.goto(link);
  return page;
}

beforeAll(async () => {
  app = await startWeb();
  proxy = await recordingProxy(app.baseUrl);
  base = proxy.baseUrl;
  chromium = await launchChromium();
  sender = await chromium.browser.newContext();
  recipient = await chromium.browser.newContext({ acceptDownloads: true });
  await record(sender);
  await record(recipient);
  senderPage = watch(await sender.newPage());
  await senderPage.goto(`${base}/users/sign_up`);
  await senderPage.getByLabel('Email').fill(EMAIL);
  await senderPage.getByLabel('Password').fill(PASSWORD);
  await senderPage.getByRole('button', { name: 'Sign up' }).click();
  await senderPage.getByRole('button', { name: 'Sign out' }).waitFor();
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await proxy?.close();
  await app?.stop();
});

describe('end-to-end encrypted pushes in the web pages (headless Chromium)', () => {
  it('offers "Encrypt in my browser" (off by default on an instance that allows it) and serves the SDK bundle from itself', async () => {
    await senderPage.goto(`${base}/`);
    const box = senderPage.getByLabel(/Encrypt in my browser/);
    expect(await box.isChecked()).toBe(false);
    expect(await box.isEnabled()).toBe(true);
    expect(await senderPage.locator('#passphrase-hint').textContent()).toMatch(/not part of the encryption key/);
    const bundle = await fetch(`${app.baseUrl}/assets/vendor/secret-push-e2e.js`);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await bundle.text()).toMatch(/^var SecretPushE2E=/);
  });

  it('creates a text push encrypted in the page; the recipient reads the plaintext in a second browser context', async () => {
    const plaintext = `correct horse battery staple ✓ ${Date.now()}`;
    secrets.push(plaintext);
    const link = await createInPage({ payload: plaintext, views: 2 });
    expect(link).toMatch(new RegExp(`^${base}/p/[a-z2-7]{24}#k=[A-Za-z0-9_-]{43}$`));
    keyOf(link);
    // The key went from the form to this page in the fragment; it is not left in the address bar.
    expect(new URL(senderPage.url()).hash).toBe('');
    expect(await senderPage.locator('#e2e-created').textContent()).toMatch(/encrypted in your browser/);

    const page = await openAsRecipient(link);
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe(plaintext);
    expect(await page.locator('#e2e-note').textContent()).toMatch(/never sent to the server/);
    expect(await viewsRemaining(link)).toBe(1);
    await page.close();

    // The signed-in sender opens it through the page's own reveal step (POST /p/{token}/reveal, the owner's look).
    const own = watch(await sender.newPage());
    await own.goto(link);
    expect(await own.locator('#push').getAttribute('data-reveal')).toBe('web');
    await own.locator('#secret-value').waitFor();
    expect(await own.locator('#secret-value').textContent()).toBe(plaintext);
    expect(await viewsRemaining(link)).toBe(1);
    // The owner's list says which pushes were encrypted in the browser.
    await own.goto(`${base}/pushes/active`);
    expect(await own.locator('td[data-label="Kind"]').first().textContent()).toMatch(
      /Text \(encrypted in the browser\)/,
    );
    await own.close();
  });

  it('creates a file push encrypted in the page (retrieval step, passphrase); the recipient saves the decrypted file under its real name', async () => {
    const message = `the deploy key, see file ${Date.now()}`;
    const name = 'clé privée (prod).pem';
    const bytes = Buffer.concat([
      Buffer.from('-----BEGIN PRIVATE KEY-----\n'),
      Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256)),
    ]);
    secrets.push(message, name, 'BEGIN PRIVATE KEY');
    const link = await createInPage({
      kind: 'file',
      payload: message,
      views: 3,
      passphrase: 'open sesame',
      retrievalStep: true,
      file: { name, mimeType: 'application/x-pem-file', buffer: bytes },
    });
    expect(link).toMatch(/\/p\/[a-z2-7]{24}\/r#k=[A-Za-z0-9_-]{43}$/);
    keyOf(link);
    // What the server stored for the file: an envelope as application/octet-stream, 32 bytes longer than the file.
    const [file] = await app.db.query<{ content_type: string; size: number }>(
      'select f.content_type, f.size from push_files f join pushes p on p.id = f.push_id where p.url_token = $1',
      [tokenOf(link)],
    );
    expect(file).toEqual({ content_type: 'application/octet-stream', size: bytes.length + 32 });

    const page = await openAsRecipient(link);
    expect(await page.locator('#passphrase-hint').textContent()).toMatch(/server checks the passphrase/);
    await page.getByLabel('Passphrase').fill('wrong guess');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.getByRole('alert').filter({ hasText: 'That passphrase is not correct' }).waitFor();
    expect(await viewsRemaining(link)).toBe(3);
    await page.getByLabel('Passphrase').fill('open sesame');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    await page.locator('#secret-value').waitFor();
    expect(await page.locator('#secret-value').textContent()).toBe(message);
    // The fragment survived the retrieval step: the reveal happened on the /r page itself.
    expect(new URL(page.url()).pathname).toMatch(/\/r$/);

    const fileLink = page.getByRole('link', { name });
    // The size in the page's language (English groups thousands: "3,028 bytes").
    expect(await page.locator('ul.files li').textContent()).toContain(
      `(${new Intl.NumberFormat('en').format(bytes.length)} bytes)`,
    );
    const [download] = await Promise.all([page.waitForEvent('download'), fileLink.click()]);
    expect(download.suggestedFilename()).toBe(name);
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    await page.getByText('Saved.', { exact: true }).waitFor();
    expect(await viewsRemaining(link)).toBe(2);
    await page.close();
  });

  it('shows an encrypted URL push as a link and an encrypted QR push as a drawn QR code', async () => {
    const url = `https://example.org/reset?code=${Date.now()}`;
    const qr = `WIFI:S:home;T:WPA;P:e2e-${Date.now()};;`;
    secrets.push(url, qr);
    const urlLink = await createInPage({ kind: 'url', payload: url, views: 2 });
    keyOf(urlLink);
    const page = await openAsRecipient(urlLink);
    const a = page.locator('a#secret-value');
    await a.waitFor();
    expect(await a.getAttribute('href')).toBe(url);
    expect(await a.getAttribute('rel')).toBe('noopener noreferrer');

    const qrLink = await createInPage({ kind: 'qr', payload: qr, views: 2 });
    keyOf(qrLink);
    await page.goto(qrLink);
    await page.locator('#qr-code svg').waitFor();
    expect(await page.locator('#qr-code svg path').count()).toBeGreaterThan(0);
    expect(await page.locator('#secret-value').textContent()).toBe(qr);
    await page.close();
  });

  it('checks in the page what the server cannot: a URL push of something that is not a URL is refused before anything is sent', async () => {
    const before = requests.length;
    await senderPage.goto(`${base}/`);
    await senderPage.getByRole('radio', { name: 'URL', exact: true }).check();
    await senderPage.locator('#payload').fill('not a url at all');
    await senderPage.getByLabel(/Encrypt in my browser/).check();
    await senderPage.getByRole('button', { name: 'Make the secret link' }).click();
    await senderPage.locator('#encrypt-error').filter({ hasText: 'must be a valid HTTP or HTTPS URL' }).waitFor();
    expect(requests.slice(before).filter((r) => r.startsWith('POST'))).toEqual([]);

    // A rule only the server checks (days outside the instance's bounds): the form comes back without the plaintext
    // (the server never had it) and without the now useless key in the address bar.
    await senderPage.getByRole('radio', { name: 'Text', exact: true }).check();
    secrets.push('refused by the server');
    await senderPage.locator('#payload').fill('refused by the server');
    await senderPage.getByLabel('Expire after days').fill('91');
    await senderPage.getByRole('button', { name: 'Make the secret link' }).click();
    await senderPage.getByRole('alert').filter({ hasText: 'enter the secret again' }).waitFor();
    expect(await senderPage.locator('#payload').inputValue()).toBe('');
    expect(new URL(senderPage.url()).hash).toBe('');
  });

  it('says clearly when the link has no key, a damaged key or a wrong key, and spends no view before it can decrypt', async () => {
    const plaintext = `one view only ${Date.now()}`;
    secrets.push(plaintext);
    const link = await createInPage({ payload: plaintext, views: 1 });
    const key = keyOf(link);
    const bare = link.split('#')[0]!;

    const missing = await openAsRecipient(bare);
    await missing.getByRole('alert').filter({ hasText: 'This link is missing its key' }).waitFor();
    expect(await missing.getByRole('alert').textContent()).toMatch(/Nothing was used up/);
    expect(await missing.getByRole('button', { name: 'Reveal the secret' }).count()).toBe(0);
    await missing.close();
    const damaged = await openAsRecipient(`${bare}#k=${key.slice(0, 30)}`);
    await damaged.getByRole('alert').filter({ hasText: 'damaged or cut short' }).waitFor();
    await damaged.close();
    expect(await viewsRemaining(link)).toBe(1);

    // No WebCrypto (an http:// address that is not localhost): nothing is fetched.
    const noCrypto = await openAsRecipient(link, async (p) => {
      await p.addInitScript(() => Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined }));
    });
    await noCrypto.getByRole('alert').filter({ hasText: 'This browser cannot decrypt the secret here' }).waitFor();
    expect(await noCrypto.locator('#secret-value').count()).toBe(0);
    expect(await viewsRemaining(link)).toBe(1);
    await noCrypto.close();

    // A wrong key of the right form: the page fetches (the view is spent) and refuses to show anything.
    const wrong = (key[0] === 'A' ? 'B' : 'A') + key.slice(1);
    const page = await openAsRecipient(`${bare}#k=${wrong}`);
    await page.getByRole('alert').filter({ hasText: 'does not open this secret' }).waitFor();
    expect(await page.locator('#secret-value').count()).toBe(0);
    expect(await viewsRemaining(link)).toBe(0);
    await page.close();
  });

  it('sent neither a plaintext nor a key in any request, and broke no CSP rule', () => {
    expect(requests.length).toBeGreaterThan(30);
    // Fewer reach the server (the browsers cache the assets); these are the ones that did, exactly as sent.
    expect(proxy.received.length).toBeGreaterThan(30);
    // The creates, as the server received them: envelopes and the marker.
    const creates = proxy.received.filter((r) => r.startsWith('POST\n/\n'));
    expect(creates.length).toBeGreaterThanOrEqual(5);
    for (const create of creates) {
      expect(create).toContain('aes-256-gcm:1');
      expect(create).toMatch(/name="payload"\r\n\r\nspe1\.[A-Za-z0-9_-]+\r\n/);
    }
    expect(
      creates.some((c) =>
        /filename="spe1\.[A-Za-z0-9_-]+"\r\nContent-Type: application\/octet-stream\r\n\r\nSPE1/.test(c),
      ),
    ).toBe(true);
    for (const request of proxy.received) {
      const [, target, headers] = request.split('\n');
      expect(`${target} ${headers}`.includes('#'), 'a fragment reached the network').toBe(false);
      for (const secret of secrets) {
        for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
          expect(request.includes(form), `a request carries ${secret.slice(0, 12)}…`).toBe(false);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps neither a plaintext nor a key in any table or log line; under its at-rest encryption the server holds only envelopes', async () => {
    const tables = await app.db.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['pushes', 'push_files', 'audit_entries']));
    let dump = '';
    for (const { table_name } of tables) {
      // Every column as text; bytea as escaped text, so readable bytes show as themselves.
      const rows = await app.db.query<{ row: string }>(
        `select row_to_json(t)::text as row from ${JSON.stringify(table_name)} t`,
      );
      dump += rows.map((r) => r.row).join('\n');
      const bytea = await app.db.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_schema = 'public' and table_name = $1 and data_type = 'bytea'",
        [table_name],
      );
      for (const { column_name } of bytea) {
        const raw = await app.db.query<{ b: Buffer }>(
          `select ${JSON.stringify(column_name)} as b from ${JSON.stringify(table_name)}`,
        );
        dump += raw.map((r) => r.b.toString('latin1')).join('\n');
      }
    }
    expect(dump.length).toBeGreaterThan(1000);
    const logs = app.logs.join('\n');
    expect(app.logs.length).toBeGreaterThan(20);
    for (const secret of secrets) {
      const forms = [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex')];
      for (const form of forms) {
        expect(dump.includes(form), `a table holds ${secret.slice(0, 12)}…`).toBe(false);
        expect(logs.includes(form), `a log line holds ${secret.slice(0, 12)}…`).toBe(false);
      }
    }

    // Under the server's own encryption at rest (the master key is the test's): the sender's envelopes, nothing else.
    const keyring = createKeyring(app.settings.masterKeys);
    const pushes = await app.db.query<{ id: string; payload_ciphertext: string | null; client_encryption: unknown }>(
      'select id, payload_ciphertext, client_encryption from pushes where client_encryption is not null',
    );
    expect(pushes.length).toBeGreaterThanOrEqual(5);
    for (const push of pushes) {
      expect(push.client_encryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });
      if (push.payload_ciphertext)
        expect(keyring.decryptText(push.payload_ciphertext, envelopeContexts.payload(push.id))).toMatch(
          /^spe1\.[A-Za-z0-9_-]+$/,
        );
    }
    const files = await app.db.query<{ id: string; filename_ciphertext: string; content: Buffer }>(
      'select f.id, f.filename_ciphertext, f.content from push_files f join pushes p on p.id = f.push_id where p.client_encryption is not null',
    );
    expect(files.length).toBe(1);
    expect(keyring.decryptText(files[0]!.filename_ciphertext, envelopeContexts.filename(files[0]!.id))).toMatch(
      /^spe1\./,
    );
    expect(
      keyring.decrypt(files[0]!.content, envelopeContexts.content(files[0]!.id)).subarray(0, 4).toString('latin1'),
    ).toBe('SPE1');
  });

  it('refuses, without storing anything, a form that asked for encryption but arrived unencrypted (no script)', async () => {
    const visitor = new Visitor(app.baseUrl);
    const { csrf } = await visitor.page('/');
    const [before] = await app.db.query<{ n: string }>('select count(*) as n from pushes');
    const response = await visitor.post('/', {
      _csrf: csrf,
      kind: 'text',
      payload: 'typed without script',
      encrypt_in_browser: '1',
      expire_after_days: '7',
      expire_after_views: '5',
    });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('Your browser did not encrypt the secret');
    expect(html).toMatch(/id="encrypt_in_browser"[^>]* checked/);
    const [after] = await app.db.query<{ n: string }>('select count(*) as n from pushes');
    expect(after!.n).toBe(before!.n);
  });
});

describe("the operator's choice (PWPUSH_CLIENT_ENCRYPTION) in the pages", () => {
  it('default: the box starts ticked; required: it cannot be unticked, ordinary API pushes get 422; off: no box, no bundle', async () => {
    const byMode = async (
      clientEncryption: WebApp['settings']['clientEncryption'],
      check: (web: WebApp, page: Page) => Promise<void>,
    ) => {
      const web = await startWeb({ clientEncryption });
      const context = await chromium.browser.newContext();
      const page = watch(await context.newPage());
      try {
        await check(web, page);
      } finally {
        await context.close();
        await web.stop();
      }
    };

    await byMode({ enabled: true, default: true, required: false }, async (web, page) => {
      await page.goto(`${web.baseUrl}/`);
      expect(await page.getByLabel(/Encrypt in my browser/).isChecked()).toBe(true);
    });

    await byMode({ enabled: true, default: true, required: true }, async (web, page) => {
      await page.goto(`${web.baseUrl}/`);
      const box = page.getByLabel(/Encrypt in my browser/);
      expect(await box.isChecked()).toBe(true);
      expect(await box.isDisabled()).toBe(true);
      await page.locator('#payload').fill('required here');
      await page.getByRole('button', { name: 'Make the secret link' }).click();
      await page.getByRole('heading', { name: 'Your secret link' }).waitFor();
      const link = (await page.locator('#share-link').textContent())!.trim();
      expect(link).toMatch(/#k=[A-Za-z0-9_-]{43}$/);
      const refused = await fetch(`${web.baseUrl}/api/v2/pushes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ push: { payload: 'ordinary' } }),
      });
      expect(refused.status).toBe(422);
      expect(Object.keys((await refused.json()).errors)).toEqual(['client_encryption']);
    });

    await byMode({ enabled: false, default: false, required: false }, async (web, page) => {
      await page.goto(`${web.baseUrl}/`);
      expect(await page.getByLabel(/Encrypt in my browser/).count()).toBe(0);
      expect(await page.locator('script[src*="secret-push-e2e"]').count()).toBe(0);
    });
    expect(problems).toEqual([]);
  });
});

describe('a closed instance (anonymous access off): the key survives the detour through sign-in', () => {
  it('a signed-out recipient of an encrypted push signs in, comes back to the link with its fragment, and reads the plaintext', async () => {
    const web = await startWeb({ allowAnonymous: false });
    const context = await chromium.browser.newContext();
    try {
      const owner = await web.core.users.createUser('closed-owner@example.org', PASSWORD);
      await web.core.users.createUser('closed-recipient@example.org', PASSWORD);
      const plaintext = `closed and encrypted ${Date.now()}`;
      const { link, key } = await ownedSealedLink(web, owner.userId, plaintext);

      const page = watch(await context.newPage());
      await page.goto(link);
      await page.getByRole('heading', { name: 'Sign in to open this secret' }).waitFor();
      expect(await page.locator('#sign-in-link').getAttribute('href')).toMatch(/#k=[A-Za-z0-9_-]{43}$/);
      await page.locator('#sign-in-link').click();
      await page.getByLabel('Email').fill('closed-recipient@example.org');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Back at the link, fragment and all (the server never saw it: the redirect's Location has none).
      await page.waitForURL(link);
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#secret-value').waitFor();
      expect(await page.locator('#secret-value').textContent()).toBe(plaintext);
      const logs = web.logs.join('\n');
      expect(logs.includes(key) || logs.includes(plaintext)).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await web.stop();
    }
  });

  it('a recipient with a second factor comes back with the key too (the code step posts to an address of its own)', async () => {
    const web = await startWeb({ allowAnonymous: false });
    const context = await chromium.browser.newContext();
    try {
      const owner = await web.core.users.createUser('closed-owner-2fa@example.org', PASSWORD);
      const reader = await web.core.users.createUser('closed-2fa@example.org', PASSWORD);
      // The reader's second factor, turned on through the service (the pages' enrolment is tested elsewhere).
      const twoFactor = web.core.web!.twoFactor;
      const { secret } = await twoFactor.begin(reader.userId, 'closed-2fa@example.org');
      await twoFactor.confirm(reader.userId, await generate({ secret }), '127.0.0.1');
      const plaintext = `closed, encrypted, two factors ${Date.now()}`;
      const { link, key } = await ownedSealedLink(web, owner.userId, plaintext);
      const seen: string[] = [];
      context.on('request', (r) => {
        const url = new URL(r.url());
        url.hash = '';
        seen.push([url.href, JSON.stringify(r.headers()), r.postData() ?? ''].join('\n'));
      });

      const page = watch(await context.newPage());
      await page.goto(link);
      await page.locator('#sign-in-link').click();
      await page.getByLabel('Email').fill('closed-2fa@example.org');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/users/two_factor/verify');
      // The next step's code (enrolment spent this one's).
      const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
      await page.getByLabel(/Code from your authenticator app/).fill(code);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === new URL(link).pathname);
      expect(page.url()).toBe(link);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      await page.getByRole('button', { name: 'Reveal the secret' }).click();
      await page.locator('#secret-value').waitFor();
      expect(await page.locator('#secret-value').textContent()).toBe(plaintext);
      const logs = web.logs.join('\n');
      expect(logs.includes(key) || logs.includes(plaintext)).toBe(false);
      for (const request of seen) expect(request.includes(key)).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await web.stop();
    }
  });
});
