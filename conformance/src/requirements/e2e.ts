/**
 * End-to-end encrypted pushes (`client_encryption`), gated on `features.pushes.client_encryption` of the version
 * report. The suite seals real envelopes itself (../envelope.ts, from the API description, not from the SDK), so a
 * server that changes one byte of what it stores is caught twice: the bytes differ, and the envelope no longer opens.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx } from '../context.js';
import { MARKER, newKey, openBytes, openText, sealBytes, sealText } from '../envelope.js';
import { expect422 } from './pushes.js';

const SOURCE = 'spec: info.description, End-to-end encrypted pushes';

/** Creates an encrypted text push of `plaintext` (and `extra` fields); returns the record, the key and the envelope. */
async function sealedText(ctx: Ctx, plaintext: string, extra: Record<string, unknown> = {}, as = ctx.creator) {
  const key = newKey();
  const envelope = sealText(key, plaintext, 'payload:text');
  const push = await ctx.create({ kind: 'text', payload: envelope, client_encryption: MARKER, ...extra }, as);
  expectEqual(push.client_encryption, MARKER, 'client_encryption of the create answer');
  return { push, key, envelope };
}

/** The record of `urlToken` in an owner list (first page), or undefined. */
async function listed(ctx: Ctx, list: 'listActivePushes' | 'listExpiredPushes', urlToken: string): Promise<any> {
  const res = await ctx.call(list, { as: 'a' });
  expectStatus(res, 200);
  return (res.body as any[]).find((p) => p.url_token === urlToken);
}

