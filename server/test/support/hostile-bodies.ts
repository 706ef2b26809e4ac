/**
 * Hostile request bodies (issue 19) and a client that streams them: huge arrays, hundreds of thousands of keys or
 * fields, deep nesting, a 50 MB string in each field, multipart bodies cut short, through every body type (JSON,
 * multipart, urlencoded) and both API versions. A body is generated as it is sent (never held whole), and sending stops
 * as soon as the answer comes, so a case costs what the server reads of it. Used by the hostile-body tests
 * (server/test/security/hostile-bodies.test.ts) and by `npm run bench:hostile` (scripts/bench-hostile.ts).
 */
import http from 'node:http';
import net from 'node:net';

export type BodyType = 'json' | 'urlencoded' | 'multipart';

/** A create operation: its path and the wrapper its bodies put the push fields in. */
export interface CreatePath {
  api: 'v2' | 'v1';
  path: string;
  wrapper: string;
  /** The body types its contract declares (others answer 400 unsupported_media_type). */
  types: BodyType[];
}

export const CREATE_PATHS: CreatePath[] = [
  { api: 'v2', path: '/api/v2/pushes', wrapper: 'push', types: ['json', 'multipart', 'urlencoded'] },
  { api: 'v1', path: '/p.json', wrapper: 'password', types: ['json', 'multipart', 'urlencoded'] },
  { api: 'v1', path: '/f.json', wrapper: 'file_push', types: ['json', 'multipart'] },
];

/** A body made as it is sent: its media type and a generator of chunks. */
export interface HostileBody {
  name: string;
  contentType: string;
  chunks: () => Generator<Buffer>;
}

const MB = 1024 * 1024;
const BOUNDARY = 'hostile0boundary';

function* repeat(piece: string, times: number, chunkBytes = MB): Generator<Buffer> {
  const per = Math.max(1, Math.floor(chunkBytes / Buffer.byteLength(piece)));
  const block = Buffer.from(piece.repeat(per));
  let left = times;
  while (left >= per) {
    yield block;
    left -= per;
  }
  if (left > 0) yield Buffer.from(piece.repeat(left));
}

function* bytes(total: number, byte = 0x61): Generator<Buffer> {
  const block = Buffer.alloc(MB, byte);
  let left = total;
  while (left >= MB) {
    yield block;
    left -= MB;
  }
  if (left > 0) yield block.subarray(0, left);
}

const s = (text: string) => Buffer.from(text);

/** The JSON field paths a 50 MB string goes into (each its own body). */
const JSON_STRING_FIELDS: { name: string; head: (w: string) => string; tail: string }[] = [
  { name: 'payload', head: (w) => `{"${w}":{"payload":"`, tail: '"}}' },
  { name: 'name', head: (w) => `{"${w}":{"payload":"x","name":"`, tail: '"}}' },
  { name: 'note', head: (w) => `{"${w}":{"payload":"x","note":"`, tail: '"}}' },
  { name: 'passphrase', head: (w) => `{"${w}":{"payload":"x","passphrase":"`, tail: '"}}' },
  { name: 'kind', head: (w) => `{"${w}":{"payload":"x","kind":"`, tail: '"}}' },
  { name: 'files[0].filename', head: (w) => `{"${w}":{"files":[{"content":"YQ==","filename":"`, tail: '"}]}}' },
  { name: 'files[0].content', head: (w) => `{"${w}":{"files":[{"filename":"a.txt","content":"`, tail: '"}]}}' },
  {
    name: 'files[0].content_type',
    head: (w) => `{"${w}":{"files":[{"filename":"a","content":"YQ==","content_type":"`,
    tail: '"}]}}',
  },
  { name: 'an unknown field', head: (w) => `{"${w}":{"payload":"x","unknown":"`, tail: '"}}' },
  { name: 'a top-level key', head: () => `{"unknown":"`, tail: '"}' },
];

const FORM_FIELDS = ['payload', 'name', 'note', 'passphrase', 'kind', 'expire_after_days', 'unknown'];

