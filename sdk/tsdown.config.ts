import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/**
 * `npm run build -w sdk`: ESM + CommonJS + declarations of every entry of `exports` (scripts/library-build.ts). The
 * push rules (`@secret-push/rules`, a private workspace) are inlined, so the package needs nothing else installed.
 */
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
    inline: [/^@secret-push\/rules$/],
  }),
);
