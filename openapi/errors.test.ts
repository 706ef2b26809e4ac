/**
 * The error catalogue (`ERRORS` in @secret-push/rules: every code the server, its pages and the stateful mock
 * answer, with its status) walked against both contracts: every code is documented in the error schema's list with
 * its status, every code the list documents is in the catalogue, and every example of an error body shows a code of
 * the catalogue under a response of that code's status.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from '@secret-push/rules';
import { bundledDocument, bundledV1Document } from './src/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking an arbitrary OpenAPI document
type Json = Record<string, any>;

/** Codes the web pages answer and the API never does (their own flows, not an API operation). */
const PAGES_ONLY: ReadonlySet<string> = new Set(['csrf_rejected', 'body_not_json']);
/** v2 never answers v1's own refusal of an end-to-end encrypted push. */
const NOT_IN_V2: ReadonlySet<string> = new Set(['end_to_end_encrypted']);
/** v1 answers v2's codes, but not the ones of features v1 does not have. */
const NOT_IN_V1: ReadonlySet<string> = new Set([
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'invalid_link',
  'link_expired',
  // Requests are v2 only (issue 24).
  'request_answered',
  'request_closed',
  'too_many_open_requests',
  // Who may open a push (issue 42) is v2 only: v1's retrieval of such a push answers v2's code in v1's shape.
  'access_code_required',
  'access_code_incorrect',
  'network_not_allowed',
]);

/** The codes a schema's description lists, with the status each is listed under: "`a`, `b` (400); `c` (401, …);". */
function documentedCodes(description: string): Map<string, number> {
  const codes = new Map<string, number>();
  const list = description.slice(description.indexOf('Codes:'));
  // Each group of codes ends with its status in parentheses; a group may run over several lines.
  for (const group of list.matchAll(/((?:`[a-z_]+`[^`(]*)+)\((\d{3})/g)) {
    for (const code of group[1]!.matchAll(/`([a-z_]+)`/g)) codes.set(code[1]!, Number(group[2]));
  }
  return codes;
}

/** Every example of an error body in a document: its code and the status of the response it is shown under. */
function errorExamples(document: Json): { where: string; code: string; status: number }[] {
  const found: { where: string; code: string; status: number }[] = [];
  const deref = (node: Json): Json => {
    let current = node;
    while (current && typeof current.$ref === 'string') {
      current = current.$ref
        .split('/')
        .slice(1)
        .reduce((n: Json, part: string) => n[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return current;
  };
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      for (const [status, raw] of Object.entries<Json>(operation.responses)) {
        const response = deref(raw);
        for (const media of Object.values<Json>(response.content ?? {})) {
          for (const [name, example] of Object.entries<Json>(media.examples ?? {})) {
            const value = deref(example).value;
            if (value && typeof value === 'object' && typeof value.code === 'string') {
              found.push({
                where: `${method.toUpperCase()} ${path} ${status} ${name}`,
                code: value.code,
                status: Number(status),
              });
            }
          }
        }
      }
    }
  }
  return found;
}

describe('the error catalogue', () => {
  for (const [name, document, schema] of [
    ['v2', bundledDocument() as Json, 'ErrorResponse'],
    ['v1', bundledV1Document() as Json, 'V1ErrorResponse'],
  ] as const) {
    const documented = documentedCodes(String(document.components.schemas[schema].description));

    it(`${name}: documents every code of the catalogue it answers, with the catalogue's status`, () => {
      expect(documented.size).toBeGreaterThan(10);
      const expected = Object.entries(ERRORS)
        .filter(([code]) => !PAGES_ONLY.has(code) && !(name === 'v2' ? NOT_IN_V2 : NOT_IN_V1).has(code))
        .map(([code, entry]) => [code, entry.status]);
      const listed = expected.map(([code]) => [code, documented.get(code as string)]);
      expect(listed).toEqual(expected);
    });

    it(`${name}: documents no code the catalogue lacks`, () => {
      expect([...documented.keys()].filter((code) => !(code in ERRORS))).toEqual([]);
    });

    it(`${name}: shows each error example under its code's status`, () => {
      const examples = errorExamples(document);
      expect(examples.length).toBeGreaterThan(10);
      const wrong = examples
        .filter((e) => !(e.code in ERRORS) || ERRORS[e.code as ErrorCode].status !== e.status)
        .map((e) => `${e.where}: ${e.code}`);
      expect(wrong).toEqual([]);
    });
  }

  it('gives every code a message of its own, never empty', () => {
    for (const [code, entry] of Object.entries(ERRORS)) expect(entry.message.length, code).toBeGreaterThan(10);
  });
});
