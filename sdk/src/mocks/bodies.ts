/**
 * The create body as the stateful mock reads it, as the server does: JSON `{ "push": … }`, or a form
 * (multipart/form-data with files as parts, or form-urlencoded) read by the shared form rules (`@secret-push/rules`,
 * form-input.ts) into the same push. Any other media type answers 400 unsupported_media_type.
 */
import { ApiError, formToInput, mediaTypeOf, type FormBody } from '@secret-push/rules';

function mediaType(request: Request): string {
  return mediaTypeOf(request.headers.get('Content-Type'));
}

async function readJson(request: Request): Promise<unknown> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    throw new ApiError('invalid_json');
  }
  const push = (body as { push?: unknown } | null)?.push;
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    typeof push !== 'object' ||
    push === null ||
    Array.isArray(push)
  ) {
    throw new ApiError('missing_push');
  }
  return push;
}

async function readForm(request: Request): Promise<unknown> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw new ApiError('invalid_form', 'The form body is malformed.');
  }
  const body: FormBody = { fields: [], files: [], filesSeen: 0 };
  for (const [name, value] of form) {
    if (typeof value === 'string') {
      body.fields.push([name, value]);
      continue;
    }
    body.filesSeen += 1;
    body.files.push({
      field: name,
      filename: value.name,
      contentType: value.type || 'application/octet-stream',
      bytes: new Uint8Array(await value.arrayBuffer()),
    });
  }
  return formToInput(body, 'push').push;
}

/** The `push` object of a create request, or the 400 the server answers for its body. */
export async function readCreateBody(request: Request): Promise<unknown> {
  const type = mediaType(request);
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return readJson(request);
  if (type === 'multipart/form-data' || type === 'application/x-www-form-urlencoded') return readForm(request);
  throw new ApiError(
    'unsupported_media_type',
    'Send the body as application/json, multipart/form-data or application/x-www-form-urlencoded.',
  );
}
