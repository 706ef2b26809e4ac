/**
 * End-to-end encrypted pushes through the API, on the real Core and a fresh PostgreSQL database: the SDK encrypts in
 * this process, the server stores the envelopes (under its own at-rest encryption) and returns them exactly as sent,
 * and the operator's setting (PWPUSH_CLIENT_ENCRYPTION) decides what is accepted. Afterwards every log line the app
 * wrote and every row of the push tables are read directly: neither the plaintexts nor the keys are there.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSecretPushClient,
  fileFromBytes,
  parseShareLink,
  sealPush,
  type SecretPushClient,
  ValidationError,
} from '@secret-push/sdk';
import { createKeyring } from '../../src/crypto/envelope.js';
import { envelopeContexts } from '../../src/push/push-service.js';
import { startRealApi, type RealApi } from './support/real.js';

const MARKER = { scheme: 'aes-256-gcm', version: 1 };

let api: RealApi;
let owner: { token: string };
let anon: SecretPushClient;
let alice: SecretPushClient;
/** Plaintexts and keys: none may reach a log line or a table. */
const secrets: string[] = [];

function keyOf(link: string): string {
  const key = parseShareLink(link).key!;
  expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  secrets.push(key);
  return key;
}

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('sender@example.org');
  secrets.push(owner.token);
  const make = (token?: string) =>
    createSecretPushClient({ baseUrl: api.baseUrl, token, fetch: api.checker.fetch(), maxRetries: 0 });
  anon = make();
  alice = make(owner.token);
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

describe('end-to-end encrypted pushes on an instance that allows them (the default)', () => {
  it("reports the feature: enabled, not the pages' default, not required, aes-256-gcm v1", async () => {
    const report = await anon.version();
    expect(report.features.pushes.client_encryption).toEqual({
      enabled: true,
      default: false,
      required: false,
      schemes: [MARKER],
    });
  });

  it('stores a text push as the envelope, under its own at-rest encryption, and hands it back exactly as sent', async () => {
    const plaintext = `db password ${Math.random()}`;
    secrets.push(plaintext);
    const sealed = await sealPush({ payload: plaintext, expire_after_views: 3 });
    secrets.push(sealed.key);
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: sealed.push }),
    });
    expect(created.status).toBe(201);
    expect(created.body.client_encryption).toEqual(MARKER);
    const [row] = await api.db.query<{ id: string; payload_ciphertext: string; client_encryption: unknown }>(
      'select id, payload_ciphertext, client_encryption from pushes where url_token = $1',
      [created.body.url_token],
    );
    expect(row!.client_encryption).toEqual(MARKER);
    expect(row!.payload_ciphertext).not.toContain(sealed.push.payload); // encrypted at rest as well
    expect(
      createKeyring(api.settings.masterKeys).decryptText(row!.payload_ciphertext, envelopeContexts.payload(row!.id)),
    ).toBe(sealed.push.payload);
    const got = await api.raw(`/api/v2/pushes/${created.body.url_token}`);
    expect(got.body).toMatchObject({ payload: sealed.push.payload, client_encryption: MARKER, views_remaining: 2 });
  });

  it('round-trips a file push through the SDK: names and bytes as envelopes on the server, plaintext for the recipient', async () => {
    const bytes = new Uint8Array(4096).map((_, i) => (i * 13) % 256);
    const push = await alice.createPush(
      { payload: 'see the file', files: [fileFromBytes(bytes, 'backup codes.txt', 'text/plain')] },
      { endToEnd: true },
    );
    keyOf(push.shareLink);
    secrets.push('backup codes', 'see the file');
    const [file] = await api.db.query<{
      id: string;
      filename_ciphertext: string;
      content_type: string;
      size: number;
      content: Buffer;
    }>(
      'select f.id, f.filename_ciphertext, f.content_type, f.size, f.content from push_files f join pushes p on p.id = f.push_id where p.url_token = $1',
      [push.url_token],
    );
    const keyring = createKeyring(api.settings.masterKeys);
    expect(keyring.decryptText(file!.filename_ciphertext, envelopeContexts.filename(file!.id))).toMatch(
      /^spe1\.[A-Za-z0-9_-]{43,}$/,
    );
    expect(keyring.decrypt(file!.content, envelopeContexts.content(file!.id)).subarray(0, 4).toString('latin1')).toBe(
      'SPE1',
    );
    expect(file).toMatchObject({ content_type: 'application/octet-stream', size: bytes.length + 32 });

    const opened = await anon.retrieveLink(push.shareLink);
    expect(opened.payload).toBe('see the file');
    expect(opened.files[0]!.filename).toBe('backup codes.txt');
    expect(await anon.downloadFile(opened.files[0]!)).toEqual(bytes);
  });

  it("still checks the envelopes' form and the sizes: plaintext with the marker and oversized envelopes get 422", async () => {
    const refused = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'not an envelope', client_encryption: MARKER } }),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.payload).toEqual(
      expect.arrayContaining([expect.stringMatching(/end-to-end encryption envelope/)]),
    );
    expect(refused.body.errors.payload.join()).not.toMatch(/URL/);
    const qr = await sealPush({ kind: 'qr', payload: 'x' });
    const long = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { ...qr.push, payload: `spe1.${'A'.repeat(5500)}` } }),
    });
    expect(long.status).toBe(422);
    expect(Object.keys(long.body.errors)).toEqual(['payload']);
  });

  it('is JSON-only: a form cannot mark a push as encrypted (push[client_encryption] answers 422 on it)', async () => {
    const refused = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        'push[payload]': 'spe1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        'push[client_encryption]': 'aes-256-gcm',
      }).toString(),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({
      client_encryption: [expect.stringMatching(/send end-to-end encrypted pushes as JSON/)],
    });
  });

  it('the ordinary pushes of clients that know nothing of it keep working, marked null', async () => {
    // A url push still needs a URL when it is not encrypted.
    await expect(alice.createPush({ kind: 'url', payload: 'not a url' })).rejects.toBeInstanceOf(ValidationError);
    const ok = await alice.createPush({ kind: 'url', payload: 'https://example.org/reset' });
    expect(ok.client_encryption).toBeNull();
    expect((await anon.retrievePush(ok.url_token)).payload).toBe('https://example.org/reset');
  });

  it('wrote no plaintext and no key in any log line or table row', async () => {
    const logs = api.logs.join('\n');
    expect(api.logs.length).toBeGreaterThan(10);
    let dump = '';
    for (const table of ['pushes', 'push_files', 'audit_entries']) {
      const rows = await api.db.query<{ row: string }>(`select row_to_json(t)::text as row from ${table} t`);
      dump += rows.map((r) => r.row).join('\n');
    }
    const files = await api.db.query<{ content: Buffer }>('select content from push_files');
    dump += files.map((f) => f.content.toString('latin1')).join('\n');
    for (const secret of secrets) {
      expect(logs.includes(secret), `a log line holds ${secret.slice(0, 10)}…`).toBe(false);
      expect(dump.includes(secret), `a table holds ${secret.slice(0, 10)}…`).toBe(false);
    }
  });
});

