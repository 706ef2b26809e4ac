/**
 * Storage quotas and RateLimit fields (issue 19), on the real app and PostgreSQL, through the generated SDK and raw
 * HTTP: anonymous bytes per address per clock hour, a user's active bytes, both with the request limit off; 429
 * `storage_quota_exceeded` naming the quota with a Retry-After that holds (checked by moving the services' clock to
 * it), nothing stored; concurrent creates never go over; RateLimit-Policy / RateLimit on every answer a limit
 * governs; /metrics counting refusals by quota.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPush, expirePush, getPush, getVersion } from '@secret-push/sdk/generated';
import { startCompiledServer } from '../support/compiled-server.js';
import { createMigratedDatabase } from '../support/db.js';
import { bearer, expectData, expectError } from './support/sdk.js';
import { startRealApi, type RealApi } from './support/real.js';
import { multipart } from './support/multipart.js';
import { startWeb, Visitor } from '../web/support.js';

const KIB = 1024;
const HOUR = 3_600_000;

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** A text payload of `bytes` bytes of UTF-8 (ASCII). */
const text = (bytes: number) => 'x'.repeat(bytes);

/** The items of a RateLimit field, by policy name: `{ requests: { r: 4, t: 60 } }`. */
function items(field: string | null): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const item of (field ?? '').split(', ').filter(Boolean)) {
    const [name, ...params] = item.split(';');
    out[JSON.parse(name!) as string] = Object.fromEntries(params.map((p) => p.split('=') as [string, string]));
  }
  return out;
}

