/**
 * The end-to-end scheme on its own (sdk/src/e2e): envelopes round-trip, and every way an envelope can be wrong —
 * wrong key, an altered IV, ciphertext, tag or AAD, items swapped between places, an unknown version, a non-canonical
 * encoding — fails with a typed error and never yields text. The spec's test vector and examples decrypt as the API
 * description says, and what `sealPush` sends satisfies the contract's PushInput schema.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { contract } from '@secret-push/contract';
import {
  additionalData,
  base64ToBytes,
  base64UrlToBytes,
  buildShareLink,
  bytesToBase64Url,
  CLIENT_ENCRYPTION,
  DecryptionError,
  decryptBytes,
  decryptText,
  encryptBytes,
  encryptText,
  generateKey,
  importKey,
  type ItemRole,
  MAX_FILENAME_PLAINTEXT_BYTES,
  MAX_PAYLOAD_PLAINTEXT_BYTES,
  MissingKeyError,
  openFile,
  openPush,
  parseShareLink,
  type PushRetrieval,
  sealPush,
  UnsupportedEncryptionError,
  ValidationError,
} from '../../src/e2e/index.js';
import { failure } from '../support/failure.js';

const spec = contract();
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- examples of the bundled spec
const example = (name: string): any => spec.deref<{ value: unknown }>({ $ref: `#/components/examples/${name}` }).value;
const VECTOR_KEY = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const TEXT: ItemRole = { item: 'payload', kind: 'text' };

/** Flips one bit of the byte at `index` of a text envelope's decoded bytes (IV at 0..11, then ciphertext, tag last). */
function flipText(envelope: string, index: number): string {
  const bytes = base64UrlToBytes(envelope.slice(5))!;
  bytes[index < 0 ? bytes.length + index : index]! ^= 0x01;
  return `spe1.${bytesToBase64Url(bytes)}`;
}

