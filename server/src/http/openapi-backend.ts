/**
 * openapi-backend speaks OpenAPI 3.0 with draft-07 Ajv. Our contract is OpenAPI 3.1 (JSON Schema 2020-12), so this
 * wrapper validates the document with a 3.1-aware validator, replaces the backend's own (3.0-only) definition check
 * and compiles every schema with the contract's Ajv set-up (Ajv2020 + formats, `makeAjv`). It is openapi-backend as
 * published otherwise; the API edge runs its request steps from what it compiled (./operation-table.ts).
 */
import { bundledDocument, inlineRefs, makeAjv } from '@secret-push/contract';
import type { AjvOptions } from '@secret-push/rules';
import { OpenAPIBackend, type Document, type Options as BackendOptions } from 'openapi-backend';
import { COMPILED } from '../runtime/compiled.js';

/** Validates a 3.1 document; throws with the validator's findings when it is not valid OpenAPI. */
export async function validateDocument(document: Document): Promise<void> {
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const result = await new Validator().validate(document as unknown as Record<string, unknown>);
  if (!result.valid) {
    const details = typeof result.errors === 'string' ? result.errors : JSON.stringify(result.errors, null, 2);
    throw new Error(`The bundled OpenAPI document is not valid OpenAPI 3.1:\n${details}`);
  }
}

/** openapi-backend with the 3.0 definition check replaced (the 3.1 document was validated before init). */
class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

export type SpecBackendOptions = Omit<BackendOptions, 'definition' | 'customizeAjv' | 'strict'> & {
  definition?: Document;
};

/** Creates and initialises an openapi-backend for the bundled 3.1 contract, failing closed (`strict`). */
export async function createSpecBackend(opts: SpecBackendOptions = {}): Promise<OpenAPIBackend> {
  const definition = opts.definition ?? (bundledDocument() as unknown as Document);
  // The compiled server's documents were validated by its build (scripts/build.ts): its processes skip the validator
  // (about 12 MB of RSS). From source (tests, `npm run dev`) every document is validated here.
  if (!COMPILED) await validateDocument(definition);
  const backend = new OpenApi31Backend({
    ...opts,
    // A tree without shared objects (see inlineRefs): openapi-backend's dereferencer mangles shared `$ref`s.
    definition: inlineRefs(definition),
    strict: true,
    // Start-up cost and memory (issue 12): the document was just validated and the spec is linted, so Ajv need not
    // check each schema against the 2020-12 meta-schema (compiled anew for each of openapi-backend's Ajv instances);
    // and only request validators are used (answers are checked by the contract toolkit), so the response validators
    // are not compiled: lazy mode, then the request validators at once.
    ajvOpts: { validateSchema: false },
    quick: true,
    customizeAjv: (_original, ajvOpts) => makeAjv(ajvOpts as AjvOptions) as never,
  });
  await backend.init();
  backend.validator.preCompileRequestValidators();
  return backend;
}