describe('the anonymous storage quota (bytes per address per clock hour)', () => {
  let api: RealApi;
  // An instant 30 minutes into an hour, so that "the next hour" is 1,800 s away.
  const halfPast = new Date(Math.floor(Date.now() / HOUR) * HOUR + 30 * 60_000);

  beforeAll(async () => {
    // Behind one proxy, so that tests can be several client addresses (X-Forwarded-For); the request limit is off.
    api = await startRealApi({ rateLimitPerMinute: 0, anonymousStoragePerHour: 10 * KIB, trustProxy: true });
  });
  afterEach(() => {
    api.setClock(null);
    expect(api.checker.violations).toEqual([]);
  });
  afterAll(async () => {
    await api?.stop();
  });

  const from = (address: string) => ({ 'x-forwarded-for': address });
  const pushCount = async () => Number((await api.db.query<{ n: string }>('select count(*) as n from pushes'))[0]!.n);
  const windowTotal = async () =>
    Number(
      (await api.db.query<{ bytes: string }>('select coalesce(sum(bytes), 0) as bytes from storage_windows'))[0]!.bytes,
    );

  it('counts every create of an address, refuses the one that would go over with 429 naming the quota, stores nothing, and takes it when the hour is over', async () => {
    api.setClock(halfPast);
    const me = from('203.0.113.7');
    const first = await api.raw('/api/v2/pushes', json({ push: { payload: text(4 * KIB) } }, me));
    expect(first.status).toBe(201);
    expect(items(first.headers.get('ratelimit-policy'))).toEqual({
      'anonymous-storage': { q: String(10 * KIB), qu: '"content-bytes"', w: '3600' },
    });
    expect(items(first.headers.get('ratelimit'))).toEqual({ 'anonymous-storage': { r: String(6 * KIB), t: '1800' } });
    const second = await api.raw('/api/v2/pushes', json({ push: { payload: text(4 * KIB) } }, me));
    expect(items(second.headers.get('ratelimit'))['anonymous-storage']).toEqual({ r: String(2 * KIB), t: '1800' });

    const before = await pushCount();
    const windowBefore = await windowTotal();
    const over = await api.raw('/api/v2/pushes', json({ push: { payload: text(4 * KIB) } }, me));
    expect([over.status, over.body.code]).toEqual([429, 'storage_quota_exceeded']);
    expect(over.body.error).toMatch(/anonymous pushes from one address may store at most 10 KiB per hour/);
    expect(over.body.error).not.toContain('xxxx');
    expect(over.headers.get('retry-after')).toBe('1800');
    expect(over.body.retry_after).toBe(1800);
    expect(items(over.headers.get('ratelimit'))['anonymous-storage']).toEqual({ r: String(2 * KIB), t: '1800' });
    expect(await pushCount()).toBe(before);
    // The refused create counted nothing: the window's row (what is stored, plus this process's unused lease,
    // address-leases.ts) is as it was, and within the quota.
    expect(await windowTotal()).toBe(windowBefore);
    expect(windowBefore).toBeGreaterThanOrEqual(8 * KIB);
    expect(windowBefore).toBeLessThanOrEqual(10 * KIB);

    // What still fits is taken; another address has a window of its own.
    expect((await api.raw('/api/v2/pushes', json({ push: { payload: text(2 * KIB) } }, me))).status).toBe(201);
    expect(
      (await api.raw('/api/v2/pushes', json({ push: { payload: text(4 * KIB) } }, from('198.51.100.9')))).status,
    ).toBe(201);
    // A second before Retry-After the quota still holds; at Retry-After the same push is stored.
    api.setClock(new Date(halfPast.getTime() + 1799_000));
    expect((await api.raw('/api/v2/pushes', json({ push: { payload: text(4 * KIB) } }, me))).status).toBe(429);
    api.setClock(new Date(halfPast.getTime() + 1800_000));
    const later = await api.raw('/api/v2/pushes', json({ push: { payload: text(4 * KIB) } }, me));
    expect(later.status).toBe(201);
    expect(items(later.headers.get('ratelimit'))['anonymous-storage']).toEqual({ r: String(6 * KIB), t: '3600' });
  });

  it('never lets concurrent creates of one address go over: exactly what fits is stored', async () => {
    const me = from('203.0.113.50');
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => api.raw('/api/v2/pushes', json({ push: { payload: text(KIB) } }, me))),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([
      ...Array<number>(10).fill(201),
      ...Array<number>(14).fill(429),
    ]);
    const refused = answers.filter((a) => a.status === 429);
    expect(new Set(refused.map((a) => a.body.code))).toEqual(new Set(['storage_quota_exceeded']));
  });

  it('never lets two instances go over together, and an instance that stops gives its unused lease back', async () => {
    // Each instance counts an address's creates from its own lease on the shared window row (address-leases.ts).
    const database = await createMigratedDatabase('sp_quota');
    const settings = { rateLimitPerMinute: 0, anonymousStoragePerHour: 10 * KIB, trustProxy: true };
    const a = await startRealApi(settings, { db: database });
    const b = await startRealApi(settings, { db: database });
    try {
      const me = from('203.0.113.60');
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          (i % 2 ? a : b).raw('/api/v2/pushes', json({ push: { payload: text(KIB) } }, me)),
        ),
      );
      const stored = answers.filter((answer) => answer.status === 201).length;
      expect(answers.every((answer) => answer.status === 201 || answer.body.code === 'storage_quota_exceeded')).toBe(
        true,
      );
      // Never over; at most the other instance's unused lease (a 64th of the quota) short of exact.
      expect(stored).toBeLessThanOrEqual(10);
      expect(stored).toBeGreaterThanOrEqual(9);
      const [row] = await database.query<{ bytes: string }>('select bytes from storage_windows');
      expect(Number(row!.bytes)).toBeLessThanOrEqual(10 * KIB);
      expect(Number(row!.bytes)).toBeGreaterThanOrEqual(stored * KIB);
    } finally {
      await a.stop();
      await b.stop();
    }
    // Both stopped: their leases are back, and the row holds exactly what was stored.
    const [row] = await database.query<{ bytes: string }>('select bytes from storage_windows');
    const [sum] = await database.query<{ bytes: string }>('select sum(stored_bytes) as bytes from pushes');
    expect(Number(row!.bytes)).toBe(Number(sum!.bytes));
    await database.drop();
  });

  it('counts the v1 creates with v2 (the same address, the same window)', async () => {
    const me = from('203.0.113.77');
    expect((await api.raw('/p.json', json({ password: { payload: text(6 * KIB) } }, me))).status).toBe(201);
    const over = await api.raw('/api/v2/pushes', json({ push: { payload: text(6 * KIB) } }, me));
    expect([over.status, over.body.code]).toEqual([429, 'storage_quota_exceeded']);
    const v1 = await api.raw('/p.json', json({ password: { payload: text(6 * KIB) } }, me));
    expect([v1.status, v1.body.code]).toEqual([429, 'storage_quota_exceeded']);
    expect(v1.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('answers 413 for a push larger than the whole quota (no Retry-After could hold)', async () => {
    const big = await api.raw('/api/v2/pushes', json({ push: { payload: text(11 * KIB) } }, from('203.0.113.99')));
    expect([big.status, big.body.code]).toEqual([413, 'payload_too_large']);
    expect(big.body.error).toMatch(/more than the storage quota of anonymous pushes/);
  });

  it('leaves the quota out of creates with a token, which count against the user quota instead', async () => {
    const me = await api.user(`q-${randomUUID()}@example.org`);
    const made = await api.raw(
      '/api/v2/pushes',
      json({ push: { payload: text(4 * KIB) } }, { authorization: `Bearer ${me.token}`, ...from('203.0.113.7') }),
    );
    expect(made.status).toBe(201);
    expect(Object.keys(items(made.headers.get('ratelimit')))).toEqual(['user-storage']);
  });
});

describe('the user storage quota (bytes of active pushes)', () => {
  let api: RealApi;

  beforeAll(async () => {
    api = await startRealApi({ rateLimitPerMinute: 0, userStorageBytes: 20 * KIB });
  });
  afterEach(() => {
    api.setClock(null);
    expect(api.checker.violations).toEqual([]);
  });
  afterAll(async () => {
    await api?.stop();
  });

  const create = (token: string, push: Record<string, unknown>) =>
    api.raw('/api/v2/pushes', json({ push }, { authorization: `Bearer ${token}` }));

  it('refuses the create that would go over with 429 naming the quota, with a Retry-After at which enough expires by time', async () => {
    const me = await api.user(`quota-${randomUUID()}@example.org`);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    const soon = await create(me.token, { payload: text(6 * KIB), expire_after_days: 1, expire_after_views: 100 });
    expect(items(soon.headers.get('ratelimit-policy'))).toEqual({
      'user-storage': { q: String(20 * KIB), qu: '"content-bytes"' },
    });
    expect(items(soon.headers.get('ratelimit'))).toEqual({ 'user-storage': { r: String(14 * KIB) } });
    await create(me.token, { payload: text(6 * KIB), expire_after_days: 3 });
    const third = await create(me.token, { payload: text(6 * KIB), expire_after_days: 2 });
    expect(items(third.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(2 * KIB) });

    const over = await create(me.token, { payload: text(6 * KIB), expire_after_days: 7 });
    expect([over.status, over.body.code]).toEqual([429, 'storage_quota_exceeded']);
    expect(over.body.error).toMatch(
      /your active pushes may hold at most 20 KiB; they hold 18 KiB and this push needs 6 KiB/,
    );
    // 4 KiB must free: the push that expires first (in one day) frees 6.
    expect(over.headers.get('retry-after')).toBe('86400');
    expect(items(over.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(2 * KIB), t: '86400' });
    const [count] = await api.db.query<{ n: string }>('select count(*) as n from pushes where user_id = $1', [
      me.userId,
    ]);
    expect(Number(count!.n)).toBe(3);

    // Retry-After holds: at that instant the first push has expired by time (the sweeper has not run) and it fits.
    api.setClock(new Date(now.getTime() + 86_399_000));
    expect((await create(me.token, { payload: text(6 * KIB) })).status).toBe(429);
    api.setClock(new Date(now.getTime() + 86_400_000));
    expect((await create(me.token, { payload: text(6 * KIB) })).status).toBe(201);
  });

  it('looks for the pushes past their time only when a create does not fit without them: a create that fits reads none', async () => {
    const me = await api.user(`quota-${randomUUID()}@example.org`);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    expect((await create(me.token, { payload: text(8 * KIB), expire_after_days: 1 })).status).toBe(201);
    // A day later the push is past its time; the sweeper has not flagged it, so the counter still holds its 8 KiB.
    api.setClock(new Date(now.getTime() + 86_400_000));
    const fits = await create(me.token, { payload: text(4 * KIB) });
    expect(fits.status).toBe(201);
    // It fits with the lapsed push counted, so nothing subtracted it: what is left errs low (20 - 8 - 4), never high.
    expect(items(fits.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(8 * KIB) });
    // This one fits only without the lapsed push (12 + 12 > 20): the reading subtracts it, exactly (20 - 4 - 12).
    const edge = await create(me.token, { payload: text(12 * KIB) });
    expect(edge.status).toBe(201);
    expect(items(edge.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(4 * KIB) });
  });

  it('gives space back at once when the user expires a push, and counts file bytes (multipart too)', async () => {
    const me = await api.user(`quota-${randomUUID()}@example.org`);
    const files = [{ filename: 'a.bin', content: Buffer.alloc(8 * KIB, 1).toString('base64') }];
    const a = expectData(
      await createPush({ client: api.client, body: { push: { kind: 'file', files } }, auth: bearer(me.token) }),
      201,
    );
    const form = multipart([
      { name: 'push[kind]', value: 'file' },
      { name: 'push[files][]', filename: 'b.bin', bytes: Buffer.alloc(8 * KIB, 2) },
    ]);
    const b = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': form.type, authorization: `Bearer ${me.token}` },
      body: form.body,
    });
    expect(b.status).toBe(201);
    expectError(
      await createPush({ client: api.client, body: { push: { kind: 'file', files } }, auth: bearer(me.token) }),
      429,
      'storage_quota_exceeded',
    );
    expectData(await expirePush({ client: api.client, path: { url_token: a.url_token }, auth: bearer(me.token) }), 200);
    expectData(
      await createPush({ client: api.client, body: { push: { kind: 'file', files } }, auth: bearer(me.token) }),
      201,
    );
  });

  it('never lets concurrent creates of one user go over (counted one after the other, on every connection)', async () => {
    const me = await api.user(`quota-${randomUUID()}@example.org`);
    const answers = await Promise.all(Array.from({ length: 16 }, () => create(me.token, { payload: text(3 * KIB) })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(6);
    expect(answers.filter((a) => a.status === 429 && a.body.code === 'storage_quota_exceeded')).toHaveLength(10);
    const [sum] = await api.db.query<{ used: string }>(
      'select sum(stored_bytes) as used from pushes where user_id = $1',
      [me.userId],
    );
    expect(Number(sum!.used)).toBe(18 * KIB);
  });

  it('never lets concurrent creates of one user go over once the quota is granted to its shares (each connection its own)', async () => {
    const me = await api.user(`quota-${randomUUID()}@example.org`);
    // The first create grants the free bytes to the user's 16 shares (about 1.2 KiB each): 1 KiB creates then take
    // from their connection's share, racing each other and the ones that found their share empty (counted under all).
    expect((await create(me.token, { payload: text(100) })).status).toBe(201);
    const [granted] = await api.db.query<{ n: string }>(
      'select count(*) as n from user_storage_shares where user_id = $1 and quota = $2',
      [me.userId, 20 * KIB],
    );
    expect(Number(granted!.n)).toBe(16);
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(Array.from({ length: 32 }, () => create(me.token, { payload: text(KIB) })));
      const stored = answers.filter((a) => a.status === 201).length;
      expect(answers.filter((a) => a.status === 429 && a.body.code === 'storage_quota_exceeded')).toHaveLength(
        32 - stored,
      );
      const [sum] = await api.db.query<{ used: string; counted: string }>(
        `select (select sum(stored_bytes) from pushes where user_id = $1 and not expired) as used,
           (select bytes from user_storage where user_id = $1) as counted`,
        [me.userId],
      );
      // Exactly what fits: 19 of 1 KiB beside the 100 bytes, never one more; the count equal to the sum.
      expect({ round, used: Number(sum!.used), counted: Number(sum!.counted) }).toEqual({
        round,
        used: 100 + 19 * KIB,
        counted: 100 + 19 * KIB,
      });
      if (round === 0) expect(stored).toBe(19);
      else expect(stored).toBe(0);
    }
  });

  it('keeps the bytes it counts per user equal to the sum over the unexpired pushes, through every kind of change', async () => {
    const me = await api.user(`quota-${randomUUID()}@example.org`);
    const auth = bearer(me.token);
    const check = async (step: string) => {
      const [row] = await api.db.query<{ counted: string | null; summed: string }>(
        `select (select bytes from user_storage where user_id = $1) as counted,
           (select coalesce(sum(stored_bytes), 0) from pushes where user_id = $1 and not expired) as summed`,
        [me.userId],
      );
      expect({ step, counted: Number(row!.counted ?? 0) }).toEqual({ step, counted: Number(row!.summed) });
    };
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    const once = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: text(KIB), expire_after_views: 1 } } }),
      201,
    );
    const twice = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: text(2 * KIB), expire_after_views: 2 } } }),
      201,
    );
    const daily = expectData(
      await createPush({ client: api.client, auth, body: { push: { payload: text(3 * KIB), expire_after_days: 1 } } }),
      201,
    );
    const files = [{ filename: 'c.bin', content: Buffer.alloc(4 * KIB, 3).toString('base64') }];
    const file = expectData(
      await createPush({ client: api.client, auth, body: { push: { kind: 'file', files } } }),
      201,
    );
    await check('created');
    expectData(await getPush({ client: api.client, path: { url_token: once.url_token } }), 200);
    await check('the last view');
    expectData(await getPush({ client: api.client, path: { url_token: twice.url_token } }), 200);
    await check('a view that is not the last');
    expectData(await expirePush({ client: api.client, path: { url_token: file.url_token }, auth }), 200);
    await check('expired by request');
    // Past its time, not yet flagged: still counted, and subtracted by the quota's own reading.
    api.setClock(new Date(now.getTime() + 86_400_000));
    const usedAt = async (deadline: Date) =>
      (
        await api.db.query<{ used: string | null }>('select user_storage_used($1, $2, $3) as used', [
          me.userId,
          new Date(now.getTime() + 86_400_000),
          deadline,
        ])
      )[0]!.used;
    expect(Number(await usedAt(new Date(Date.now() + 60_000)))).toBe(Buffer.byteLength(text(2 * KIB)));
    // Its lock granted after the request's deadline: null, and the create writes nothing.
    expect(await usedAt(new Date(Date.now() - 1))).toBeNull();
    await getPush({ client: api.client, path: { url_token: daily.url_token } });
    await check('expired by time, noticed by a view');
  });

  it('reports both quotas in the version report', async () => {
    const report = expectData(await getVersion({ client: api.client }), 200);
    expect(report.features.storage_quotas).toEqual({
      anonymous_bytes_per_hour: 100 * 1024 * KIB,
      user_active_bytes: 20 * KIB,
    });
  });
});

