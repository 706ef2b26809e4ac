/**
 * Request bodies as clients send them: JSON, multipart (files as parts, as pwpush-cli and pwpush-mcp upload them) and
 * form-urlencoded with bracketed names, each read into the same push and checked by the same rules; limits chosen per
 * caller before a byte is read; Content-Encoding decoded or refused with a 400. Every answer is checked against the
 * contract (serve.ts).
 */
import { gzipSync, brotliCompressSync } from 'node:zlib';
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { multipart } from './support/multipart.js';
import { startRealApi, type RealApi } from './support/real.js';

let api: RealApi;
let owner: { token: string; userId: string; email: string };

beforeAll(async () => {
  api = await startRealApi({ fileMaxBytes: 64 * 1024, bodyLimitBytes: 256 * 1024 });
  owner = await api.user('bodies-owner@example.org');
});
afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});
afterAll(async () => {
  await api?.stop();
});

const auth = () => ({ authorization: `Bearer ${owner.token}` });

async function post(body: BodyInit | Buffer, headers: Record<string, string>) {
  return api.raw('/api/v2/pushes', {
    method: 'POST',
    headers,
    body: Buffer.isBuffer(body) ? new Uint8Array(body) : body,
  });
}

describe('multipart bodies (files as parts)', () => {
  it('creates a file push from a pwpush-cli form: text fields, integers and Python booleans as text, two file parts; the bytes come back', async () => {
    const key = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    const form = multipart([
      { name: 'push[payload]', value: 'the key and its note' },
      { name: 'push[kind]', value: 'file' },
      { name: 'push[expire_after_views]', value: '2' },
      { name: 'push[expire_after_days]', value: '3' },
      { name: 'push[deletable_by_viewer]', value: 'False' },
      { name: 'push[retrieval_step]', value: 'True' },
      { name: 'push[files][]', filename: 'id_ed25519', bytes: key },
      { name: 'push[files][]', filename: 'notes.txt', type: 'text/plain', bytes: Buffer.from('hello') },
    ]);
    const created = await post(form.body, { 'content-type': form.type, ...auth() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'file',
      expire_after_views: 2,
      expire_after_days: 3,
      deletable_by_viewer: false,
      retrieval_step: true,
    });
    const got = await api.raw(`/api/v2/pushes/${created.body.url_token}`);
    expect(got.body.payload).toBe('the key and its note');
    expect(
      got.body.files.map((f: { filename: string; size: number; content_type: string }) => [
        f.filename,
        f.size,
        f.content_type,
      ]),
    ).toEqual([
      ['id_ed25519', key.length, 'application/octet-stream'],
      ['notes.txt', 5, 'text/plain'],
    ]);
    const download = await fetch(got.body.files[0].url);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(key);
  });

  it('reads a file part of any name the client gives and keeps the last path segment only', async () => {
    const form = multipart([
      { name: 'push[files][]', filename: 'C:\\Users\\me\\secret.pem', bytes: Buffer.from('pem') },
    ]);
    const created = await post(form.body, { 'content-type': form.type, ...auth() });
    expect(created.status).toBe(201);
    const got = await api.raw(`/api/v2/pushes/${created.body.url_token}`);
    expect(got.body.files[0].filename).toBe('secret.pem');
  });

  it('stops a file over the per-file limit with 422 on files, and a body over the limit with 413', async () => {
    const big = multipart([{ name: 'push[files][]', filename: 'big.bin', bytes: Buffer.alloc(64 * 1024 + 1, 7) }]);
    const refused = await post(big.body, { 'content-type': big.type, ...auth() });
    expect([refused.status, refused.body.code, Object.keys(refused.body.errors ?? {})]).toEqual([
      422,
      'validation_failed',
      ['files'],
    ]);
    expect(refused.body.error).toMatch(/^files: /);
    // Anonymous callers may not send files here: they get the small limit, before a byte is read.
    const anonymous = await post(big.body, { 'content-type': big.type });
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'authentication_required']);
    const huge = multipart([{ name: 'push[payload]', value: 'x'.repeat(300 * 1024) }]);
    const tooLarge = await post(huge.body, { 'content-type': huge.type });
    expect([tooLarge.status, tooLarge.body.code]).toEqual([413, 'payload_too_large']);
  });

  it('answers 400 invalid_form for a malformed multipart body and 422 for a file part without a name', async () => {
    const broken = await post(Buffer.from('--abc\r\nContent-Disposition: form-data; name="push[payload]"\r\n\r\nx'), {
      'content-type': 'multipart/form-data; boundary=abc',
      ...auth(),
    });
    expect([broken.status, broken.body.code]).toEqual([400, 'invalid_form']);
    const noBoundary = await post('x', { 'content-type': 'multipart/form-data', ...auth() });
    expect([noBoundary.status, noBoundary.body.code]).toEqual([400, 'invalid_form']);
    const unnamed = multipart([{ name: 'push[files][]', filename: '', bytes: Buffer.from('data') }]);
    const refused = await post(unnamed.body, { 'content-type': unnamed.type, ...auth() });
    expect([refused.status, Object.keys(refused.body.errors ?? {})]).toEqual([422, ['files']]);
  });
});

