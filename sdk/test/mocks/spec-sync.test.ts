import { describe, expect, it } from 'vitest';
import { contract } from '@secret-push/contract';
import { URL_PAYLOAD } from '../../src/mocks/store.js';

describe('the stateful mock', () => {
  it('checks URL payloads with exactly the spec\'s pattern (PushInput, kind url)', () => {
    const spec = contract().document as unknown as { components: { schemas: { PushInput: { allOf: { if: { properties: { kind: { const: string } } }; then: { properties?: { payload?: { pattern?: string } } } }[] } } } };
    const rule = spec.components.schemas.PushInput.allOf.find((r) => r.if.properties.kind.const === 'url');
    const pattern = rule?.then.properties?.payload?.pattern;
    expect(pattern).toBeDefined();
    expect(URL_PAYLOAD.source).toBe(new RegExp(pattern!).source);
  });
});
