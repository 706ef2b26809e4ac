import { describe, expect, it } from 'vitest';
import { ApiError } from '@secret-push/rules';
import { createCore } from '../../src/core.js';
import { makeSettings, TEST_KEY_A, TEST_KEY_B } from '../support/db.js';
import { BASE, ctx, harness } from './helpers.js';

const h = await harness();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

function tokenOf(url: string): string {
  return new URL(url).searchParams.get('token')!;
}

/** Every stored byte of a push's row and files, as text, to search for secrets and ciphertexts. */
async function storedText(urlToken: string): Promise<string> {
  const rows = await h.db.query('select * from pushes where url_token = $1', [urlToken]);
  const files = await h.db.query(
    'select f.* from push_files f join pushes p on p.id = f.push_id where p.url_token = $1',
    [urlToken],
  );
  return JSON.stringify({
    rows,
    files: files.map((f) => ({ ...f, content: Buffer.from(f.content).toString('base64') })),
  });
}

describe('files', () => {
  it('retrieves file metadata with signed 5-minute links that download the bytes', async () => {
    const me = await h.user();
    const content = Buffer.from([0, 1, 2, 250, 251, 252]);
    const push = await h.core.pushes.create(
      {
        files: [
          { filename: 'key.bin', content: content.toString('base64') },
          { filename: 'notes.txt', content_type: 'text/plain', content: Buffer.from('hi').toString('base64') },
        ],
      },
      ctx(me.userId),
    );
    const got = await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    expect(got.payload).toBe('');
    expect(got.files).toHaveLength(2);
    const [first, second] = got.files;
    expect(first).toMatchObject({ filename: 'key.bin', content_type: 'application/octet-stream', size: 6 });
    expect(second).toMatchObject({ filename: 'notes.txt', content_type: 'text/plain', size: 2 });
    expect(first!.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(first!.url.startsWith(`${BASE}/api/v2/pushes/${push.url_token}/files/${first!.id}?token=`)).toBe(true);

    const dl = await h.core.pushes.downloadFile(push.url_token, first!.id, tokenOf(first!.url));
    expect(dl).toEqual({ filename: 'key.bin', contentType: 'application/octet-stream', size: 6, body: content });
    // Downloads do not count as views.
    const again = await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    expect(again.views_remaining).toBe(3);
  });

  it('refuses a link for another file (invalid_link), a forged one, and an unknown push (not_found)', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create(
      {
        files: [
          { filename: 'a', content: 'YQ==' },
          { filename: 'b', content: 'Yg==' },
        ],
      },
      ctx(me.userId),
    );
    const got = await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    const [a, b] = got.files;
    expect((await rejection(h.core.pushes.downloadFile(push.url_token, b!.id, tokenOf(a!.url)))).code).toBe(
      'invalid_link',
    );
    expect((await rejection(h.core.pushes.downloadFile(push.url_token, a!.id, tokenOf(a!.url) + 'x'))).code).toBe(
      'invalid_link',
    );
    expect((await rejection(h.core.pushes.downloadFile(push.url_token, a!.id, 'not-a-jwt'))).code).toBe('invalid_link');
    expect((await rejection(h.core.pushes.downloadFile('unknowntoken123', a!.id, tokenOf(a!.url)))).code).toBe(
      'not_found',
    );
  });

  it('answers link_expired for a link older than five minutes', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ files: [{ filename: 'a', content: 'YQ==' }] }, ctx(me.userId));
    const got = await h.core.pushes.retrieve(
      push.url_token,
      undefined,
      ctx(null, { now: new Date(Date.now() - 6 * MIN) }),
    );
    expect(
      (await rejection(h.core.pushes.downloadFile(push.url_token, got.files[0]!.id, tokenOf(got.files[0]!.url)))).code,
    ).toBe('link_expired');
  });

  it('keeps file bytes after the last view until the links lapse, then the sweeper deletes them', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create(
      { files: [{ filename: 'f', content: Buffer.from('bytes!').toString('base64') }], expire_after_views: 1 },
      ctx(me.userId),
    );
    const t = new Date();
    const got = await h.core.pushes.retrieve(push.url_token, undefined, ctx(null, { now: t }));
    const file = got.files[0]!;
    // The push is expired now, but the link issued with the last view still works.
    expect((await h.core.pushes.retrieve(push.url_token, undefined, ctx())).files).toEqual([]);
    expect((await h.core.pushes.downloadFile(push.url_token, file.id, tokenOf(file.url))).body.toString()).toBe(
      'bytes!',
    );
    // A sweep within the five minutes leaves the bytes alone.
    await h.core.sweep(new Date(t.getTime() + 4 * MIN));
    expect(await h.db.query('select id from push_files where id = $1', [file.id])).toHaveLength(1);
    const swept = await h.core.sweep(new Date(t.getTime() + 5 * MIN + 1000));
    expect(swept.erasedFiles).toBeGreaterThanOrEqual(1);
    expect(await h.db.query('select id from push_files where id = $1', [file.id])).toEqual([]);
  });
});

