/**
 * Form bodies (application/x-www-form-urlencoded and multipart/form-data) parsed with the platform's own FormData
 * (undici's Request), with a byte limit enforced while streaming.
 */
import { Readable, Transform } from 'node:stream';
import type { Request } from 'express';

export class FormError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'FormError';
  }
}

export async function readForm(req: Request, limitBytes: number): Promise<FormData> {
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data')) {
    throw new FormError(415, 'Send the form as a web form.');
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limitBytes) throw new FormError(413, 'The form is too large.');
  let seen = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > limitBytes) done(new FormError(413, 'The form is too large.'));
      else done(null, chunk);
    },
  });
  req.pipe(limiter);
  req.on('error', (err) => limiter.destroy(err));
  const request = new globalThis.Request('http://form.invalid/', {
    method: 'POST',
    headers: { 'content-type': String(req.headers['content-type']) },
    body: Readable.toWeb(limiter) as unknown as ReadableStream<Uint8Array>,
    duplex: 'half',
  } as RequestInit);
  try {
    return await request.formData();
  } catch (err) {
    if (seen > limitBytes) throw new FormError(413, 'The form is too large.');
    throw new FormError(400, 'The form could not be read.');
  }
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
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new FormError(415, 'Send the body as application/json.');
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limitBytes) throw new FormError(413, 'The request body is too large.');
  const chunks: Buffer[] = [];
  let seen = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    seen += chunk.length;
    if (seen > limitBytes) throw new FormError(413, 'The request body is too large.');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FormError(400, 'The request body is not valid JSON.');
  }
}