describe('RateLimit fields and the request limit', () => {
  let api: RealApi;

  beforeAll(async () => {
    api = await startRealApi({ rateLimitPerMinute: 4, anonymousStoragePerHour: 0, userStorageBytes: 0 });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('states the policy and what is left on every answer, and a 429 whose Retry-After is the window reset', async () => {
    const version = await api.raw('/api/v2/version');
    // Both storage quotas are off here: the report says so.
    expect(version.body.features.storage_quotas).toEqual({ anonymous_bytes_per_hour: null, user_active_bytes: null });
    expect(version.headers.get('ratelimit-policy')).toBe('"requests";q=4;w=60');
    const first = items(version.headers.get('ratelimit')).requests!;
    expect(first.r).toBe('3');
    const t = Number(first.t);
    expect(t).toBeGreaterThanOrEqual(59);
    expect(t).toBeLessThanOrEqual(60);
    // A create with no storage quota: only the request limit governs it; an error answer carries the fields too.
    const made = await api.raw('/api/v2/pushes', json({ push: { payload: 'x' } }));
    expect([made.status, items(made.headers.get('ratelimit')).requests!.r]).toEqual([201, '2']);
    const missing = await api.raw('/api/v2/pushes/no-such-token');
    expect([missing.status, items(missing.headers.get('ratelimit')).requests!.r]).toEqual([404, '1']);
    await api.raw('/api/v2/version');
    const refused = await api.raw('/api/v2/version');
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    expect(items(refused.headers.get('ratelimit')).requests!.r).toBe('0');
    expect(refused.headers.get('retry-after')).toBe(items(refused.headers.get('ratelimit')).requests!.t);
    expect(api.checker.violations).toEqual([]);
  });
});

describe('the create page', () => {
  it('shows the form again with the message that names the quota, and a Retry-After; nothing is stored', async () => {
    const web = await startWeb({ rateLimitPerMinute: 0, anonymousStoragePerHour: KIB });
    try {
      const visitor = new Visitor(web.baseUrl);
      const send = async (payload: string) => {
        const { csrf } = await visitor.page('/');
        return visitor.post('/', {
          _csrf: csrf,
          kind: 'text',
          payload,
          expire_after_days: '1',
          expire_after_views: '1',
        });
      };
      expect((await send(text(600))).status).toBe(201);
      const refused = await send(`${text(590)}-second-secret`);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const html = await refused.text();
      expect(html).toContain(
        'Storage quota exceeded: anonymous pushes from one address may store at most 1 KiB per hour',
      );
      expect(html).toMatch(/<form/);
      const [count] = await web.db.query<{ n: string }>('select count(*) as n from pushes');
      expect(Number(count!.n)).toBe(1);
    } finally {
      await web.stop();
    }
  });
});

describe('/metrics of the compiled server', () => {
  it('counts storage quota refusals by quota', async () => {
    const server = await startCompiledServer({
      PWPUSH_WORKERS: '1',
      PWPUSH_METRICS: 'true',
      PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
      PWPUSH_ANONYMOUS_STORAGE_PER_HOUR: '2KiB',
    });
    try {
      const post = (bytes: number) =>
        fetch(`${server.baseUrl}/api/v2/pushes`, json({ push: { payload: text(bytes) } }));
      expect((await post(2 * KIB)).status).toBe(201);
      expect((await post(KIB)).status).toBe(429);
      expect((await post(KIB)).status).toBe(429);
      const scraped = await (await fetch(`${server.baseUrl}/metrics`)).text();
      expect(scraped).toMatch(/^secret_push_storage_quota_refusals_total\{quota="anonymous"[^}]*\} 2$/m);
      expect(scraped).not.toContain('xxxx');
      expect(server.output()).not.toContain('xxxx');
    } finally {
      await server.stop();
    }
  }, 120_000);
});