describe('sweeper', () => {
  it('erases payload, note, passphrase hash and files of pushes past their time: no plaintext and no ciphertext remain', async () => {
    const me = await h.user();
    const t0 = new Date(Date.now() - 3 * DAY);
    const text = await h.core.pushes.create(
      {
        payload: 'sweep-payload-1',
        note: 'sweep-note-1',
        passphrase: 'sweep-pass-1',
        name: 'kept-name',
        expire_after_days: 1,
      },
      ctx(me.userId, { now: t0 }),
    );
    const file = await h.core.pushes.create(
      {
        files: [{ filename: 'sweep-file.txt', content: Buffer.from('sweep-bytes-1').toString('base64') }],
        payload: 'sweep-payload-2',
        expire_after_days: 1,
      },
      ctx(me.userId, { now: t0 }),
    );
    const fresh = await h.core.pushes.create({ payload: 'still-active' }, ctx(me.userId));
    const [before] = await h.db.query('select payload_ciphertext, note_ciphertext from pushes where url_token = $1', [
      text.url_token,
    ]);
    const ciphertexts = [before!.payload_ciphertext as string, before!.note_ciphertext as string];
    const fileCipher = (
      await h.db.query('select f.content from push_files f join pushes p on p.id = f.push_id where p.url_token = $1', [
        file.url_token,
      ])
    )[0]!.content as Buffer;

    const result = await h.core.sweep();
    expect(result.erasedPushes).toBeGreaterThanOrEqual(2);

    for (const token of [text.url_token, file.url_token]) {
      const dump = await storedText(token);
      for (const secret of [
        'sweep-payload-1',
        'sweep-note-1',
        'sweep-pass-1',
        'sweep-payload-2',
        'sweep-bytes-1',
        'sweep-file.txt',
      ]) {
        expect(dump).not.toContain(secret);
        expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
      }
      for (const c of ciphertexts) expect(dump).not.toContain(c);
      expect(dump).not.toContain(fileCipher.toString('base64'));
    }
    const rows = await h.db.query(
      'select url_token, expired, expired_on, payload_ciphertext, note_ciphertext, passphrase_hash from pushes where url_token = any($1)',
      [[text.url_token, file.url_token]],
    );
    for (const row of rows) {
      expect(row).toMatchObject({
        expired: true,
        payload_ciphertext: null,
        note_ciphertext: null,
        passphrase_hash: null,
      });
    }
    // The record stays (without secrets), and the owner still sees its name.
    const expired = await h.core.pushes.list('expired', 1, ctx(me.userId));
    expect(expired.items.find((p) => p.url_token === text.url_token)).toMatchObject({
      name: 'kept-name',
      note: '',
      expired: true,
      passphrase_protected: true,
    });
    expect((await h.core.pushes.retrieve(fresh.url_token, undefined, ctx())).payload).toBe('still-active');
  });

  it('is safe when several instances sweep at once', async () => {
    const t0 = new Date(Date.now() - 2 * DAY);
    const tokens = [];
    for (let i = 0; i < 20; i += 1)
      tokens.push(
        (await h.core.pushes.create({ payload: `s${i}`, expire_after_days: 1 }, ctx(null, { now: t0 }))).url_token,
      );
    const other = await h.second();
    const results = await Promise.all([h.core.sweep(), other.sweep(), h.core.sweep(), other.sweep()]);
    expect(results.reduce((n, r) => n + r.erasedPushes, 0)).toBeGreaterThanOrEqual(20);
    const rows = await h.db.query(
      'select count(*)::int as n from pushes where url_token = any($1) and expired and payload_ciphertext is null',
      [tokens],
    );
    expect(rows[0]!.n).toBe(20);
  });

  it('purges expired records older than purgeExpiredAfterDays when set, and never otherwise', async () => {
    const old = new Date(Date.now() - 40 * DAY);
    const push = await h.core.pushes.create({ payload: 'old', expire_after_days: 1 }, ctx(null, { now: old }));
    await h.core.sweep();
    expect(await h.db.query('select id from pushes where url_token = $1', [push.url_token])).toHaveLength(1);
    const purging = await h.withSettings({ purgeExpiredAfterDays: 30 });
    await purging.sweep();
    expect(await h.db.query('select id from pushes where url_token = $1', [push.url_token])).toEqual([]);
    expect((await rejection(h.core.pushes.retrieve(push.url_token, undefined, ctx()))).code).toBe('not_found');
  });

  it('runs on a timer when the core is started with sweeper: true', async () => {
    const push = await h.core.pushes.create(
      { payload: 'timer', expire_after_days: 1 },
      ctx(null, { now: new Date(Date.now() - 2 * DAY) }),
    );
    const core = await createCore(makeSettings({ databaseUrl: h.db.url, sweepIntervalSeconds: 1 }), { sweeper: true });
    try {
      await expect
        .poll(
          async () =>
            (await h.db.query('select payload_ciphertext from pushes where url_token = $1', [push.url_token]))[0]!
              .payload_ciphertext,
          { timeout: 5000 },
        )
        .toBeNull();
    } finally {
      await core.close();
    }
  });
});

