/**
 * The one Ajv configuration for the contract's schemas, shared by the HTTP layer (openapi-backend's validator, via
 * server/src/http/openapi.ts) and the domain (push-schema.ts). OpenAPI 3.1 schemas are JSON Schema 2020-12, so this
 * is Ajv2020 with ajv-formats, plus the OpenAPI formats openapi-backend would register for draft-07. No express or
 * openapi-backend import here, so the domain can use it.
 */
import { fileURLToPath } from 'node:url';
import { Ajv2020, type Options as AjvOptions } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on `.default`.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/** The bundled contract every part of the server reads. */
export const BUNDLED_SPEC_PATH = fileURLToPath(new URL('../../../openapi/bundled/openapi.json', import.meta.url));

/** The OpenAPI formats openapi-backend registers for draft-07, kept for 2020-12. */
const OPENAPI_FORMATS: Record<string, { type: 'number' | 'string'; validate: (value: never) => boolean }> = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
  float: { type: 'number', validate: () => true },
  double: { type: 'number', validate: () => true },
  byte: {
    type: 'string',
    validate: (s: string) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  },
  binary: { type: 'string', validate: () => true },
  password: { type: 'string', validate: () => true },
};

/** An Ajv2020 instance for the contract's schemas. */
export function makeAjv(opts: AjvOptions = {}): Ajv2020 {
  const ajv = new Ajv2020({
    ...opts,
    // Report every failing field (the 422 lists messages per field), and accept OpenAPI keywords such as `example`.
    allErrors: true,
    strict: false,
    validateFormats: true,
  });
  addFormats(ajv);
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format as never);
  return ajv;
}
