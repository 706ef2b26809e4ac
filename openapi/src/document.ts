/**
 * The bundled contract (`openapi/bundled/openapi.json`, made by `npm run bundle`), read once per process. Tools that
 * change what they are given (openapi-backend dereferences in place) take a copy with `bundledDocument()`.
 */
import { fileURLToPath } from 'node:url';
import bundled from '../bundled/openapi.json' with { type: 'json' };
import { Contract } from './contract.js';
import type { Json } from './refs.js';

const document = bundled as unknown as Json;

/** Where the bundle lives in the repository (for tools that read files: Prism, the docs page). */
export const BUNDLED_SPEC_PATH = fileURLToPath(new URL('../bundled/openapi.json', import.meta.url));

/** A deep copy of the bundled document. */
export function bundledDocument(): Json {
  return structuredClone(document);
}

let v2: Contract | undefined;

/** The bundled v2 contract, built once. */
export function contract(): Contract {
  v2 ??= new Contract(document);
  return v2;
}