describe('key rotation', () => {
  it('reads data written under the old key after rotating, and writes new data under the new key', async () => {
    const me = await h.user();
    const coreA = await h.withSettings({ masterKeys: [TEST_KEY_A] });
    const old = await coreA.pushes.create(
      {
        payload: 'under-A',
        name: 'name-A',
        note: 'note-A',
        files: [{ filename: 'fa', content: Buffer.from('bytes-A').toString('base64') }],
      },
      ctx(me.userId),
    );
    const rotated = await h.withSettings({ masterKeys: [TEST_KEY_B, TEST_KEY_A] });
    const fresh = await rotated.pushes.create({ payload: 'under-B' }, ctx(me.userId));

    const keyIds = await h.db.query(
      "select url_token, substr(decode(payload_ciphertext, 'base64'), 3, 1) as key_id from pushes where url_token = any($1)",
      [[old.url_token, fresh.url_token]],
    );
    const byToken = Object.fromEntries(keyIds.map((r) => [r.url_token, Buffer.from(r.key_id).toString()]));
    expect(byToken[old.url_token]).toBe('a');
    expect(byToken[fresh.url_token]).toBe('b');

    const listed = await rotated.pushes.list('active', 1, ctx(me.userId));
    expect(listed.items.find((p) => p.url_token === old.url_token)).toMatchObject({ name: 'name-A', note: 'note-A' });
    const readOld = await rotated.pushes.retrieve(old.url_token, undefined, ctx());
    expect(readOld.payload).toBe('under-A');
    expect(
      (
        await rotated.pushes.downloadFile(old.url_token, readOld.files[0]!.id, tokenOf(readOld.files[0]!.url))
      ).body.toString(),
    ).toBe('bytes-A');
    expect((await rotated.pushes.retrieve(fresh.url_token, undefined, ctx())).payload).toBe('under-B');

    // Without the old key, old data cannot be read, and the error says which key is missing (not the data).
    const onlyB = await h.withSettings({ masterKeys: [TEST_KEY_B] });
    const err = await onlyB.pushes.retrieve(old.url_token, undefined, ctx()).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/no key with id "a"/);
    expect(err?.message).not.toContain('under-A');
    // The failed read did not use up a view: the claim rolled back.
    const [row] = await h.db.query('select views_used from pushes where url_token = $1', [old.url_token]);
    expect(row!.views_used).toBe(1);
  });
});
