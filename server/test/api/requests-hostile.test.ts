/**
 * Hostile input to every request endpoint (issue 24, the developers' guide: "every new endpoint is hostile-input
 * tested"): odd and oversized tokens, pages, bodies and headers against createRequest, getRequest, previewRequest,
 * revokeRequest, respondToRequest, getRequestAudit and both lists, on the real server and PostgreSQL. Each answer is
 * a 4xx with a JSON `error` that matches the contract (never a 5xx), and nothing is stored: no request, no push, no
 * move of the request used as a target. Sizes are refused by their bounds before any per-item work (a list of 10,000
 * files is refused on its count, not decoded). SSRF does not apply: no request endpoint fetches a URL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from './support/real.js';

let api: RealApi;
let requester: { token: string; userId: string };
let target: string;

const auth = () => ({ authorization: `Bearer ${requester.token}` });

async function send(method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}) {
  return api.raw(path, {
    method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: body as BodyInit } : {}),
  });
}

async function counts() {
  const [row] = await api.db.query<{ requests: string; pushes: string; moves: string }>(
    `select (select count(*) from requests) as requests, (select count(*) from pushes) as pushes,
            (select count(*) from request_audit_entries) as moves`,
  );
  return row;
}

/** A refusal: a client error with a JSON `error`, and nothing written anywhere. */
async function refused(answer: { status: number; body: unknown }, before: Awaited<ReturnType<typeof counts>>) {
  expect(answer.status, JSON.stringify(answer.body)).toBeGreaterThanOrEqual(400);
  expect(answer.status).toBeLessThan(500);
  expect(typeof (answer.body as { error?: unknown }).error).toBe('string');
  expect(await counts()).toEqual(before);
}

beforeAll(async () => {
  api = await startRealApi();
  requester = await api.user('hostile-requester@example.org');
  const created = await send(
    'POST',
    '/api/v2/requests',
    JSON.stringify({ request: { request: 'the target' } }),
    auth(),
  );
  expect(created.status).toBe(201);
  target = created.body.url_token as string;
});

afterEach(async () => {
  expect(api.checker.violations).toEqual([]);
  // The target request is untouched by all of it.
  const seen = await send('GET', `/api/v2/requests/${target}`, undefined, auth());
  expect(seen.body.state).toBe('pending');
});

afterAll(async () => {
  await api?.stop();
});

const TOKENS = [
  'x'.repeat(65),
  'x'.repeat(4000),
  '%00',
  'abc%00def',
  '..%2F..%2Fetc%2Fpasswd',
  '%F0%28%8C%28',
  "'%3B%20drop%20table%20requests%3B--",
  '%E2%80%AE%E2%80%8B',
  '%25',
];

describe('hostile tokens in the path', () => {
  it('answers 4xx (404 or 400) to every token operation, as owner and anonymous, storing nothing', async () => {
    const before = await counts();
    for (const token of TOKENS) {
      for (const headers of [auth(), {}]) {
        await refused(await send('GET', `/api/v2/requests/${token}`, undefined, headers), before);
        await refused(await send('DELETE', `/api/v2/requests/${token}`, undefined, headers), before);
        await refused(await send('GET', `/api/v2/requests/${token}/preview`, undefined, headers), before);
        await refused(await send('GET', `/api/v2/requests/${token}/audit`, undefined, headers), before);
        await refused(
          await send('POST', `/api/v2/requests/${token}/response`, JSON.stringify({ push: { payload: 'p' } }), headers),
          before,
        );
      }
    }
  });
});

describe('hostile pages', () => {
  it('answers 400 or 422 to pages out of range or not numbers, on both lists and the audit', async () => {
    const before = await counts();
    for (const page of ['0', '-1', '1000000000000', 'abc', '1e3', '1;2', '%00', 'x'.repeat(5000), '1&page=2']) {
      for (const path of ['/api/v2/requests/active', '/api/v2/requests/expired', `/api/v2/requests/${target}/audit`]) {
        await refused(await send('GET', `${path}?page=${page}`, undefined, auth()), before);
      }
    }
  });
});

