import { describe, expect, it } from 'vitest';
import { ApiError } from '@secret-push/rules';
import { BASE, ctx, harness } from './helpers.js';

const h = await harness();
const DAY = 24 * 60 * 60 * 1000;

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

async function auditKinds(urlToken: string, ownerId: string): Promise<string[]> {
  const page = await h.core.pushes.audit(urlToken, 1, ctx(ownerId));
  return page.items.map((e) => e.kind);
}

describe('retrieve', () => {
  it('answers not_found for an unknown token', async () => {
    expect((await rejection(h.core.pushes.retrieve('nosuchtoken1234', undefined, ctx()))).code).toBe('not_found');
  });

  it('returns the payload and counts a view, logging view', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'hello', expire_after_views: 3 }, ctx(me.userId));
    const got = await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    expect(got.payload).toBe('hello');
    expect(got.files).toEqual([]);
    expect(got.views_remaining).toBe(2);
    expect(got.expired).toBe(false);
    expect(got).not.toHaveProperty('note');
    expect(await auditKinds(push.url_token, me.userId)).toEqual(['creation', 'view']);
  });

  it('serves the last view with views_remaining 0 and expired false, then expires and erases the push', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create(
      { payload: 'last', note: 'n', passphrase: 'pw', expire_after_views: 1 },
      ctx(me.userId),
    );
    const last = await h.core.pushes.retrieve(push.url_token, 'pw', ctx());
    expect(last).toMatchObject({ payload: 'last', views_remaining: 0, expired: false });
    const [row] = await h.db.query('select * from pushes where url_token = $1', [push.url_token]);
    expect(row).toMatchObject({
      expired: true,
      payload_ciphertext: null,
      note_ciphertext: null,
      passphrase_hash: null,
      views_used: 1,
      deleted: false,
    });
    const after = await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    expect(after).toMatchObject({ expired: true, payload: null, files: [], views_remaining: 0, deleted: false });
    expect(after.expired_on).not.toBeNull();
    expect(await auditKinds(push.url_token, me.userId)).toEqual(['creation', 'view', 'failed_view']);
  });

  it('does not count reads of an expired push (failed_view), logging one per client address and minute', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'x', expire_after_views: 2 }, ctx(me.userId));
    await h.core.pushes.expire(push.url_token, ctx(me.userId));
    const t0 = Date.now();
    for (let i = 0; i < 3; i += 1)
      await h.core.pushes.retrieve(push.url_token, undefined, ctx(null, { now: new Date(t0 + i * 1000) }));
    await h.core.pushes.retrieve(
      push.url_token,
      undefined,
      ctx(null, { ip: '198.51.100.23', now: new Date(t0 + 3000) }),
    );
    const got = await h.core.pushes.retrieve(push.url_token, undefined, ctx(null, { now: new Date(t0 + 61_000) }));
    expect(got.views_remaining).toBe(2);
    // Three reads from one address within a minute log once; another address, and the first a minute later, log again.
    expect(await auditKinds(push.url_token, me.userId)).toEqual([
      'creation',
      'expire',
      'failed_view',
      'failed_view',
      'failed_view',
    ]);
  });

  it('decides time expiry at read time and never serves a push past its time', async () => {
    const me = await h.user();
    const created = new Date('2031-05-01T12:00:00.000Z');
    const push = await h.core.pushes.create(
      { payload: 'timed', note: 'tn', expire_after_days: 1 },
      ctx(me.userId, { now: created }),
    );
    const justBefore = await h.core.pushes.retrieve(
      push.url_token,
      undefined,
      ctx(null, { now: new Date(created.getTime() + DAY - 1) }),
    );
    expect(justBefore).toMatchObject({ payload: 'timed', days_remaining: 1 });
    const atEnd = await h.core.pushes.retrieve(
      push.url_token,
      undefined,
      ctx(null, { now: new Date(created.getTime() + DAY) }),
    );
    expect(atEnd).toMatchObject({
      expired: true,
      payload: null,
      days_remaining: 0,
      expired_on: '2031-05-02T12:00:00.000Z',
    });
    const [row] = await h.db.query(
      'select payload_ciphertext, note_ciphertext, expired from pushes where url_token = $1',
      [push.url_token],
    );
    expect(row).toEqual({ payload_ciphertext: null, note_ciphertext: null, expired: true });
  });

  it('computes days_remaining from whole days elapsed', async () => {
    const created = new Date('2032-01-01T00:00:00.000Z');
    const push = await h.core.pushes.create(
      { payload: 'd', expire_after_days: 3, expire_after_views: 10 },
      ctx(null, { now: created }),
    );
    const at = (ms: number) =>
      h.core.pushes.retrieve(push.url_token, undefined, ctx(null, { now: new Date(created.getTime() + ms) }));
    expect((await at(DAY - 1)).days_remaining).toBe(3);
    expect((await at(DAY)).days_remaining).toBe(2);
    expect((await at(2 * DAY + 5)).days_remaining).toBe(1);
  });

  it('lets the owner read without using a view and logs owner_view', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'mine', expire_after_views: 1 }, ctx(me.userId));
    const own = await h.core.pushes.retrieve(push.url_token, undefined, ctx(me.userId));
    expect(own).toMatchObject({ payload: 'mine', views_remaining: 1, expired: false });
    const other = await h.user();
    const viewed = await h.core.pushes.retrieve(push.url_token, undefined, ctx(other.userId));
    expect(viewed).toMatchObject({ payload: 'mine', views_remaining: 0 });
    expect(await auditKinds(push.url_token, me.userId)).toEqual(['creation', 'owner_view', 'view']);
  });

  it('records ip, user agent and referrer cut to 255 characters', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'x' }, ctx(me.userId, { userAgent: '', referrer: '' }));
    await h.core.pushes.retrieve(
      push.url_token,
      undefined,
      ctx(null, { ip: '198.51.100.1', userAgent: 'u'.repeat(300), referrer: 'https://r.example/' + 'r'.repeat(300) }),
    );
    const { items } = await h.core.pushes.audit(push.url_token, 1, ctx(me.userId));
    expect(items[0]).toMatchObject({ kind: 'creation', user_agent: '', referrer: '' });
    expect(items[1]!.ip).toBe('198.51.100.1');
    expect(items[1]!.user_agent).toHaveLength(255);
    expect(items[1]!.referrer).toHaveLength(255);
    expect(items[1]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('passphrase', () => {
  it('answers passphrase_required without one and passphrase_incorrect for a wrong one, logging failed_passphrase', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'guarded', passphrase: 'open sesame' }, ctx(me.userId));
    expect((await rejection(h.core.pushes.retrieve(push.url_token, undefined, ctx()))).code).toBe(
      'passphrase_required',
    );
    expect((await rejection(h.core.pushes.retrieve(push.url_token, 'wrong', ctx()))).code).toBe('passphrase_incorrect');
    const ok = await h.core.pushes.retrieve(push.url_token, 'open sesame', ctx());
    expect(ok.payload).toBe('guarded');
    expect(ok.views_remaining).toBe(4);
    expect(await auditKinds(push.url_token, me.userId)).toEqual([
      'creation',
      'failed_passphrase',
      'failed_passphrase',
      'view',
    ]);
  });

  it('never puts the passphrase or payload into error messages', async () => {
    const push = await h.core.pushes.create({ payload: 'payload-secret-1', passphrase: 'pass-secret-1' }, ctx());
    const err = await rejection(h.core.pushes.retrieve(push.url_token, 'guess-secret-1', ctx()));
    expect(JSON.stringify({ m: err.message, d: err.details })).not.toMatch(/secret-1/);
  });

  it('answers too_many_attempts after the limit within a minute, across two instances, before comparing', async () => {
    const other = await h.second();
    const push = await h.core.pushes.create({ payload: 'p', passphrase: 'right' }, ctx());
    const t0 = new Date(Date.now() + 1000);
    const at = (s: number) => ctx(null, { now: new Date(t0.getTime() + s * 1000) });
    const cores = [h.core, other];
    for (let i = 0; i < 5; i += 1) {
      const err = await rejection(cores[i % 2]!.pushes.retrieve(push.url_token, `wrong${i}`, at(i)));
      expect(err.code).toBe('passphrase_incorrect');
    }
    // The sixth attempt is refused before the passphrase is even looked at: the right one is refused too.
    const limited = await rejection(other.pushes.retrieve(push.url_token, 'right', at(10)));
    expect(limited.code).toBe('too_many_attempts');
    // The first failure (at t0) leaves the window at t0 + 60 s.
    expect(limited.details.retryAfterSeconds).toBe(50);
    expect((await rejection(h.core.pushes.retrieve(push.url_token, 'right', at(59)))).code).toBe('too_many_attempts');
    const later = await h.core.pushes.retrieve(push.url_token, 'right', at(61));
    expect(later.payload).toBe('p');
  });

  it('holds the limit under concurrent wrong attempts', async () => {
    const other = await h.second();
    const push = await h.core.pushes.create({ payload: 'p', passphrase: 'right' }, ctx());
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? other : h.core).pushes.retrieve(push.url_token, `wrong${i}`, ctx()),
      ),
    );
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as ApiError).code : 'ok'));
    expect(codes.filter((c) => c === 'passphrase_incorrect').length).toBeLessThanOrEqual(5);
    expect(codes.filter((c) => c === 'too_many_attempts').length).toBeGreaterThanOrEqual(7);
  });
});