export const endToEnd = define('E2E', [
  {
    id: 'E2E-001',
    title: 'The report describes end-to-end encryption consistently: required ⇒ default ⇒ enabled, a scheme when on',
    source: 'spec: ClientEncryptionFeature',
    needs: ['clientEncryptionReported'],
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('getVersion');
      expectStatus(res, 200);
      const f = res.body.features.pushes.client_encryption;
      expect(!f.required || f.default, 'client_encryption: required without default');
      expect(!f.default || f.enabled, 'client_encryption: default without enabled');
      if (f.enabled) {
        expect(
          Array.isArray(f.schemes) &&
            f.schemes.some((s: any) => s.scheme === MARKER.scheme && s.version === MARKER.version),
          `client_encryption.schemes ${JSON.stringify(f.schemes)} lacks aes-256-gcm v1`,
        );
      }
    },
  },
  {
    id: 'E2E-002',
    title: 'An encrypted text push comes back byte for byte: the same envelope, which still opens with its key',
    source: `${SOURCE} (stored and returned exactly as sent); spec: Push.client_encryption`,
    needs: ['clientEncryption', 'creator', 'viewer'],
    async run(ctx) {
      const plaintext = `e2e ${unique('text')} ünïcödé 🔑`;
      const { push, key, envelope } = await sealedText(ctx, plaintext, { expire_after_views: 3 });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expectEqual(res.body.client_encryption, MARKER, 'client_encryption of the retrieval');
      expect(res.body.payload === envelope, 'the retrieved payload is not the envelope that was sent');
      expectEqual(openText(key, res.body.payload, 'payload:text'), plaintext, 'the retrieved envelope, opened');
      expectEqual(res.body.kind, 'text', 'kind');
    },
  },
  {
    id: 'E2E-003',
    title: 'An encrypted file push keeps its envelopes: names, sizes and downloaded bytes as sent, in order',
    source: `${SOURCE} (names and bytes as sent; file i keeps position i); spec: PushRetrieval.files`,
    needs: ['clientEncryption', 'file', 'viewer'],
    async run(ctx) {
      const key = newKey();
      const plain = [Buffer.from(`-----BEGIN E2E-----\n\u00e9\u0000\u00ff ${unique()}`, 'latin1'), Buffer.alloc(0)];
      const names = ['id_ed25519 (prod) ✓', 'empty.txt'];
      const contents = plain.map((bytes, i) => sealBytes(key, bytes, `file-content:${i}`));
      const filenames = names.map((name, i) => sealText(key, name, `file-name:${i}`));
      const payload = sealText(key, 'the files', 'payload:file');
      const push = await ctx.create({
        kind: 'file',
        payload,
        client_encryption: MARKER,
        files: contents.map((c, i) => ({
          filename: filenames[i],
          content_type: 'application/octet-stream',
          content: c.toString('base64'),
        })),
      });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expectEqual(res.body.client_encryption, MARKER, 'client_encryption of the retrieval');
      expect(res.body.payload === payload, 'the payload is not the envelope that was sent');
      expectEqual(
        res.body.files.map((f: any) => f.filename),
        filenames,
        'file names (envelopes, in the order sent)',
      );
      expectEqual(
        res.body.files.map((f: any) => f.size),
        contents.map((c) => c.length),
        'file sizes (of the envelopes)',
      );
      for (const [i, file] of (res.body.files as any[]).entries()) {
        expectEqual(openText(key, file.filename, `file-name:${i}`), names[i], `file ${i + 1}'s name, opened`);
        const download = await ctx.download('downloadPushFile', file.url);
        expectEqual(download.status, 200, `download of file ${i + 1}`);
        expect(
          download.bytes.equals(contents[i]!),
          `file ${i + 1}: the downloaded bytes are not the envelope that was sent`,
        );
        expect(
          openBytes(key, download.bytes, `file-content:${i}`)?.equals(plain[i]!),
          `file ${i + 1}: the envelope does not open`,
        );
      }
    },
  },
  {
    id: 'E2E-004',
    title: 'Encrypted url and qr pushes skip the plaintext rules: an envelope is no URL, and may pass 1,024 characters',
    source: `${SOURCE} (the checks that need the plaintext are the client's); spec: PushInput (allOf)`,
    needs: ['clientEncryption', 'creator', 'viewer', 'url', 'qr'],
    async run(ctx) {
      const key = newKey();
      const url = sealText(key, 'https://example.org/reset?code=e2e', 'payload:url');
      const qr = sealText(key, '€'.repeat(1024), 'payload:qr');
      expect(qr.length > 1024, 'internal: the qr envelope should be longer than 1,024 characters');
      for (const [kind, payload] of [
        ['url', url],
        ['qr', qr],
      ] as const) {
        const push = await ctx.create({ kind, payload, client_encryption: MARKER });
        expectEqual(push.kind, kind, 'kind');
        const res = await ctx.retrieve(push.url_token);
        expectStatus(res, 200);
        expect(res.body.payload === payload, `the ${kind} envelope did not come back as sent`);
      }
    },
  },
  {
    id: 'E2E-005',
    title:
      'client_encryption is in every record of the push (create, retrieve, preview, lists, delete); null if ordinary',
    source:
      'spec: Push.client_encryption (every record where the feature is reported); spec: PreviewResponse.client_encryption',
    needs: ['clientEncryption', 'token', 'viewer'],
    async run(ctx) {
      const { push } = await sealedText(ctx, `marked ${unique()}`, {}, 'a');
      const preview = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(preview, 200);
      expectEqual(preview.body.client_encryption, MARKER, 'client_encryption of the preview');
      expectEqual(
        (await listed(ctx, 'listActivePushes', push.url_token))?.client_encryption,
        MARKER,
        'client_encryption in the active list',
      );
      const got = await ctx.retrieve(push.url_token);
      expectEqual(got.body.client_encryption, MARKER, 'client_encryption of the retrieval');
      const deleted = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(deleted, 200);
      expectEqual(deleted.body.client_encryption, MARKER, 'client_encryption of the delete answer');
      expectEqual(
        (await listed(ctx, 'listExpiredPushes', push.url_token))?.client_encryption,
        MARKER,
        'client_encryption in the expired list',
      );
      if (ctx.features.pushes.client_encryption?.required) return; // ordinary pushes are refused there (E2E-009)
      const plain = await ctx.create({ payload: `ordinary ${unique()}` }, 'a');
      expectEqual(plain.client_encryption, null, 'client_encryption of an ordinary push');
      const plainPreview = await ctx.call('previewPush', { params: { url_token: plain.url_token }, as: 'a' });
      expectEqual(plainPreview.body.client_encryption, null, "client_encryption of an ordinary push's preview");
      expectEqual(
        (await listed(ctx, 'listActivePushes', plain.url_token))?.client_encryption,
        null,
        'client_encryption of an ordinary push in the list',
      );
    },
  },
  {
    id: 'E2E-006',
    title: 'An encrypted push is counted and expired like any push: N views, then expired with the envelope erased',
    source: `${SOURCE} (views, days, deletion work as for any push); decisions: Retrieve, bullets 1 and 4`,
    needs: ['clientEncryption', 'creator', 'viewer'],
    async run(ctx) {
      const { push, envelope } = await sealedText(ctx, `two views ${unique()}`, { expire_after_views: 2 });
      const first = await ctx.retrieve(push.url_token);
      expectEqual(
        [first.body.views_remaining, first.body.payload === envelope],
        [1, true],
        'first view: views_remaining, envelope',
      );
      const last = await ctx.retrieve(push.url_token);
      expectEqual(
        [last.body.views_remaining, last.body.expired, last.body.payload === envelope],
        [0, false, true],
        'last view',
      );
      const after = await ctx.retrieve(push.url_token);
      expectStatus(after, 200);
      expectEqual(
        [after.body.expired, after.body.payload, after.body.files],
        [true, null, []],
        'after the last view: expired, payload, files',
      );
      expectEqual(after.body.client_encryption, MARKER, 'client_encryption of the expired record');

      const other = await sealedText(ctx, `deleted ${unique()}`);
      const deleted = await ctx.call('expirePush', { params: { url_token: other.push.url_token }, as: ctx.creator });
      expectStatus(deleted, 200);
      expectEqual([deleted.body.expired, deleted.body.deleted], [true, true], 'delete: expired, deleted');
      const gone = await ctx.retrieve(other.push.url_token);
      expectEqual([gone.body.expired, gone.body.payload], [true, null], 'after the delete: expired, payload');
    },
  },
  {
    id: 'E2E-007',
    title: 'A client_encryption scheme or version the instance does not accept answers 422 on client_encryption',
    source: 'spec: PushInput.client_encryption; spec: ClientEncryption (enum)',
    needs: ['clientEncryption', 'creator'],
    async run(ctx) {
      const payload = sealText(newKey(), 'x', 'payload:text');
      await expect422(ctx, { payload, client_encryption: { scheme: 'aes-256-gcm', version: 2 } }, 'client_encryption');
      await expect422(
        ctx,
        { payload, client_encryption: { scheme: 'xchacha20-poly1305', version: 1 } },
        'client_encryption',
      );
    },
  },
  {
    id: 'E2E-008',
    title:
      'A push marked encrypted whose payload, file name or bytes are no envelope answers 422 (plaintext is refused)',
    source: `${SOURCE} (the server checks the envelopes' form); spec: PushInput (allOf)`,
    needs: ['clientEncryption', 'creator'],
    async run(ctx) {
      await expect422(ctx, { payload: `plain words ${unique()}`, client_encryption: MARKER }, 'payload');
      const f = ctx.features.pushes.file_attachments;
      if (!f.enabled || (f.requires_authentication && !ctx.hasToken)) return;
      const key = newKey();
      const good = {
        filename: sealText(key, 'a.txt', 'file-name:0'),
        content: sealBytes(key, Buffer.from('a'), 'file-content:0').toString('base64'),
      };
      await expect422(
        ctx,
        { kind: 'file', client_encryption: MARKER, files: [{ ...good, filename: 'a.txt' }] },
        'files',
      );
      await expect422(
        ctx,
        {
          kind: 'file',
          client_encryption: MARKER,
          files: [{ ...good, content: Buffer.from('plain bytes').toString('base64') }],
        },
        'files',
      );
    },
  },
  {
    id: 'E2E-009',
    title: 'Where the instance requires end-to-end encryption, an ordinary push answers 422 on client_encryption',
    source: 'spec: ClientEncryptionFeature (required); spec: PushInput.client_encryption',
    needs: ['clientEncryptionRequired', 'creator'],
    async run(ctx) {
      await expect422(ctx, { payload: `ordinary ${unique()}` }, 'client_encryption');
    },
  },
  {
    id: 'E2E-010',
    title:
      'Where the instance reports end-to-end encryption off, a push marked encrypted answers 422 on client_encryption',
    source: 'spec: ClientEncryptionFeature (enabled); spec: PushInput.client_encryption',
    needs: ['clientEncryptionOff', 'creator'],
    async run(ctx) {
      await expect422(
        ctx,
        { payload: sealText(newKey(), 'x', 'payload:text'), client_encryption: MARKER },
        'client_encryption',
      );
    },
  },
  {
    id: 'E2E-011',
    title: 'The passphrase still gates an encrypted push: 401 without it or wrong, the envelope with it',
    source: `${SOURCE} (the passphrase stays a gate the server checks); decisions: Retrieve, bullet 2`,
    needs: ['clientEncryption', 'creator', 'viewer'],
    async run(ctx) {
      const passphrase = unique('gate');
      const { push, envelope } = await sealedText(ctx, `gated ${unique()}`, { passphrase });
      expectEqual(push.passphrase_protected, true, 'passphrase_protected');
      const without = await ctx.retrieve(push.url_token);
      expectStatus(without, 401);
      expectCode(without, 'passphrase_required');
      const wrong = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': `${passphrase}-wrong` } });
      expectStatus(wrong, 401);
      expectCode(wrong, 'passphrase_incorrect');
      const right = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': passphrase } });
      expectStatus(right, 200);
      expect(right.body.payload === envelope, 'the right passphrase did not return the envelope as sent');
    },
  },
  {
    id: 'E2E-012',
    title: 'v1 refuses an active encrypted push (409 end_to_end_encrypted): no envelope handed out, nothing counted',
    source:
      'spec: v1 getPushV1 (409: v1 records cannot mark an envelope); decisions: Retrieve, bullet 3 (a view counts when the payload is served)',
    needs: ['v1', 'clientEncryption', 'creator', 'viewer'],
    async run(ctx) {
      const { push, envelope } = await sealedText(ctx, `v1 ${unique()}`, { expire_after_views: 2 });
      for (const prefix of ['p', 'f']) {
        const res = await ctx.callV1('getPushV1', { params: { prefix, url_token: push.url_token }, as: ctx.viewer });
        expectStatus(res, 409);
        expectCode(res, 'end_to_end_encrypted');
        expect(!JSON.stringify(res.body).includes(envelope), `GET /${prefix}/{url_token}.json handed out the envelope`);
      }
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expectEqual(
        [res.body.views_remaining, res.body.payload === envelope],
        [1, true],
        'v2 retrieval after the refused v1 ones: views_remaining, the envelope',
      );
    },
  },
  {
    id: 'E2E-013',
    title:
      'Where encryption is required, a v1 create (it cannot encrypt) answers 422 on client_encryption, makes nothing',
    source: 'spec: ClientEncryptionFeature (required); spec: v1 createPasswordV1 (422)',
    needs: ['v1', 'clientEncryptionRequired', 'creator'],
    async run(ctx) {
      const payload = `ordinary ${unique()}`;
      const note = unique('v1-refused');
      const res = await ctx.callV1('createPasswordV1', { body: { password: { payload, note } }, as: ctx.creator });
      expectStatus(res, 422);
      expectCode(res, 'validation_failed');
      expect(
        Array.isArray(res.body?.errors?.client_encryption),
        `422 errors ${JSON.stringify(res.body?.errors)} do not name client_encryption`,
      );
      expect(!JSON.stringify(res.body).includes(payload), 'the 422 repeats the payload');
      if (!ctx.hasToken) return;
      const active = await ctx.call('listActivePushes', { as: 'a' });
      expectStatus(active, 200);
      expect(
        !(active.body as any[]).some((p) => p.note === note),
        'the refused v1 create made a push (it is in the active list)',
      );
    },
  },
]);
