/**
 * No 5xx from any byte sequence (issue 10): odd bytes in the path, the query, the headers and the body of every API
 * operation and of the pages, sent over a raw socket (an HTTP client would refuse or normalize most of them). Every
 * answer must be a 4xx or a success, and an API answer a JSON error with a code (those Node's parser refuses too:
 * http/client-error.ts); the server must keep answering.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from '../api/support/real.js';

let api: RealApi;
let token: string;
let urlToken: string;

beforeAll(async () => {
  api = await startRealApi({ rateLimitPerMinute: 0 });
  token = (await api.user('odd-bytes@example.org')).token;
  const made = await api.raw('/api/v2/pushes', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ push: { payload: 'odd bytes target', expire_after_views: 100 } }),
  });
  urlToken = made.body.url_token;
});
afterAll(async () => {
  await api?.stop();
});

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** Sends one request exactly as given (request line, headers and body bytes) and reads the answer. */
function rawRequest(
  requestLine: Buffer | string,
  headers: (Buffer | string)[],
  body: Buffer = Buffer.alloc(0),
): Promise<RawAnswer> {
  const url = new URL(api.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer within 15 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8') });
    });
    const lines = [
      Buffer.from(requestLine),
      Buffer.from(`Host: ${url.host}`),
      Buffer.from('Connection: close'),
      ...headers.map((h) => Buffer.from(h)),
      Buffer.from(`Content-Length: ${body.length}`),
    ];
    socket.write(
      Buffer.concat([Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\r\n')])), Buffer.from('\r\n'), body]),
    );
  });
}

/** Odd values as they go into a URL (percent-encoded or raw) and as bytes. */
const URL_VALUES = [
  '%00',
  'a%00b',
  '%ff',
  '%c0%80',
  '%ed%a0%80',
  '%',
  '%zz',
  '%25',
  'a%0d%0ab',
  '..%2f..%2fetc',
  '%e2%80%ae',
  'x'.repeat(3000),
  '%f0%9f%98%80',
  '%7f',
  '%1b[31m',
];
const RAW_BYTES = [Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0x80]), Buffer.from([0x80]), Buffer.from([0x7f])];
/** Odd header values (a header cannot carry CR, LF or NUL: the parser refuses those with 400 itself). */
const HEADER_VALUES: (string | Buffer)[] = [
  '',
  ' ',
  'x'.repeat(8000),
  '\t',
  'Bearer',
  'Bearer ',
  'Bearer \x01\x02',
  '%00',
  Buffer.from([0xff, 0xfe, 0x80]),
  '\x7f',
  '"',
  ',',
];
/** Odd JSON bodies: NULs and lone surrogates in every string field, wrong types, deep nesting, huge numbers. */
const STRINGS = ['a\u0000b', '\ud800', '\udc00x', '\u0000', '\u202e', 'x'.repeat(70_000)];
const PUSH_FIELDS = ['payload', 'passphrase', 'name', 'note', 'kind', 'expire_after_duration', 'locale'];
function oddBodies(): Buffer[] {
  const bodies: (string | Buffer)[] = [];
  for (const field of PUSH_FIELDS)
    for (const s of STRINGS) bodies.push(JSON.stringify({ push: { payload: 'p', [field]: s } }));
  for (const s of STRINGS)
    bodies.push(JSON.stringify({ push: { payload: 'p', files: [{ filename: s, content_type: s, data: s }] } }));
  for (const s of STRINGS) bodies.push(JSON.stringify({ push: { payload: s, kind: 'url' } }));
  bodies.push(
    '{"push":{"payload":"p","expire_after_days":1e400}}',
    '{"push":{"payload":"p","expire_after_views":-0}}',
    '{"push":{"payload":"p","expire_after_views":12345678901234567890}}',
    '{"push":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
    '{"push":{"payload":"p","__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}}',
    '{"push":{"payload":"p"},"push":{"payload":"q"}}',
    '"\\ud800"',
    '\ufeff{"push":{"payload":"p"}}',
    Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    Buffer.concat([
      Buffer.from('{"push":{"payload":"'),
      Buffer.from([0xc0, 0x80, 0xed, 0xa0, 0x80]),
      Buffer.from('"}}'),
    ]),
    '',
    'null',
    '[]',
    '{"push":null}',
    '{"push":{"payload":{"$gt":""}}}',
  );
  return bodies.map((b) => Buffer.from(b));
}

