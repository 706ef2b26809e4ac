/**
 * The request body reader of the API (and of the pages' forms). It runs after routing and authentication, so the
 * limit is chosen per operation and caller before a byte is read; it reads the body as it streams (never buffering
 * more than the limit), decodes a `Content-Encoding` (gzip, deflate, br), and parses the three media types the
 * contract accepts: JSON (checked by a streaming structural scan, ./json-scan.ts, before `JSON.parse`), `multipart/
 * form-data` (a well-kept streaming parser, @fastify/busboy, with the per-file limit applied while a file streams)
 * and `application/x-www-form-urlencoded` (./urlencoded.ts: the WHATWG URL Standard's parsing, in linear time). The
 * bounds of the contract (./body-bounds.ts) are enforced while the bytes come: a body over one is refused from what
 * has been read so far (JsonViolationError, FormViolationError; the edge maps them to 400/422).
 *
 * Every stream opened here has an error path: the request (the client goes away), the stages of the pipeline (byte
 * counters, decoders), the multipart parser and each of its file streams, kept or discarded (a part that ends
 * without its closing boundary fails the read with 400 invalid_form, never the process). The first failure stops
 * the read at once; the rest of the body is discarded as it comes, and the request is not destroyed (its socket must
 * carry the answer: close-after-reply.ts).
 */
import { createHash, hash as digestOf, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Busboy } from '@fastify/busboy';
import { ApiError, bodyKindOf, stripUnsafeInName, validationFailed, type StoredBytes } from '@secret-push/rules';
import {
  FORM_LIMITS,
  formFieldBound,
  largestFormField,
  OPEN,
  type FormBounds,
  type ShapeBounds,
} from './body-bounds.js';
import { JsonScanner, JsonViolationError } from './json-scan.js';
import { FormViolationError, UrlencodedParser } from './urlencoded.js';

export interface BodyLimits {
  /** Most bytes of the body, as sent and as decoded. */
  maxBytes: number;
  /** Most bytes of one multipart file part (beyond it: 422 on `files`). */
  maxFileBytes: number;
  /** Most multipart file parts read (later ones are drained and counted). */
  maxFiles: number;
  /** Set when file parts need a token this caller does not have: the first one answers its error at once (401). */
  filesRefused?: () => ApiError;
  /** The bounds of a JSON body (./body-bounds.ts, from the contract); default: the policy's for open positions. */
  json?: ShapeBounds;
  /** The bounds of a urlencoded body's fields, by name; default: the policy's for every field. */
  urlencoded?: FormBounds;
  /** The bounds of a multipart body's text fields, by name; default: the policy's for every field. */
  multipart?: FormBounds;
  /**
   * A file part over `maxFileBytes`: refused at once (the API: 422 on `files`), or kept cut to `maxFileBytes + 1`
   * bytes so that the push rules refuse it with their own message (the pages' form, which shows the form again).
   */
  oversizedFiles?: 'refuse' | 'truncate';
  /**
   * Where kept file parts go as they stream, instead of memory (the object store: ../files/file-objects.ts). The read
   * ends once every part given to it has been stored (or has failed, which fails the read).
   */
  fileSink?: FileSink;
}

/** Takes one file part's bytes as they come; resolves to what stands for them once stored (StoredBytes). */
interface FileSink {
  take(part: Readable): Promise<StoredBytes>;
}

/** A refusal of the body's bounds (the edge answers it in its document's shape). */
export type BoundsError = JsonViolationError | FormViolationError;

export function isBoundsError(error: unknown): error is BoundsError {
  return error instanceof JsonViolationError || error instanceof FormViolationError;
}

interface FormFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer | StoredBytes;
}

export type ParsedBody =
  | { type: 'none' }
  | { type: 'json'; value: unknown }
  | { type: 'form'; fields: [name: string, value: string][]; files: FormFile[]; filesSeen: number };

export interface ReadBody {
  body: ParsedBody;
  /** SHA-256 (hex) of the decoded body bytes: what "the same body" means for idempotency keys. */
  digest: string;
}

/** Most parts of a multipart body (fields and files together). */
const MAX_PARTS = FORM_LIMITS.maxFields;
/** Most bytes of the headers of one multipart part. */
const MAX_PART_HEADER_BYTES = 8 * 1024;

