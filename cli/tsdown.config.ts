import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/**
 * `npm run build -w cli`: the CLI (`main`, run by bin/) and what it shares with the MCP server (its config file and
 * key store), ESM + CommonJS + declarations. The SDK (with the push rules and @hpke it inlines itself) is inlined,
 * so the tarball runs alone: `npx ./secret-push-cli-<version>.tgz --version`.
 */
export default defineConfig(
  libraryConfig({
    entry: { index: 'src/index.ts' },
    platform: 'node',
    inline: [/^@secret-push\//, /^@hpke\//],
    isolatedDeclarations: true,
  }),
);
