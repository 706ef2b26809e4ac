import { defineConfig } from 'tsdown';
import { libraryConfig } from '../scripts/library-build.js';

/**
 * `npm run build -w conformance`: the library (`index`) and the CLI (`cli`, run by bin/), ESM + CommonJS +
 * declarations. The contract toolkit and the push rules are inlined (with the bundled documents), so the package
 * runs from its tarball alone: `npx ./secret-push-conformance-<version>.tgz`.
 */
export default defineConfig(
  libraryConfig({ entry: { index: 'src/index.ts', cli: 'src/cli.ts' }, platform: 'node', inline: [/^@secret-push\//] }),
);
