/**
 * Pushes with files go up as `multipart/form-data`, the way the contract's `CreatePushMultipart` and the Password
 * Pusher clients send them: `push[<field>]` text fields (numbers as digits, booleans as true/false) and one
 * `push[files][]` part per file with its bytes as they are, a third smaller than base64 in JSON and never held as a
 * base64 string. A push whose fields a form cannot say (an empty `passphrase` or `kind`, which a form reads as "not
 * given", or a structured value) goes as JSON instead, so the server answers exactly what the input means.
 */
import type { FileUpload } from './generated/types.gen.js';
import { base64ToBytes, type FileInput } from './files.js';

type Fields = Record<string, unknown>;

/** Whether every field can go as a form field without changing its meaning. */
export function formCanCarry(fields: Fields): boolean {
  return Object.entries(fields).every(([name, value]) => {
    if (value === undefined) return true;
    if (typeof value === 'string') return value !== '' || (name !== 'passphrase' && name !== 'kind');
    return typeof value === 'number' || typeof value === 'boolean';
  });
}

function isFileUpload(file: FileInput): file is FileUpload {
  return typeof (file as FileUpload).content === 'string';
}

/** A file as a multipart part: a Blob of its bytes with its media type, and its name. */
function filePart(file: FileInput): { blob: Blob; filename: string } {
  if (isFileUpload(file)) {
    const bytes = base64ToBytes(file.content);
    return {
      blob: new Blob([bytes as Uint8Array<ArrayBuffer>], { type: file.content_type ?? 'application/octet-stream' }),
      filename: file.filename,
    };
  }
  const { data } = file;
  const type = file.contentType ?? (data instanceof Blob ? data.type : '') ?? '';
  const blob =
    data instanceof Blob
      ? type === data.type
        ? data
        : new Blob([data], { type })
      : new Blob([data as Uint8Array<ArrayBuffer>], { type });
  return { blob: blob.type ? blob : new Blob([blob], { type: 'application/octet-stream' }), filename: file.filename };
}

/** The create form: `push[field]` per given field, then one `push[files][]` part per file. */
function pushFormData(fields: Fields, files: readonly FileInput[]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) form.append(`push[${name}]`, String(value));
  }
  for (const file of files) {
    const { blob, filename } = filePart(file);
    form.append('push[files][]', blob, filename);
  }
  return form;
}

/**
 * The create form encoded once, with its boundary: a retry under the same Idempotency-Key must send the same bytes
 * (the server compares the body's digest), and a FormData encoded again gets a new random boundary.
 */
export async function multipartBody(
  fields: Fields,
  files: readonly FileInput[],
): Promise<{ bytes: Uint8Array; contentType: string }> {
  const encoded = new Response(pushFormData(fields, files));
  const contentType = encoded.headers.get('Content-Type');
  if (!contentType) throw new TypeError('the platform did not give the multipart body a Content-Type');
  return { bytes: new Uint8Array(await encoded.arrayBuffer()), contentType };
}