/** Whether a request carries a body (a length above zero, or chunked transfer). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function tooLarge(): ApiError {
  return new ApiError('payload_too_large');
}

function decoderFor(encoding: string | undefined): Transform | null {
  const coding = (encoding ?? 'identity').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return null;
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip();
  if (coding === 'deflate') return zlib.createInflate();
  if (coding === 'br') return zlib.createBrotliDecompress();
  throw new ApiError(
    'invalid_encoding',
    'The request body uses a Content-Encoding this server does not read (use gzip, deflate, br or none).',
  );
}

/** Counts bytes through a stream and fails as soon as there are more than `max`; hashes what passes when asked. */
function counter(max: number, hash?: Hash): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > max) return done(tooLarge());
      hash?.update(chunk);
      done(null, chunk);
    },
  });
}

/**
 * Reads and parses the body of `req` within `limits`. A declared length over the limit is refused before reading;
 * otherwise the raw and the decoded bytes are both counted while they stream. A body whose media type is not one
 * of the three answers 400 unsupported_media_type; an empty body is `none`.
 */
export async function readBody(req: IncomingMessage, limits: BodyLimits): Promise<ReadBody> {
  if (!hasBody(req)) return { body: { type: 'none' }, digest: EMPTY_DIGEST };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes) throw tooLarge();
  const media = bodyKindOf(req.headers['content-type']);
  if (!media) {
    throw new ApiError(
      'unsupported_media_type',
      'Send the body as application/json, multipart/form-data or application/x-www-form-urlencoded.',
    );
  }
  const decoder = decoderFor(req.headers['content-encoding'] as string | undefined);
  if (media === 'multipart') {
    const hash = createHash('sha256');
    const stages: Transform[] = [counter(limits.maxBytes)];
    if (decoder) stages.push(decoder);
    stages.push(counter(limits.maxBytes, hash));
    const body = await readMultipart(req, stages, limits);
    return { body, digest: hash.digest('hex') };
  }
  const consumer = media === 'json' ? jsonConsumer(limits.json ?? OPEN) : formConsumer(limits.urlencoded);
  // Without a Content-Encoding (the common case) the bytes come straight from the request, with no stream stages.
  const bytes = decoder
    ? await readDecoded(req, decoder, limits.maxBytes, consumer)
    : await readPlain(req, limits.maxBytes, consumer);
  return { body: consumer.finish(bytes), digest: digestOf('sha256', bytes, 'hex') };
}

/** Sees each chunk of a JSON or urlencoded body as it comes (and may refuse it), then parses the whole. */
interface Consumer {
  /** Throws (a bounds error) to refuse the body. */
  write(chunk: Buffer): void;
  finish(bytes: Buffer): ParsedBody;
}

function jsonConsumer(bounds: ShapeBounds): Consumer {
  const scanner = new JsonScanner(bounds);
  return {
    write: (chunk) => scanner.write(chunk),
    finish(bytes) {
      const verdict = scanner.end();
      if (verdict === 'empty') return { type: 'none' };
      const text = bytes.toString('utf8');
      if (verdict === 'invalid') {
        // Whitespace JSON does not know (a BOM, a no-break space) around nothing is still no body.
        if (text.trim() === '') return { type: 'none' };
        throw invalidJson();
      }
      try {
        return { type: 'json', value: JSON.parse(text) as unknown };
      } catch {
        throw invalidJson();
      }
    },
  };
}

function invalidJson(): ApiError {
  return new ApiError('invalid_json');
}

function formConsumer(bounds: FormBounds | undefined): Consumer {
  const parser = new UrlencodedParser({
    maxFields: FORM_LIMITS.maxFields,
    maxNameBytes: FORM_LIMITS.maxNameBytes,
    maxValue: (name) => formFieldBound(bounds, name).maxLength,
  });
  return {
    write: (chunk) => parser.write(chunk),
    finish: () => ({ type: 'form', fields: parser.end(), files: [], filesSeen: 0 }),
  };
}

/** SHA-256 of no bytes. */
const EMPTY_DIGEST = digestOf('sha256', '', 'hex');

/**
 * Reads a body without a Content-Encoding: what `pump` does through its stages, without them. Past `max` bytes, or
 * when the client goes away, reading stops (the rest is discarded as it comes, the request is not destroyed).
 */