describe('form-urlencoded bodies', () => {
  it('creates a text push from bracketed fields, with integers and booleans as text', async () => {
    const body =
      'push[payload]=hunter2+%26+more&push[expire_after_views]=3&push[retrieval_step]=1&push[deletable_by_viewer]=off&utf8=%E2%9C%93';
    const created = await post(body, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'text',
      expire_after_views: 3,
      retrieval_step: true,
      deletable_by_viewer: false,
    });
    expect((await api.raw(`/api/v2/pushes/${created.body.url_token}`)).body.payload).toBe('hunter2 & more');
  });

  it('refuses values that do not read, with 422 on their fields and the first named in error', async () => {
    const bad = await post('push[payload]=x&push[expire_after_views]=2.5&push[retrieval_step]=maybe', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect([bad.status, Object.keys(bad.body.errors).sort()]).toEqual([422, ['expire_after_views', 'retrieval_step']]);
    const twice = await post('push[payload]=x&push[payload]=y', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect([twice.status, twice.body.errors]).toEqual([422, { payload: ['must be given once'] }]);
    const textFile = await post('push[files][]=YQ%3D%3D', {
      'content-type': 'application/x-www-form-urlencoded',
      ...auth(),
    });
    expect([textFile.status, Object.keys(textFile.body.errors)]).toEqual([422, ['files']]);
    const none = await post('payload=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([none.status, none.body.code]).toEqual([400, 'missing_push']);
  });
});

describe('limits chosen before the body is read', () => {
  /** Sends a request with a body that is never finished unless the server reads it; resolves with the status. */
  function declaredOnly(
    path: string,
    method: string,
    headers: Record<string, string>,
    length: number,
  ): Promise<{ status: number; connection?: string }> {
    return new Promise((resolve, reject) => {
      const url = new URL(path, api.baseUrl);
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method,
          headers: { ...headers, 'content-length': String(length) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        },
      );
      req.on('error', reject);
      req.write(Buffer.alloc(1024, 32)); // a first kilobyte; the rest never comes
    });
  }

  it('answers 413 to a declared length over the limit at once, and never reads bodies of unknown routes or wrong methods', async () => {
    const big = 140 * 1024 * 1024;
    const create = await declaredOnly('/api/v2/pushes', 'POST', { 'content-type': 'application/json' }, big);
    expect(create).toEqual({ status: 413, connection: 'close' });
    const noRoute = await declaredOnly('/nope-api/x', 'POST', { 'content-type': 'application/json' }, big);
    expect(noRoute.status).toBeGreaterThanOrEqual(400);
    const apiNoRoute = await declaredOnly('/api/v2/nope', 'POST', { 'content-type': 'application/json' }, big);
    expect(apiNoRoute).toEqual({ status: 404, connection: 'close' });
    const wrongMethod = await declaredOnly('/api/v2/version', 'DELETE', { 'content-type': 'application/json' }, big);
    expect(wrongMethod).toEqual({ status: 405, connection: 'close' });
  });

  it('counts a chunked body while it streams: anonymous callers get the small limit, a token holder room for files', async () => {
    const payload = JSON.stringify({ push: { payload: 'y'.repeat(300 * 1024) } });
    const chunked = async (headers: Record<string, string>) => {
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(payload));
          controller.close();
        },
      });
      return api.raw('/api/v2/pushes', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: stream,
        duplex: 'half',
      } as RequestInit);
    };
    const anonymous = await chunked({});
    expect([anonymous.status, anonymous.body.code]).toEqual([413, 'payload_too_large']);
    expect((await chunked(auth())).status).toBe(201);
  });

  it('lets a client that goes away mid-body go: nothing is created, nothing waits for the rest, the server answers on', async () => {
    const before = await api.db.query<{ n: number }>('select count(*)::int as n from pushes');
    const requestIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const url = new URL('/api/v2/pushes', api.baseUrl);
        const req = http.request({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { ...auth(), 'content-type': 'application/json', 'content-length': '100000' },
        });
        req.on('error', () => resolve());
        req.write('{"push":{"payload":"half a bo', () => setTimeout(() => req.destroy(), 50));
        req.on('close', () => resolve());
      });
    }
    // Each abandoned create ends (its line is logged: answered with a 400 nobody reads, or the client gone first).
    await new Promise((r) => setTimeout(r, 300));
    for (const line of api.logs) {
      const entry = JSON.parse(line) as {
        operation?: string;
        status?: number;
        client_gone?: boolean;
        request_id: string;
      };
      if (entry.operation === 'createPush' && (entry.status === 400 || entry.client_gone))
        requestIds.push(entry.request_id);
    }
    expect(requestIds.length).toBeGreaterThanOrEqual(5);
    const after = await api.db.query<{ n: number }>('select count(*)::int as n from pushes');
    expect(after[0]!.n).toBe(before[0]!.n);
    expect(
      (
        await post(JSON.stringify({ push: { payload: 'still here' } }), {
          ...auth(),
          'content-type': 'application/json',
        })
      ).status,
    ).toBe(201);
  });
});