describe('exactly once', () => {
  it('delivers a one-view push to exactly one of 50 concurrent retrievals', async () => {
    const push = await h.core.pushes.create({ payload: 'once', expire_after_views: 1 }, ctx());
    const results = await Promise.all(
      Array.from({ length: 50 }, () => h.core.pushes.retrieve(push.url_token, undefined, ctx())),
    );
    expect(results.filter((r) => r.payload === 'once')).toHaveLength(1);
    expect(results.filter((r) => r.payload === null && r.expired)).toHaveLength(49);
  });

  it('delivers a one-view push exactly once across two instances sharing the database', async () => {
    const other = await h.second();
    const push = await h.core.pushes.create({ payload: 'once-twice', expire_after_views: 1 }, ctx());
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? other : h.core).pushes.retrieve(push.url_token, undefined, ctx())),
    );
    expect(results.filter((r) => r.payload === 'once-twice')).toHaveLength(1);
    const [row] = await h.db.query('select views_used, expired from pushes where url_token = $1', [push.url_token]);
    expect(row).toEqual({ views_used: 1, expired: true });
  });

  it('delivers a three-view push exactly three times under contention', async () => {
    const push = await h.core.pushes.create({ payload: 'thrice', expire_after_views: 3 }, ctx());
    const results = await Promise.all(
      Array.from({ length: 30 }, () => h.core.pushes.retrieve(push.url_token, undefined, ctx())),
    );
    expect(results.filter((r) => r.payload === 'thrice')).toHaveLength(3);
    expect(results.filter((r) => r.payload === 'thrice' && r.views_remaining === 0 && !r.expired)).toHaveLength(1);
  });
});

describe('preview', () => {
  it('returns the html_url without an audit entry, also for expired pushes', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'x', retrieval_step: true }, ctx(me.userId));
    expect(await h.core.pushes.preview(push.url_token, ctx())).toEqual({
      url: `${BASE}/p/${push.url_token}/r`,
      client_encryption: null,
    });
    await h.core.pushes.expire(push.url_token, ctx(me.userId));
    expect(await h.core.pushes.preview(push.url_token, ctx())).toEqual({ url: push.html_url, client_encryption: null });
    expect(await auditKinds(push.url_token, me.userId)).toEqual(['creation', 'expire']);
    expect((await rejection(h.core.pushes.preview('unknowntoken123', ctx()))).code).toBe('not_found');
  });
});
