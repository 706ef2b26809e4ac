// Generates rules/src/generated (the types and JSON schemas the rules read) from the bundled spec. Run through
// `npm run generate`; never edit the output. Only these two plugins: the rules need no client.
import { defineConfig } from '@hey-api/openapi-ts';

export default defineConfig({
  input: 'openapi/bundled/openapi.json',
  output: {
    path: 'rules/src/generated',
    postProcess: [],
  },
  plugins: ['@hey-api/typescript', '@hey-api/schemas'],
});