interface Route {
  method: string;
  /** The path with `{}` where an odd value goes. */
  path: string;
  api: boolean;
}

const ROUTES: Route[] = [
  { method: 'GET', path: '/api/v2/pushes/{}', api: true },
  { method: 'GET', path: '/api/v2/pushes/{}/preview', api: true },
  { method: 'GET', path: '/api/v2/pushes/{}/audit', api: true },
  { method: 'DELETE', path: '/api/v2/pushes/{}', api: true },
  { method: 'GET', path: '/api/v2/pushes/{}/files/{}', api: true },
  { method: 'GET', path: '/api/v2/{}', api: true },
  { method: 'GET', path: '/p/{}', api: false },
  { method: 'GET', path: '/p/{}/r', api: false },
  { method: 'POST', path: '/p/{}/reveal', api: false },
  { method: 'GET', path: '/pushes/{}/audit', api: false },
  { method: 'GET', path: '/{}', api: false },
];

function expectHandled(answer: RawAnswer, what: string, api: boolean): void {
  expect(answer.status, `${what}: ${answer.head.split('\r\n')[0]}`).toBeGreaterThanOrEqual(200);
  expect(answer.status, `${what}: ${answer.head.split('\r\n')[0]} ${answer.body.slice(0, 200)}`).toBeLessThan(500);
  if (api && answer.status >= 400 && !/^content-length: 0$/im.test(answer.head)) {
    let code: unknown;
    try {
      code = (JSON.parse(answer.body) as { code?: unknown }).code;
    } catch {
      code = undefined;
    }
    expect(
      typeof code,
      `${what}: ${answer.head.replaceAll('\r\n', ' | ')} ${JSON.stringify(answer.body.slice(0, 200))}`,
    ).toBe('string');
  }
}

const auth = () => `Authorization: Bearer ${token}`;

