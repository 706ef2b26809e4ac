import { describe, expect, it } from 'vitest';
import { ApiError } from '@secret-push/rules';
import { type PushInput } from '../../src/core.js';
import { BASE, ctx, harness } from './helpers.js';

const h = await harness();

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('create', () => {
  it('creates a text push with the instance defaults and returns the owner record', async () => {
    const me = await h.user();
    const now = new Date('2030-01-01T00:00:00.000Z');
    const push = await h.core.pushes.create(
      { payload: 's3cret', name: 'label', note: 'a note' },
      ctx(me.userId, { now }),
    );
    expect(push).toMatchObject({
      kind: 'text',
      expired: false,
      expired_on: null,
      deleted: false,
      created_at: '2030-01-01T00:00:00.000Z',
      updated_at: '2030-01-01T00:00:00.000Z',
      expires_at: '2030-01-08T00:00:00.000Z',
      expire_after_days: 7,
      expire_after_views: 5,
      days_remaining: 7,
      views_remaining: 5,
      deletable_by_viewer: true,
      retrieval_step: false,
      passphrase_protected: false,
      name: 'label',
      note: 'a note',
    });
    expect(push.url_token).toMatch(/^[a-z2-7]{24}$/);
    expect(push.json_url).toBe(`${BASE}/api/v2/pushes/${push.url_token}`);
    expect(push.html_url).toBe(`${BASE}/p/${push.url_token}`);
    expect(push).not.toHaveProperty('payload');
    expect(push).not.toHaveProperty('passphrase');
  });

  it('uses the configured public base URL over the request origin and /r with retrieval_step', async () => {
    const core = await h.withSettings({ publicBaseUrl: 'https://secrets.example.org' });
    const push = await core.pushes.create({ payload: 'x', retrieval_step: true }, ctx());
    expect(push.html_url).toBe(`https://secrets.example.org/p/${push.url_token}/r`);
    expect(push.json_url).toBe(`https://secrets.example.org/api/v2/pushes/${push.url_token}`);
  });

  it('rejects expire_after_days and expire_after_views outside the spec and instance bounds with per-field messages', async () => {
    const err = await rejection(
      h.core.pushes.create({ payload: 'x', expire_after_days: 91, expire_after_views: 0 }, ctx()),
    );
    expect(err.code).toBe('validation_failed');
    expect(err.details.fields).toEqual({
      expire_after_days: ['must be at most 90'],
      expire_after_views: ['must be at least 1'],
    });
    const narrow = await h.withSettings({ expireAfterDays: { default: 3, min: 2, max: 5 } });
    const err2 = await rejection(narrow.pushes.create({ payload: 'x', expire_after_days: 6 }, ctx()));
    expect(err2.details.fields).toEqual({ expire_after_days: ['must be an integer from 2 to 5'] });
    // Outside the spec's own bounds the schema's message alone, as the API answers it (no second, instance message).
    const err3 = await rejection(narrow.pushes.create({ payload: 'x', expire_after_days: 91 }, ctx()));
    expect(err3.details.fields).toEqual({ expire_after_days: ['must be at most 90'] });
    const ok = await narrow.pushes.create({ payload: 'x' }, ctx());
    expect(ok.expire_after_days).toBe(3);
  });

  it('requires a payload for text, url and qr pushes', async () => {
    for (const kind of ['text', 'url', 'qr'] as const) {
      const err = await rejection(h.core.pushes.create({ kind }, ctx()));
      expect(err.details.fields?.payload).toEqual(['is required']);
    }
  });

  it('accepts only absolute http(s) URLs for url pushes', async () => {
    const good = await h.core.pushes.create({ kind: 'url', payload: 'https://example.com/a?b=c' }, ctx());
    expect(good.kind).toBe('url');
    for (const bad of ['javascript:alert(1)', 'ftp://example.com', 'example.com', 'http://']) {
      const err = await rejection(h.core.pushes.create({ kind: 'url', payload: bad }, ctx()));
      expect(err.details.fields?.payload).toEqual(['must be a valid HTTP or HTTPS URL']);
    }
  });

  it('limits qr payloads to 1024 characters and text payloads to 1048576', async () => {
    await h.core.pushes.create({ kind: 'qr', payload: 'q'.repeat(1024) }, ctx());
    const qr = await rejection(h.core.pushes.create({ kind: 'qr', payload: 'q'.repeat(1025) }, ctx()));
    expect(qr.details.fields?.payload?.[0]).toMatch(/1024/);
    const text = await rejection(h.core.pushes.create({ payload: 't'.repeat(1_048_577) }, ctx()));
    expect(text.details.fields?.payload?.[0]).toMatch(/1048576/);
  });

  it('rejects an unknown kind and kinds the instance disables on the kind field', async () => {
    const unknown = await rejection(h.core.pushes.create({ kind: 'bogus' as never, payload: 'x' }, ctx()));
    expect(Object.keys(unknown.details.fields ?? {})).toEqual(['kind']);
    const core = await h.withSettings({ enableUrlPushes: false, enableQrPushes: false, enableFilePushes: false });
    const me = await h.user();
    const cases: [PushInput['kind'], PushInput][] = [
      ['url', { payload: 'https://a.example' }],
      ['qr', { payload: 'q' }],
      ['file', { files: [{ filename: 'a', content: 'YQ==' }] }],
    ];
    for (const [kind, extra] of cases) {
      const err = await rejection(core.pushes.create({ kind, ...extra }, ctx(me.userId)));
      expect(err.code).toBe('validation_failed');
      expect(err.details.fields?.kind?.[0]).toMatch(/disabled/);
    }
  });

  it('needs authentication for files or kind file while files require it, and allows them when it is off', async () => {
    const files = [{ filename: 'id_ed25519', content: Buffer.from('key').toString('base64') }];
    expect((await rejection(h.core.pushes.create({ files }, ctx()))).code).toBe('authentication_required');
    expect((await rejection(h.core.pushes.create({ kind: 'file' }, ctx()))).code).toBe('authentication_required');
    expect((await rejection(h.core.pushes.create({ payload: 'x', files: [] }, ctx()))).code).toBe(
      'authentication_required',
    );
    const open = await h.withSettings({ filesRequireAuth: false });
    const push = await open.pushes.create({ files }, ctx());
    expect(push.kind).toBe('file');
  });

  it('enforces the file count and size limits of the instance', async () => {
    const me = await h.user();
    const core = await h.withSettings({ fileMaxCount: 2, fileMaxBytes: 4 });
    const f = (content: string) => ({ filename: 'f.bin', content: Buffer.from(content).toString('base64') });
    const many = await rejection(core.pushes.create({ files: [f('a'), f('b'), f('c')] }, ctx(me.userId)));
    expect(many.details.fields?.files).toContain('at most 2 files per push');
    const big = await rejection(core.pushes.create({ files: [f('12345')] }, ctx(me.userId)));
    expect(big.details.fields?.files?.[0]).toMatch(/larger than the limit of 4 bytes/);
    const none = await rejection(core.pushes.create({ kind: 'file', files: [] }, ctx(me.userId)));
    expect(none.details.fields?.files).toEqual(['needs at least one file for a file push']);
    const ok = await core.pushes.create({ files: [f('1234'), f('')] }, ctx(me.userId));
    expect(ok.kind).toBe('file');
  });

  it('rejects files on a push that is not a file push', async () => {
    const me = await h.user();
    const err = await rejection(
      h.core.pushes.create({ kind: 'text', payload: 'x', files: [{ filename: 'a', content: 'YQ==' }] }, ctx(me.userId)),
    );
    expect(err.details.fields?.files).toEqual(['are only allowed on file pushes']);
  });

  it('refuses anonymous creation, retrieval, preview and expiry when anonymous access is off', async () => {
    const closed = await h.withSettings({ allowAnonymous: false });
    expect((await rejection(closed.pushes.create({ payload: 'x' }, ctx()))).code).toBe('authentication_required');
    const me = await h.user();
    const push = await closed.pushes.create({ payload: 'x' }, ctx(me.userId));
    expect(push.kind).toBe('text');
    for (const call of [
      () => closed.pushes.retrieve(push.url_token, undefined, ctx()),
      () => closed.pushes.preview(push.url_token, ctx()),
      () => closed.pushes.expire(push.url_token, ctx()),
    ]) {
      expect((await rejection(call())).code).toBe('authentication_required');
    }
    expect((await closed.pushes.preview(push.url_token, ctx(me.userId))).url).toBe(push.html_url);
  });

  it('takes deletable_by_viewer and retrieval_step defaults from the instance', async () => {
    const core = await h.withSettings({ deletableByViewerDefault: false, retrievalStepDefault: true });
    const push = await core.pushes.create({ payload: 'x' }, ctx());
    expect(push.deletable_by_viewer).toBe(false);
    expect(push.retrieval_step).toBe(true);
  });

  it('stores payload, name and note encrypted and the passphrase only as a scrypt hash', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create(
      { payload: 'plain-payload-xyz', name: 'plain-name-xyz', note: 'plain-note-xyz', passphrase: 'plain-pass-xyz' },
      ctx(me.userId),
    );
    expect(push.passphrase_protected).toBe(true);
    const [row] = await h.db.query('select * from pushes where url_token = $1', [push.url_token]);
    const dump = JSON.stringify(row);
    for (const secret of ['plain-payload-xyz', 'plain-name-xyz', 'plain-note-xyz', 'plain-pass-xyz']) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(row!.passphrase_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$/);
  });
});