describe('Content-Encoding', () => {
  const json = JSON.stringify({ push: { payload: 'compressed secret' } });

  it('reads gzip, deflate and br bodies', async () => {
    for (const [coding, bytes] of [
      ['gzip', gzipSync(json)],
      ['br', brotliCompressSync(json)],
    ] as const) {
      const created = await post(bytes, { 'content-type': 'application/json', 'content-encoding': coding });
      expect(created.status, coding).toBe(201);
      expect((await api.raw(`/api/v2/pushes/${created.body.url_token}`)).body.payload).toBe('compressed secret');
    }
  });

  it('answers 400 invalid_encoding for a body that does not decode, or an encoding it does not read', async () => {
    for (const coding of ['gzip', 'br', 'deflate']) {
      const bad = await post(json, { 'content-type': 'application/json', 'content-encoding': coding });
      expect([bad.status, bad.body.code], coding).toEqual([400, 'invalid_encoding']);
    }
    const unknown = await post(json, { 'content-type': 'application/json', 'content-encoding': 'zstd-maybe' });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'invalid_encoding']);
  });

  it('counts the decoded bytes too: a small gzip bomb answers 413', async () => {
    const bomb = gzipSync(JSON.stringify({ push: { payload: 'z'.repeat(2 * 1024 * 1024) } }));
    expect(bomb.length).toBeLessThan(256 * 1024);
    const refused = await post(bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect([refused.status, refused.body.code]).toEqual([413, 'payload_too_large']);
  });
});