function readPlain(req: IncomingMessage, max: number, consumer: Consumer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const fail = (error: unknown) => {
      stop();
      req.resume();
      reject(error);
    };
    function onData(chunk: Buffer) {
      seen += chunk.length;
      if (seen > max) return fail(tooLarge());
      try {
        consumer.write(chunk);
      } catch (error) {
        return fail(error);
      }
      chunks.push(chunk);
    }
    function onEnd() {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, seen));
    }
    function onGone() {
      if (!req.complete) fail(new ApiError('bad_request', 'The client went away before its body was sent.'));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/** Maps a stream failure to the API's answer: our own ApiError or bounds error, a body that does not decode, or a broken upload. */
function streamFailure(error: unknown): ApiError | BoundsError {
  if (error instanceof ApiError || isBoundsError(error)) return error;
  const code = (error as { code?: string }).code ?? '';
  if (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__ERROR_')) {
    return new ApiError('invalid_encoding', 'The request body does not decode as its Content-Encoding says.');
  }
  return new ApiError('bad_request', 'The request body could not be read.');
}

/**
 * Streams the request through `rest`. On a failure (over the limit, a body that does not decode) reading stops but
 * the request is not destroyed: its socket must stay up until the client has read the answer (close-after-reply.ts),
 * and what the client still sends is discarded as it comes. A client that goes away fails the read.
 */
async function pump(req: Readable, rest: NodeJS.WritableStream[]): Promise<void> {
  const entry = new PassThrough();
  const gone = () => {
    if (!(req as IncomingMessage).complete)
      entry.destroy(new ApiError('bad_request', 'The client went away before its body was sent.'));
  };
  req.on('error', gone);
  req.on('close', gone);
  req.pipe(entry);
  try {
    await pipeline([entry, ...rest] as [NodeJS.ReadableStream, ...NodeJS.WritableStream[]]);
  } catch (error) {
    req.unpipe(entry);
    req.resume();
    throw error;
  } finally {
    req.off('error', gone);
    req.off('close', gone);
  }
}

/** A JSON or form body with a Content-Encoding: counted as sent, decoded, counted again, seen by `consumer`. */
async function readDecoded(req: Readable, decoder: Transform, max: number, consumer: Consumer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        consumer.write(chunk);
      } catch (error) {
        return done(error as Error);
      }
      chunks.push(chunk);
      done();
    },
  });
  try {
    await pump(req, [counter(max), decoder, counter(max), sink]);
  } catch (error) {
    throw streamFailure(error);
  }
  return Buffer.concat(chunks);
}

/**
 * Fails a multipart stream as soon as one part holds more than `maxPartBytes` (counted between two boundary
 * delimiters): the multipart parser cuts a text field at its limit but reads the rest of the part before it says so,
 * so a 50 MB field would be read whole. A file part meets its own limit (the parser's `limit` event) before this one.
 */
function partGuard(boundary: string, maxPartBytes: number): Transform {
  const token = Buffer.from(`--${boundary}`);
  const keep = token.length - 1;
  let since = 0;
  let tail = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const at = chunk.lastIndexOf(token);
      if (at !== -1) {
        since = chunk.length - (at + token.length);
      } else {
        // A delimiter across the previous chunk and this one.
        const seam = Buffer.concat([tail, chunk.subarray(0, keep)]);
        const k = seam.lastIndexOf(token);
        since = k !== -1 ? chunk.length - (k + token.length - tail.length) : since + chunk.length;
      }
      tail =
        chunk.length >= keep
          ? Buffer.from(chunk.subarray(chunk.length - keep))
          : Buffer.concat([tail, chunk]).subarray(-keep);
      if (since > maxPartBytes) {
        return done(
          new ApiError(
            'invalid_form',
            'A part of the multipart body is larger than any field or file this instance takes.',
          ),
        );
      }
      done(null, chunk);
    },
  });
}

