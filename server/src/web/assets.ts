/**
 * Static assets, all served from this server (no CDN): our stylesheet and page scripts from ./assets, the QR code
 * library bundled for the browser from the `qrcode` package (esbuild, once, in memory), the SDK's end-to-end
 * encryption (`@secret-push/sdk/e2e`, bundled the same way), and the API docs renderer's standalone bundle from
 * `@scalar/api-reference`. A fixed map: no path from the request ever reaches the file system.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export interface Asset {
  type: string;
  body: Buffer;
}

type Loader = () => Promise<Buffer>;

const own = (file: string): Loader => async () => readFileSync(path.join(here, 'assets', file));

/** qrcode's browser entry as one IIFE exposing `window.QRCode` (toString(text, { type: 'svg' }) among others). */
const qrcodeBundle: Loader = async () => {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [require.resolve('qrcode/lib/browser.js')],
    bundle: true,
    format: 'iife',
    globalName: 'QRCode',
    platform: 'browser',
    minify: true,
    write: false,
    legalComments: 'inline',
    logLevel: 'silent',
  });
  return Buffer.from(result.outputFiles[0]!.contents);
};

/**
 * `@secret-push/sdk/e2e` as one IIFE exposing `window.SecretPushE2E` (sealPush, openPush, openFile, parseShareLink,
 * the error classes): the very code the SDK runs, WebCrypto only, no HTTP client. Resolved by package name, so the
 * source condition picks the TypeScript sources in this repository and a built SDK elsewhere.
 */
const e2eBundle: Loader = async () => {
  const { build } = await import('esbuild');
  const result = await build({
    stdin: { contents: "export * from '@secret-push/sdk/e2e';", resolveDir: here, loader: 'js' },
    conditions: ['@secret-push/source'],
    bundle: true,
    format: 'iife',
    globalName: 'SecretPushE2E',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    // The SDK's errors are named by their class (`error.name`): keep the names through minification.
    keepNames: true,
    write: false,
    legalComments: 'inline',
    logLevel: 'silent',
  });
  return Buffer.from(result.outputFiles[0]!.contents);
};

const scalarBundle: Loader = async () => {
  // The package exports only its ESM entry (dist/index.js); the standalone browser bundle sits beside it.
  const entry = require.resolve('@scalar/api-reference');
  return readFileSync(path.join(path.dirname(entry), 'browser', 'standalone.js'));
};

const JS = 'text/javascript; charset=utf-8';
const TABLE: Record<string, { type: string; load: Loader }> = {
  'style.css': { type: 'text/css; charset=utf-8', load: own('style.css') },
  'app.js': { type: JS, load: own('app.js') },
  'recipient.js': { type: JS, load: own('recipient.js') },
  'create.js': { type: JS, load: own('create.js') },
  'keep-fragment.js': { type: JS, load: own('keep-fragment.js') },
  'api-docs.js': { type: JS, load: own('api-docs.js') },
  'vendor/qrcode.js': { type: JS, load: qrcodeBundle },
  'vendor/secret-push-e2e.js': { type: JS, load: e2eBundle },
  'vendor/scalar-api-reference.js': { type: JS, load: scalarBundle },
};

const cache = new Map<string, Promise<Asset>>();

/** The asset under /assets/<name>, or null when there is no such asset. */
export function asset(name: string): Promise<Asset> | null {
  const entry = TABLE[name];
  if (!entry) return null;
  let loaded = cache.get(name);
  if (!loaded) {
    loaded = entry.load().then((body) => ({ type: entry.type, body }));
    loaded.catch(() => cache.delete(name));
    cache.set(name, loaded);
  }
  return loaded;
}
