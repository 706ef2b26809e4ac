/**
 * Sealed requests through the web pages in real headless Chromium (issue 24, "done when"): a signed-in requester's
 * page makes the X25519 key pair (non-extractable, kept in IndexedDB) and the request; a second browser context opens
 * the answer page, which shows the ask, and answers, sealing in the browser; the requester's page opens the sealed key
 * and the answer. Afterwards neither the plaintext, the content key nor the private key (its bytes, seen through a
 * test hook on key generation) is in any table, any request the server got or its log, and no request ever carried
 * a private key. A crawler's GET of the answer page spends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, startWeb, type WebApp } from './support.js';

let app: WebApp;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let requesterContext: BrowserContext;
let responderContext: BrowserContext;
let requester: Page;
/** Every request body the browsers sent. */
const bodies: string[] = [];
/** The private keys the requester's page made (its `d`, base64url), as the test's hook saw them. */
const privateKeys: string[] = [];

/**
 * The test's view of the private key: X25519 key generation in the requester's browser is wrapped so that the key is
 * made extractable, its `d` handed to the test, and the key re-imported with the page's own extractability before the
 * page gets it. The page keeps a non-extractable key as before, and the test can look for the key's bytes afterwards.
 */
const CAPTURE_PRIVATE_KEY = `(() => {
  const subtle = crypto.subtle;
  const generate = subtle.generateKey.bind(subtle);
  subtle.generateKey = async (algorithm, extractable, usages) => {
    if (!algorithm || algorithm.name !== 'X25519') return generate(algorithm, extractable, usages);
    const pair = await generate(algorithm, true, usages);
    const jwk = await subtle.exportKey('jwk', pair.privateKey);
    await window.__capturePrivateKey(jwk.d);
    const privateKey = await subtle.importKey('jwk', jwk, { name: 'X25519' }, extractable, usages);
    return { publicKey: pair.publicKey, privateKey };
  };
})();`;
const problems: string[] = [];

function watch(page: Page): Page {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return page;
}

