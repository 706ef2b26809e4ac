import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/**
 * `npm run build -w sdk`: ESM + CommonJS + declarations of every entry of `exports` (scripts/library-build.ts). The
 * push rules (`@secret-push/rules`, a private workspace) are inlined, so the package needs nothing else installed.
 */
/**
 * @hpke/common (inlined with @hpke/core) falls back to `await import("crypto")` where `globalThis.crypto` is missing.
 * That branch is for runtimes the SDK's end-to-end code already refuses (`no_webcrypto`: Node 18 without
 * `--experimental-global-webcrypto`), but a browser bundler that meets the import of a Node built-in may refuse the
 * build (webpack 5 without a `crypto` fallback): the published build replaces it with a clear error.
 */
const noNodeCryptoFallback = {
  name: 'no-node-crypto-fallback',
  transform(code: string, id: string) {
    if (!/[\\/]@hpke[\\/]common[\\/]/.test(id) || !code.includes('import("crypto")')) return null;
    return code.replaceAll(
      'await import("crypto")',
      'await Promise.reject(new Error("@secret-push/sdk: sealed requests need WebCrypto (globalThis.crypto)"))',
    );
  },
};

export default defineConfig(
  libraryConfig({
    entry: {
      index: 'src/index.ts',
      node: 'src/node.ts',
      'e2e/index': 'src/e2e/index.ts',
      'mocks/index': 'src/mocks/index.ts',
      'rules/index': 'src/rules.ts',
      'generated/index': 'src/generated/index.ts',
      'generated/client/index': 'src/generated/client/index.ts',
    },
    inline: [/^@secret-push\/rules$/, /^@hpke\//],
    plugins: [noNodeCryptoFallback],
  }),
);
