/**
 * What the contract documents for one answer beyond its body schema: the media types of its content and the
 * headers it marks `required`. Read from the bundled document that `Contract` loaded (the validator in spec.ts
 * checks a header's value only when the header is present, and never the Content-Type).
 */
import { mediaTypeOf } from '@secret-push/rules';
import type { Contract } from './spec.js';

type Json = Record<string, unknown>;

export interface DocumentedResponse {
  /** Media types of the documented content, lower-case (`application/json`, `application/octet-stream`). */
  mediaTypes: string[];
  /** Header names the response marks `required: true`, as the spec spells them. */
  requiredHeaders: string[];
}

const cache = new WeakMap<Contract, Map<string, DocumentedResponse | null>>();

function deref(document: Json, node: Json | undefined): Json | undefined {
  let current = node;
  for (let depth = 0; current && typeof current.$ref === 'string' && depth < 20; depth++) {
    let target: unknown = document;
    for (const part of (current.$ref as string).replace(/^#\//, '').split('/')) {
      target = (target as Json | undefined)?.[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    current = target as Json | undefined;
  }
  return current;
}

/**
 * The documented response for `target` (an operationId, or `#Name` for a component response) and `status`, or
 * null when the status is not documented (the contract validator already reports that).
 */
export function documented(contract: Contract, target: string, status: number): DocumentedResponse | null {
  let byKey = cache.get(contract);
  if (!byKey) cache.set(contract, (byKey = new Map()));
  const key = `${target} ${status}`;
  if (byKey.has(key)) return byKey.get(key)!;
  const document = contract.document;
  let response: Json | undefined;
  if (target.startsWith('#')) {
    const responses = ((document.components as Json | undefined)?.responses ?? {}) as Record<string, Json>;
    response = deref(document, responses[target.slice(1)]);
  } else if (contract.operations.has(target)) {
    const responses = contract.operation(target).responses;
    response = deref(document, responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default);
  }
  let result: DocumentedResponse | null = null;
  if (response) {
    const headers = (response.headers ?? {}) as Record<string, Json>;
    result = {
      mediaTypes: Object.keys((response.content ?? {}) as Json).map((t) => t.toLowerCase()),
      requiredHeaders: Object.entries(headers)
        .filter(([, header]) => deref(document, header)?.required === true)
        .map(([name]) => name),
    };
  }
  byKey.set(key, result);
  return result;
}

/** The media type of a Content-Type value, without parameters, lower-case (`''` when absent): the shared reader. */
export function mediaType(contentType: string | null): string {
  return mediaTypeOf(contentType);
}