describe('odd bytes never cause a 5xx', () => {
  it('in path segments, percent-encoded and raw, on every route that takes one', async () => {
    let sent = 0;
    for (const route of ROUTES) {
      for (const value of URL_VALUES) {
        const path = route.path.replaceAll('{}', value);
        expectHandled(
          await rawRequest(`${route.method} ${path} HTTP/1.1`, [auth()]),
          `${route.method} ${path.slice(0, 80)}`,
          route.api,
        );
        sent++;
      }
      for (const bytes of RAW_BYTES) {
        const [before, ...after] = route.path.split('{}');
        const line = Buffer.concat([
          Buffer.from(`${route.method} ${before}`),
          bytes,
          Buffer.from(after.join('x')),
          Buffer.from(' HTTP/1.1'),
        ]);
        const answer = await rawRequest(line, [auth()]);
        // Node's parser may refuse a raw byte in the request line itself: client-error.ts answers that in JSON too.
        expectHandled(answer, `${route.method} ${route.path} with raw ${bytes.toString('hex')}`, route.api);
        sent++;
      }
    }
    expect(sent).toBe(ROUTES.length * (URL_VALUES.length + RAW_BYTES.length));
  });

  it('in query values and names, on the API and the pages', async () => {
    const targets = [
      `/api/v2/pushes/${urlToken}?passphrase=`,
      '/api/v2/pushes/active?page=',
      `/api/v2/pushes/${urlToken}/audit?page=`,
      `/api/v2/pushes/${urlToken}/files/f1?token=`,
      '/api/v2/version?',
      `/p/${urlToken}?`,
      '/pushes/active?page=',
    ];
    for (const target of targets) {
      for (const value of URL_VALUES) {
        const answer = await rawRequest(`GET ${target}${value} HTTP/1.1`, [auth()]);
        expectHandled(answer, `GET ${target}${value.slice(0, 40)}`, target.startsWith('/api/'));
      }
    }
    const after = await api.raw(`/api/v2/pushes/${urlToken}/preview`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.status).toBe(200);
  });

  it('in every header the server reads', async () => {
    const names = [
      'Authorization',
      'X-User-Email',
      'X-User-Token',
      'X-Passphrase',
      'Idempotency-Key',
      'Content-Type',
      'Content-Encoding',
      'Accept',
      'Accept-Language',
      'X-Request-Id',
      'X-Forwarded-For',
      'Cookie',
      'Origin',
      'Referer',
      'User-Agent',
    ];
    const body = Buffer.from(JSON.stringify({ push: { payload: 'header test' } }));
    for (const name of names) {
      for (const value of HEADER_VALUES) {
        const header = Buffer.concat([Buffer.from(`${name}: `), Buffer.from(value)]);
        const others = name === 'Content-Type' ? [] : ['Content-Type: application/json'];
        const creates = await rawRequest('POST /api/v2/pushes HTTP/1.1', [header, ...others], body);
        expectHandled(creates, `POST /api/v2/pushes with ${name}: ${JSON.stringify(String(value).slice(0, 30))}`, true);
        const reads = await rawRequest(`GET /api/v2/pushes/${urlToken} HTTP/1.1`, [header]);
        expectHandled(reads, `GET /api/v2/pushes/… with ${name}: ${JSON.stringify(String(value).slice(0, 30))}`, true);
        const page = await rawRequest(`GET /p/${urlToken} HTTP/1.1`, [header]);
        expectHandled(page, `GET /p/… with ${name}`, false);
      }
    }
  });

  it('in create bodies: NULs, lone surrogates, invalid UTF-8, deep nesting, huge numbers, prototype keys', async () => {
    const bodies = oddBodies();
    const statuses = new Map<number, number>();
    for (const body of bodies) {
      for (const as of [[auth()], []]) {
        const answer = await rawRequest(
          'POST /api/v2/pushes HTTP/1.1',
          ['Content-Type: application/json', ...as],
          body,
        );
        expectHandled(answer, `POST /api/v2/pushes ${body.toString('utf8').slice(0, 80)}`, true);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      }
    }
    // Both outcomes occur: odd strings a push may hold are stored, the rest refused.
    expect(statuses.get(201)).toBeGreaterThan(0);
    expect([...statuses.keys()].some((s) => s === 400 || s === 422)).toBe(true);
    // No prototype was polluted by a body.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('in form bodies of the API and the pages', async () => {
    const forms = [
      Buffer.from('push%5Bpayload%5D=a%00b&push%5Bnote%5D=%ff%fe'),
      Buffer.from('push%5Bpayload%5D=%ed%a0%80&push%5Bexpire_after_views%5D=%00'),
      Buffer.concat([Buffer.from('push%5Bpayload%5D='), Buffer.from([0xff, 0x00, 0x80])]),
      Buffer.from('%=&==&&push[payload]=x'),
    ];
    for (const form of forms) {
      const answer = await rawRequest(
        'POST /api/v2/pushes HTTP/1.1',
        ['Content-Type: application/x-www-form-urlencoded', auth()],
        form,
      );
      expectHandled(answer, `form ${form.toString('latin1').slice(0, 60)}`, true);
      const signIn = await rawRequest(
        'POST /users/sign_in HTTP/1.1',
        ['Content-Type: application/x-www-form-urlencoded'],
        Buffer.concat([Buffer.from('email=a%00b%40example.org&password='), form]),
      );
      expectHandled(signIn, 'sign-in form', false);
    }
    const multipart = Buffer.from(
      [
        '--b',
        'Content-Disposition: form-data; name="push[payload]"',
        '',
        'a\u0000b',
        '--b',
        'Content-Disposition: form-data; name="push[files][]"; filename="a\u0000\u202e.txt"',
        'Content-Type: text/pl\u0000ain',
        '',
        'bytes',
        '--b--',
        '',
      ].join('\r\n'),
    );
    const answer = await rawRequest(
      'POST /api/v2/pushes HTTP/1.1',
      ['Content-Type: multipart/form-data; boundary=b', auth()],
      multipart,
    );
    expectHandled(answer, 'multipart with NULs', true);
  });
});
