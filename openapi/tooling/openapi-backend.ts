/**
 * An openapi-backend for a bundled document, set up as the server sets up its own (server/src/http/openapi-backend.ts:
 * the document validated as OpenAPI 3.1, the backend's 3.0-only definition check replaced, refs inlined, schemas
 * compiled with the contract's Ajv), so the contract tests can ask the server's router and request validator what it
 * makes of a document (v2's form bodies, v1's `.json` paths) without starting a server.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { inlineRefs, makeAjv, type Json } from '../src/index.js';

class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

export async function backendFor(document: Json): Promise<OpenAPIBackend> {
  const result = await new Validator().validate(structuredClone(document));
  if (!result.valid) throw new Error(`Not valid OpenAPI 3.1: ${JSON.stringify(result.errors)}`);
  const backend = new OpenApi31Backend({
    definition: inlineRefs(structuredClone(document)) as unknown as Document,
    strict: true,
    customizeAjv: (_original, options) => makeAjv(options as never) as never,
  });
  await backend.init();
  return backend;
}
