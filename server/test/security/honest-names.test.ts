/**
 * Honest links and names (issue 19): file names lose control and bidi characters before they are stored (a
 * right-to-left override makes `report‮txt.exe` read as `reportexe.txt`), whatever the body type and API version, and
 * are served clean on retrieval and download; the header timeout answers 408 with a JSON error (it answered 400).
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.js';
import { answerClientErrors } from '../../src/http/client-error.js';
import { multipart } from '../api/support/multipart.js';
import { startRealApi, type RealApi } from '../api/support/real.js';

let api: RealApi;
let token: string;

beforeAll(async () => {
  api = await startRealApi({ rateLimitPerMinute: 0 });
  token = (await api.user('names@example.org')).token;
});
afterAll(async () => {
  await api?.stop();
});

const RLO = '\u202e';
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

async function filesOf(urlToken: string, json = false): Promise<{ filename: string; url: string }[]> {
  const r = await api.raw(json ? `/p/${urlToken}.json` : `/api/v2/pushes/${urlToken}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(r.status).toBe(200);
  return r.body.files;
}

describe('file names', () => {
  it('lose bidi and C1 control characters before storage (JSON, v2), and are served clean', async () => {
    const made = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        push: {
          files: [
            { filename: `report${RLO}txt.exe`, content: 'aGk=' },
            { filename: 'a\u0085b\u2066c\u200f.txt', content: 'aGk=' },
          ],
        },
      }),
    });
    expect(made.status).toBe(201);
    const files = await filesOf(made.body.url_token);
    expect(files.map((f) => f.filename)).toEqual(['reporttxt.exe', 'abc.txt']);
    const download = await fetch(files[0]!.url);
    expect(download.status).toBe(200);
    const disposition = download.headers.get('content-disposition')!;
    expect(disposition).toBe(`attachment; filename="reporttxt.exe"; filename*=UTF-8''reporttxt.exe`);
    expect(await download.text()).toBe('hi');
  });

  it('a name of nothing but such characters is stored as "file"', async () => {
    const made = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ push: { files: [{ filename: `${RLO}\u2066`, content: 'aGk=' }] } }),
    });
    expect(made.status).toBe(201);
    expect((await filesOf(made.body.url_token)).map((f) => f.filename)).toEqual(['file']);
  });

  it('a C0 control character in a JSON name is still refused, as the contract says (422 on files)', async () => {
    const made = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ push: { files: [{ filename: 'a\u0007b', content: 'aGk=' }] } }),
    });
    expect(made.status).toBe(422);
    expect(made.body.errors.files[0]).toContain('bare file name');
  });

  for (const [path, wrapper] of [
    ['/api/v2/pushes', 'push'],
    ['/f.json', 'file_push'],
    ['/p.json', 'password'],
  ] as const) {
    it(`lose control and bidi characters in a multipart part's filename (${path})`, async () => {
      const { body, type } = multipart([
        { name: `${wrapper}[files][]`, filename: `inv\u0001oice${RLO}fdp.exe`, bytes: Buffer.from('bytes') },
      ]);
      const made = await api.raw(path, {
        method: 'POST',
        headers: { 'content-type': type, authorization: `Bearer ${token}` },
        body,
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const files = await filesOf(made.body.url_token, path !== '/api/v2/pushes');
      expect(files.map((f) => f.filename)).toEqual(['invoicefdp.exe']);
      for (const f of files) expect(f.filename).not.toMatch(UNSAFE);
      const download = await fetch(files[0]!.url);
      expect(download.headers.get('content-disposition')).not.toMatch(/%E2%80%AE|%01/i);
    });
  }
});

describe('the header timeout', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const app = createApp(api.core, { logger: pino({ level: 'silent' }) });
    await app.locals.ready;
    // The production server's timeouts, shortened; Node checks them every connectionsCheckingInterval.
    server = createServer({ headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 }, app);
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Writes `request` on a raw connection and returns everything the server sent until it closed the connection. */
  const exchange = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
      socket.on('data', (c: Buffer) => void (text += c.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write(request);
    });

  it('answers 408 request_timeout with a JSON error when the headers do not arrive in time', async () => {
    // A request line and one header, then nothing (a slowloris).
    const answer = await exchange('GET /api/v2/version HTTP/1.1\r\nHost: x\r\n');
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(head).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(body)).toMatchObject({ code: 'request_timeout', error: 'The request did not arrive in time.' });
  });

  it('answers 431 header_fields_too_large (a code of the catalogue, with its status) for headers over the limit', async () => {
    // Node's default header limit is 16 KiB.
    const answer = await exchange(`GET /api/v2/version HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large/);
    expect(head).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(body)).toMatchObject({
      code: 'header_fields_too_large',
      error: 'The request headers are too large.',
    });
  });
});
