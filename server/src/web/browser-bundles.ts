/**
 * The assets made for the browser from npm packages with esbuild, by name under /assets/. scripts/build.ts writes
 * them into the compiled server's assets folder; from source, ./assets.ts makes one on its first request. The
 * compiled server never loads this module (or esbuild).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

/** One package entry (or a module that re-exports one) made into one minified IIFE that sets `window[globalName]`. */
export interface BrowserBundle {
  /** The entry, resolved from this package (e.g. `qrcode/lib/browser.js`) … */
  entry?: string;
  /** … or the code of the entry module. */
  source?: string;
  globalName: string;
  /** Keep class and function names through minification. */
  keepNames?: boolean;
}

export const BROWSER_BUNDLES: Record<string, BrowserBundle> = {
  /** `window.SecretPushIntl.IntlMessageFormat`: the pages' scripts format the catalogue's ICU messages (app.js `t`). */
  'vendor/intl-messageformat.js': {
    source: "export { IntlMessageFormat } from 'intl-messageformat';",
    globalName: 'SecretPushIntl',
  },
  /** `window.QRCode` (toString(text, { type: 'svg' }) among others). */
  'vendor/qrcode.js': { entry: 'qrcode/lib/browser.js', globalName: 'QRCode' },
  /**
   * `window.SecretPushE2E` (sealPush, openPush, openFile, parseShareLink, the error classes): the very code the SDK
   * runs, WebCrypto only, no HTTP client. Resolved by package name, so the source condition picks the TypeScript
   * sources in this repository. The SDK's errors are named by their class (`error.name`): names are kept.
   */
  'vendor/secret-push-e2e.js': {
    source: "export * from '@secret-push/sdk/e2e';",
    globalName: 'SecretPushE2E',
    keepNames: true,
  },
};

/** Makes the browser bundle `name` (a key of BROWSER_BUNDLES), with the files it was made from (outside node_modules). */
export async function makeBrowserBundle(name: string): Promise<{ bytes: Buffer; inputs: string[] }> {
  const bundle = BROWSER_BUNDLES[name];
  if (!bundle) throw new Error(`no browser bundle named ${name}`);
  const { build } = await import('esbuild');
  const result = await build({
    ...(bundle.source !== undefined
      ? { stdin: { contents: bundle.source, resolveDir: here, loader: 'js' as const } }
      : { entryPoints: [require.resolve(bundle.entry!)] }),
    conditions: ['@secret-push/source'],
    bundle: true,
    format: 'iife',
    globalName: bundle.globalName,
    platform: 'browser',
    target: 'es2020',
    minify: true,
    keepNames: bundle.keepNames ?? false,
    write: false,
    metafile: true,
    legalComments: 'inline',
    logLevel: 'silent',
  });
  const inputs = Object.keys(result.metafile.inputs).filter(
    (f) => !f.includes('node_modules') && !f.startsWith('<stdin>'),
  );
  return { bytes: Buffer.from(result.outputFiles[0]!.contents), inputs };
}

/** Makes the browser bundle `name` (a key of BROWSER_BUNDLES). */
export async function buildBrowserBundle(name: string): Promise<Buffer> {
  return (await makeBrowserBundle(name)).bytes;
}
