/**
 * End-to-end encrypted pushes through the SDK, in Node, against the stateful msw mock (which stores the marker and
 * the envelopes as sent, like the server does; sdk/test/parity/e2e-suite.ts runs the round trips against both):
 * create with `{ endToEnd: true }`, open with `retrieveLink`, download and decrypt files, and the client's own
 * refusals (servers that drop the marker, instances without the feature). Every request is recorded (method, URL,
 * headers, body) to prove that neither the key nor the plaintext ever leaves the process, and every answer is
 * checked against the spec.
 */
import { inspect } from 'node:util';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildShareLink,
  createSecretPushClient,
  DecryptionError,
  fileFromBytes,
  MissingKeyError,
  parseShareLink,
  PassphraseRequiredError,
  type PushRetrieval,
  sealPush,
  type SecretPushClient,
  UnsupportedEncryptionError,
  ValidationError,
} from '../../src/index.js';
import { createMockServerHandlers, type MockServer, type MockSettings } from '../../src/mocks/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';
import { failure } from '../support/failure.js';

const server = setupServer();
const checker = specCheckingFetch();
/** Everything sent: method, URL, headers and body of every request. */
const sent: string[] = [];

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  sent.length = 0;
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

type Rewrite = (request: Request, response: Response) => Promise<Response>;

/** A fetch that records each request in full, then goes through the spec checker (and an optional rewrite of answers). */
function recordingFetch(rewrite?: Rewrite): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? await request.clone().text() : '';
    sent.push([request.method, request.url, ...[...request.headers].map(([k, v]) => `${k}: ${v}`), body].join('\n'));
    const response = await checker.fetch(request);
    return rewrite ? rewrite(request, response) : response;
  };
}

let n = 0;
function start(
  settings: Partial<MockSettings> = {},
  rewrite?: Rewrite,
): { mock: MockServer; anon: SecretPushClient; alice: SecretPushClient } {
  const baseUrl = `http://e2e-${++n}.mock.test`;
  const mock = createMockServerHandlers({ baseUrl, settings });
  server.use(...mock.handlers);
  const make = (token?: string) =>
    createSecretPushClient({ baseUrl, token, fetch: recordingFetch(rewrite), maxRetries: 0 });
  return { mock, anon: make(), alice: make(mock.users[0]!.token) };
}

function keyOf(link: string): string {
  const key = parseShareLink(link).key;
  expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return key!;
}

/** Neither the key nor any of the plaintexts appear in anything sent. */
function expectNothingSent(...secrets: string[]): void {
  expect(sent.length).toBeGreaterThan(0);
  for (const secret of secrets) for (const request of sent) expect(request).not.toContain(secret);
}

function expectNoKeyIn(error: unknown, key: string): void {
  expect(`${String(error)} ${inspect(error, { depth: 6, showHidden: true })} ${JSON.stringify(error)}`).not.toContain(
    key,
  );
}

