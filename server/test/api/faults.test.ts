/**
 * Faults lose nothing (issue 10), on the real app and PostgreSQL: idempotent creates, writes that change nothing after
 * their request's deadline, a passphrase gate that counts only failures, and no 5xx from bytes PostgreSQL cannot store.
 * The database frozen or killed under load is in server/test/faults/.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_SKEW_WARN_MS, databaseClockSkewMs } from '../../src/db/deadlines.js';
import { ctx } from '../domain/helpers.js';
import { startRealApi, type RealApi } from './support/real.js';

let api: RealApi;
let owner: { token: string; userId: string; email: string };

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('faults-owner@example.org');
});
afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});
afterAll(async () => {
  await api?.stop();
});

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

async function pushCount(userId: string): Promise<number> {
  const [row] = await api.db.query<{ n: number }>('select count(*)::int as n from pushes where user_id = $1', [userId]);
  return row!.n;
}

describe('Idempotency-Key on create', () => {
  it('answers a repeated key and body with the same push, marked as a replay, and creates nothing more', async () => {
    const me = await api.user(`idem-${randomUUID()}@example.org`);
    const key = randomUUID();
    const body = { push: { payload: 'once only', expire_after_views: 3, note: 'n' } };
    const first = await api.raw(
      '/api/v2/pushes',
      json(body, { authorization: `Bearer ${me.token}`, 'idempotency-key': key }),
    );
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.raw(
      '/api/v2/pushes',
      json(body, { authorization: `Bearer ${me.token}`, 'idempotency-key': key }),
    );
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.url_token).toBe(first.body.url_token);
    expect(again.body.note).toBe('n');
    expect(await pushCount(me.userId)).toBe(1);
    // The key table holds digests and the push's id, never the body or a secret.
    const [row] = await api.db.query(
      'select * from idempotency_keys where push_id = (select id from pushes where url_token = $1)',
      [first.body.url_token],
    );
    expect(JSON.stringify(row)).not.toContain('once only');
    expect(JSON.stringify(row)).not.toContain(key);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, and 409 while the first is in flight', async () => {
    const me = await api.user(`idem-${randomUUID()}@example.org`);
    const key = randomUUID();
    const headers = { authorization: `Bearer ${me.token}`, 'idempotency-key': key };
    expect((await api.raw('/api/v2/pushes', json({ push: { payload: 'a' } }, headers))).status).toBe(201);
    const other = await api.raw('/api/v2/pushes', json({ push: { payload: 'b' } }, headers));
    expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
    // A first request still being processed: its key row is in flight.
    const inFlight = randomUUID();
    const sent = await api.raw(
      '/api/v2/pushes',
      json({ push: { payload: 'c' } }, { ...headers, 'idempotency-key': inFlight }),
    );
    await api.db.query(
      "update idempotency_keys set state = 'in_flight', push_id = null where push_id = (select id from pushes where url_token = $1)",
      [sent.body.url_token],
    );
    const busy = await api.raw(
      '/api/v2/pushes',
      json({ push: { payload: 'c' } }, { ...headers, 'idempotency-key': inFlight }),
    );
    expect([busy.status, busy.body.code]).toEqual([409, 'idempotency_key_in_use']);
    // Retry-After holds: the first request's writes change nothing after its deadline, so once the key's claim is that
    // old (10 s), the key is free (or done). Before it, the key is still held.
    const retryAfter = Number(busy.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(9);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(busy.body.retry_after).toBe(retryAfter);
    const age = async (seconds: number) =>
      api.db.query(
        `update idempotency_keys set created_at = created_at - make_interval(secs => $1) where state = 'in_flight'`,
        [seconds],
      );
    await age(retryAfter - 2);
    const early = await api.raw(
      '/api/v2/pushes',
      json({ push: { payload: 'c' } }, { ...headers, 'idempotency-key': inFlight }),
    );
    expect([early.status, early.body.code]).toEqual([409, 'idempotency_key_in_use']);
    expect(Number(early.headers.get('retry-after'))).toBeLessThanOrEqual(3);
    await age(2);
    const taken = await api.raw(
      '/api/v2/pushes',
      json({ push: { payload: 'c' } }, { ...headers, 'idempotency-key': inFlight }),
    );
    expect([taken.status, taken.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(await pushCount(me.userId)).toBe(3);
  });

  it('makes one push from concurrent creates with one key: the others replay it or answer 409', async () => {
    const me = await api.user(`idem-${randomUUID()}@example.org`);
    const rounds = 5;
    for (let round = 0; round < rounds; round++) {
      const headers = { authorization: `Bearer ${me.token}`, 'idempotency-key': randomUUID() };
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => api.raw('/api/v2/pushes', json({ push: { payload: `r${round}` } }, headers))),
      );
      const created = answers.filter((a) => a.status === 201);
      expect(answers.filter((a) => a.status !== 201).map((a) => [a.status, a.body.code])).toEqual(
        Array.from({ length: answers.length - created.length }, () => [409, 'idempotency_key_in_use']),
      );
      expect(new Set(created.map((a) => a.body.url_token)).size).toBe(1);
      expect(created.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    }
    expect(await pushCount(me.userId)).toBe(rounds);
  });

  it('leaves the key free after a create that failed, scopes keys by caller, and forgets them after 24 hours', async () => {
    const a = await api.user(`idem-a-${randomUUID()}@example.org`);
    const b = await api.user(`idem-b-${randomUUID()}@example.org`);
    const key = randomUUID();
    const refused = await api.raw(
      '/api/v2/pushes',
      json(
        { push: { payload: 'x', expire_after_views: 0 } },
        { authorization: `Bearer ${a.token}`, 'idempotency-key': key },
      ),
    );
    expect(refused.status).toBe(422);
    const fixed = await api.raw(
      '/api/v2/pushes',
      json(
        { push: { payload: 'x', expire_after_views: 1 } },
        { authorization: `Bearer ${a.token}`, 'idempotency-key': key },
      ),
    );
    expect([fixed.status, fixed.headers.get('idempotent-replayed')]).toEqual([201, null]);
    // Another caller with the same key gets a push of its own.
    const theirs = await api.raw(
      '/api/v2/pushes',
      json(
        { push: { payload: 'x', expire_after_views: 1 } },
        { authorization: `Bearer ${b.token}`, 'idempotency-key': key },
      ),
    );
    expect(theirs.status).toBe(201);
    expect(theirs.body.url_token).not.toBe(fixed.body.url_token);
    // After its lifetime the key is a new key.
    await api.db.query(
      "update idempotency_keys set expires_at = now() - interval '1 second' where push_id = (select id from pushes where url_token = $1)",
      [fixed.body.url_token],
    );
    const later = await api.raw(
      '/api/v2/pushes',
      json(
        { push: { payload: 'x', expire_after_views: 1 } },
        { authorization: `Bearer ${a.token}`, 'idempotency-key': key },
      ),
    );
    expect([later.status, later.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(later.body.url_token).not.toBe(fixed.body.url_token);
  });

  it('refuses a key that is not 1 to 255 visible ASCII characters with 400', async () => {
    const bad = await api.raw('/api/v2/pushes', json({ push: { payload: 'x' } }, { 'idempotency-key': 'a b' }));
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_parameter']);
  });

  it('reports the keys in the version report', async () => {
    const report = await api.raw('/api/v2/version');
    expect(report.body.features.pushes.idempotency_keys).toEqual({ enabled: true, lifetime_hours: 24 });
  });
});

describe('writes change nothing after the request deadline', () => {
  const late = () => ctx(null, { deadline: new Date(Date.now() - 1) });

  it('a view claimed past the deadline is not claimed and not audited (503)', async () => {
    const push = await api.core.pushes.create({ payload: 'kept', expire_after_views: 1 }, ctx());
    const error = await api.core.pushes.retrieve(push.url_token, undefined, late()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503 });
    const [row] = await api.db.query('select views_used, expired from pushes where url_token = $1', [push.url_token]);
    expect(row).toEqual({ views_used: 0, expired: false });
    const kinds = await api.db.query(
      'select kind from audit_entries where push_id = (select id from pushes where url_token = $1)',
      [push.url_token],
    );
    expect(kinds.map((k) => k.kind)).toEqual(['creation']);
    expect((await api.core.pushes.retrieve(push.url_token, undefined, ctx())).payload).toBe('kept');
  });

  it('a create or an expiry past the deadline leaves no row and no audit entry', async () => {
    const me = await api.user(`late-${randomUUID()}@example.org`);
    const before = await pushCount(me.userId);
    const error = await api.core.pushes
      .create({ payload: 'never' }, { ...late(), actor: { ...late().actor, userId: me.userId } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_unavailable' });
    expect(await pushCount(me.userId)).toBe(before);
    const push = await api.core.pushes.create({ payload: 'stays', deletable_by_viewer: true }, ctx());
    expect(await api.core.pushes.expire(push.url_token, late()).catch((e: unknown) => e)).toMatchObject({
      code: 'service_unavailable',
    });
    expect((await api.core.pushes.retrieve(push.url_token, undefined, ctx())).payload).toBe('stays');
  });
});

describe("the database's clock", () => {
  it("is measured against this host's: a skewed one is seen (the server warns above 1 s)", async () => {
    const local = await databaseClockSkewMs(async () =>
      Number((await api.db.query('select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms'))[0]!.ms),
    );
    expect(Math.abs(local)).toBeLessThan(CLOCK_SKEW_WARN_MS);
    const behind = await databaseClockSkewMs(async () => Date.now() - 3_000);
    expect(behind).toBeGreaterThan(-3_100);
    expect(behind).toBeLessThan(-2_900);
  });
});

describe('the passphrase gate counts only failures', () => {
  it('never refuses concurrent correct attempts (8 and 50 at once)', async () => {
    for (const n of [8, 50]) {
      const push = await api.core.pushes.create(
        { payload: `p${n}`, passphrase: 'right one', expire_after_views: 100 },
        ctx(),
      );
      const answers = await Promise.all(
        Array.from({ length: n }, () =>
          api.raw(`/api/v2/pushes/${push.url_token}`, { headers: { 'x-passphrase': 'right one' } }),
        ),
      );
      expect(
        answers.map((a) => a.status),
        `${n} at once`,
      ).toEqual(Array(n).fill(200));
      expect(new Set(answers.map((a) => a.body.payload))).toEqual(new Set([`p${n}`]));
    }
  });

  it('still refuses after five failures within a minute, the right passphrase too, on every instance', async () => {
    const push = await api.core.pushes.create(
      { payload: 'guarded', passphrase: 'right one', expire_after_views: 100 },
      ctx(),
    );
    const wrong = await Promise.all(
      Array.from({ length: 12 }, () =>
        api.raw(`/api/v2/pushes/${push.url_token}`, { headers: { 'x-passphrase': 'nope' } }),
      ),
    );
    // Parallel guesses cannot all be checked before the first failures are recorded: at most five are.
    expect(wrong.filter((a) => a.status === 401)).toHaveLength(5);
    expect(wrong.filter((a) => a.status === 429)).toHaveLength(7);
    const right = await api.raw(`/api/v2/pushes/${push.url_token}`, { headers: { 'x-passphrase': 'right one' } });
    expect([right.status, right.body.code]).toEqual([429, 'too_many_attempts']);
    const other = await api.core.pushes.retrieve(push.url_token, 'right one', ctx()).catch((e: unknown) => e);
    expect(other).toMatchObject({ code: 'too_many_attempts' });
    const failures = await api.db.query(
      "select count(*)::int as n from audit_entries where kind = 'failed_passphrase' and push_id = (select id from pushes where url_token = $1)",
      [push.url_token],
    );
    expect(failures[0]!.n).toBe(5);
  });
});

describe('bytes PostgreSQL cannot store', () => {
  it('answers a NUL in a url_token with 404 on every push operation, never a 5xx', async () => {
    const auth = { authorization: `Bearer ${owner.token}` };
    for (const [method, path] of [
      ['GET', '/api/v2/pushes/a%00b'],
      ['GET', '/api/v2/pushes/a%00b/preview'],
      ['DELETE', '/api/v2/pushes/a%00b'],
      ['GET', '/api/v2/pushes/a%00b/audit'],
      ['GET', '/api/v2/pushes/a%00b/files/f1?token=x'],
    ] as const) {
      const res = await api.raw(path, { method, headers: auth });
      expect([res.status, res.body.code], `${method} ${path}`).toEqual([404, 'not_found']);
    }
    const page = await fetch(`${api.baseUrl}/p/a%00b`);
    expect(page.status).toBe(404);
  });

  it('answers a NUL in a sign-in email as a wrong sign-in, and keeps NULs in secrets', async () => {
    const made = await api.core.pushes.create(
      { payload: 'nul\u0000inside', name: 'a\u0000b', note: 'c\u0000d' },
      ctx(owner.userId),
    );
    expect((await api.core.pushes.retrieve(made.url_token, undefined, ctx())).payload).toBe('nul\u0000inside');
    const error = await api.core
      .web!.accounts.signIn('x\u0000@example.org', 'whatever password', '10.1.2.3')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'authentication_required' });
  });
});