beforeAll(async () => {
  app = await startWeb();
  chromium = await launchChromium();
  requesterContext = await chromium.browser.newContext();
  responderContext = await chromium.browser.newContext();
  for (const context of [requesterContext, responderContext])
    context.on('request', (r) => bodies.push(`${r.method()} ${r.url()}\n${r.postData() ?? ''}`));
  await requesterContext.exposeFunction('__capturePrivateKey', (d: string) => void privateKeys.push(d));
  await requesterContext.addInitScript({ content: CAPTURE_PRIVATE_KEY });
  requester = watch(await requesterContext.newPage());
  await requester.goto(`${app.baseUrl}/users/sign_up`);
  await requester.getByLabel('Email').fill('requester@example.org');
  await requester.getByLabel('Password').fill('a long enough password');
  await requester.getByRole('button', { name: 'Sign up' }).click();
  await requester.getByRole('button', { name: 'Sign out' }).waitFor();
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

describe('sealed requests in the web pages (headless Chromium)', () => {
  it('makes the key pair and the request in one browser, answers in another, and opens the answer in the first', async () => {
    const plaintext = 'vendor-db-password-4b1d9e';
    await requester.goto(`${app.baseUrl}/requests/new`);
    await requester.getByLabel('What do you need?').fill('The vendor database password, please');
    await requester.getByLabel(/Seal the answer to this browser/).check();
    await requester.getByRole('button', { name: 'Create the request' }).click();
    await requester.getByRole('heading', { name: 'Your request' }).waitFor();
    const link = await requester.locator('#request-link').inputValue();
    const token = new URL(link).pathname.split('/')[2]!;
    expect(link).toBe(`${app.baseUrl}/r/${token}`);

    // The key pair stayed in this browser, its private half not extractable.
    const kept = await requester.evaluate(
      () =>
        new Promise<{ count: number; extractable: boolean[] }>((resolve, reject) => {
          const open = indexedDB.open('secret-push-requests', 1);
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const all = open.result.transaction('key-pairs').objectStore('key-pairs').getAll();
            all.onsuccess = () =>
              resolve({
                count: all.result.length,
                extractable: (all.result as CryptoKeyPair[]).map((p) => p.privateKey.extractable),
              });
          };
        }),
    );
    expect(kept).toEqual({ count: 1, extractable: [false] });
    const [row] = await app.db.query<{ public_key: { x: string }; state: string }>(
      'select public_key, state from requests where url_token = $1',
      [token],
    );
    expect(row).toMatchObject({ state: 'pending', public_key: { kty: 'OKP', crv: 'X25519' } });

    // A crawler's GET (no script) spends nothing: still pending, only the creation in the log.
    const crawled = await fetch(link, { headers: { 'user-agent': 'Googlebot/2.1' } });
    expect(crawled.status).toBe(200);
    expect(await crawled.text()).toContain('The vendor database password, please');

    // The responder, in another browser context, reads the ask and answers; the page seals before sending.
    const responder = watch(await responderContext.newPage());
    await responder.goto(link);
    expect(await responder.locator('#ask').textContent()).toBe('The vendor database password, please');
    await responder.getByLabel('The secret').fill(plaintext);
    await responder.getByRole('button', { name: 'Send it' }).click();
    await responder.locator('#answer-sent').waitFor({ state: 'visible' });
    await responder.goto(link);
    await responder.getByRole('heading', { name: 'This request is closed' }).waitFor();

    // The requester's page opens the sealed key with the kept key pair and links to the answer.
    await requester.goto(`${app.baseUrl}/requests/${token}`);
    const open = requester.locator('#open-answer');
    await open.waitFor({ state: 'visible' });
    const answerLink = (await open.getAttribute('href'))!;
    const contentKey = /#k=([A-Za-z0-9_-]{43})$/.exec(answerLink)?.[1];
    expect(contentKey).toBeDefined();
    await open.click();
    await requester.locator('#secret-value').waitFor();
    expect(await requester.locator('#secret-value').textContent()).toBe(plaintext);
    const [after] = await app.db.query<{ state: string }>('select state from requests where url_token = $1', [token]);
    expect(after!.state).toBe('collected');
    const kinds = await app.db.query<{ kind: string }>(
      `select kind from request_audit_entries e join requests r on r.id = e.request_id
       where r.url_token = $1 order by e.created_at, e.id`,
      [token],
    );
    expect(kinds.map((k) => k.kind)).toEqual(['creation', 'fulfilled', 'collected']);

    // Nowhere on the server's side: not the plaintext, the content key or the private key (as base64url, base64 or
    // hex, as a bytea column reads), in a table, a log line, or anything a browser sent.
    expect(privateKeys).toHaveLength(1);
    const privateKey = Buffer.from(privateKeys[0]!, 'base64url');
    expect(privateKey).toHaveLength(32);
    expect(app.logs.length).toBeGreaterThan(0); // the log scanned below is the server's, with its request lines
    const columns = await app.db.query<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
       where table_schema = 'public' and data_type in ('text', 'character varying', 'jsonb', 'bytea')`,
    );
    const needles = [
      plaintext,
      contentKey!,
      privateKeys[0]!,
      privateKey.toString('base64'),
      privateKey.toString('hex'),
    ];
    for (const needle of needles) {
      for (const { table_name, column_name } of columns) {
        const hits = await app.db.query(
          `select 1 from "${table_name}" where position($1::bytea in convert_to("${column_name}"::text, 'UTF8')) > 0 limit 1`,
          [Buffer.from(needle)],
        );
        expect(hits, `${table_name}.${column_name}`).toHaveLength(0);
      }
      expect(app.logs.join('\n')).not.toContain(needle);
      expect(bodies.join('\n')).not.toContain(needle);
    }
    // No request carried a private key (a JWK's "d"): only the public half went out, with the request.
    expect(bodies.join('\n')).not.toMatch(/%22d%22|"d"\s*:/);
    expect(bodies.some((b) => b.includes('public_key=') && b.includes('X25519'))).toBe(true);
    expect(problems).toEqual([]);
  });
});
