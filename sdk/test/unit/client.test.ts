/**
 * The facade's transport behaviour, with an injected fetch: errors by status, network failures, timeouts and
 * aborts, retries of safe operations only, paging fallbacks.
 */
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  createSecretPushClient,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PassphraseIncorrectError,
  PassphraseRequiredError,
  PayloadTooLargeError,
  RateLimitError,
  RequestAbortedError,
  SecretPushError,
  ServerError,
  ServiceUnavailableError,
  StorageQuotaError,
  TimeoutError,
  UnexpectedResponseError,
  ValidationError,
} from '../../src/index.js';
import { failure } from '../support/failure.js';

const baseUrl = 'https://pwpush.example.org';
const push = {
  url_token: 'abcdefghijklmnopqrstuvwx',
  kind: 'text',
  expired: false,
  expired_on: null,
  deleted: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-08T00:00:00.000Z',
  expire_after_days: 7,
  expire_after_views: 5,
  days_remaining: 7,
  views_remaining: 5,
  deletable_by_viewer: true,
  retrieval_step: false,
  passphrase_protected: false,
  json_url: `${baseUrl}/api/v2/pushes/abcdefghijklmnopqrstuvwx`,
  html_url: `${baseUrl}/p/abcdefghijklmnopqrstuvwx`,
  name: '',
  note: '',
};

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

/** A fetch that answers from a list, one response per call, and records the requests. */
function scripted(...answers: Array<Response | (() => Response | Promise<Response>)>) {
  const requests: Request[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    requests.push(request);
    const next = answers.shift();
    if (!next) throw new Error('no more scripted answers');
    return typeof next === 'function' ? next() : next;
  };
  return { fetch, requests };
}

describe('errors by status', () => {
  const cases: Array<[number, string, new (...a: never[]) => SecretPushError]> = [
    [400, 'invalid_json', BadRequestError],
    [401, 'invalid_token', AuthenticationError],
    [401, 'passphrase_required', PassphraseRequiredError],
    [401, 'passphrase_incorrect', PassphraseIncorrectError],
    [403, 'forbidden', ForbiddenError],
    [404, 'not_found', NotFoundError],
    [405, 'method_not_allowed', UnexpectedResponseError],
    [413, 'payload_too_large', PayloadTooLargeError],
    [422, 'validation_failed', ValidationError],
    [429, 'rate_limited', RateLimitError],
    [429, 'storage_quota_exceeded', StorageQuotaError],
    [500, 'internal_error', ServerError],
    [503, 'service_unavailable', ServiceUnavailableError],
  ];
  for (const [status, code, type] of cases) {
    it(`maps ${status} ${code} to ${type.name} with status, code, body and request id`, async () => {
      const body = { error: 'nope', code, request_id: 'req-body' };
      const { fetch } = scripted(json(body, status, { 'X-Request-Id': 'req-header' }));
      // No retries: createPush retries 429 and 503 with its Idempotency-Key (tested under "retries").
      const client = createSecretPushClient({ baseUrl, fetch, maxRetries: 0 });
      const error = await failure(client.createPush({ payload: 'x' }));
      expect(error).toBeInstanceOf(type);
      expect(error).toMatchObject({ status, code, body, requestId: 'req-header', name: type.name });
      expect(error.message).toContain(code);
    });
  }

  it('keeps passphrase errors apart from AuthenticationError', async () => {
    const { fetch } = scripted(json({ error: 'x', code: 'passphrase_required' }, 401));
    const error = await failure(createSecretPushClient({ baseUrl, fetch }).retrievePush('t'));
    expect(error).not.toBeInstanceOf(AuthenticationError);
  });

  it('takes the request id from the body when the header is missing', async () => {
    const { fetch } = scripted(json({ error: 'x', code: 'not_found', request_id: 'from-body' }, 404));
    const error = await failure(createSecretPushClient({ baseUrl, fetch }).previewPush('t'));
    expect(error.requestId).toBe('from-body');
  });

  it('carries the per-field errors of a 422', async () => {
    const errors = { payload: ['Payload is required.'] };
    const { fetch } = scripted(json({ error: 'x', code: 'validation_failed', errors }, 422));
    const error = await failure(createSecretPushClient({ baseUrl, fetch }).createPush({ payload: '' }));
    expect((error as ValidationError).errors).toEqual(errors);
  });

  it('reads retryAfterSeconds from Retry-After, an HTTP date, or the body', async () => {
    const inTenSeconds = new Date(Date.now() + 10_500).toUTCString();
    const { fetch } = scripted(
      json({ error: 'x', code: 'too_many_attempts' }, 429, { 'Retry-After': '42' }),
      json({ error: 'x', code: 'too_many_attempts' }, 429, { 'Retry-After': inTenSeconds }),
      json({ error: 'x', code: 'too_many_attempts', retry_after: 7 }, 429),
    );
    const client = createSecretPushClient({ baseUrl, fetch });
    expect(((await failure(client.retrievePush('t'))) as RateLimitError).retryAfterSeconds).toBe(42);
    const fromDate = ((await failure(client.retrievePush('t'))) as RateLimitError).retryAfterSeconds!;
    expect(fromDate).toBeGreaterThanOrEqual(9);
    expect(fromDate).toBeLessThanOrEqual(11);
    expect(((await failure(client.retrievePush('t'))) as RateLimitError).retryAfterSeconds).toBe(7);
  });

  it('turns a non-JSON error body into an error carrying the text', async () => {
    const { fetch } = scripted(new Response('Bad Gateway from the proxy', { status: 502 }));
    const error = await failure(createSecretPushClient({ baseUrl, fetch }).version());
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 502, code: undefined, body: 'Bad Gateway from the proxy' });
  });

  it('throws UnexpectedResponseError for a 200 whose body is not JSON', async () => {
    const { fetch } = scripted(
      new Response('<html>', { status: 200, headers: { 'Content-Type': 'application/json' } }),
    );
    await expect(createSecretPushClient({ baseUrl, fetch }).version()).rejects.toBeInstanceOf(UnexpectedResponseError);
  });
});

