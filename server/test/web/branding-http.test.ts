/**
 * Issue 42: the brand's files over HTTP, from a real app on the test cluster. Each is served by us from what the
 * operator mounted (read at start-up), with its type, `nosniff`, a strong ETag answered 304 on a match, and a policy
 * that runs nothing if the file is opened alone; an unknown file or brand is a 404; pages link them; the public
 * gateway (PWPUSH_MODE=retrieve-only) serves them too; the access log names the route, never more.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandSettings } from '../../src/config/brand-settings.js';
import { startWeb, type WebApp } from './support.js';

const CSS = 'main h1 { letter-spacing: .02em; }\n';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><script>alert(1)</script></svg>';
let folder: string;
let branded: WebApp;
let gateway: WebApp;
let plain: WebApp;

beforeAll(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), 'sp-brand-http-'));
  writeFileSync(path.join(folder, 'brand.css'), CSS);
  writeFileSync(path.join(folder, 'logo.svg'), SVG);
  const brand = brandSettings(
    {
      PWPUSH_BRAND_CSS: path.join(folder, 'brand.css'),
      PWPUSH_BRAND_LOGO: path.join(folder, 'logo.svg'),
      PWPUSH_BRAND_ACCENT_COLOR: '#225522',
    },
    'Acme Secrets',
  );
  branded = await startWeb({ brand });
  gateway = await startWeb({ brand, mode: 'retrieve-only' });
  plain = await startWeb();
}, 300_000);

afterAll(async () => {
  await branded?.stop();
  await gateway?.stop();
  await plain?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('the brand files', () => {
  it('serves the custom CSS as text/css with nosniff and an ETag, 304 when it is unchanged', async () => {
    const first = await fetch(`${branded.baseUrl}/brand/instance/custom.css`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect(first.headers.get('cache-control')).toBe('public, max-age=3600');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(await first.text()).toBe(CSS);

    const again = await fetch(`${branded.baseUrl}/brand/instance/custom.css`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const weak = await fetch(`${branded.baseUrl}/brand/instance/custom.css`, {
      headers: { 'if-none-match': `"other", W/${etag}` },
    });
    expect(weak.status).toBe(304);
    const stale = await fetch(`${branded.baseUrl}/brand/instance/custom.css`, {
      headers: { 'if-none-match': '"stale"' },
    });
    expect(stale.status).toBe(200);
  });

  it('serves the colours as a stylesheet of custom properties, and an SVG logo under a sandboxing policy', async () => {
    const theme = await fetch(`${branded.baseUrl}/brand/instance/theme.css`);
    expect(theme.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await theme.text()).toContain('--accent: #225522;');
    const logo = await fetch(`${branded.baseUrl}/brand/instance/logo.svg`);
    expect(logo.headers.get('content-type')).toBe('image/svg+xml');
    expect(logo.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox",
    );
    expect(await logo.text()).toBe(SVG);
  });

  it("links them from every page, after our stylesheet, and keeps the pages' strict policy", async () => {
    const page = await fetch(`${branded.baseUrl}/users/sign_in`);
    const html = await page.text();
    expect(page.headers.get('content-security-policy')).toContain("style-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("img-src 'self' data:");
    const sheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]);
    expect(sheets).toEqual([
      '/assets/style.css',
      expect.stringMatching(/^\/brand\/instance\/theme\.css\?v=[A-Za-z0-9_-]{12}$/),
      expect.stringMatching(/^\/brand\/instance\/custom\.css\?v=[A-Za-z0-9_-]{12}$/),
    ]);
    expect(html).toMatch(/<img class="logo" src="\/brand\/instance\/logo\.svg\?v=[A-Za-z0-9_-]{12}" alt="">/);
    expect(html).toContain('<title>Sign in · Acme Secrets</title>');
  });

  it('answers 404 for a file or a brand it does not have', async () => {
    for (const url of [
      '/brand/instance/favicon.ico',
      '/brand/instance/..%2F..%2Fetc%2Fpasswd',
      '/brand/other/custom.css',
      '/brand/instance/custom.css.map',
    ]) {
      const response = await fetch(`${branded.baseUrl}${url}`);
      expect([url, response.status]).toEqual([url, 404]);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const none = await fetch(`${plain.baseUrl}/brand/instance/theme.css`);
    expect(none.status).toBe(404);
    expect(await (await fetch(`${plain.baseUrl}/users/sign_in`)).text()).not.toContain('/brand/');
  });

  it('is served by the public gateway too, and logged by its route only', async () => {
    const response = await fetch(`${gateway.baseUrl}/brand/instance/custom.css`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(CSS);
    const lines = gateway.logs.filter((line) => line.includes('/brand/'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain('custom.css');
  });
});