/** The hostile bodies for one create path and body type. */
export function hostileBodies(target: CreatePath, type: BodyType, opts: { bigString?: number } = {}): HostileBody[] {
  const w = target.wrapper;
  const big = opts.bigString ?? 50 * MB;
  const out: HostileBody[] = [];
  if (type === 'json') {
    const json = 'application/json';
    out.push({
      name: 'files: 5,000,000 objects',
      contentType: json,
      *chunks() {
        yield s(`{"${w}":{"files":[{}`);
        yield* repeat(',{}', 5_000_000 - 1);
        yield s(']}}');
      },
    });
    out.push({
      name: '200,000 keys in the push',
      contentType: json,
      *chunks() {
        yield s(`{"${w}":{"payload":"x"`);
        for (let i = 0; i < 200_000; i += 10_000)
          yield s(Array.from({ length: 10_000 }, (_, j) => `,"k${i + j}":1`).join(''));
        yield s('}}');
      },
    });
    out.push({
      name: '200,000 nested objects',
      contentType: json,
      *chunks() {
        yield s(`{"${w}":{"payload":"x","deep":`);
        yield* repeat('{"a":', 200_000);
        yield s('1');
        yield* repeat('}', 200_000);
        yield s('}}');
      },
    });
    out.push({
      name: '1,000,000 nested arrays',
      contentType: json,
      *chunks() {
        yield s(`{"${w}":{"payload":"x","deep":`);
        yield* repeat('[', 1_000_000);
        yield* repeat(']', 1_000_000);
        yield s('}}');
      },
    });
    for (const field of JSON_STRING_FIELDS) {
      out.push({
        name: `${big / MB} MB string in ${field.name}`,
        contentType: json,
        *chunks() {
          yield s(field.head(w));
          yield* bytes(big);
          yield s(field.tail);
        },
      });
    }
    return out;
  }
  if (type === 'urlencoded') {
    const form = 'application/x-www-form-urlencoded';
    out.push({
      name: `${w}[files][] 200,000 times (no "=")`,
      contentType: form,
      *chunks() {
        yield s(`${w}[payload]=x`);
        yield* repeat(`&${w}[files][]`, 200_000);
      },
    });
    out.push({
      name: '200,000 distinct fields',
      contentType: form,
      *chunks() {
        yield s(`${w}[payload]=x`);
        for (let i = 0; i < 200_000; i += 10_000)
          yield s(Array.from({ length: 10_000 }, (_, j) => `&${w}[k${i + j}]=1`).join(''));
      },
    });
    out.push({
      name: 'a field name nested 100,000 brackets deep',
      contentType: form,
      *chunks() {
        yield s(`${w}[payload]=x&${w}`);
        yield* repeat('[a]', 100_000);
        yield s('=1');
      },
    });
    for (const field of FORM_FIELDS) {
      out.push({
        name: `${big / MB} MB value in ${w}[${field}]`,
        contentType: form,
        *chunks() {
          yield s(`${w}[${field}]=`);
          yield* bytes(big);
        },
      });
    }
    return out;
  }
  const multipart = `multipart/form-data; boundary=${BOUNDARY}`;
  const part = (name: string, value: string) =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  out.push({
    name: '200,000 parts',
    contentType: multipart,
    *chunks() {
      yield* repeat(part(`${w}[k]`, '1'), 200_000);
      yield s(`--${BOUNDARY}--\r\n`);
    },
  });
  out.push({
    name: '200,000 file parts',
    contentType: multipart,
    *chunks() {
      yield* repeat(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${w}[files][]"; filename="a.txt"\r\n\r\na\r\n`,
        200_000,
      );
      yield s(`--${BOUNDARY}--\r\n`);
    },
  });
  for (const field of FORM_FIELDS) {
    out.push({
      name: `${big / MB} MB value in ${w}[${field}]`,
      contentType: multipart,
      *chunks() {
        yield s(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${w}[${field}]"\r\n\r\n`);
        yield* bytes(big);
        yield s(`\r\n--${BOUNDARY}--\r\n`);
      },
    });
  }
  out.push({
    name: `${big / MB} MB file part`,
    contentType: multipart,
    *chunks() {
      yield s(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${w}[files][]"; filename="a.bin"\r\n\r\n`);
      yield* bytes(big);
      yield s(`\r\n--${BOUNDARY}--\r\n`);
    },
  });
  return out;
}

/** Multipart bodies that end inside a part (the 110-byte request and its text-part twin). */
export function truncatedMultipart(wrapper: string, part: 'file' | 'text'): { contentType: string; body: Buffer } {
  const body =
    part === 'file'
      ? `--X\r\nContent-Disposition: form-data; name="${wrapper}[files][]"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello`
      : `--X\r\nContent-Disposition: form-data; name="${wrapper}[payload]"\r\n\r\nhello`;
  return { contentType: 'multipart/form-data; boundary=X', body: Buffer.from(body) };
}

export interface Answer {
  status: number;
  /** From the first byte sent to the answer's status line. */
  ms: number;
  /** Bytes of the body handed to the connection by then (some may still sit in the system's buffers). */
  sent: number;
  body: string;
}

/**
 * Streams `chunks` as a request body (chunked, or with `length` declared) and resolves with the answer, stopping the
 * body as soon as the answer's head arrives. A connection the server closes after answering is fine.
 */
export function stream(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  chunks: Iterable<Buffer>,
  length?: number,
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      method,
      headers: { ...headers, ...(length !== undefined ? { 'content-length': String(length) } : {}) },
      agent: false,
    });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const ms = performance.now() - started;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, ms, sent, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', () =>
        resolve({ status: res.statusCode!, ms, sent, body: Buffer.concat(parts).toString('utf8') }),
      );
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const it = chunks[Symbol.iterator]();
    const pump = () => {
      while (!answered) {
        const next = it.next();
        if (next.done) return void req.end();
        sent += next.value.length;
        if (!req.write(next.value)) return void req.once('drain', pump);
      }
    };
    // From the connection on: bytes written before it would only be queued in this process, not sent.
    req.on('socket', (socket) => (socket.connecting ? socket.once('connect', pump) : setImmediate(pump)));
  });
}

/** Sends bytes exactly as given on a raw socket (request line, headers, body) and reads the answer until close. */
export function rawExchange(
  base: string,
  bytesToSend: Buffer,
  timeoutMs = 15_000,
): Promise<{ status: number; head: string; body: string; ms: number }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(Number(url.port), url.hostname);
    const parts: Buffer[] = [];
    let firstByte = 0;
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    socket.on('data', (c: Buffer) => {
      if (!firstByte) firstByte = performance.now() - started;
      parts.push(c);
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(parts).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8'), ms: firstByte });
    });
    socket.write(bytesToSend);
  });
}

/** The resident memory of a process, in MB (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFileSync } = await import('node:fs');
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}