function boundaryOf(contentType: string): string | null {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

/** The code points of a decoded field value (a surrogate pair is one, as the contract's maxLength counts). */
function codePoints(value: string): number {
  let n = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

async function readMultipart(req: IncomingMessage, stages: Transform[], limits: BodyLimits): Promise<ParsedBody> {
  const truncate = limits.oversizedFiles === 'truncate';
  const fieldSize = 4 * largestFormField(limits.multipart) + 4;
  let parser: InstanceType<typeof Busboy>;
  try {
    parser = new Busboy({
      headers: req.headers as { 'content-type': string },
      limits: {
        parts: MAX_PARTS,
        fields: MAX_PARTS,
        // A text part is buffered up to the largest field's bound (4 bytes a code point) and then cut: a value over
        // its field's bound is refused below either way.
        fieldSize,
        fileSize: truncate ? limits.maxFileBytes + 1 : limits.maxFileBytes,
        headerPairs: 16,
        headerSize: MAX_PART_HEADER_BYTES,
      },
    });
  } catch {
    throw new ApiError('invalid_form', 'The multipart body has no usable boundary.');
  }
  const boundary = boundaryOf(String(req.headers['content-type'] ?? ''));
  // Past the parser's own limits by a margin: a file over its limit gets the parser's 422 on `files` first (the
  // parser may be a few chunks behind this stage).
  if (boundary)
    stages.push(
      partGuard(boundary, Math.max(fieldSize, limits.maxFileBytes + 1) + MAX_PART_HEADER_BYTES + 1024 * 1024),
    );
  const fields: [string, string][] = [];
  const files: FormFile[] = [];
  let filesSeen = 0;
  let failure: ApiError | BoundsError | null = null;
  /** File parts streaming to `limits.fileSink`, and their outcomes (the read waits for every one). */
  const sinking = new Set<Readable>();
  const stored: Promise<void>[] = [];
  /** The first failure stops the read: the parser is destroyed with it, which fails the pipeline at once. */
  const fail = (error: ApiError | BoundsError) => {
    if (failure) return;
    failure = error;
    parser.destroy(error);
    // A part streaming to the store ends with the read (its upload is abandoned, nothing of it kept).
    for (const part of sinking) part.destroy(error);
  };
  const truncatedPart = () =>
    new ApiError('invalid_form', 'The multipart body ends inside a part (its closing boundary is missing).');
  parser.on('field', (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean) => {
    if (nameTruncated || Buffer.byteLength(name) > FORM_LIMITS.maxNameBytes) {
      return fail(new FormViolationError({ kind: 'name', limit: FORM_LIMITS.maxNameBytes }));
    }
    const bound = formFieldBound(limits.multipart, name).maxLength;
    if (valueTruncated || (value.length > bound && codePoints(value) > bound)) {
      return fail(new FormViolationError({ kind: 'value', name, limit: bound }));
    }
    fields.push([name, value]);
  });
  parser.on(
    'file',
    (field: string, stream: Readable, filename: string | undefined, _transfer: string, mimeType: string) => {
      // Every file stream, kept or discarded, has an error path: a part cut short by the end of the body emits one.
      // (A part streaming to the store fails through its upload instead: the store's 503, or the part's own end.)
      stream.on('error', () => {
        if (!sinking.has(stream)) fail(truncatedPart());
      });
      if (limits.filesRefused) {
        fail(limits.filesRefused());
        stream.resume();
        return;
      }
      if (Buffer.byteLength(field) > FORM_LIMITS.maxNameBytes) {
        fail(new FormViolationError({ kind: 'name', limit: FORM_LIMITS.maxNameBytes }));
        stream.resume();
        return;
      }
      filesSeen += 1;
      const index = filesSeen;
      const chunks: Buffer[] = [];
      const keep = filesSeen <= limits.maxFiles;
      stream.on('limit', () => {
        if (!truncate)
          fail(validationFailed({ files: [`file ${index}: larger than the limit of ${limits.maxFileBytes} bytes`] }));
      });
      if (keep && limits.fileSink) {
        // Streamed to the store as it comes (its place among the files kept now; its bytes once stored).
        const file: FormFile = {
          field,
          filename: stripUnsafeInName(filename ?? ''),
          contentType: mimeType || 'application/octet-stream',
          bytes: Buffer.alloc(0),
        };
        files.push(file);
        sinking.add(stream);
        stored.push(
          limits.fileSink.take(stream).then(
            (bytes) => {
              file.bytes = bytes;
            },
            (error: unknown) => fail(error instanceof ApiError ? error : truncatedPart()),
          ),
        );
        return;
      }
      stream.on('data', (chunk: Buffer) => {
        if (keep) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (keep)
          files.push({
            field,
            filename: stripUnsafeInName(filename ?? ''),
            contentType: mimeType || 'application/octet-stream',
            bytes: Buffer.concat(chunks),
          });
      });
    },
  );
  parser.on('partsLimit', () =>
    fail(new ApiError('invalid_form', `The multipart body has more than ${MAX_PARTS} parts.`)),
  );
  parser.on('fieldsLimit', () => fail(new FormViolationError({ kind: 'fields', limit: MAX_PARTS })));
  try {
    await pump(req, [...stages, parser as unknown as NodeJS.WritableStream]);
  } catch (error) {
    await Promise.all(stored);
    if (failure) throw failure;
    const mapped = streamFailure(error);
    throw mapped instanceof ApiError && mapped.code === 'bad_request'
      ? new ApiError('invalid_form', 'The multipart body is malformed.')
      : mapped;
  }
  await Promise.all(stored);
  if (failure) throw failure;
  return { type: 'form', fields, files, filesSeen };
}
