/**
 * The create body as the stateful mock reads it, as the server does: JSON `{ "push": … }`, or a form
 * (multipart/form-data with files as parts, or form-urlencoded) read by the shared form rules (`@secret-push/rules`,
 * form-input.ts) into the same push. Any other media type answers 400 unsupported_media_type.
 */
import { ApiError, formToInput, mediaTypeOf, requestedWorkspace, type FormBody } from '@secret-push/rules';

function mediaType(request: Request): string {
  return mediaTypeOf(request.headers.get('Content-Type'));
}

async function readJson(request: Request, wrapper = 'push'): Promise<unknown> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    throw new ApiError('invalid_json');
  }
  const push = (body as Record<string, unknown> | null)?.[wrapper];
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

async function readFormBody(
  request: Request,
  wrapper: string,
  schema: 'PushInput' | 'RequestInput',
): Promise<Record<string, unknown>> {
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
  return formToInput(body, wrapper, schema);
}

async function readForm(
  request: Request,
  wrapper = 'push',
  schema: 'PushInput' | 'RequestInput' = 'PushInput',
): Promise<unknown> {
  return (await readFormBody(request, wrapper, schema))[wrapper];
}

/**
 * The `push` object of a create request and the workspace it names (beside `push`, inside it, or in the query: the
 * shared rule, `requestedWorkspace`), or the 400 the server answers for its body.
 */
export async function readCreateBody(request: Request): Promise<{ push: unknown; workspaceId: number | null }> {
  const type = mediaType(request);
  const query = Object.fromEntries(new URL(request.url).searchParams);
  const named = (whole: Record<string, unknown>, push: unknown) => ({
    push,
    workspaceId: requestedWorkspace(whole, push as Record<string, unknown>, query),
  });
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    const text = await request.text();
    const push = await readJson(new Request('http://x', { method: 'POST', body: text }));
    return named(JSON.parse(text) as Record<string, unknown>, push);
  }
  if (type === 'multipart/form-data' || type === 'application/x-www-form-urlencoded') {
    const whole = await readFormBody(request, 'push', 'PushInput');
    return named(whole, whole.push);
  }
  throw new ApiError(
    'unsupported_media_type',
    'Send the body as application/json, multipart/form-data or application/x-www-form-urlencoded.',
  );
}

/**
 * A request body of the request operations, as the server reads it: JSON (the whole object, `wrapper` required), or a
 * form read into `{ [wrapper]: … }`.
 */
export async function readWrappedBody(request: Request, wrapper: 'request' | 'push'): Promise<Record<string, unknown>> {
  const type = mediaType(request);
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    const text = await request.text();
    await readJson(new Request('http://x', { method: 'POST', body: text }), wrapper);
    return JSON.parse(text) as Record<string, unknown>;
  }
  if (type === 'multipart/form-data' || type === 'application/x-www-form-urlencoded')
    return { [wrapper]: await readForm(request, wrapper, wrapper === 'request' ? 'RequestInput' : 'PushInput') };
  throw new ApiError(
    'unsupported_media_type',
    'Send the body as application/json, multipart/form-data or application/x-www-form-urlencoded.',
  );
}