describe('hostile create bodies', () => {
  const file = (bytes: number) => ({ filename: 'f.bin', content: Buffer.alloc(bytes, 1).toString('base64') });
  const cases: [string, unknown][] = [
    ['not an object', [1, 2, 3]],
    ['no wrapper', { request: 'loose' }],
    ['a wrapper of the wrong type', { request: 'x'.repeat(10) }],
    ['an ask over 10,000 characters', { request: { request: 'a'.repeat(10_001) } }],
    ['an ask of the wrong type', { request: { request: { nested: true } } }],
    ['65 properties', { request: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])) }],
    ['six files', { request: { request: 'x', files: Array.from({ length: 6 }, () => file(1)) } }],
    ['10,000 files', { request: { request: 'x', files: Array.from({ length: 10_000 }, () => ({})) } }],
    ['a file over 1 MiB', { request: { request: 'x', files: [file(1024 * 1024 + 1)] } }],
    ['a file that is not base64', { request: { request: 'x', files: [{ filename: 'f', content: '!!!%%%' }] } }],
    ['notify_emails_to over its length', { request: { request: 'x', notify_emails_to: ','.repeat(2049) } }],
    ['notify_emails_to of empty items', { request: { request: 'x', notify_emails_to: ','.repeat(2000) } }],
    ['a header injection', { request: { request: 'x', notify_emails_to: 'a@example.org\r\nBcc: b@example.org' } }],
    [
      'an unknown locale',
      { request: { request: 'x', notify_emails_to: 'a@example.org', notify_emails_to_locale: 'xx' } },
    ],
    ['a duration out of the enum', { request: { request: 'x', expire_after_duration: 999 } }],
    ['days and views out of range', { request: { request: 'x', expire_after_days: 0, expire_after_views: -5 } }],
    [
      'a public key of the wrong curve',
      { request: { request: 'x', public_key: { kty: 'EC', crv: 'P-256', x: 'AA' } } },
    ],
    [
      'a public key of the wrong length',
      { request: { request: 'x', public_key: { kty: 'OKP', crv: 'X25519', x: 'AAAA' } } },
    ],
    [
      'a public key with a private part',
      {
        request: { request: 'x', public_key: { kty: 'OKP', crv: 'X25519', x: 'A'.repeat(43), d: 'A'.repeat(43) } },
      },
    ],
  ];

  it.each(cases)('refuses %s with a clear 4xx and stores nothing', async (_what, body) => {
    const before = await counts();
    await refused(await send('POST', '/api/v2/requests', JSON.stringify(body), auth()), before);
  });

  it('refuses JSON nested 100,000 deep, and a body that is not JSON, without a 5xx', async () => {
    const before = await counts();
    const deep = `{"request":{"request":"x","name":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    await refused(await send('POST', '/api/v2/requests', deep, auth()), before);
    await refused(await send('POST', '/api/v2/requests', '{"request": {"request": "x"', auth()), before);
    await refused(await send('POST', '/api/v2/requests', new Uint8Array([0xff, 0xfe, 0x00, 0x7b]), auth()), before);
  });
});

describe('hostile answers', () => {
  const cases: [string, unknown][] = [
    ['no wrapper', { payload: 'loose' }],
    ['an empty payload', { push: { payload: '' } }],
    ['a payload over the limit', { push: { payload: 'p'.repeat(1_048_577) } }],
    ['a sealed key on an ordinary request', { push: { payload: 'p' }, sealed_key: `sph1.${'A'.repeat(107)}` }],
    ['a sealed key of 10,000 characters', { push: { payload: 'p' }, sealed_key: 'A'.repeat(10_000) }],
    ['an unknown encryption scheme', { push: { payload: 'p', client_encryption: { scheme: 'rot13', version: 9 } } }],
    ['a kind that does not exist', { push: { payload: 'p', kind: 'exe' } }],
    ['10,000 files', { push: { payload: 'p', files: Array.from({ length: 10_000 }, () => ({})) } }],
  ];

  it.each(cases)('refuses %s with a clear 4xx, stores nothing and leaves the request pending', async (_what, body) => {
    const before = await counts();
    await refused(await send('POST', `/api/v2/requests/${target}/response`, JSON.stringify(body)), before);
  });

  it('cuts a 2,000-character User-Agent and Referer to 255 in the audit entry of an answer it takes', async () => {
    const created = await send('POST', '/api/v2/requests', JSON.stringify({ request: { request: 'ua' } }), auth());
    const token = created.body.url_token as string;
    const answered = await send(
      'POST',
      `/api/v2/requests/${token}/response`,
      JSON.stringify({ push: { payload: 'p' } }),
      {
        'user-agent': 'U'.repeat(2000),
        referer: `https://example.org/${'r'.repeat(2000)}`,
      },
    );
    expect(answered.status).toBe(201);
    const audit = await send('GET', `/api/v2/requests/${token}/audit`, undefined, auth());
    const entry = (audit.body.logs as { kind: string; user_agent: string; referrer: string }[]).find(
      (l) => l.kind === 'fulfilled',
    )!;
    expect(entry.user_agent).toHaveLength(255);
    expect(entry.referrer.length).toBeLessThanOrEqual(255);
  });
});
