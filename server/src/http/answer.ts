/**
 * The one writer of JSON and byte answers: the status line, the headers every answer carries (its `X-Request-Id`,
 * no caching, no indexing, helmet's), the answer's own headers and its body, given to Node's `writeHead` in one list.
 * The API's replies and every error answer (API, probes, pages' JSON steps) are written here. A header already set on
 * the response (`Connection`, the RateLimit fields, a page's own headers) or given with the answer keeps its value.
 */
import type { ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import helmet from 'helmet';
import { everyAnswerHeaders, state, type HeaderLine } from './middleware.js';

/** The headers every answer carries besides its request id (worked out once: helmet decides them from its options). */
export const EVERY_ANSWER: readonly HeaderLine[] = everyAnswerHeaders(helmet());
const EVERY_ANSWER_LOWER = EVERY_ANSWER.map(([name]) => name.toLowerCase());

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes the answer: `headers` is a flat list of names and values (as `writeHead` takes it). */
export function writeAnswer(
  res: ServerResponse,
  status: number,
  headers: readonly string[],
  body: string | Uint8Array | undefined,
): void {
  writeHead(res, status, headers);
  res.end(body);
}

/**
 * Writes the head, then the bytes of `body` as they come (a file streamed from the object store), at the pace the
 * client reads them. A body that fails midway (the store, or a segment that does not authenticate) ends the connection:
 * the client gets fewer bytes than `Content-Length` said, never a byte that was not authenticated.
 */
export function writeStream(res: ServerResponse, status: number, headers: readonly string[], body: Readable): void {
  writeHead(res, status, headers);
  pipeline(body, res, (error) => {
    if (error) res.destroy();
  });
}

function writeHead(res: ServerResponse, status: number, headers: readonly string[]): void {
  const given = new Set<string>();
  for (let i = 0; i < headers.length; i += 2) given.add(headers[i]!.toLowerCase());
  const out: string[] = [];
  const requestId = state(res).requestId;
  if (requestId && !given.has('x-request-id') && !res.hasHeader('x-request-id')) out.push('X-Request-Id', requestId);
  for (let i = 0; i < EVERY_ANSWER.length; i++) {
    const lower = EVERY_ANSWER_LOWER[i]!;
    if (!given.has(lower) && !res.hasHeader(lower)) out.push(EVERY_ANSWER[i]![0], EVERY_ANSWER[i]![1]);
  }
  for (const item of headers) out.push(item);
  res.writeHead(status, out);
}

/**
 * Writes a JSON answer (`application/json; charset=utf-8`, its length), checked against the contract first when the
 * request's state carries a check.
 */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: readonly string[] = []): void {
  state(res).checkAnswer?.(status, body);
  const text = JSON.stringify(body) as string | undefined;
  const list = ['Content-Type', JSON_TYPE];
  if (text !== undefined) list.push('Content-Length', String(Buffer.byteLength(text)));
  for (const field of headers) list.push(field);
  writeAnswer(res, status, list, text);
}
