/**
 * The contract's `PushInput` schema as the domain's validator. Callers that reach `core.pushes.create` without
 * openapi-backend in front (the web create form) get the same rules and the same per-field messages as the API,
 * because both run the one schema of openapi/bundled/openapi.json and map its errors with ./schema-errors.ts.
 *
 * Ajv comes from ./schema-ajv.ts, the same configuration openapi-backend validates with in the HTTP layer. This
 * module must not import express or openapi-backend.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AnySchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import { BUNDLED_SPEC_PATH, makeAjv } from './schema-ajv.js';
import { pushFieldErrors, type FieldErrors } from './schema-errors.js';

export { BUNDLED_SPEC_PATH };

/** Where the push's schema sits in the document. */
export const PUSH_INPUT_POINTER = '#/components/schemas/PushInput';

/** The base URI the document is registered under, so its local `#/components/...` refs resolve inside it. */
const DOCUMENT_ID = 'urn:secret-push:openapi';

export interface PushSchemaCheck {
  /** The compiled validator (its `.schema` is the document's PushInput, as read). */
  readonly validate: ValidateFunction;
  /** `{}` when the input satisfies the schema, else messages per field (the HTTP layer's 422 `errors`). */
  (input: unknown): FieldErrors;
}

/** Compiles `#/components/schemas/PushInput` of an OpenAPI document (its `$ref`s resolved within the document). */
export function compilePushSchema(document: AnySchemaObject): PushSchemaCheck {
  const ajv = makeAjv();
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
