/**
 * The one Ajv configuration for the contract's schemas. OpenAPI 3.1 schemas are JSON Schema 2020-12, so this is
 * Ajv2020 with ajv-formats plus the OpenAPI formats. Everything that checks a value against the contract uses it:
 * openapi-backend's request validation in the server (through `customizeAjv`), the server's own PushInput check for
 * the web form, the stateful mock, the response checks of every test suite and the conformance suite. Browser-safe.
 */
import { Ajv2020, type Options as AjvOptions } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext (and some bundlers) the callable sits on `.default`.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

export type { AjvOptions };
export { Ajv2020 };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The OpenAPI formats (openapi-backend registers them for draft-07; kept for 2020-12). `byte` is checked. */
const OPENAPI_FORMATS: Record<string, { type: 'number' | 'string'; validate: (value: never) => boolean }> = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
  float: { type: 'number', validate: () => true },
  double: { type: 'number', validate: () => true },
  byte: { type: 'string', validate: (s: string) => BASE64.test(s) },
  binary: { type: 'string', validate: () => true },
  password: { type: 'string', validate: () => true },
};

/**
 * An Ajv2020 instance for the contract's schemas. `opts` are merged under the contract's own choices: every error is
 * reported (a 422 lists messages per field), OpenAPI-only keywords (`example`, `discriminator`, …) are tolerated,
 * and formats are validated.
 */
export function makeAjv(opts: AjvOptions = {}): Ajv2020 {
  const ajv = new Ajv2020({
    ...opts,
    allErrors: true,
    strict: false,
    validateFormats: true,
  });
  addFormats(ajv);
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format as never);
  return ajv;
}