describe('end-to-end envelopes', () => {
  it('round-trips texts (empty, Unicode, large) and bytes, with a fresh IV every time', async () => {
    const key = await importKey(generateKey());
    for (const text of ['', 'correct horse battery staple', 'pässwörd 🔑 密码\u0000\n', 'x'.repeat(300_000)]) {
      const envelope = await encryptText(key, text, TEXT);
      expect(envelope).toMatch(/^spe1\.[A-Za-z0-9_-]+$/);
      expect(envelope.length).toBe(5 + Math.ceil((4 * (new TextEncoder().encode(text).length + 28)) / 3));
      expect(await decryptText(key, envelope, TEXT)).toBe(text);
    }
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
    const role: ItemRole = { item: 'file-content', index: 3 };
    const envelope = await encryptBytes(key, bytes, role);
    expect([...envelope.subarray(0, 4)]).toEqual([0x53, 0x50, 0x45, 0x31]);
    expect(envelope.length).toBe(bytes.length + 32);
    expect(await decryptBytes(key, envelope, role)).toEqual(bytes);
    expect(await decryptBytes(key, await encryptBytes(key, new Uint8Array(0), role), role)).toEqual(new Uint8Array(0));
    // Same key, same plaintext, same role: different IVs, different envelopes.
    const a = await encryptText(key, 'same', TEXT);
    const b = await encryptText(key, 'same', TEXT);
    expect(a).not.toBe(b);
    expect(a.slice(5, 21)).not.toBe(b.slice(5, 21));
  });

  it('decrypts the test vector and the named examples of the spec', async () => {
    const key = await importKey(VECTOR_KEY);
    expect(new Uint8Array(base64UrlToBytes(VECTOR_KEY)!)).toEqual(new Uint8Array(32).map((_, i) => i));
    const created = example('CreateEncryptedTextRequest').push;
    expect(created.client_encryption).toEqual(CLIENT_ENCRYPTION);
    expect(await decryptText(key, created.payload, TEXT)).toBe('correct horse battery staple');
    const retrieved = example('RetrievedEncryptedTextPush') as PushRetrieval;
    const opened = await openPush(retrieved, VECTOR_KEY);
    expect(opened.payload).toBe('correct horse battery staple');
    const link = parseShareLink(`${retrieved.html_url}#k=${VECTOR_KEY}`);
    expect(link).toEqual({
      pageUrl: retrieved.html_url,
      urlToken: retrieved.url_token,
      retrievalStep: false,
      key: VECTOR_KEY,
    });
    const file = example('CreateEncryptedFileRequest').push;
    expect(await decryptText(key, file.payload, { item: 'payload', kind: 'file' })).toBe(
      'The deploy key for prod; passphrase by phone.',
    );
    expect(await decryptText(key, file.files[0].filename, { item: 'file-name', index: 0 })).toBe('id_ed25519');
    const content = await decryptBytes(key, base64ToBytes(file.files[0].content), { item: 'file-content', index: 0 });
    expect(new TextDecoder().decode(content)).toBe('-----BEGIN OPENSSH PRIVATE KEY-----\n');
  });

  it('binds the documented additional data: scheme, version and role', () => {
    expect(additionalData({ item: 'payload', kind: 'text' })).toBe('secret-push:aes-256-gcm:1:payload:text');
    expect(additionalData({ item: 'payload', kind: 'url' })).toBe('secret-push:aes-256-gcm:1:payload:url');
    expect(additionalData({ item: 'file-name', index: 0 })).toBe('secret-push:aes-256-gcm:1:file-name:0');
    expect(additionalData({ item: 'file-content', index: 12 })).toBe('secret-push:aes-256-gcm:1:file-content:12');
    expect(() => additionalData({ item: 'file-name', index: -1 })).toThrow(TypeError);
  });

  it('refuses a wrong key with DecryptionError, never returning text', async () => {
    const envelope = await encryptText(await importKey(generateKey()), 'secret', TEXT);
    const error = await failure(decryptText(await importKey(generateKey()), envelope, TEXT));
    expect(error).toBeInstanceOf(DecryptionError);
    expect(error.code).toBe('decryption_failed');
    expect(error.status).toBeUndefined();
  });

  it('refuses an altered IV, ciphertext or tag', async () => {
    const key = await importKey(generateKey());
    const envelope = await encryptText(key, 'a secret of some length', TEXT);
    for (const index of [0, 11, 12, 20, -16, -1]) {
      const error = await failure(decryptText(key, flipText(envelope, index), TEXT));
      expect(error, `byte ${index}`).toBeInstanceOf(DecryptionError);
    }
    const bytes = await encryptBytes(key, new Uint8Array([1, 2, 3]), { item: 'file-content', index: 0 });
    for (const index of [4, 16, 17, bytes.length - 1]) {
      const altered = bytes.slice();
      altered[index]! ^= 0x80;
      expect(await failure(decryptBytes(key, altered, { item: 'file-content', index: 0 }))).toBeInstanceOf(
        DecryptionError,
      );
    }
    // Cut short: too short to hold an IV and a tag, or only the tag is missing.
    expect((await failure(decryptText(key, 'spe1.AAAA', TEXT))).code).toBe('malformed_envelope');
    expect(
      (await failure(decryptBytes(key, bytes.subarray(0, bytes.length - 1), { item: 'file-content', index: 0 }))).code,
    ).toBe('decryption_failed');
  });

  it('refuses a non-canonical encoding (spare bits, padding, foreign characters) instead of decoding it "close enough"', async () => {
    const key = await importKey(generateKey());
    const envelope = await encryptText(key, 'abc', TEXT); // 31 bytes → 42 characters, the last one carries 2 spare bits
    const last = envelope.at(-1)!;
    const sibling = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(last) ^ 1;
    const spare = envelope.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[sibling];
    expect((await failure(decryptText(key, spare, TEXT))).code).toBe('malformed_envelope');
    expect((await failure(decryptText(key, `${envelope}=`, TEXT))).code).toBe('malformed_envelope');
    expect((await failure(decryptText(key, `${envelope.slice(0, 10)}+${envelope.slice(11)}`, TEXT))).code).toBe(
      'malformed_envelope',
    );
  });

  it('refuses an item moved to another role: another kind, another file, name for content, name for payload', async () => {
    const key = await importKey(generateKey());
    const payload = await encryptText(key, 'https://example.org/reset?t=1', { item: 'payload', kind: 'text' });
    // A server turning a text push into a URL push (which a page would make a link) breaks the tag.
    expect(await failure(decryptText(key, payload, { item: 'payload', kind: 'url' }))).toBeInstanceOf(DecryptionError);
    const name0 = await encryptText(key, 'a.txt', { item: 'file-name', index: 0 });
    const name1 = await encryptText(key, 'b.txt', { item: 'file-name', index: 1 });
    expect(await failure(decryptText(key, name0, { item: 'file-name', index: 1 }))).toBeInstanceOf(DecryptionError);
    expect(await failure(decryptText(key, name1, { item: 'file-name', index: 0 }))).toBeInstanceOf(DecryptionError);
    expect(await failure(decryptText(key, name0, TEXT))).toBeInstanceOf(DecryptionError);
    const content0 = await encryptBytes(key, new Uint8Array([9]), { item: 'file-content', index: 0 });
    expect(await failure(decryptBytes(key, content0, { item: 'file-content', index: 1 }))).toBeInstanceOf(
      DecryptionError,
    );
    // The same sealed bytes relabelled as a text envelope of a name.
    const relabelled = `spe1.${bytesToBase64Url(content0.subarray(4))}`;
    expect(await failure(decryptText(key, relabelled, { item: 'file-name', index: 0 }))).toBeInstanceOf(
      DecryptionError,
    );
    // Swapping two files' names in a record fails to open the record.
    const record = { ...(example('RetrievedEncryptedTextPush') as PushRetrieval), kind: 'file' as const, payload: '' };
    const files = [name1, name0].map((filename, i) => ({
      id: `f${i}`,
      filename,
      content_type: 'application/octet-stream',
      size: 1,
      url: `https://x.test/${i}`,
    }));
    expect(await failure(openPush({ ...record, files }, key))).toBeInstanceOf(DecryptionError);
  });

  it('refuses unknown versions with UnsupportedEncryptionError and other shapes as malformed', async () => {
    const key = await importKey(generateKey());
    const envelope = await encryptText(key, 'x', TEXT);
    const v2 = await failure(decryptText(key, envelope.replace(/^spe1\./, 'spe2.'), TEXT));
    expect(v2).toBeInstanceOf(UnsupportedEncryptionError);
    expect(v2.code).toBe('unsupported_scheme');
    expect((await failure(decryptText(key, 'hunter2', TEXT))).code).toBe('malformed_envelope');
    const bytes = await encryptBytes(key, new Uint8Array([1]), { item: 'file-content', index: 0 });
    const bytesV2 = bytes.slice();
    bytesV2[3] = 0x32; // "SPE2"
    expect(await failure(decryptBytes(key, bytesV2, { item: 'file-content', index: 0 }))).toBeInstanceOf(
      UnsupportedEncryptionError,
    );
    expect(
      (await failure(decryptBytes(key, new TextEncoder().encode('plain file'), { item: 'file-content', index: 0 })))
        .code,
    ).toBe('malformed_envelope');
    const record = example('RetrievedEncryptedTextPush') as PushRetrieval;
    const other = { ...record, client_encryption: { scheme: 'aes-256-gcm', version: 2 } } as unknown as PushRetrieval;
    expect(await failure(openPush(other, VECTOR_KEY))).toBeInstanceOf(UnsupportedEncryptionError);
  });

  it('refuses malformed keys with MissingKeyError (invalid_key) and never quotes a key in an error', async () => {
    const key = generateKey();
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const bad of [key.slice(0, 42), `${key}A`, `${key.slice(0, 42)}+`, '', bytesToBase64Url(new Uint8Array(16))]) {
      const error = await failure(importKey(bad));
      expect(error).toBeInstanceOf(MissingKeyError);
      expect(error.code).toBe('invalid_key');
    }
    const envelope = await encryptText(await importKey(key), 'the plaintext', TEXT);
    const errors = [
      await failure(decryptText(await importKey(generateKey()), envelope, TEXT)),
      await failure(importKey(key.slice(0, 40))),
      await failure(
        openPush({ ...(example('RetrievedEncryptedTextPush') as PushRetrieval), payload: envelope }, generateKey()),
      ),
    ];
    for (const error of errors) {
      const shown = `${inspect(error, { depth: 5, showHidden: true })} ${JSON.stringify(error)} ${String(error)}`;
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(key.slice(0, 40));
      expect(shown).not.toContain('the plaintext');
      expect(shown).not.toContain(envelope.slice(5, 40));
    }
  });
});

