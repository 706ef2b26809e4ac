/**
 * A body refused by its bounds (./body-bounds.ts: the JSON scan or the form parsers stopped it) → the answer: inside the
 * push, the 422 the validator gives for that field (`payload: is too long (at most 1048576 characters)`, `files: You
 * can only attach up to 10 files per push.`), so a bound is answered alike whether the reader or the validator finds
 * it; elsewhere 400, saying which limit was passed but never the key or the value.
 */
import type { ErrorObject } from 'ajv';
import { ApiError, fieldMessage, pushFieldErrors, validationFailed } from '@secret-push/rules';
import type { BoundsError } from './body.js';
import { JsonViolationError, type JsonPath, type JsonViolation } from './json-scan.js';

/** Where an operation's body holds the push (EdgeSpec.pushFrame). */
export interface PushFrame {
  wrapper: string;
  topLevel: boolean;
}

/** What a refused bound was, said without anything the body holds (no key, no value). */
function describeViolation(v: JsonViolation): string {
  switch (v.kind) {
    case 'maxLength':
      return `holds a string longer than ${v.limit} characters`;
    case 'maxItems':
      return `holds an array of more than ${v.limit} items`;
    case 'maxProperties':
      return `holds an object with more than ${v.limit} keys`;
    case 'depth':
      return `nests deeper than ${v.limit} levels`;
    case 'values':
      return `holds more than ${v.limit} values`;
    case 'keyLength':
      return `holds a key longer than ${v.limit} characters`;
    case 'numberLength':
      return `holds a number longer than ${v.limit} characters`;
  }
}

/** A refused bound → the API's answer (400 or 422); `frame`: where the operation's body holds the push, if it does. */
export function boundsRefusal(error: BoundsError, frame: PushFrame | undefined): ApiError {
  if (error instanceof JsonViolationError) {
    const v = error.violation;
    const field = frame && 'declared' in v && v.declared ? pushField(v.path, frame) : undefined;
    if (field) {
      const ajvError = {
        keyword: v.kind,
        instancePath: `/${field.join('/')}`,
        schemaPath: '',
        params: { limit: v.limit },
      } as ErrorObject;
      const fields = pushFieldErrors([ajvError], '');
      if (Object.keys(fields).length > 0) return validationFailed(fields);
    }
    return new ApiError('bad_request', `The request body ${describeViolation(v)}; this instance reads no more.`);
  }
  const v = error.violation;
  if (v.kind === 'fields') return new ApiError('invalid_form', `The form has more than ${v.limit} fields.`);
  if (v.kind === 'name')
    return new ApiError('invalid_form', `A field name of the form is longer than ${v.limit} bytes.`);
  const prefix = frame ? `${frame.wrapper}[` : undefined;
  if (prefix && v.name.startsWith(prefix) && v.name.endsWith(']')) {
    const field = v.name.slice(prefix.length).replace(/\](\[\])?$/, '');
    if (/^[a-z_]+$/.test(field)) {
      const message = fieldMessage(
        { keyword: 'maxLength', instancePath: `/${field}`, schemaPath: '', params: { limit: v.limit } } as ErrorObject,
        field,
        undefined,
      );
      return validationFailed({ [field]: [message] });
    }
  }
  return new ApiError('invalid_form', `A field of the form is longer than ${v.limit} characters.`);
}

/** The path inside the push of a JSON path (`push`, `payload` → [`payload`]); undefined outside it. */
function pushField(path: JsonPath, frame: PushFrame): JsonPath | undefined {
  if (path.length >= 2 && path[0] === frame.wrapper) return path.slice(1);
  if (frame.topLevel && path.length >= 1 && path[0] !== frame.wrapper) return path;
  return undefined;
}