describe("the operator's choice through the API", () => {
  it('off: a push marked as encrypted gets 422 on client_encryption, and the report says so', async () => {
    const off = await startRealApi(
      { clientEncryption: { enabled: false, default: false, required: false } },
      { db: api.db },
    );
    try {
      const client = createSecretPushClient({ baseUrl: off.baseUrl, fetch: off.checker.fetch(), maxRetries: 0 });
      expect((await client.version()).features.pushes.client_encryption).toEqual({
        enabled: false,
        default: false,
        required: false,
        schemes: [],
      });
      const sealed = await sealPush({ payload: 'x' });
      const refused = await off.raw('/api/v2/pushes', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ push: sealed.push }),
      });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        errors: { client_encryption: [expect.stringMatching(/turned off/)] },
      });
      // The SDK reads the report first and creates nothing.
      await expect(client.createPush({ payload: 'x' }, { endToEnd: true })).rejects.toMatchObject({
        code: 'disabled_on_instance',
      });
      expect((await client.createPush({ payload: 'ordinary' })).client_encryption).toBeNull();
      expect(off.checker.violations).toEqual([]);
    } finally {
      await off.stop();
    }
  });

  it('required: an ordinary push gets 422 on client_encryption (example ErrEncryptionRequired); encrypted ones work', async () => {
    const required = await startRealApi(
      { clientEncryption: { enabled: true, default: true, required: true } },
      { db: api.db },
    );
    try {
      const client = createSecretPushClient({
        baseUrl: required.baseUrl,
        fetch: required.checker.fetch(),
        maxRetries: 0,
      });
      expect((await client.version()).features.pushes.client_encryption).toMatchObject({
        enabled: true,
        default: true,
        required: true,
      });
      const refused = await required.raw('/api/v2/pushes', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ push: { payload: 'ordinary' } }),
      });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        errors: { client_encryption: [expect.stringMatching(/only end-to-end encrypted/)] },
      });
      const push = await client.createPush({ payload: 'sealed' }, { endToEnd: true });
      keyOf(push.shareLink);
      expect((await client.retrieveLink(push.shareLink)).payload).toBe('sealed');
      expect(required.checker.violations).toEqual([]);
    } finally {
      await required.stop();
    }
  });
});
