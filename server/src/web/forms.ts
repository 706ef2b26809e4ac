/**
 * The pages' request bodies: their forms (application/x-www-form-urlencoded and multipart/form-data) and the
 * recipient page's small JSON steps, read by the API's body reader (../http/body.ts): the byte limit enforced while
 * streaming, urlencoded forms parsed in linear time, a bounded number of fields, each field's value bounded (the push
 * fields by the contract's `PushInput`, any other by the reader's policy), every stream with an error path. A form
 * comes back as a `FormData` (files as `File`s), as the platform's parser gave it before.
 */
import type { Request } from 'express';
import { bundledDocument, inlineRefs } from '@secret-push/contract';
import { ApiError, bodyKindOf, bytesInMemory, mediaTypeOf } from '@secret-push/rules';
import { isBoundsError, readBody } from '../http/body.js';
import { formBounds, OPEN, type FormBounds } from '../http/body-bounds.js';
import { boundsRefusal } from '../http/body-refusal.js';
import { closeAfterReply } from '../http/close-after-reply.js';

export class FormError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'FormError';
  }
}

/** The pages' push fields carry PushInput's names (`payload`, `passphrase`, `name`, …): their bounds are the contract's. */
let pageFields: FormBounds | undefined;

export interface FormFiles {
  /** Most bytes of one file: a larger one is kept cut to one byte more, so the push rules refuse it with their message. */
  maxFileBytes: number;
  /** Most file parts kept. */
  maxFiles: number;
}

/** The failure of a page body read as the page's FormError (the rest of the body is not waited for). */
function formFailure(req: Request, error: unknown, tooLarge: string): FormError {
  if (req.res) closeAfterReply(req, req.res);
  const api = isBoundsError(error) ? boundsRefusal(error, undefined) : error;
  if (!(api instanceof ApiError)) return new FormError(400, 'The form could not be read.');
  if (api.status === 413) return new FormError(413, tooLarge);
  return new FormError(400, api.message);
}

export async function readForm(
  req: Request,
  limitBytes: number,
  files: FormFiles = { maxFileBytes: limitBytes, maxFiles: 0 },
): Promise<FormData> {
  const kind = bodyKindOf(req.headers['content-type']);
  if (kind !== 'urlencoded' && kind !== 'multipart') {
    throw new FormError(415, 'Send the form as a web form.');
  }
  pageFields ??= formBounds(
    (inlineRefs(bundledDocument()) as { components: { schemas: Record<string, unknown> } }).components.schemas
      .PushInput,
  );
  let read;
  try {
    read = await readBody(req, {
      maxBytes: limitBytes,
      maxFileBytes: files.maxFileBytes,
      maxFiles: files.maxFiles,
      urlencoded: pageFields,
      multipart: pageFields,
      oversizedFiles: 'truncate',
    });
  } catch (error) {
    throw formFailure(req, error, 'The form is too large.');
  }
  const form = new FormData();
  if (read.body.type !== 'form') return form;
  for (const [name, value] of read.body.fields) form.append(name, value);
  for (const file of read.body.files) {
    form.append(
      file.field,
      new File([new Uint8Array(bytesInMemory(file.bytes))], file.filename, { type: file.contentType }),
    );
  }
  return form;
}

export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}

/**
 * A small JSON body (the recipient page's reveal and delete steps), read with a byte limit. Only
 * `application/json` is taken: a cross-site page cannot send that type without a CORS preflight, which this server
 * never grants.
 */
export async function readJson(req: Request, limitBytes: number): Promise<unknown> {
  if (mediaTypeOf(req.headers['content-type']) !== 'application/json')
    throw new FormError(415, 'Send the body as application/json.');
  let read;
  try {
    read = await readBody(req, { maxBytes: limitBytes, maxFileBytes: 0, maxFiles: 0, json: OPEN });
  } catch (error) {
    throw formFailure(req, error, 'The request body is too large.');
  }
  return read.body.type === 'json' ? read.body.value : {};
}
