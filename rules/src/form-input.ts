/**
 * A form body (multipart or urlencoded) read into the object a JSON body gives, by the contract's reading rules
 * (`CreatePushUrlencoded`, `CreatePushMultipart`, `FormInteger`, `FormBoolean`): `<wrapper>[<field>]` names, integers
 * from ASCII digits, booleans from true/false/1/0/on/off/yes/no in any case, an empty value as not given (but for
 * text a push may hold empty), files as parts (their bytes beside the input, never base64). The field list and each
 * field's type come from the contract's `PushInput` (the generated schemas), so a new field is read without a change
 * here. After this the same schema, rules and messages apply as for JSON. Values that do not read stay as sent, and
 * the schema refuses them on their field (422). The server's body reader and the stateful mock both read forms so.
 */
import * as generated from './generated/schemas.gen.js';
import { ApiError, validationFailed } from './errors.js';
import { WORKSPACE_ID_FIELDS } from './workspaces.js';
import { uploadWithBytes, type FileBytes } from './push-input.js';

/** A file part of a multipart body (its bytes in memory, or already in the server's file store). */
export interface FormFilePart {
  field: string;
  filename: string;
  contentType: string;
  bytes: FileBytes;
}

/** A form as read: its text fields in order, the file parts kept, and how many file parts there were in all. */
export interface FormBody {
  fields: [name: string, value: string][];
  files: FormFilePart[];
  filesSeen: number;
}

type FieldKind = 'text' | 'integer' | 'boolean' | 'files';

interface SchemaNode {
  type?: unknown;
  $ref?: string;
}

/** The kind of each property of an input schema (`PushInput`, `RequestInput`), from the contract. */
function fieldKinds(schemaName: FormSchema): Map<string, FieldKind> {
  const schemas = generated as unknown as Record<string, SchemaNode>;
  const properties = (schemas[`${schemaName}Schema`] as unknown as { properties: Record<string, SchemaNode> })
    .properties;
  const kinds = new Map<string, FieldKind>();
  for (const [name, node] of Object.entries(properties)) {
    const schema = node.$ref ? (schemas[`${node.$ref.split('/').pop()}Schema`] ?? {}) : node;
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    kinds.set(
      name,
      types.includes('array')
        ? 'files'
        : types.includes('integer')
          ? 'integer'
          : types.includes('boolean')
            ? 'boolean'
            : 'text',
    );
  }
  return kinds;
}

/** The input schemas a form may be read into: a push's, or a request's (`request[…]`). */
type FormSchema = 'PushInput' | 'RequestInput';

let kinds: Map<string, FieldKind> | undefined;
const otherKinds = new Map<FormSchema, Map<string, FieldKind>>();

const TRUE = new Set(['true', '1', 'on', 'yes']);
const FALSE = new Set(['false', '0', 'off', 'no']);
/** Text fields whose empty value means "not given" (an empty payload, name or note stays empty). */
const EMPTY_IS_ABSENT = new Set(['kind', 'passphrase']);

function readValue(kind: FieldKind, field: string, raw: string): unknown {
  if (kind === 'integer') {
    if (raw === '') return undefined;
    return /^[0-9]{1,9}$/.test(raw) ? Number(raw) : raw;
  }
  if (kind === 'boolean') {
    if (raw === '') return undefined;
    const lower = raw.toLowerCase();
    return TRUE.has(lower) ? true : FALSE.has(lower) ? false : raw;
  }
  if (raw === '' && EMPTY_IS_ABSENT.has(field)) return undefined;
  return raw;
}

/**
 * A push field's value sent as text (a form field, or text where JSON would hold a number or boolean, as v1 clients
 * send it), read by the rules above: undefined when it means "not given", the value as sent when it does not read.
 */
export function readPushText(field: string, raw: string): unknown {
  kinds ??= fieldKinds('PushInput');
  const kind = kinds.get(field);
  return kind && kind !== 'files' ? readValue(kind, field, raw) : raw;
}

/** `push[files][]` → `files`, `push[payload]` → `payload` (for `wrapper` push). */
function fieldOf(name: string, prefix: string): string {
  return name.slice(prefix.length).replace(/\](\[\])?$/, '');
}

/**
 * `{ [wrapper]: { … } }` from a form (with a push's `workspace_id` / `account_id` beside it, as sent), or 400
 * missing_push when no `<wrapper>[…]` field (nor file) was sent. A field
 * sent twice answers 422 on it; a text value under the files field answers 422 on `files`.
 */
export function formToInput(
  body: FormBody,
  wrapper: string,
  schema: FormSchema = 'PushInput',
): Record<string, unknown> {
  let known: Map<string, FieldKind>;
  if (schema === 'PushInput') known = kinds ??= fieldKinds('PushInput');
  else {
    known = otherKinds.get(schema) ?? fieldKinds(schema);
    otherKinds.set(schema, known);
  }
  const prefix = `${wrapper}[`;
  const push: Record<string, unknown> = {};
  const seen = new Set<string>();
  const errors: Record<string, string[]> = {};
  let named = false;
  const beside: Record<string, string> = {};
  for (const [name, raw] of body.fields) {
    if (!name.startsWith(prefix)) {
      // The workspace's id beside the wrapper (pwpush-cli's `account_id`, Raycast's `workspace_id`): ./workspaces.ts.
      if (schema === 'PushInput' && (WORKSPACE_ID_FIELDS as readonly string[]).includes(name)) {
        if (name in beside) errors[name] = ['must be given once'];
        else if (raw !== '') beside[name] = raw;
      }
      continue;
    }
    named = true;
    const field = fieldOf(name, prefix);
    const kind = known.get(field);
    if (!kind) continue; // unknown fields are ignored, as in JSON
    if (kind === 'files') {
      if (raw !== '') errors[field] = ['must be sent as file parts of a multipart body'];
      continue;
    }
    if (seen.has(field)) {
      errors[field] = ['must be given once'];
      continue;
    }
    seen.add(field);
    const value = readValue(kind, field, raw);
    if (value !== undefined) push[field] = value;
  }
  const files = body.files.filter((f) => f.field.startsWith(prefix) && known.get(fieldOf(f.field, prefix)) === 'files');
  if (files.length > 0 || body.filesSeen > body.files.length) named = true;
  const uploads = files.filter((f) => !(f.filename === '' && f.bytes.length === 0)); // an empty file input
  if (uploads.some((f) => f.filename === '')) errors.files = ['every file part needs a filename'];
  if (uploads.length > 0 || body.filesSeen > files.length) {
    // Parts beyond the count the reader keeps are counted, so the count rule still sees them.
    const extra = Math.max(0, body.filesSeen - body.files.length);
    push.files = [
      ...uploads.map((f) => uploadWithBytes(f.filename, f.contentType, f.bytes)),
      ...Array.from({ length: extra }, () => uploadWithBytes('extra', 'application/octet-stream', new Uint8Array())),
    ];
  }
  if (!named) throw new ApiError('missing_push', `The form has no ${wrapper}[…] field.`);
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  return { [wrapper]: push, ...beside };
}
