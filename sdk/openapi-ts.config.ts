// Generates sdk/src/generated from the bundled spec. Run through `npm run generate`; never edit the output.
import { defineConfig } from '@hey-api/openapi-ts';

export default defineConfig({
  input: 'openapi/bundled/openapi.json',
  output: {
    path: 'sdk/src/generated',
    postProcess: [],
  },
  plugins: [
    '@hey-api/typescript',
    '@hey-api/schemas',
    '@hey-api/client-fetch',
    { name: '@hey-api/sdk', validator: false },
    'zod',
    '@hey-api/examples',
    { name: 'msw', baseUrl: '*' },
  ],
});