describe('network, timeouts and aborts', () => {
  it('turns a fetch that rejects into NetworkError with the cause', async () => {
    const cause = new TypeError('fetch failed');
    const client = createSecretPushClient({
      baseUrl,
      fetch: async () => {
        throw cause;
      },
    });
    const error = await failure(client.version());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect(error.cause).toBe(cause);
    expect(error.status).toBeUndefined();
  });

  it('throws NetworkError for a connection refused by a real socket', async () => {
    const client = createSecretPushClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 5000 });
    await expect(client.version()).rejects.toBeInstanceOf(NetworkError);
  });

  const hanging: typeof fetch = (input, init) =>
    new Promise((_, reject) => {
      const signal = input instanceof Request ? input.signal : init?.signal;
      signal?.addEventListener('abort', () => reject(signal.reason));
    });

  it('throws TimeoutError when timeoutMs passes', async () => {
    const client = createSecretPushClient({ baseUrl, fetch: hanging, timeoutMs: 50 });
    const error = await failure(client.retrievePush('t'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('lets a per-call timeoutMs override the client default', async () => {
    const client = createSecretPushClient({ baseUrl, fetch: hanging, timeoutMs: 60_000 });
    await expect(client.version({ timeoutMs: 30 })).rejects.toBeInstanceOf(TimeoutError);
  });

  it('throws RequestAbortedError (not TimeoutError) when the caller aborts', async () => {
    const client = createSecretPushClient({ baseUrl, fetch: hanging, timeoutMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const error = await failure(client.activePushes.page(1, { signal: controller.signal }));
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(error).not.toBeInstanceOf(TimeoutError);
  });

  it('does not send a request when the signal is already aborted', async () => {
    const { fetch, requests } = scripted();
    const client = createSecretPushClient({ baseUrl, fetch });
    await expect(client.createPush({ payload: 'x' }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      RequestAbortedError,
    );
    expect(requests).toHaveLength(0);
  });
});

describe('retries', () => {
  const busy = () => json({ error: 'busy', code: 'service_unavailable', retry_after: 0 }, 503, { 'Retry-After': '0' });
  const limited = () => json({ error: 'slow down', code: 'rate_limited' }, 429, { 'Retry-After': '0' });

  it('retries a safe operation on 503 and 429, honouring Retry-After, up to 2 times', async () => {
    const report = { application_version: '1.0.0', api_version: '2.1', edition: 'oss' };
    const { fetch, requests } = scripted(busy(), limited(), json(report));
    await expect(createSecretPushClient({ baseUrl, fetch }).version()).resolves.toEqual(report);
    expect(requests).toHaveLength(3);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const { fetch, requests } = scripted(busy(), busy(), busy(), busy());
    await expect(createSecretPushClient({ baseUrl, fetch }).previewPush('t')).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
    expect(requests).toHaveLength(3);
  });

  it('does not wait for a Retry-After longer than maxRetryWaitMs', async () => {
    const { fetch, requests } = scripted(json({ error: 'x', code: 'rate_limited' }, 429, { 'Retry-After': '3600' }));
    const error = await failure(createSecretPushClient({ baseUrl, fetch }).activePushes.page(1));
    expect((error as RateLimitError).retryAfterSeconds).toBe(3600);
    expect(requests).toHaveLength(1);
  });

  it('retries createPush with the same Idempotency-Key (a retry never makes a second push), and a fresh key per create', async () => {
    const created = { ...push, name: '', note: '' };
    const { fetch, requests } = scripted(
      busy(),
      json({ error: 'busy', code: 'idempotency_key_in_use' }, 409, { 'Retry-After': '0' }),
      json(created, 201),
    );
    const client = createSecretPushClient({ baseUrl, fetch });
    await expect(client.createPush({ payload: 'x' })).resolves.toEqual(created);
    expect(requests).toHaveLength(3);
    const keys = requests.map((r) => r.headers.get('Idempotency-Key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    const again = scripted(json(created, 201));
    await createSecretPushClient({ baseUrl, fetch: again.fetch }).createPush(
      { payload: 'x' },
      { idempotencyKey: 'my-own-key' },
    );
    expect(again.requests[0]!.headers.get('Idempotency-Key')).toBe('my-own-key');
    const other = scripted(json(created, 201));
    await createSecretPushClient({ baseUrl, fetch: other.fetch }).createPush({ payload: 'x' });
    expect(other.requests[0]!.headers.get('Idempotency-Key')).not.toBe(keys[0]);
  });

  it('retries a multipart create with the same key and the same bytes (one boundary for every attempt)', async () => {
    const created = { ...push, kind: 'file', name: '', note: '' };
    const { fetch, requests } = scripted(busy(), json(created, 201));
    await createSecretPushClient({ baseUrl, token: 't', fetch }).createPush({
      files: [{ filename: 'a.bin', data: new Uint8Array([1, 2, 3]) }],
    });
    expect(requests).toHaveLength(2);
    const [first, second] = requests as [Request, Request];
    expect(first.headers.get('Content-Type')).toMatch(/^multipart\/form-data; boundary=/);
    expect(second.headers.get('Content-Type')).toBe(first.headers.get('Content-Type'));
    expect(second.headers.get('Idempotency-Key')).toBe(first.headers.get('Idempotency-Key'));
    expect(new Uint8Array(await second.arrayBuffer())).toEqual(new Uint8Array(await first.arrayBuffer()));
  });

  it('retries createPush after a network error, with the same key', async () => {
    let calls = 0;
    const keys: (string | null)[] = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      keys.push(new Request(input, init).headers.get('Idempotency-Key'));
      if (calls++ === 0) throw new TypeError('fetch failed');
      return new Response(JSON.stringify({ ...push, name: '', note: '' }), {
        status: 201,
        headers: { 'Content-Type': 'application/json' },
      });
    };
    await expect(createSecretPushClient({ baseUrl, fetch }).createPush({ payload: 'x' })).resolves.toMatchObject({
      url_token: push.url_token,
    });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
  });

  it('never retries retrievePush or expirePush', async () => {
    for (const call of [
      (c: ReturnType<typeof createSecretPushClient>) => c.retrievePush('t'),
      (c: ReturnType<typeof createSecretPushClient>) => c.expirePush('t'),
    ]) {
      const { fetch, requests } = scripted(busy(), json(push));
      await expect(call(createSecretPushClient({ baseUrl, fetch }))).rejects.toBeInstanceOf(ServiceUnavailableError);
      expect(requests).toHaveLength(1);
    }
  });

  it('does not retry with maxRetries 0', async () => {
    const { fetch, requests } = scripted(busy(), json({}));
    await expect(createSecretPushClient({ baseUrl, fetch, maxRetries: 0 }).version()).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
    expect(requests).toHaveLength(1);
  });
});

describe('requests', () => {
  it('sends the bearer token, the user agent and JSON, and the passphrase only as X-Passphrase', async () => {
    const retrieval = { ...push, payload: 's', files: [] };
    const { fetch, requests } = scripted(json(retrieval));
    const client = createSecretPushClient({ baseUrl: `${baseUrl}/`, token: 'spt_abc', fetch, userAgent: 'my-app/2' });
    await client.retrievePush('abc def', { passphrase: 'p w' });
    const [request] = requests;
    expect(request!.url).toBe(`${baseUrl}/api/v2/pushes/abc%20def`);
    expect(request!.headers.get('Authorization')).toBe('Bearer spt_abc');
    expect(request!.headers.get('X-Passphrase')).toBe('p w');
    expect(request!.headers.get('User-Agent')).toBe('my-app/2');
  });

  it('sends the legacy pair instead of a bearer token when an email is given', async () => {
    const { fetch, requests } = scripted(json([]));
    await createSecretPushClient({ baseUrl, token: 'spt_abc', email: 'a@example.org', fetch }).activePushes.page(1);
    const headers = requests[0]!.headers;
    expect(headers.get('Authorization')).toBeNull();
    expect(headers.get('X-User-Email')).toBe('a@example.org');
    expect(headers.get('X-User-Token')).toBe('spt_abc');
  });

  it('sends no credential anonymously and never on version', async () => {
    const { fetch, requests } = scripted(json(push, 201), json({}));
    await createSecretPushClient({ baseUrl, fetch }).createPush({ payload: 'x' });
    await createSecretPushClient({ baseUrl, token: 'spt_abc', fetch }).version();
    expect(requests[0]!.headers.get('Authorization')).toBeNull();
    expect(requests[1]!.headers.get('Authorization')).toBeNull();
  });

  it('uploads files as multipart parts with their bytes as they are, and the fields as push[field] text', async () => {
    const { fetch, requests } = scripted(json(push, 201));
    await createSecretPushClient({ baseUrl, token: 't', fetch }).createPush({
      payload: 'the key',
      expire_after_duration: 3,
      retrieval_step: true,
      deletable_by_viewer: false,
      files: [
        { filename: 'a.bin', data: new Uint8Array([0xff, 0x00, 0x41]) },
        { filename: 'b.txt', content: 'aGk=', content_type: 'text/plain' },
        { filename: 'c.json', data: new Blob(['{}'], { type: 'application/json' }) },
      ],
    });
    const request = requests[0]!;
    expect(request.headers.get('Content-Type')).toMatch(/^multipart\/form-data; boundary=/);
    // The body holds the bytes, never their base64.
    expect(await request.clone().text()).not.toContain('/wBB');
    const form = await request.formData();
    expect([...form.keys()]).toEqual([
      'push[payload]',
      'push[expire_after_duration]',
      'push[retrieval_step]',
      'push[deletable_by_viewer]',
      'push[files][]',
      'push[files][]',
      'push[files][]',
    ]);
    expect([
      form.get('push[payload]'),
      form.get('push[expire_after_duration]'),
      form.get('push[retrieval_step]'),
      form.get('push[deletable_by_viewer]'),
    ]).toEqual(['the key', '3', 'true', 'false']);
    const files = form.getAll('push[files][]') as File[];
    expect(files.map((f) => [f.name, f.type])).toEqual([
      ['a.bin', 'application/octet-stream'],
      ['b.txt', 'text/plain'],
      ['c.json', 'application/json'],
    ]);
    expect([...new Uint8Array(await files[0]!.arrayBuffer())]).toEqual([0xff, 0x00, 0x41]);
    expect(await files[1]!.text()).toBe('hi');
  });

  it('sends JSON with base64 files when a field means something a form cannot say (an empty passphrase)', async () => {
    const { fetch, requests } = scripted(json(push, 201));
    await createSecretPushClient({ baseUrl, token: 't', fetch }).createPush({
      passphrase: '',
      files: [
        { filename: 'a.bin', data: new Uint8Array([0xff, 0x00, 0x41]) },
        { filename: 'b.txt', content: 'aGk=', content_type: 'text/plain' },
      ],
    });
    const body = (await requests[0]!.json()) as { push: { files: unknown[]; passphrase: string } };
    expect(body.push.passphrase).toBe('');
    expect(body.push.files).toEqual([
      { filename: 'a.bin', content_type: 'application/octet-stream', content: '/wBB' },
      { filename: 'b.txt', content: 'aGk=', content_type: 'text/plain' },
    ]);
  });

  it('rejects a baseUrl that is not absolute', () => {
    expect(() => createSecretPushClient({ baseUrl: 'localhost:5100' })).toThrow(TypeError);
  });
});

describe('paging', () => {
  const page = (n: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ ...push, url_token: `p${n}-${i}` }));

  it('follows Link rel=next and stops when there is none', async () => {
    const { fetch, requests } = scripted(
      json(page(1, 2), 200, { Link: `<${baseUrl}/api/v2/pushes/active?page=2>; rel="next"`, 'X-Total-Count': '3' }),
      json(page(2, 1), 200, { Link: `<${baseUrl}/api/v2/pushes/active?page=1>; rel="prev"`, 'X-Total-Count': '3' }),
    );
    const seen: string[] = [];
    for await (const p of createSecretPushClient({ baseUrl, token: 't', fetch }).activePushes()) seen.push(p.url_token);
    expect(seen).toEqual(['p1-0', 'p1-1', 'p2-0']);
    expect(requests.map((r) => new URL(r.url).search)).toEqual(['?page=1', '?page=2']);
  });

  it('without Link, asks for page+1 after a full page of 50 and stops at a short page', async () => {
    const { fetch, requests } = scripted(json(page(1, 50)), json(page(2, 3)));
    let count = 0;
    for await (const _ of createSecretPushClient({ baseUrl, token: 't', fetch }).expiredPushes()) count++;
    expect(count).toBe(53);
    expect(requests).toHaveLength(2);
  });

  it('stops on an empty page', async () => {
    const { fetch, requests } = scripted(json(page(1, 50)), json([]));
    let count = 0;
    for await (const _ of createSecretPushClient({ baseUrl, token: 't', fetch }).activePushes()) count++;
    expect(count).toBe(50);
    expect(requests).toHaveLength(2);
  });

  it('returns one page with its metadata from page(n)', async () => {
    const { fetch } = scripted(json({ logs: [] }, 200, { 'X-Total-Count': '0' }));
    const result = await createSecretPushClient({ baseUrl, token: 't', fetch }).audit.page('tok', 3);
    expect(result).toEqual({ items: [], page: 3, totalCount: 0, nextPage: null });
  });
});
