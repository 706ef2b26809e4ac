import { describe, expect, it } from 'vitest';
import { ApiError } from '@secret-push/rules';
import { ctx, harness } from './helpers.js';

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

describe('expire (DELETE)', () => {
  it('lets the owner expire a push: expired and deleted, secrets and files erased, audit expire', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create(
      {
        files: [{ filename: 'a.txt', content: Buffer.from('file-bytes').toString('base64') }],
        payload: 'p',
        note: 'n',
        passphrase: 'pw',
        deletable_by_viewer: false,
      },
      ctx(me.userId),
    );
    const done = await h.core.pushes.expire(push.url_token, ctx(me.userId));
    expect(done).toMatchObject({ expired: true, deleted: true });
    expect(done.expired_on).not.toBeNull();
    expect(done).not.toHaveProperty('payload');
    expect(done).not.toHaveProperty('note');
    const [row] = await h.db.query(
      'select payload_ciphertext, note_ciphertext, passphrase_hash from pushes where url_token = $1',
      [push.url_token],
    );
    expect(row).toEqual({ payload_ciphertext: null, note_ciphertext: null, passphrase_hash: null });
    const files = await h.db.query(
      'select f.id from push_files f join pushes p on p.id = f.push_id where p.url_token = $1',
      [push.url_token],
    );
    expect(files).toEqual([]);
    const log = await h.core.pushes.audit(push.url_token, 1, ctx(me.userId));
    expect(log.items.map((e) => e.kind)).toEqual(['creation', 'expire']);
  });

  it('lets anyone expire a push that is deletable by viewers, without a passphrase', async () => {
    const push = await h.core.pushes.create({ payload: 'p', passphrase: 'pw' }, ctx());
    const done = await h.core.pushes.expire(push.url_token, ctx());
    expect(done).toMatchObject({ expired: true, deleted: true });
  });

  it('answers authentication_required to anonymous callers and forbidden to other users when not deletable by viewers', async () => {
    const me = await h.user();
    const other = await h.user();
    const push = await h.core.pushes.create({ payload: 'p', deletable_by_viewer: false }, ctx(me.userId));
    expect((await rejection(h.core.pushes.expire(push.url_token, ctx()))).code).toBe('authentication_required');
    expect((await rejection(h.core.pushes.expire(push.url_token, ctx(other.userId)))).code).toBe('forbidden');
    expect((await rejection(h.core.pushes.expire('unknowntoken123', ctx(me.userId)))).code).toBe('not_found');
    const still = await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    expect(still.payload).toBe('p');
  });

  it('leaves an already expired push unchanged and writes no new audit entry', async () => {
    const me = await h.user();
    const push = await h.core.pushes.create({ payload: 'p', expire_after_views: 1 }, ctx(me.userId));
    await h.core.pushes.retrieve(push.url_token, undefined, ctx());
    const first = await h.core.pushes.expire(push.url_token, ctx(me.userId));
    expect(first).toMatchObject({ expired: true, deleted: false });
    const again = await h.core.pushes.expire(push.url_token, ctx(me.userId));
    expect(again).toEqual(first);
    const log = await h.core.pushes.audit(push.url_token, 1, ctx(me.userId));
    expect(log.items.map((e) => e.kind)).toEqual(['creation', 'view']);
  });
});

