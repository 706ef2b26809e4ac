/**
 * The request body reader of the API. It runs after routing and authentication, so the limit is chosen per operation
 * and caller before a byte is read; it reads the body as it streams (never buffering more than the limit), decodes a
 * `Content-Encoding` (gzip, deflate, br), and parses the three media types the contract accepts: JSON, `multipart/
 * form-data` (a well-kept streaming parser, @fastify/busboy, with the per-file limit applied while a file streams)
 * and `application/x-www-form-urlencoded` (the WHATWG URL Standard's parser). Failures are the API's 400/413/422.
 */
import { createHash, hash as digestOf, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Busboy } from '@fastify/busboy';
import { ApiError, validationFailed } from '@secret-push/sdk/rules';

export interface BodyLimits {
  /** Most bytes of the body, as sent and as decoded. */
  maxBytes: number;
  /** Most bytes of one multipart file part (beyond it: 422 on `files`). */
  maxFileBytes: number;
  /** Most multipart file parts read (later ones are drained and counted). */
  maxFiles: number;
  /** Set when file parts need a token this caller does not have: the first one answers its error at once (401). */
  filesRefused?: () => ApiError;
}

export interface FormFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
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
const MAX_PARTS = 64;

type MediaType = 'json' | 'multipart' | 'urlencoded';

function mediaTypeOf(contentType: string): MediaType | null {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return 'json';
  if (type === 'multipart/form-data') return 'multipart';
  if (type === 'application/x-www-form-urlencoded') return 'urlencoded';
  return null;
}

/** Whether a request carries a body (a length above zero, or chunked transfer). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function tooLarge(): ApiError {
  return new ApiError('payload_too_large', 'The request body is larger than this instance accepts.');
}

function decoderFor(encoding: string | undefined): Transform | null {
  const coding = (encoding ?? 'identity').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return null;
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip();
  if (coding === 'deflate') return zlib.createInflate();
  if (coding === 'br') return zlib.createBrotliDecompress();
  throw new ApiError('invalid_encoding', 'The request body uses a Content-Encoding this server does not read (use gzip, deflate, br or none).');
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
  const media = mediaTypeOf(String(req.headers['content-type'] ?? ''));
  if (!media) {
    throw new ApiError('unsupported_media_type', 'Send the body as application/json, multipart/form-data or application/x-www-form-urlencoded.');
  }
  const decoder = decoderFor(req.headers['content-encoding'] as string | undefined);
  if (!decoder && media !== 'multipart') {
    // The common case (a JSON or form body as sent): its bytes straight from the request, no stream stages.
    const bytes = await readPlain(req, limits.maxBytes);
    return { body: parseWhole(bytes, media), digest: digestOf('sha256', bytes, 'hex') };
  }
  const hash = createHash('sha256');
  const stages: Transform[] = [counter(limits.maxBytes)];
  if (decoder) stages.push(decoder);
  stages.push(counter(limits.maxBytes, hash));
  const body = media === 'multipart' ? await readMultipart(req, stages, limits) : await readWhole(req, stages, media);
  return { body, digest: hash.digest('hex') };
}

/** SHA-256 of no bytes. */
const EMPTY_DIGEST = digestOf('sha256', '', 'hex');

/**
 * Reads a body without a Content-Encoding: what `pump` does through its stages, without them. Past `max` bytes, or
 * when the client goes away, reading stops (the rest is discarded as it comes, the request is not destroyed).
 */
function readPlain(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const fail = (error: ApiError) => {
      stop();
      req.resume();
      reject(error);
    };
    function onData(chunk: Buffer) {
      seen += chunk.length;
      if (seen > max) fail(tooLarge());
      else chunks.push(chunk);
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

/** Maps a stream failure to the API's answer: our own ApiError, a body that does not decode, or a broken upload. */
function streamFailure(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
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
    if (!(req as IncomingMessage).complete) entry.destroy(new ApiError('bad_request', 'The client went away before its body was sent.'));
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

async function readWhole(req: Readable, stages: Transform[], media: 'json' | 'urlencoded'): Promise<ParsedBody> {
  const chunks: Buffer[] = [];
  const sink = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  try {
    await pump(req, [...stages, sink]);
  } catch (error) {
    throw streamFailure(error);
  }
  return parseWhole(Buffer.concat(chunks), media);
}

/** A whole JSON or form body, parsed. */
function parseWhole(bytes: Buffer, media: 'json' | 'urlencoded'): ParsedBody {
  const text = bytes.toString('utf8');
  if (media === 'urlencoded') return { type: 'form', fields: [...new URLSearchParams(text)], files: [], filesSeen: 0 };
  if (text.trim() === '') return { type: 'none' };
  try {
    return { type: 'json', value: JSON.parse(text) as unknown };
  } catch {
    throw new ApiError('invalid_json', 'The request body is not valid JSON.');
  }
}

async function readMultipart(req: IncomingMessage, stages: Transform[], limits: BodyLimits): Promise<ParsedBody> {
  let parser: InstanceType<typeof Busboy>;
  try {
    parser = new Busboy({
      headers: req.headers as { 'content-type': string },
      limits: { parts: MAX_PARTS, fileSize: limits.maxFileBytes, fieldSize: limits.maxBytes, headerPairs: 16 },
    });
  } catch {
    throw new ApiError('invalid_form', 'The multipart body has no usable boundary.');
  }
  const fields: [string, string][] = [];
  const files: FormFile[] = [];
  let filesSeen = 0;
  let failure: ApiError | null = null;
  const fail = (error: ApiError) => {
    failure ??= error;
  };
  parser.on('field', (name, value) => void fields.push([name, value]));
  parser.on('file', (field, stream, filename, _transfer, mimeType) => {
    if (limits.filesRefused) {
      fail(limits.filesRefused());
      stream.resume();
      return;
    }
    filesSeen += 1;
    const index = filesSeen;
    const chunks: Buffer[] = [];
    const keep = filesSeen <= limits.maxFiles;
    stream.on('data', (chunk: Buffer) => {
      if (keep) chunks.push(chunk);
    });
    stream.on('limit', () => fail(validationFailed({ files: [`file ${index}: larger than the limit of ${limits.maxFileBytes} bytes`] })));
    stream.on('end', () => {
      if (keep) files.push({ field, filename: filename ?? '', contentType: mimeType || 'application/octet-stream', bytes: Buffer.concat(chunks) });
    });
  });
  parser.on('partsLimit', () => fail(new ApiError('invalid_form', `The multipart body has more than ${MAX_PARTS} parts.`)));
  try {
    await pump(req, [...stages, parser as unknown as NodeJS.WritableStream]);
  } catch (error) {
    const mapped = streamFailure(error);
    throw mapped.code === 'bad_request' ? new ApiError('invalid_form', 'The multipart body is malformed.') : mapped;
  }
  if (failure) throw failure;
  return { type: 'form', fields, files, filesSeen };
}
