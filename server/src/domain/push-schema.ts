/**
 * The contract's `PushInput` schema as the domain's validator. Callers that reach `core.pushes.create` without
 * openapi-backend in front (the web create form) get the same rules and the same per-field messages as the API,
 * because both run the one schema of openapi/bundled/openapi.json and map its errors with ./schema-errors.ts.
 *
 * Ajv is configured like the HTTP layer's (server/src/http/openapi.ts `makeAjv`): Ajv2020, `allErrors`,
 * `strict: false` (OpenAPI keywords such as `example`), formats validated, ajv-formats plus the OpenAPI formats.
 * A test compares the two configurations. This module must not import express or openapi-backend.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type AnySchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { pushFieldErrors, type FieldErrors } from './schema-errors.js';

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on `.default`.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

export const BUNDLED_SPEC_PATH = fileURLToPath(new URL('../../../openapi/bundled/openapi.json', import.meta.url));

/** Where the push's schema sits in the document. */
export const PUSH_INPUT_POINTER = '#/components/schemas/PushInput';

/** The base URI the document is registered under, so its local `#/components/...` refs resolve inside it. */
const DOCUMENT_ID = 'urn:secret-push:openapi';

/** The OpenAPI formats openapi-backend registers for draft-07, kept for 2020-12 (as in http/openapi.ts). */
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

/** An Ajv2020 instance configured like the HTTP layer's. */
export function makeSchemaAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
  addFormats(ajv);
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format as never);
  return ajv;
}

export interface PushSchemaCheck {
  /** The compiled validator (its `.schema` is the document's PushInput, as read). */
  readonly validate: ValidateFunction;
  /** `{}` when the input satisfies the schema, else messages per field (the HTTP layer's 422 `errors`). */
  (input: unknown): FieldErrors;
}

/** Compiles `#/components/schemas/PushInput` of an OpenAPI document (its `$ref`s resolved within the document). */
export function compilePushSchema(document: AnySchemaObject): PushSchemaCheck {
  const ajv = makeSchemaAjv();
  // The whole document is registered as one schema resource (Ajv ignores the OpenAPI-only keywords), so the
  // refs between component schemas resolve as written and a change to any of them is picked up as is.
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const validate = ajv.getSchema(`${DOCUMENT_ID}${PUSH_INPUT_POINTER}`);
  if (!validate) throw new Error(`The OpenAPI document has no schema at ${PUSH_INPUT_POINTER}`);
  const check = (input: unknown): FieldErrors => {
    if (validate(input)) return {};
    const errors = [...(validate.errors ?? [])];
    const fields = pushFieldErrors(errors, '');
    // Only a push that is not an object at all fails without a field (the HTTP layer answers that with a 400).
    if (Object.keys(fields).length === 0) return { push: ['must be an object'] };
    return fields;
  };
  return Object.assign(check, { validate });
}

let bundled: PushSchemaCheck | undefined;

/** The bundled contract's PushInput check, read and compiled once per process. */
export function pushSchema(): PushSchemaCheck {
  bundled ??= compilePushSchema(JSON.parse(readFileSync(BUNDLED_SPEC_PATH, 'utf8')) as AnySchemaObject);
  return bundled;
}
