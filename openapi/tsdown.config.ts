import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/** `npm run build -w openapi`: the contract toolkit as ESM + CommonJS + declarations (scripts/library-build.ts). */
export default defineConfig(libraryConfig({ entry: { index: 'src/index.ts' }, platform: 'node' }));