describe('end-to-end share links', () => {
  it('puts the key in the fragment of html_url, in both link forms, and reads it back', () => {
    const key = generateKey();
    expect(buildShareLink('https://pw.example/p/k7mz4qv2xw5nrt3hbj6ypa2c', key)).toBe(
      `https://pw.example/p/k7mz4qv2xw5nrt3hbj6ypa2c#k=${key}`,
    );
    const step = buildShareLink('https://pw.example/p/k7mz4qv2xw5nrt3hbj6ypa2c/r#old', key);
    expect(step).toBe(`https://pw.example/p/k7mz4qv2xw5nrt3hbj6ypa2c/r#k=${key}`);
    expect(parseShareLink(step)).toEqual({
      pageUrl: 'https://pw.example/p/k7mz4qv2xw5nrt3hbj6ypa2c/r',
      urlToken: 'k7mz4qv2xw5nrt3hbj6ypa2c',
      retrievalStep: true,
      key,
    });
    // Other fragment names are ignored; a path prefix of the instance is allowed; no fragment means no key.
    expect(parseShareLink(`https://pw.example/base/p/abcdefghijk#x=1&k=${key}&y`).key).toBe(key);
    expect(parseShareLink(`https://pw.example/p/abcdefghijk#k=${encodeURIComponent(key)}`).key).toBe(key);
    expect(parseShareLink('http://localhost:5100/p/abcdefghijk').key).toBeNull();
    expect(parseShareLink('http://localhost:5100/p/abcdefghijk#k=').key).toBeNull();
  });

  it('rejects what is not a push link, or not a key, without quoting it', () => {
    const key = generateKey();
    for (const bad of [
      `not a url ${key}`,
      `ftp://pw.example/p/abcdefghijk#k=${key}`,
      `https://pw.example/x/abcdefghijk#k=${key}`,
      `https://pw.example/p/AB#k=${key}`,
    ]) {
      let message = '';
      expect(() => {
        try {
          parseShareLink(bad);
        } catch (error) {
          message = `${String(error)} ${inspect(error, { showHidden: true })}`;
          throw error;
        }
      }).toThrow(TypeError);
      expect(message).not.toContain(key);
    }
    expect(() => buildShareLink('https://pw.example/p/abcdefghijk', 'short')).toThrow(TypeError);
  });
});

