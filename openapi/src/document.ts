/**
 * The bundled contracts (`openapi/bundled/openapi.json` for v2, `openapi/bundled/openapi-v1.json` for the legacy v1
 * API; both made by `npm run bundle`), read once per process. Tools that change what they are given (openapi-backend
 * dereferences in place) take a copy with `bundledDocument()` / `bundledV1Document()`.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import bundled from '../bundled/openapi.json' with { type: 'json' };
import bundledV1 from '../bundled/openapi-v1.json' with { type: 'json' };
import { Contract } from './contract.js';
import type { Json } from './refs.js';

const document = bundled as unknown as Json;

/**
 * A file of `bundled/`: beside this source file, else (this code compiled into another package's bundle, e.g. the
 * server's build) through the package's own export; the path beside the code when neither exists (a packed tool
 * that carries the document inside it checks for that).
 */
function bundledFile(name: string): string {
  const beside = fileURLToPath(new URL(`../bundled/${name}`, import.meta.url));
  if (existsSync(beside)) return beside;
  try {
    return createRequire(import.meta.url).resolve(`@secret-push/contract/bundled/${name}`);
  } catch {
    return beside;
  }
}

/** Where the bundle lives in the repository (for tools that read files: Prism, the docs page). */
export const BUNDLED_SPEC_PATH = bundledFile('openapi.json');

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

const documentV1 = bundledV1 as unknown as Json;

/** Where the v1 bundle lives in the repository (for tools that read files: Prism). */
export const BUNDLED_V1_SPEC_PATH = fileURLToPath(new URL('../bundled/openapi-v1.json', import.meta.url));

/** A deep copy of the bundled v1 document. */
export function bundledV1Document(): Json {
  return structuredClone(documentV1);
}

let v1: Contract | undefined;

/** The bundled legacy v1 contract (openapi/v1), built once: same questions, same answers as `contract()`. */
export function contractV1(): Contract {
  v1 ??= new Contract(documentV1);
  return v1;
}
