import { describe, expect, it } from 'vitest';
import { contract } from '@secret-push/contract';
import { FILENAME, URL_PAYLOAD } from '../../src/e2e/seal.js';

/** A pattern as a RegExp's canonical source (`/` is escaped the same way whether it came from a literal or a string). */
const canonical = (pattern: string) => new RegExp(pattern).source;

describe("the client-side copies of the contract's patterns", () => {
  const schemas = (
    contract().document as unknown as {
      components: {
        schemas: {
          PushInput: {
            allOf: {
              if: { properties: { kind: { const: string } } };
              then: { properties?: { payload?: { pattern?: string } } };
            }[];
          };
          FileUpload: { properties: { filename: { pattern?: string } } };
        };
      };
    }
  ).components.schemas;

  it("checks an encrypted URL push's plaintext with exactly the spec's pattern (PushInput, kind url)", () => {
    const pattern = schemas.PushInput.allOf.find((r) => r.if.properties.kind.const === 'url')?.then.properties?.payload
      ?.pattern;
    expect(pattern).toBeDefined();
    expect(canonical(URL_PAYLOAD.source)).toBe(canonical(pattern!));
  });

  it("checks an encrypted file's name with exactly the spec's pattern (FileUpload.filename)", () => {
    const pattern = schemas.FileUpload.properties.filename.pattern;
    expect(pattern).toBeDefined();
    expect(canonical(FILENAME.source)).toBe(canonical(pattern!));
  });
});