describe('sealPush', () => {
  it('sends only envelopes that satisfy the contract, with the marker, the kind and octet-stream files', async () => {
    const sealed = await sealPush({
      payload: 'the deploy key',
      files: [
        { filename: 'id_ed25519', contentType: 'application/x-pem-file', data: new TextEncoder().encode('-----BEGIN') },
        { filename: 'ü'.repeat(79) + 'x', data: new Blob([new Uint8Array([0, 255])]) },
        { filename: 'already.b64', content_type: 'text/plain', content: 'QUJD' },
      ],
      name: 'label in the clear',
      passphrase: 'gate',
      expire_after_views: 2,
    });
    const push = sealed.push;
    expect(spec.validateComponent('PushInput', push).errors).toEqual([]);
    expect(push).toMatchObject({
      kind: 'file',
      client_encryption: { scheme: 'aes-256-gcm', version: 1 },
      name: 'label in the clear',
      passphrase: 'gate',
      expire_after_views: 2,
    });
    expect(push.files!.map((f) => f.content_type)).toEqual([
      'application/octet-stream',
      'application/octet-stream',
      'application/octet-stream',
    ]);
    const key = await importKey(sealed.key);
    expect(await decryptText(key, push.payload!, { item: 'payload', kind: 'file' })).toBe('the deploy key');
    expect(await decryptText(key, push.files![1]!.filename, { item: 'file-name', index: 1 })).toBe(
      'ü'.repeat(79) + 'x',
    );
    expect(await decryptBytes(key, base64ToBytes(push.files![2]!.content), { item: 'file-content', index: 2 })).toEqual(
      new TextEncoder().encode('ABC'),
    );
    expect(JSON.stringify(push)).not.toContain('deploy');
    expect(JSON.stringify(push)).not.toContain(sealed.key);
  });

  it('fits the largest plaintexts the API description allows, and refuses larger ones before sending', async () => {
    const big = await sealPush({ payload: 'é'.repeat(MAX_PAYLOAD_PLAINTEXT_BYTES / 2) });
    expect(big.push.payload!.length).toBe(1_048_576);
    expect(spec.validateComponent('PushInput', big.push).valid).toBe(true);
    const longName = await sealPush({
      files: [{ filename: 'n'.repeat(MAX_FILENAME_PLAINTEXT_BYTES), data: new Uint8Array(1) }],
    });
    expect(longName.push.files![0]!.filename.length).toBe(255);
    expect(spec.validateComponent('PushInput', longName.push).valid).toBe(true);
    const qr = await sealPush({ kind: 'qr', payload: '🔑'.repeat(1024) });
    expect(qr.push.payload!.length).toBe(5504);
    expect(spec.validateComponent('PushInput', qr.push).valid).toBe(true);

    const refused = async (params: Parameters<typeof sealPush>[0]) => {
      const error = await failure(sealPush(params));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.status).toBeUndefined();
      return (error as ValidationError).errors;
    };
    expect(await refused({ payload: 'x'.repeat(MAX_PAYLOAD_PLAINTEXT_BYTES + 1) })).toEqual({
      payload: [expect.stringMatching(/786400 bytes/)],
    });
    expect(await refused({ files: [{ filename: 'n'.repeat(160), data: new Uint8Array(1) }] })).toEqual({
      files: [expect.stringMatching(/159 bytes/)],
    });
    expect(await refused({ kind: 'url', payload: 'javascript:alert(1)' })).toEqual({
      payload: ['must be a valid HTTP or HTTPS URL'],
    });
    expect(await refused({ kind: 'qr', payload: 'q'.repeat(1025) })).toEqual({
      payload: ['is too long (at most 1024 characters)'],
    });
    expect(await refused({ kind: 'text', payload: '' })).toEqual({ payload: ["can't be blank"] });
    expect(await refused({ kind: 'file' })).toEqual({ files: ['needs at least one file for a file push'] });
    expect(await refused({ files: [{ filename: '../etc/passwd', data: new Uint8Array(1) }] })).toEqual({
      files: [expect.stringMatching(/bare file name/)],
    });
    expect(await refused({ payload: 'x', kind: 'text', files: [{ filename: 'a', data: new Uint8Array(1) }] })).toEqual({
      files: ['are only allowed on file pushes'],
    });
  });

  it("opens a file push: payload, real names, and each file's bytes through openFile", async () => {
    const sealed = await sealPush({
      files: [
        { filename: 'a.bin', data: new Uint8Array([1, 2]) },
        { filename: 'b.bin', data: new Uint8Array([3]) },
      ],
    });
    expect(sealed.push.payload).toBeUndefined();
    const base = example('RetrievedEncryptedTextPush') as PushRetrieval;
    const record: PushRetrieval = {
      ...base,
      kind: 'file',
      payload: '',
      files: sealed.push.files!.map((f, i) => ({
        id: `f${i}`,
        filename: f.filename,
        content_type: 'application/octet-stream',
        size: 0,
        url: `https://x.test/${i}`,
      })),
    };
    const opened = await openPush(record, sealed.key);
    expect(opened.payload).toBe('');
    expect(opened.files.map((f) => f.filename)).toEqual(['a.bin', 'b.bin']);
    expect(await openFile(opened.files[1]!, base64ToBytes(sealed.push.files![1]!.content))).toEqual(
      new Uint8Array([3]),
    );
    // File 0's bytes under file 1's entry: refused.
    expect(await failure(openFile(opened.files[1]!, base64ToBytes(sealed.push.files![0]!.content)))).toBeInstanceOf(
      DecryptionError,
    );
    // A copy of the file (spread, JSON) or its bare link opens too: the secret is kept by the signed link.
    const copy = JSON.parse(JSON.stringify(opened.files[0]!)) as (typeof record.files)[0];
    expect(await openFile(copy, base64ToBytes(sealed.push.files![0]!.content))).toEqual(new Uint8Array([1, 2]));
    expect(await openFile(copy.url, base64ToBytes(sealed.push.files![0]!.content))).toEqual(new Uint8Array([1, 2]));
    // A file that does not come from an opened push.
    await expect(openFile({ ...copy, url: 'https://elsewhere.test/files/9' }, new Uint8Array(40))).rejects.toThrow(
      TypeError,
    );
    // An expired encrypted push opens to its empty record.
    expect(await openPush({ ...record, expired: true, payload: null, files: [] }, sealed.key)).toMatchObject({
      payload: null,
      files: [],
    });
  });

  it('refuses to open a record that is not marked as encrypted, even with a key', async () => {
    const plain = { ...(example('RetrievedTextPush') as PushRetrieval) };
    const error = await failure(openPush(plain, VECTOR_KEY));
    expect(error).toBeInstanceOf(DecryptionError);
    expect(error.code).toBe('not_encrypted');
  });
});
