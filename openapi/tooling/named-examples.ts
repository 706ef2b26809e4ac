/**
 * The named examples of a bundled OpenAPI document, each with the schema it illustrates, and the check that every
 * operation has a success and an error example. Shared by the contract tests of the v2 and the v1 documents.
 */
import type { Contract } from '../src/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking an arbitrary OpenAPI document
type Json = Record<string, any>;

export interface NamedExample {
  /** `<operationId> <request|status> <media type> <example name>` */
  where: string;
  operationId: string;
  /** `request`, or the response status as written in the document (`"201"`). */
  part: string;
  mediaType: string;
  name: string;
  schema: unknown;
  value: unknown;
}

/** Every named example of the document's operations (request bodies and responses) with its schema. */
export function namedExamples(v: Contract): NamedExample[] {
  const out: NamedExample[] = [];
  const add = (operationId: string, part: string, content: Json | undefined) => {
    for (const [mediaType, m] of Object.entries<Json>(content ?? {})) {
      for (const [name, ex] of Object.entries<Json>(m.examples ?? {})) {
        out.push({
          where: `${operationId} ${part} ${mediaType} ${name}`,
          operationId,
          part,
          mediaType,
          name,
          schema: m.schema,
          value: v.deref<Json>(ex).value,
        });
      }
    }
  };
  for (const op of v.operations()) {
    const body = op.object.requestBody ? v.deref<Json>(op.object.requestBody) : undefined;
    add(op.operationId, 'request', body?.content);
    for (const [status, r] of Object.entries<Json>(op.object.responses as Json))
      add(op.operationId, status, v.deref<Json>(r).content);
  }
  return out;
}

/** Examples that break their schema, one line per problem (empty when all are valid), checked with Ajv 2020. */
export function invalidExamples(v: Contract, examples = namedExamples(v)): { where: string; errors: string[] }[] {
  return examples
    .map((e) => ({ where: e.where, errors: v.validateSchema(e.schema, e.value).errors }))
    .filter((f) => f.errors.length > 0);
}

/** `<operationId>: success|error` for every operation without a 2xx or a 4xx/5xx named example. */
export function missingExampleKinds(v: Contract): string[] {
  const missing: string[] = [];
  for (const op of v.operations()) {
    const statuses = Object.entries<Json>(op.object.responses as Json).map(([status, r]) => ({
      status: Number(status),
      examples: Object.values<Json>(v.deref<Json>(r).content ?? {}).flatMap((m) => Object.keys(m.examples ?? {})),
    }));
    if (!statuses.some((s) => s.status < 300 && s.examples.length > 0)) missing.push(`${op.operationId}: success`);
    if (!statuses.some((s) => s.status >= 400 && s.examples.length > 0)) missing.push(`${op.operationId}: error`);
  }
  return missing;
}

/** The 422 `error` text the contract promises: the first field of `errors` and its first message, then the rest counted. */
export function expectedValidationError(errors: Record<string, string[]>): string {
  const [first, ...others] = Object.entries(errors);
  if (!first) return '';
  const more = first[1].length - 1 + others.reduce((n, [, messages]) => n + messages.length, 0);
  return `${first[0]}: ${first[1][0]}${more > 0 ? ` (and ${more} more)` : ''}`;
}

/**
 * Whether a 422 `error` text keeps the contract's promise: exactly `expectedValidationError(errors)`, or that followed by
 * `: <why>` when the field's messages are the reference's own and a feature is off: the why names the setting that
 * turns it on (`notify_emails_to: are not available (and 2 more): this instance has no SMTP relay. … PWPUSH_SMTP_URL`).
 */
export function keepsValidationErrorPromise(error: string, errors: Record<string, string[]>): boolean {
  const expected = expectedValidationError(errors);
  return (
    error === expected ||
    (error.startsWith(`${expected}: `) && /\bPWPUSH_[A-Z0-9_]+/.test(error.slice(expected.length)))
  );
}
