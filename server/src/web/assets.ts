/**
 * Static assets, all served from this server (no CDN): our stylesheet and page scripts from ./assets, the QR code
 * library bundled for the browser from the `qrcode` package, the SDK's end-to-end encryption
 * (`@secret-push/sdk/e2e`), and the API docs renderer's standalone bundle from `@scalar/api-reference`. A fixed
 * map: no path from the request ever reaches the file system.
 *
 * Browser bundles (./browser-bundles.ts) are made with esbuild: by the build (scripts/build.ts writes them into the
 * compiled server's assets folder, server/dist/assets, beside a copy of ./assets and of the renderer's bundle), so the
 * compiled server only reads files and needs neither esbuild, qrcode nor @scalar/api-reference (development
 * dependencies); from source (tests, `npm run dev`), once per process, in memory, on first request.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPILED } from '../runtime/compiled.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export interface Asset {
  type: string;
  body: Buffer;
}

type Loader = () => Promise<Buffer>;

/** The assets folder: ./assets beside this source file, or the build's copy beside the bundle. */
export const ASSETS_DIR = path.join(here, 'assets');

const own =
  (file: string): Loader =>
  async () =>
    readFileSync(path.join(ASSETS_DIR, file));

/** A browser bundle of ./browser-bundles.ts: the build's file, or (from source) made now; the build drops the import. */
const browserBundle =
  (name: string): Loader =>
  async () =>
    COMPILED
      ? readFileSync(path.join(ASSETS_DIR, name))
      : (await import('./browser-bundles.js')).buildBrowserBundle(name);

/** Where the build puts the renderer's bundle, under the compiled server's assets. */
export const SCALAR_ASSET = 'vendor/scalar-api-reference.js';

/** The API docs renderer's standalone bundle: the build's copy (so production needs no @scalar package), or the package's. */
export function scalarStandalonePath(): string {
  // The package exports only its ESM entry (dist/index.js); the standalone browser bundle sits beside it.
  const entry = require.resolve('@scalar/api-reference');
  return path.join(path.dirname(entry), 'browser', 'standalone.js');
}

const scalarBundle: Loader = async () =>
  readFileSync(COMPILED ? path.join(ASSETS_DIR, SCALAR_ASSET) : scalarStandalonePath());

const JS = 'text/javascript; charset=utf-8';
const TABLE: Record<string, { type: string; load: Loader }> = {
  'style.css': { type: 'text/css; charset=utf-8', load: own('style.css') },
  'docs.css': { type: 'text/css; charset=utf-8', load: own('docs.css') },
  'app.js': { type: JS, load: own('app.js') },
  'recipient.js': { type: JS, load: own('recipient.js') },
  'create.js': { type: JS, load: own('create.js') },
  'requests.js': { type: JS, load: own('requests.js') },
  'keep-fragment.js': { type: JS, load: own('keep-fragment.js') },
  'join.js': { type: JS, load: own('join.js') },
  'two-factor.js': { type: JS, load: own('two-factor.js') },
  'api-docs.js': { type: JS, load: own('api-docs.js') },
  'vendor/qrcode.js': { type: JS, load: browserBundle('vendor/qrcode.js') },
  'vendor/intl-messageformat.js': { type: JS, load: browserBundle('vendor/intl-messageformat.js') },
  'vendor/secret-push-e2e.js': { type: JS, load: browserBundle('vendor/secret-push-e2e.js') },
  [SCALAR_ASSET]: { type: JS, load: scalarBundle },
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
