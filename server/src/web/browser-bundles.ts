/**
 * The assets made for the browser from npm packages with esbuild, by name under /assets/. scripts/build.ts writes
 * them into the compiled server's assets folder; from source, ./assets.ts makes one on its first request. The
 * compiled server never loads this module (or esbuild).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** One package entry made into one minified IIFE that sets `window[globalName]`. */
export interface BrowserBundle {
  /** The entry, resolved from this package (e.g. `qrcode/lib/browser.js`). */
  entry: string;
  globalName: string;
}

export const BROWSER_BUNDLES: Record<string, BrowserBundle> = {
  /** `window.QRCode` (toString(text, { type: 'svg' }) among others). */
  'vendor/qrcode.js': { entry: 'qrcode/lib/browser.js', globalName: 'QRCode' },
};

/** Makes the browser bundle `name` (a key of BROWSER_BUNDLES). */
export async function buildBrowserBundle(name: string): Promise<Buffer> {
  const bundle = BROWSER_BUNDLES[name];
  if (!bundle) throw new Error(`no browser bundle named ${name}`);
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [require.resolve(bundle.entry)],
    bundle: true,
    format: 'iife',
    globalName: bundle.globalName,
    platform: 'browser',
    minify: true,
    write: false,
    legalComments: 'inline',
    logLevel: 'silent',
  });
  return Buffer.from(result.outputFiles[0]!.contents);
}
