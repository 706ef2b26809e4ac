import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/**
 * `npm run build -w openapi`: the contract toolkit as ESM + CommonJS + declarations (scripts/library-build.ts), with
 * the push rules it uses (`@secret-push/rules`, a private workspace: the route table, the Ajv set-up) inlined.
 */
export default defineConfig(
  libraryConfig({ entry: { index: 'src/index.ts' }, platform: 'node', inline: [/^@secret-push\/rules$/] }),
);
