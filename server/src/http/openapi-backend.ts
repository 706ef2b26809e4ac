/**
 * openapi-backend speaks OpenAPI 3.0 with draft-07 Ajv. Our contract is OpenAPI 3.1 (JSON Schema 2020-12), so this
 * wrapper validates the document with a 3.1-aware validator, replaces the backend's own (3.0-only) definition check
 * and compiles every schema with the contract's Ajv set-up (Ajv2020 + formats, `makeAjv`). It is openapi-backend as
 * published otherwise: its router matches each request once (`handleRequest`), with its own matching rules.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { BUNDLED_SPEC_PATH, bundledDocument, inlineRefs, makeAjv } from '@secret-push/contract';
import type { AjvOptions } from '@secret-push/sdk/rules';
import { OpenAPIBackend, OpenAPIRouter, type Document, type Operation, type Options as BackendOptions } from 'openapi-backend';

/** Validates a 3.1 document; throws with the validator's findings when it is not valid OpenAPI. */
/** The bundled contract the HTTP layer validates with (and serves at /api/v2/openapi.json). */
export const SPEC_PATH = BUNDLED_SPEC_PATH;

export async function validateDocument(document: Document): Promise<void> {
  const result = await new Validator().validate(document as unknown as Record<string, unknown>);
  if (!result.valid) {
    const details = typeof result.errors === 'string' ? result.errors : JSON.stringify(result.errors, null, 2);
    throw new Error(`The bundled OpenAPI document is not valid OpenAPI 3.1:\n${details}`);
  }
}

/**
 * openapi-backend's router, with its list of operations built once. The library rebuilds the list (a lodash chain
 * over every path) twice per request in `matchOperation`; the definition never changes after `init()`, so the list
 * cannot either. Matching itself is the library's.
 */
class MemoizedRouter extends OpenAPIRouter {
  #operations: Operation[] | undefined;
  override getOperations(): Operation[] {
    this.#operations ??= super.getOperations();
    return this.#operations;
  }
}

/** openapi-backend with the 3.0 definition check replaced (the 3.1 document was validated before init). */
class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }

  override async init(): Promise<this> {
    await super.init();
    this.router = new MemoizedRouter({ definition: this.definition, apiRoot: this.apiRoot, ignoreTrailingSlashes: this.ignoreTrailingSlashes });
    return this;
  }
}

export type SpecBackendOptions = Omit<BackendOptions, 'definition' | 'customizeAjv' | 'strict'> & {
  definition?: Document;
};

/** Creates and initialises an openapi-backend for the bundled 3.1 contract, failing closed (`strict`). */
export async function createSpecBackend(opts: SpecBackendOptions = {}): Promise<OpenAPIBackend> {
  const definition = opts.definition ?? (bundledDocument() as unknown as Document);
  await validateDocument(definition);
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
