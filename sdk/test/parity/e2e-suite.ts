/**
 * End-to-end encrypted pushes, one set of behaviours run against the real server and the stateful mock (the parity
 * suite's targets): the SDK encrypts in this process (WebCrypto in Node), the target stores and returns the envelopes
 * byte for byte without ever seeing the key, and the SDK opens them from the share link. Every request is recorded in
 * full (method, URL, headers, body) to show that no key and no plaintext ever left the process; every answer is
 * checked against the spec.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildShareLink,
  createSecretPushClient,
  DecryptionError,
  fileFromBytes,
  MissingKeyError,
  parseShareLink,
  sealPush,
  type SecretPushClient,
} from '../../src/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';
import type { ParityTarget } from './suite.js';
import { failure } from '../support/failure.js';

const MARKER = { scheme: 'aes-256-gcm', version: 1 };

function keyOf(link: string): string {
  const key = parseShareLink(link).key;
  expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return key!;
}

export function defineEndToEndParitySuite(getTarget: () => ParityTarget): void {
  let target: ParityTarget;
  const checker = specCheckingFetch();
  /** Every request sent: method, URL, headers and body. */
  const sent: string[] = [];
  /** Plaintexts and keys of this suite's pushes. */
  const secrets: string[] = [];
  let anon: SecretPushClient;
  let alice: SecretPushClient;

  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? Buffer.from(await request.clone().arrayBuffer()).toString('latin1') : '';
    sent.push([request.method, request.url, ...[...request.headers].map(([k, v]) => `${k}: ${v}`), body].join('\n'));
    return checker.fetch(request);
  };

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw JSON answer, whatever its shape
  type RawBody = any;
  /** A request the SDK would never make for you: the raw JSON API, recorded and spec-checked like the rest. */
  async function raw(
    path: string,
    init: RequestInit = {},
    token?: string,
  ): Promise<{ status: number; body: RawBody; bytes: Uint8Array }> {
    const headers = new Headers(init.headers);
    headers.set('accept', 'application/json');
    if (token) headers.set('authorization', `Bearer ${token}`);
    if (init.body) headers.set('content-type', 'application/json');
    const response = await recording(`${target.baseUrl}${path}`, { ...init, headers });
    const bytes = new Uint8Array(await response.arrayBuffer());
    let body: unknown = null;
    try {
      body = JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch {
      /* binary */
    }
    return { status: response.status, body, bytes };
  }

  beforeAll(() => {
    target = getTarget();
    const make = (token?: string) =>
      createSecretPushClient({ baseUrl: target.baseUrl, token, fetch: recording, maxRetries: 0 });
    anon = make();
    alice = make(target.tokenA);
  });

  afterEach(() => {
    const violations = [...checker.violations];
    checker.clear();
    expect(violations, 'answers that break the spec').toEqual([]);
  });

  describe('end-to-end encrypted pushes', () => {
    it('reports the feature in the version report: enabled, not the default, not required, aes-256-gcm v1', async () => {
      expect((await anon.version()).features.pushes.client_encryption).toEqual({
        enabled: true,
        default: false,
        required: false,
        schemes: [MARKER],
      });
    });

    it('round-trips a text push: created encrypted, opened from the share link, the target never sent the plaintext', async () => {
      const plaintext = `correct horse battery staple — ünïcödé ${Math.random()}`;
      const push = await anon.createPush({ payload: plaintext, expire_after_views: 2 }, { endToEnd: true });
      const key = keyOf(push.shareLink);
      secrets.push(plaintext, key);
      expect(push.shareLink).toBe(`${push.html_url}#k=${key}`);
      expect(push.client_encryption).toEqual(MARKER);
      const opened = await anon.retrieveLink(push.shareLink);
      expect(opened).toMatchObject({ payload: plaintext, kind: 'text', views_remaining: 1, client_encryption: MARKER });
    });

    it('round-trips a file push through the retrieval-step link: real names and bytes after download, envelopes on the wire', async () => {
      const bytes = new Uint8Array(5000).map((_, i) => (i * 7) % 256);
      const message = `the key, passphrase by phone ${Math.random()}`;
      const push = await alice.createPush(
        {
          payload: message,
          retrieval_step: true,
          files: [
            fileFromBytes(bytes, 'clé privée (prod).pem', 'application/x-pem-file'),
            fileFromBytes(new Uint8Array(0), 'empty.txt'),
          ],
        },
        { endToEnd: true },
      );
      secrets.push(message, keyOf(push.shareLink), 'privée');
      expect(push.shareLink).toMatch(/\/p\/[a-z0-9_-]+\/r#k=/);
      const opened = await anon.retrieveLink(push.shareLink);
      expect(opened.payload).toBe(message);
      expect(opened.files.map((f) => [f.filename, f.content_type, f.size])).toEqual([
        ['clé privée (prod).pem', 'application/octet-stream', bytes.length + 32],
        ['empty.txt', 'application/octet-stream', 32],
      ]);
      expect(await anon.downloadFile(opened.files[0]!)).toEqual(bytes);
      expect(await anon.downloadFile(opened.files[1]!)).toEqual(new Uint8Array(0));
    });

    it('stores and returns the envelopes byte for byte, never altered: payload, file names and file bytes', async () => {
      const sealed = await sealPush({
        kind: 'file',
        payload: 'with a file',
        files: [fileFromBytes(new Uint8Array([0, 1, 2, 250, 255]), 'a.bin')],
      });
      secrets.push(sealed.key);
      const created = await raw(
        '/api/v2/pushes',
        { method: 'POST', body: JSON.stringify({ push: sealed.push }) },
        target.tokenA,
      );
      expect(created.status).toBe(201);
      expect(created.body.client_encryption).toEqual(MARKER);
      const got = await raw(`/api/v2/pushes/${created.body.url_token}`);
      expect(got.status).toBe(200);
      expect(got.body.payload).toBe(sealed.push.payload);
      expect(got.body.files.map((f: { filename: string }) => f.filename)).toEqual(
        sealed.push.files!.map((f) => f.filename),
      );
      const file = got.body.files[0];
      const link = new URL(file.url);
      const download = await raw(`${link.pathname}${link.search}`);
      expect(download.status).toBe(200);
      expect(Buffer.from(download.bytes).toString('base64')).toBe(sealed.push.files![0]!.content);
      // And the SDK opens exactly that with the key.
      const opened = await anon.retrieveLink(buildShareLink(created.body.html_url, sealed.key));
      expect(opened.payload).toBe('with a file');
    });

    it('carries the marker in every record (create, retrieve, preview, lists, delete) and null for an ordinary push', async () => {
      const sealed = await alice.createPush({ payload: 'marked', expire_after_views: 3 }, { endToEnd: true });
      const plain = await alice.createPush({ payload: 'ordinary' });
      secrets.push(keyOf(sealed.shareLink));
      expect(plain.client_encryption).toBeNull();
      expect((await alice.previewPush(sealed.url_token)).client_encryption).toEqual(MARKER);
      expect((await alice.previewPush(plain.url_token)).client_encryption).toBeNull();
      const active: Record<string, unknown> = {};
      for await (const push of alice.activePushes()) active[push.url_token] = push.client_encryption;
      expect(active[sealed.url_token]).toEqual(MARKER);
      expect(active[plain.url_token]).toBeNull();
      expect((await anon.retrievePush(plain.url_token)).client_encryption).toBeNull();
      const deleted = await alice.expirePush(sealed.url_token);
      expect(deleted).toMatchObject({ deleted: true, client_encryption: MARKER });
      const expired: Record<string, unknown> = {};
      for await (const push of alice.expiredPushes()) expired[push.url_token] = push.client_encryption;
      expect(expired[sealed.url_token]).toEqual(MARKER);
    });

    it('counts views and expires like any push: a link without its key costs no view, a wrong key costs one', async () => {
      const push = await alice.createPush({ payload: 'two views', expire_after_views: 2 }, { endToEnd: true });
      const key = keyOf(push.shareLink);
      secrets.push(key);
      const bare = push.shareLink.split('#')[0]!;
      expect(await failure(anon.retrieveLink(bare))).toBeInstanceOf(MissingKeyError);
      const views = async () => {
        for await (const p of alice.activePushes()) if (p.url_token === push.url_token) return p.views_remaining;
        return 0;
      };
      expect(await views()).toBe(2);
      const wrong = (key[0] === 'A' ? 'B' : 'A') + key.slice(1);
      const error = await failure(anon.retrieveLink(`${bare}#k=${wrong}`));
      expect(error).toBeInstanceOf(DecryptionError);
      expect(error.code).toBe('decryption_failed');
      expect(await views()).toBe(1);
      expect((await anon.retrieveLink(push.shareLink)).payload).toBe('two views');
      const after = await anon.retrieveLink(push.shareLink);
      expect(after).toMatchObject({ expired: true, payload: null, files: [], client_encryption: MARKER });
    });

    it('expires by time like any push (the record says so, nothing is served)', async () => {
      const push = await alice.createPush({ payload: 'one day', expire_after_days: 1 }, { endToEnd: true });
      secrets.push(keyOf(push.shareLink));
      const dayAndASecond = 24 * 60 * 60 * 1000 + 1000;
      if (target.setClock) await target.setClock(new Date((target.now?.() ?? new Date()).getTime() + dayAndASecond));
      else await target.backdate!(push.url_token, dayAndASecond);
      const got = await anon.retrieveLink(push.shareLink);
      expect(got).toMatchObject({ expired: true, payload: null, files: [] });
    });

    it('refuses with 422 on client_encryption an unknown scheme, and plaintext sent with the marker', async () => {
      const sealed = await sealPush({ payload: 'x' });
      for (const push of [
        { ...sealed.push, client_encryption: { scheme: 'aes-256-gcm', version: 2 } },
        { ...sealed.push, client_encryption: { scheme: 'xchacha20-poly1305', version: 1 } },
      ]) {
        const answer = await raw('/api/v2/pushes', { method: 'POST', body: JSON.stringify({ push }) });
        expect(answer.status).toBe(422);
        expect(Object.keys(answer.body.errors)).toEqual(['client_encryption']);
      }
      const plaintext = await raw('/api/v2/pushes', {
        method: 'POST',
        body: JSON.stringify({ push: { payload: 'plain words', client_encryption: MARKER } }),
      });
      expect(plaintext.status).toBe(422);
      expect(plaintext.body.errors.payload.join()).toMatch(/end-to-end encryption envelope/);
    });

    it('sent no key and no plaintext in any request', () => {
      expect(sent.length).toBeGreaterThan(20);
      expect(
        sent.some(
          (r) => r.startsWith('POST\n') && r.includes('"client_encryption":{"scheme":"aes-256-gcm","version":1}'),
        ),
      ).toBe(true);
      for (const request of sent) {
        for (const secret of secrets)
          expect(request.includes(secret), `a request carries ${secret.slice(0, 10)}…`).toBe(false);
      }
    });
  });
}