describe('end-to-end encrypted pushes through the SDK (stateful mock)', () => {
  it('round-trips a text push: the link carries the key, the server stores only the envelope, the recipient reads the plaintext', async () => {
    const { anon, mock } = start();
    const plaintext = 'correct horse battery staple ünïcödé';
    const push = await anon.createPush({ payload: plaintext, expire_after_views: 2, name: 'db' }, { endToEnd: true });
    const key = keyOf(push.shareLink);
    expect(push.shareLink).toBe(`${push.html_url}#k=${key}`);
    expect(push.client_encryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });
    // The record can be logged: the link with its key is not an enumerable property.
    expect(JSON.stringify(push)).not.toContain(key);
    expect(inspect(push)).not.toContain(key);
    expect(Object.keys(push)).not.toContain('shareLink');

    const opened = await anon.retrieveLink(push.shareLink);
    expect(opened).toMatchObject({
      payload: plaintext,
      kind: 'text',
      views_remaining: 1,
      client_encryption: push.client_encryption,
    });
    expectNothingSent(key, plaintext);
    // What the server holds is the envelope: an owner-less raw read without a key gets it, typed, not as the payload.
    const raw = await failure(anon.retrievePush(push.url_token));
    expect(raw).toBeInstanceOf(MissingKeyError);
    expect((raw.body as PushRetrieval).payload).toMatch(/^spe1\./);
    expect(mock.now()).toBeInstanceOf(Date);
  });

  it('round-trips a file push with its text: real names, decrypted bytes, octet-stream on the wire', async () => {
    const { alice } = start();
    const bytes = new Uint8Array(3000).map((_, i) => i % 256);
    const push = await alice.createPush(
      {
        payload: 'the key, passphrase by phone',
        files: [
          fileFromBytes(bytes, 'id_ed25519 (prod) ✓', 'application/x-pem-file'),
          fileFromBytes(new Uint8Array(0), 'empty.txt'),
        ],
      },
      { endToEnd: true },
    );
    expect(push.kind).toBe('file');
    const key = keyOf(push.shareLink);
    const opened = await alice.retrieveLink(push.shareLink);
    expect(opened.payload).toBe('the key, passphrase by phone');
    expect(opened.files.map((f) => [f.filename, f.content_type, f.size])).toEqual([
      ['id_ed25519 (prod) ✓', 'application/octet-stream', 3032],
      ['empty.txt', 'application/octet-stream', 32],
    ]);
    expect(await alice.downloadFile(opened.files[0]!)).toEqual(bytes);
    expect(await alice.downloadFile(opened.files[1]!)).toEqual(new Uint8Array(0));
    // A copy of the file (as a UI state store would keep it), or its bare link, downloads decrypted too.
    expect(await alice.downloadFile(JSON.parse(JSON.stringify(opened.files[0])))).toEqual(bytes);
    expect(await alice.downloadFile(opened.files[0]!.url)).toEqual(bytes);
    expectNothingSent(key, 'id_ed25519', 'passphrase by phone', 'x-pem-file');
  });

  it('checks URL and QR plaintexts on the client, then round-trips them (the server never sees the URL)', async () => {
    const { anon } = start();
    const url = 'https://example.org/reset?token=abc';
    const urlPush = await anon.createPush({ kind: 'url', payload: url }, { endToEnd: true });
    expect((await anon.retrieveLink(urlPush.shareLink)).payload).toBe(url);
    const qr = '🔑'.repeat(1024);
    const qrPush = await anon.createPush({ kind: 'qr', payload: qr }, { endToEnd: true });
    expect((await anon.retrieveLink(qrPush.shareLink)).payload).toBe(qr);
    expectNothingSent(url, 'example.org', keyOf(urlPush.shareLink), keyOf(qrPush.shareLink));

    sent.length = 0;
    const bad = await failure(anon.createPush({ kind: 'url', payload: 'javascript:alert(1)' }, { endToEnd: true }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).errors).toEqual({ payload: ['must be a valid HTTP or HTTPS URL'] });
    expect(
      await failure(anon.createPush({ kind: 'qr', payload: 'q'.repeat(1025) }, { endToEnd: true })),
    ).toBeInstanceOf(ValidationError);
    expect(sent).toEqual([]); // refused before any request
  });

  it('keeps the key through the retrieval-step link (/p/<token>/r#k=…) and the passphrase gate', async () => {
    const { anon } = start();
    const push = await anon.createPush(
      { payload: 'behind a click and a passphrase', retrieval_step: true, passphrase: 'blue horse' },
      { endToEnd: true },
    );
    expect(push.shareLink).toMatch(/\/p\/[a-z2-7]{24}\/r#k=[A-Za-z0-9_-]{43}$/);
    expect(await failure(anon.retrieveLink(push.shareLink))).toBeInstanceOf(PassphraseRequiredError);
    const opened = await anon.retrieveLink(push.shareLink, { passphrase: 'blue horse' });
    expect(opened.payload).toBe('behind a click and a passphrase');
    expectNothingSent(keyOf(push.shareLink), 'behind a click');
    // The passphrase is a server-checked gate: it is sent (in X-Passphrase), the key never is.
    expect(sent.some((r) => r.includes('x-passphrase: blue horse'))).toBe(true);
  });

  it('refuses a link without its key before spending a view, and a truncated key before any request', async () => {
    const { anon } = start();
    const push = await anon.createPush({ payload: 'needs the key', expire_after_views: 1 }, { endToEnd: true });
    const key = keyOf(push.shareLink);
    sent.length = 0;
    const missing = await failure(anon.retrieveLink(push.html_url));
    expect(missing).toBeInstanceOf(MissingKeyError);
    expect(missing.code).toBe('missing_key');
    const lines = sent.map((r) => r.split('\n').slice(0, 2).join(' '));
    expect(lines).toEqual([expect.stringMatching(/^GET http:\/\/[^ ]+\/api\/v2\/pushes\/[a-z2-7]{24}\/preview$/)]); // no retrieval, no view

    sent.length = 0;
    const truncated = await failure(anon.retrieveLink(push.shareLink.slice(0, -5)));
    expect(truncated).toBeInstanceOf(MissingKeyError);
    expect(truncated.code).toBe('invalid_key');
    expect(sent).toEqual([]);
    expectNoKeyIn(truncated, key.slice(0, 38));

    // The one view is still there.
    expect((await anon.retrieveLink(push.shareLink)).payload).toBe('needs the key');
  });

  it('refuses a wrong key and a tampered ciphertext with DecryptionError, never garbage', async () => {
    const { anon, mock } = start();
    const push = await anon.createPush({ payload: 'the real secret' }, { endToEnd: true });
    const other = await anon.createPush({ payload: 'another' }, { endToEnd: true });
    const wrong = await failure(anon.retrieveLink(`${push.html_url}#k=${keyOf(other.shareLink)}`));
    expect(wrong).toBeInstanceOf(DecryptionError);
    expect(wrong.code).toBe('decryption_failed');
    expectNoKeyIn(wrong, keyOf(other.shareLink));

    // A push whose stored envelope was altered (seeded as the server would return it).
    const sealed = await sealPush({ payload: 'to be altered' });
    const payload = sealed.push.payload!;
    const flipped = payload.slice(0, 20) + (payload[20] === 'A' ? 'B' : 'A') + payload.slice(21);
    const seeded = mock.seedPush({ ...sealed.push, payload: flipped });
    const tampered = await failure(anon.retrieveLink(buildShareLink(seeded.html_url, sealed.key)));
    expect(tampered).toBeInstanceOf(DecryptionError);
    expect(tampered.message).not.toContain('to be altered');
    expectNoKeyIn(tampered, sealed.key);
  });

  it("refuses to present an unmarked record as the sender's secret, and reports a server that dropped the marker", async () => {
    // A server that strips the marker from what it returns (or never stored it).
    const stripMarker: Rewrite = async (_request, response) => {
      if (!response.headers.get('Content-Type')?.includes('json') || !response.ok) return response;
      const body = (await response.json()) as Record<string, unknown>;
      delete body.client_encryption;
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
    const { anon } = start({}, stripMarker);
    const created = await failure(anon.createPush({ payload: 'on an old server' }, { endToEnd: true }));
    expect(created).toBeInstanceOf(UnsupportedEncryptionError);
    expect(created.code).toBe('not_supported_by_server');
    const record = created.body as PushRetrieval;
    expect(record.url_token).toMatch(/^[a-z2-7]{24}$/); // the caller can expire it
    expectNothingSent('on an old server');

    const { anon: plainClient } = start();
    const plain = await plainClient.createPush({ payload: 'an ordinary push' });
    const refused = await failure(
      plainClient.retrieveLink(
        `${plain.html_url}#k=${keyOf((await plainClient.createPush({ payload: 'x' }, { endToEnd: true })).shareLink)}`,
      ),
    );
    expect(refused).toBeInstanceOf(DecryptionError);
    expect(refused.code).toBe('not_encrypted');
  });

  it('keeps ordinary pushes as they were: createPush without the option, retrieveLink of a link without a key', async () => {
    const { anon } = start();
    const push = await anon.createPush({ payload: 'plain' });
    expect(push.shareLink).toBe(push.html_url);
    expect(push.client_encryption).toBeNull();
    expect((await anon.retrieveLink(push.shareLink)).payload).toBe('plain');
    expect((await anon.retrievePush((await anon.createPush({ payload: 'plain 2' })).url_token)).payload).toBe(
      'plain 2',
    );
  });

  it('follows the instance: the version report, required mode (ordinary pushes refused) and disabled mode', async () => {
    const required = start({ clientEncryption: { enabled: true, default: true, required: true } });
    expect((await required.anon.version()).features.pushes.client_encryption).toEqual({
      enabled: true,
      default: true,
      required: true,
      schemes: [{ scheme: 'aes-256-gcm', version: 1 }],
    });
    const refused = await failure(required.anon.createPush({ payload: 'plain' }));
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused.status).toBe(422);
    expect(Object.keys((refused as ValidationError).errors)).toEqual(['client_encryption']);
    expect(
      (await required.anon.createPush({ payload: 'sealed' }, { endToEnd: true })).client_encryption,
    ).not.toBeNull();

    // Disabled: the SDK reads the version report and creates nothing; a client that sends anyway gets 422.
    const disabled = start({ clientEncryption: { enabled: false, default: false, required: false } });
    sent.length = 0;
    const off = await failure(disabled.anon.createPush({ payload: 'sealed' }, { endToEnd: true }));
    expect(off).toBeInstanceOf(UnsupportedEncryptionError);
    expect(off.code).toBe('disabled_on_instance');
    expect(sent.filter((r) => r.startsWith('POST'))).toEqual([]);
    const raw = await disabled.anon.raw.post({
      url: '/api/v2/pushes',
      body: { push: (await sealPush({ payload: 'sealed' })).push },
    });
    expect(raw.response?.status).toBe(422);
    expect(Object.keys((raw.error as { errors: object }).errors)).toEqual(['client_encryption']);
  });

  it('asks the version report once before the first encrypted create, and creates nothing on a server without the feature', async () => {
    const { anon } = start();
    await anon.createPush({ payload: 'one' }, { endToEnd: true });
    await anon.createPush({ payload: 'two' }, { endToEnd: true });
    await anon.createPush({ payload: 'plain' });
    expect(
      sent.map((r) =>
        r
          .split('\n')
          .slice(0, 2)
          .join(' ')
          .replace(/^(\w+) http:\/\/[^/]+/, '$1 '),
      ),
    ).toEqual(['GET /api/v2/version', 'POST /api/v2/pushes', 'POST /api/v2/pushes', 'POST /api/v2/pushes']);
    // A server whose version report lacks the feature (an older server, or the reference).
    const withoutFeature: Rewrite = async (request, response) => {
      if (!request.url.endsWith('/version')) return response;
      const report = (await response.json()) as { features: { pushes: Record<string, unknown> } };
      delete report.features.pushes.client_encryption;
      return new Response(JSON.stringify(report), { status: 200, headers: response.headers });
    };
    const old = start({}, withoutFeature);
    sent.length = 0;
    const error = await failure(old.anon.createPush({ payload: 'sealed' }, { endToEnd: true }));
    expect(error).toBeInstanceOf(UnsupportedEncryptionError);
    expect(error.code).toBe('not_supported_by_server');
    expect(sent.filter((r) => r.startsWith('POST'))).toEqual([]);
  });

  it('refuses to download a file of an encrypted push retrieved without a key, and counts views like any push', async () => {
    const { alice } = start();
    const push = await alice.createPush(
      { files: [fileFromBytes(new Uint8Array([1, 2, 3]), 'k.bin')], expire_after_views: 2 },
      { endToEnd: true },
    );
    // The owner's raw retrieval (no key): typed error carrying the sealed record; its files refuse to download.
    const error = await failure(alice.retrievePush(push.url_token));
    expect(error).toBeInstanceOf(MissingKeyError);
    const sealed = error.body as PushRetrieval;
    expect(sealed.files[0]!.filename).toMatch(/^spe1\./);
    expect(await failure(alice.downloadFile(sealed.files[0]!))).toBeInstanceOf(MissingKeyError);
    expect(await failure(alice.downloadFile(sealed.files[0]!.url))).toBeInstanceOf(MissingKeyError);
    // A plain fetch of the link still reaches the bytes: the envelope, as stored.
    const envelope = new Uint8Array(await (await fetch(sealed.files[0]!.url)).arrayBuffer());
    expect(new TextDecoder().decode(envelope.subarray(0, 4))).toBe('SPE1');

    const anon = createSecretPushClient({
      baseUrl: new URL(push.html_url).origin,
      fetch: recordingFetch(),
      maxRetries: 0,
    });
    expect((await anon.retrieveLink(push.shareLink)).views_remaining).toBe(1);
    expect((await anon.retrieveLink(push.shareLink)).views_remaining).toBe(0);
    const gone = await anon.retrieveLink(push.shareLink);
    expect(gone).toMatchObject({ expired: true, payload: null, files: [] });
    expectNothingSent(keyOf(push.shareLink));
  });
});