describe('audit', () => {
  it('is for the owner only: anonymous → authentication_required, another user → forbidden', async () => {
    const me = await h.user();
    const other = await h.user();
    const push = await h.core.pushes.create({ payload: 'p' }, ctx(me.userId));
    expect((await rejection(h.core.pushes.audit(push.url_token, 1, ctx()))).code).toBe('authentication_required');
    expect((await rejection(h.core.pushes.audit(push.url_token, 1, ctx(other.userId)))).code).toBe('forbidden');
    expect((await rejection(h.core.pushes.audit('unknowntoken123', 1, ctx(me.userId)))).code).toBe('not_found');
  });

  it('lists entries oldest first, 50 per page, with the total', async () => {
    const me = await h.user();
    const start = new Date('2033-01-01T00:00:00.000Z');
    const push = await h.core.pushes.create(
      { payload: 'p', expire_after_views: 100, expire_after_days: 90 },
      ctx(me.userId, { now: start }),
    );
    for (let i = 1; i <= 59; i += 1) {
      await h.core.pushes.retrieve(
        push.url_token,
        undefined,
        ctx(null, { now: new Date(start.getTime() + i * 1000), ip: `10.0.0.${i}` }),
      );
    }
    const p1 = await h.core.pushes.audit(push.url_token, 1, ctx(me.userId));
    const p2 = await h.core.pushes.audit(push.url_token, 2, ctx(me.userId));
    const p3 = await h.core.pushes.audit(push.url_token, 3, ctx(me.userId));
    expect(p1).toMatchObject({ total: 60, page: 1, perPage: 50 });
    expect(p1.items).toHaveLength(50);
    expect(p1.items[0]).toMatchObject({ kind: 'creation', created_at: '2033-01-01T00:00:00.000Z' });
    expect(p1.items[1]).toMatchObject({ kind: 'view', ip: '10.0.0.1', created_at: '2033-01-01T00:00:01.000Z' });
    expect(p2.items).toHaveLength(10);
    expect(p2.items[9]).toMatchObject({ ip: '10.0.0.59' });
    expect(p3.items).toEqual([]);
    const times = [...p1.items, ...p2.items].map((e) => e.created_at);
    expect([...times].sort()).toEqual(times);
  });
});

describe('lists', () => {
  it("lists the owner's pushes by real state, newest first, with name and note", async () => {
    const me = await h.user();
    const other = await h.user();
    const t = new Date('2034-03-01T00:00:00.000Z');
    const at = (ms: number) => ctx(me.userId, { now: new Date(t.getTime() + ms) });
    const a = await h.core.pushes.create({ payload: 'a', name: 'A', note: 'note A', expire_after_days: 1 }, at(0));
    const b = await h.core.pushes.create({ payload: 'b', name: 'B', note: 'note B', expire_after_days: 5 }, at(1000));
    const c = await h.core.pushes.create({ payload: 'c', name: 'C', note: 'note C', expire_after_days: 5 }, at(2000));
    await h.core.pushes.create({ payload: 'not mine' }, ctx(other.userId));
    await h.core.pushes.expire(c.url_token, at(3000));

    // Two days after A (1 s short of two days for B), A is past its time although nothing touched it: it is in the expired list, with its note erased.
    const later = at(2 * DAY);
    const active = await h.core.pushes.list('active', 1, later);
    expect(active.items.map((p) => p.url_token)).toEqual([b.url_token]);
    expect(active.items[0]).toMatchObject({ name: 'B', note: 'note B', expired: false, days_remaining: 4 });
    expect(active.total).toBe(1);
    const expired = await h.core.pushes.list('expired', 1, later);
    expect(expired.items.map((p) => p.url_token)).toEqual([c.url_token, a.url_token]);
    expect(expired.items[1]).toMatchObject({
      name: 'A',
      note: '',
      expired: true,
      days_remaining: 0,
      expired_on: '2034-03-02T00:00:00.000Z',
    });
    expect(expired.items[0]).toMatchObject({ name: 'C', note: '', deleted: true });
    expect(expired.total).toBe(2);
    for (const p of [...active.items, ...expired.items]) {
      expect(p).not.toHaveProperty('payload');
    }
  });

  it('pages by 50 and needs authentication', async () => {
    const me = await h.user();
    for (let i = 0; i < 53; i += 1)
      await h.core.pushes.create(
        { payload: `p${i}` },
        ctx(me.userId, { now: new Date(Date.UTC(2035, 0, 1, 0, 0, i)) }),
      );
    const at = ctx(me.userId, { now: new Date(Date.UTC(2035, 0, 2)) });
    const p1 = await h.core.pushes.list('active', 1, at);
    const p2 = await h.core.pushes.list('active', 2, at);
    expect(p1.items).toHaveLength(50);
    expect(p2.items).toHaveLength(3);
    expect(p1.total).toBe(53);
    expect(p1.items[0]!.created_at).toBe('2035-01-01T00:00:52.000Z');
    expect((await h.core.pushes.list('active', 3, at)).items).toEqual([]);
    expect((await rejection(h.core.pushes.list('active', 1, ctx()))).code).toBe('authentication_required');
    expect((await rejection(h.core.pushes.list('expired', 0, at))).code).toBe('validation_failed');
  });
});
