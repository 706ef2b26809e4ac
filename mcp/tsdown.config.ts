import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/**
 * `npm run build -w mcp`: the MCP server (`main`, run by bin/, and `createSecretPushMcpServer`), ESM + CommonJS +
 * declarations. The SDK and the CLI's configuration (workspace packages) are inlined; the MCP SDK and zod are its
 * dependencies.
 */
export default defineConfig(
  libraryConfig({
    entry: { index: 'src/index.ts' },
    platform: 'node',
    inline: [/^@secret-push\//, /^@hpke\//],
    isolatedDeclarations: true,
  }),
);
