/**
 * A form body (multipart or urlencoded) read into the object a JSON body gives. The reading rules (`<wrapper>[field]`
 * names, integers from digits, booleans from true/false/1/0/on/off/yes/no, empty as not given, files as parts with
 * their bytes beside the input) live with the shared push rules (`@secret-push/rules`, form-input.ts), so the
 * stateful mock reads the forms the SDK and other clients send exactly as the server does.
 */
import { formToInput as readForm, readPushText } from '@secret-push/rules';
import type { ParsedBody } from './body.js';

export { readPushText };

/**
 * `{ [wrapper]: { … } }` from a form, or 400 missing_push when no `<wrapper>[…]` field (nor file) was sent. A field
 * sent twice answers 422 on it; a text value under the files field answers 422 on `files`.
 */
export function formToInput(
  body: Extract<ParsedBody, { type: 'form' }>,
  wrapper: string,
  schema?: 'PushInput' | 'RequestInput',
): Record<string, unknown> {
  return readForm(body, wrapper, schema);
}
