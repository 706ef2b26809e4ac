/**
 * Ajv errors of the `PushInput` schema → `{ field: [human messages] }`, shared by the server's HTTP layer
 * (openapi-backend's request validation, where the push sits at `/requestBody/push`), its domain and the stateful
 * mock (the schema compiled on its own, where the push is the root). Messages never carry the submitted value, the
 * validator's wording or the schema.
 */
import type { ErrorObject } from 'ajv';
import type { FieldErrors } from './errors.js';

export type { FieldErrors };

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * The message of a broken envelope rule of an end-to-end encrypted push, told by the schema's pattern (the same
 * property has other patterns for ordinary pushes: a URL, a bare file name, plain base64); null for another pattern.
 */
function envelopeMessage(pattern: string, where: string): string | null {
  if (pattern.startsWith('^spe1')) {
    return `${where}must be an end-to-end encryption envelope ("spe1." and base64url), as client_encryption says`;
  }
  if (pattern.startsWith('^U1BFM'))
    return `${where}must be the base64 of an end-to-end encrypted file (an SPE1 envelope)`;
  return null;
}

/** A human message for one Ajv error on a push field; never the validator's wording or the schema. */
export function fieldMessage(error: ErrorObject, field: string, nested: string | undefined): string {
  const p = error.params as Record<string, unknown>;
  const limit = typeof p.limit === 'number' ? p.limit : 0;
  const where = nested ? `${nested} ` : '';
  // The marker is an object or null; a string (what a form field gives) fails both branches of its oneOf.
  if (field === 'client_encryption' && !nested && (error.keyword === 'type' || error.keyword === 'oneOf')) {
    return 'must be an object such as {"scheme": "aes-256-gcm", "version": 1}, or null (send end-to-end encrypted pushes as JSON)';
  }
  switch (error.keyword) {
    case 'required': {
      const missing = String(p.missingProperty);
      return nested ? `${nested.replace(/ $/, '')} needs a ${missing}` : 'is required';
    }
    case 'type':
      return `${where}must be ${p.type === 'integer' ? 'an integer' : p.type === 'array' ? 'an array' : `a ${String(p.type)}`}`;
    case 'enum':
      return `${where}must be one of: ${((p.allowedValues as unknown[]) ?? []).join(', ')}`;
    case 'const':
      return `${where}must be ${JSON.stringify(p.allowedValue)}`;
    case 'minLength':
      return limit <= 1 ? `${where}can't be blank` : `${where}is too short (at least ${plural(limit, 'character')})`;
    case 'maxLength':
      return `${where}is too long (at most ${plural(limit, 'character')})`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `${where}must be at least ${limit}${error.keyword === 'exclusiveMinimum' ? ' (exclusive)' : ''}`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `${where}must be at most ${limit}${error.keyword === 'exclusiveMaximum' ? ' (exclusive)' : ''}`;
    case 'minItems':
      return field === 'files' && !nested ? 'needs at least one file for a file push' : `needs at least ${limit} items`;
    case 'maxItems':
      if (field === 'files' && limit === 0) return 'are only allowed on file pushes';
      return field === 'files'
        ? `You can only attach up to ${plural(limit, 'file')} per push.`
        : `has more than ${limit} items`;
    case 'format':
    case 'pattern': {
      // An end-to-end encrypted push's rules (PushInput: the `spe1.` text envelope, the base64 of an `SPE1` envelope).
      const envelope = envelopeMessage(error.keyword === 'pattern' ? String(p.pattern) : '', where);
      if (envelope) return envelope;
      if (field === 'payload') return 'must be a valid HTTP or HTTPS URL';
      if (nested?.endsWith('content')) return `${nested} must be standard base64`;
      if (nested?.endsWith('filename')) return `${nested} must be a bare file name (no path or control characters)`;
      if (nested?.endsWith('content_type')) return `${nested} must be a media type such as text/plain`;
      return `${where}has an invalid format`;
    }
    default:
      return `${where}is invalid`;
  }
}

/**
 * Maps the errors of a push validated at `pushPath` (a JSON pointer: `/requestBody/push` for openapi-backend's
 * request object, `''` for a PushInput validated on its own) to messages per top-level field of the push. Errors
 * outside the push, on the push object itself other than `required`, and the if/then/allOf wrappers (which only
 * repeat what the inner errors say) are left out. Each message appears once per field.
 */
export function pushFieldErrors(errors: readonly ErrorObject[], pushPath: string): FieldErrors {
  const prefix = `${pushPath}/`;
  const fields: FieldErrors = {};
  for (const error of errors) {
    // The if/then wrappers only repeat what the inner errors already say.
    if (error.keyword === 'if' || error.keyword === 'allOf' || error.keyword === 'anyOf' || error.keyword === 'not') {
      continue;
    }
    let field: string;
    let nested: string | undefined;
    if (error.instancePath === pushPath) {
      if (error.keyword !== 'required') continue;
      field = String((error.params as { missingProperty?: unknown }).missingProperty);
    } else if (error.instancePath.startsWith(prefix)) {
      const [head, ...rest] = error.instancePath.slice(prefix.length).split('/');
      field = head ?? 'push';
      if (rest.length > 0) {
        // files/0/content → "file 1 content"
        const [index, ...tail] = rest;
        nested = /^\d+$/.test(index ?? '') ? [`file ${Number(index) + 1}`, ...tail].join(' ') : rest.join(' ');
      }
    } else {
      continue;
    }
    const list = (fields[field] ??= []);
    const message = fieldMessage(error, field, nested);
    if (!list.includes(message)) list.push(message);
  }
  return fields;
}
