/**
 * The contract's `PushInput` schema as the server's validator of create input that did not come through the API's
 * openapi-backend (the web create form, direct calls): compiled once from the bundled document, with the one Ajv
 * set-up and the API's field messages (`@secret-push/rules`).
 */
import { BUNDLED_SPEC_PATH, bundledDocument } from '@secret-push/contract';
import { compilePushSchema, type PushSchemaCheck } from '@secret-push/rules';

export { BUNDLED_SPEC_PATH, compilePushSchema };

let bundled: PushSchemaCheck | undefined;

/** The bundled contract's PushInput check, compiled once per process. */
export function pushSchema(): PushSchemaCheck {
  bundled ??= compilePushSchema(bundledDocument());
  return bundled;
}
