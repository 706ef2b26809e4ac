/**
 * The contract's component schemas as compiled checks, for code that has the generated schemas
 * (`./generated/schemas.gen.ts`, made from the bundled spec by `npm run generate`) rather than the whole bundled
 * document: the stateful mock checks its input and its own answers with them.
 */
import * as generated from './generated/schemas.gen.js';
import { makeAjv } from './ajv.js';
import { compilePushSchema, type PushSchemaCheck } from './push-input.js';

/** `{ components: { schemas } }` from the generated schema constants (`PushInputSchema` → `PushInput`). */
export function generatedSchemaDocument(): { components: { schemas: Record<string, unknown> } } {
  const schemas = Object.fromEntries(
    Object.entries(generated).map(([name, schema]) => [name.replace(/Schema$/, ''), schema]),
  );
  return { components: { schemas } };
}

const DOCUMENT_ID = 'urn:secret-push:generated-schemas';

/** Checks a value against a component schema by name; returns one line per problem (empty when it is valid). */
export type ComponentCheck = (name: string, value: unknown) => string[];

export function componentChecker(document = generatedSchemaDocument()): ComponentCheck {
  const ajv = makeAjv();
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  return (name, value) => {
    const validate = ajv.getSchema(`${DOCUMENT_ID}#/components/schemas/${name}`);
    if (!validate) throw new Error(`No component schema ${name}`);
    if (validate(value)) return [];
    return (validate.errors ?? [])
      .filter((e) => e.keyword !== 'if')
      .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
  };
}

let pushCheck: PushSchemaCheck | undefined;

/** PushInput compiled from the generated schemas, once. */
export function generatedPushSchema(): PushSchemaCheck {
  pushCheck ??= compilePushSchema(generatedSchemaDocument());
  return pushCheck;
}
