/**
 * Requests and the storage quota (issue 45), on the real app and PostgreSQL over real HTTP, every answer checked
 * against the contract: a request's attachments count against the requester's `PWPUSH_USER_STORAGE` as a push's
 * bytes do (413 larger than the whole quota, 429 `storage_quota_exceeded` over it, nothing stored, shared with
 * the requester's pushes); the space comes back, and the ask and its files are erased, when the request closes
 * (revoked, expired by time or by the sweeper, answered: the answer's push takes its place in the same transaction);
 * the open requests of a user are limited (`PWPUSH_USER_OPEN_REQUESTS`, 429 `too_many_open_requests`), also under
 * concurrent creates; a responder's answer, files too, counts against the requester's quota, and its refusal tells the
 * responder (API and page) nothing of the requester's usage. With the files in an object store (a real S3-protocol
 * server on loopback), a closed request's objects are deleted as it closes and a refused create leaves none.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from './support/real.js';
import { multipart } from './support/multipart.js';
import { startWeb, Visitor, type WebApp } from '../web/support.js';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { S3_BUCKET, startS3Server, type S3Server } from '../support/s3.js';

const KIB = 1024;
const DAY = 86_400_000;

/** The items of a RateLimit field, by policy name: `{ requests: { r: 4, t: 60 } }`. */
function items(field: string | null): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const item of (field ?? '').split(', ').filter(Boolean)) {
    const [name, ...params] = item.split(';');
    out[JSON.parse(name!) as string] = Object.fromEntries(params.map((p) => p.split('=') as [string, string]));
  }
  return out;
}

const file = (name: string, bytes: number) => ({
  filename: name,
  content: Buffer.alloc(bytes, name.charCodeAt(0)).toString('base64'),
});

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('a request’s attachments count against the requester’s storage quota', () => {
  let api: RealApi;

  beforeAll(async () => {
    api = await startRealApi({ rateLimitPerMinute: 0, userStorageBytes: 64 * KIB });
  });
  afterEach(() => {
    api.setClock(null);
    expect(api.checker.violations).toEqual([]);
  });
  afterAll(async () => {
    await api?.stop();
  });

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const ask = (token: string, request: Record<string, unknown>) =>
    api.raw('/api/v2/requests', json({ request }, auth(token)));
  const push = (token: string, payload: string) =>
    api.raw('/api/v2/pushes', json({ push: { payload, expire_after_days: 7 } }, auth(token)));
  const stored = async (userId: string) => {
    const [row] = await api.db.query<{ n: string; bytes: string | null }>(
      `select count(distinct r.id) as n, sum(f.size) as bytes
       from requests r left join request_files f on f.request_id = r.id where r.user_id = $1`,
      [userId],
    );
    return { requests: Number(row!.n), fileBytes: Number(row!.bytes ?? 0) };
  };
  /** What the user may still store, as a push create of one byte reports it (then expired again). */
  const remaining = async (token: string) => {
    const made = await push(token, 'x');
    expect(made.status).toBe(201);
    expect(
      (await api.raw(`/api/v2/pushes/${made.body.url_token}`, { method: 'DELETE', headers: auth(token) })).status,
    ).toBe(200);
    return Number(items(made.headers.get('ratelimit'))['user-storage']!.r) + 1;
  };

  it('refuses what would go over (413 larger than the quota, 429 over it), stores nothing, and shares the quota with pushes', async () => {
    const me = await api.user(`asker-${randomUUID()}@example.org`);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    // The finding: three requests of 5 MiB each were stored under a 64 KiB quota. One is now larger than the quota.
    const huge = await ask(me.token, {
      request: 'fill these in',
      files: Array.from({ length: 5 }, (_, i) => file(`big${i}.bin`, 1024 * KIB)),
    });
    expect([huge.status, huge.body.code]).toEqual([413, 'payload_too_large']);
    expect(huge.body.error).toMatch(/more than your storage quota \(64 KiB/);
    expect(await stored(me.userId)).toEqual({ requests: 0, fileBytes: 0 });

    const first = await ask(me.token, {
      request: 'form A',
      expire_after_days: 1,
      files: [file('a1.txt', 20 * KIB), file('a2.txt', 20 * KIB)],
    });
    expect(first.status).toBe(201);
    expect(items(first.headers.get('ratelimit-policy'))['user-storage']).toEqual({
      q: String(64 * KIB),
      qu: '"content-bytes"',
    });
    expect(items(first.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(64 * KIB - 40 * KIB) });
    const second = await ask(me.token, { request: 'form B', expire_after_days: 2, files: [file('b.txt', 20 * KIB)] });
    expect(second.status).toBe(201);
    expect(items(second.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(4 * KIB) });

    const over = await ask(me.token, { request: 'form C', files: [file('c.txt', 20 * KIB)] });
    expect([over.status, over.body.code]).toEqual([429, 'storage_quota_exceeded']);
    expect(over.body.error).toMatch(
      /your active pushes and open requests may hold at most 64 KiB; they hold 60 KiB and this request needs 20 KiB/,
    );
    // 16 KiB must free: the request that expires first (in one day) frees 40.
    expect(over.headers.get('retry-after')).toBe('86400');
    expect(items(over.headers.get('ratelimit'))['user-storage']).toEqual({ r: String(4 * KIB), t: '86400' });
    expect(await stored(me.userId)).toEqual({ requests: 2, fileBytes: 60 * KIB });

    // Pushes and requests share it: a push that would fit an empty quota does not fit beside the requests.
    const pushOver = await push(me.token, 'p'.repeat(8 * KIB));
    expect([pushOver.status, pushOver.body.code]).toEqual([429, 'storage_quota_exceeded']);
    expect(pushOver.body.error).toMatch(/your open requests' attachments count too/);
    // Retry-After holds: at that instant the first request is past its time (not swept yet) and the third fits.
    api.setClock(new Date(now.getTime() + DAY - 1000));
    expect((await ask(me.token, { request: 'form C', files: [file('c.txt', 20 * KIB)] })).status).toBe(429);
    api.setClock(new Date(now.getTime() + DAY));
    expect((await ask(me.token, { request: 'form C', files: [file('c.txt', 20 * KIB)] })).status).toBe(201);
  });

  it('gives the space back, erasing the ask and its files, when a request is revoked, expires or is answered', async () => {
    const me = await api.user(`closer-${randomUUID()}@example.org`);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    const revoked = await ask(me.token, { request: 'revoke me', files: [file('r.txt', 40 * KIB)] });
    expect(revoked.status).toBe(201);
    expect(await remaining(me.token)).toBe(64 * KIB - 40 * KIB);
    const gone = await api.raw(`/api/v2/requests/${revoked.body.url_token}`, {
      method: 'DELETE',
      headers: auth(me.token),
    });
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ state: 'revoked', request: '', files: [] });
    expect(await remaining(me.token)).toBe(64 * KIB);
    const [erased] = await api.db.query<{ ask: string | null; files: string }>(
      `select ask_ciphertext as ask, (select count(*) from request_files f where f.request_id = r.id) as files
       from requests r where url_token = $1`,
      [revoked.body.url_token],
    );
    expect(erased).toEqual({ ask: null, files: '0' });

    // Expiry by time: a request past its time no longer counts, before and after the sweeper settles it.
    const lapsing = await ask(me.token, {
      request: 'quick',
      expire_after_duration: 0,
      files: [file('q.txt', 40 * KIB)],
    });
    expect(lapsing.status).toBe(201);
    expect((await ask(me.token, { request: 'later', files: [file('l.txt', 40 * KIB)] })).status).toBe(429);
    api.setClock(new Date(now.getTime() + 15 * 60_000));
    const later = await ask(me.token, { request: 'later', files: [file('l.txt', 40 * KIB)] });
    expect(later.status).toBe(201);
    await api.core.sweep(new Date(now.getTime() + 15 * 60_000));
    const swept = await api.raw(`/api/v2/requests/${lapsing.body.url_token}`, { headers: auth(me.token) });
    expect(swept.body).toMatchObject({ state: 'expired', request: '', files: [] });
    expect(await remaining(me.token)).toBe(64 * KIB - 40 * KIB);

    // An answer takes its request's place: 40 KiB asked, 30 KiB answered, both could not be held at once.
    const answered = await api.raw(
      `/api/v2/requests/${later.body.url_token}/response`,
      json({ push: { payload: 'a'.repeat(30 * KIB) } }),
    );
    expect(answered.status).toBe(201);
    const mine = await api.raw(`/api/v2/requests/${later.body.url_token}`, { headers: auth(me.token) });
    expect(mine.body).toMatchObject({ state: 'fulfilled', request: '', files: [] });
    expect(await remaining(me.token)).toBe(64 * KIB - 30 * KIB);
    expect(await stored(me.userId)).toMatchObject({ fileBytes: 0 });
  });

  it('counts a file answer against the requester’s quota and tells the responder nothing of the requester’s usage', async () => {
    const me = await api.user(`files-${randomUUID()}@example.org`);
    expect((await push(me.token, 'f'.repeat(40 * KIB))).status).toBe(201);
    const request = await ask(me.token, { request: 'send the files' });
    const token = request.body.url_token as string;
    const pushes = async () =>
      Number(
        (await api.db.query<{ n: string }>('select count(*) as n from pushes where user_id = $1', [me.userId]))[0]!.n,
      );
    const before = await pushes();
    const answer = (files: { name: string; bytes: number }[]) => {
      const body = multipart([
        { name: 'push[payload]', value: 'here' },
        ...files.map((f) => ({ name: 'push[files][]', filename: f.name, bytes: Buffer.alloc(f.bytes, 7) })),
      ]);
      return api.raw(`/api/v2/requests/${token}/response`, {
        method: 'POST',
        headers: { 'content-type': body.type },
        body: body.body,
      });
    };

    const over = await answer([
      { name: 'one.bin', bytes: 15 * KIB },
      { name: 'two.bin', bytes: 15 * KIB },
    ]);
    expect([over.status, over.body.code]).toEqual([429, 'storage_quota_exceeded']);
    expect(over.body.error).toMatch(/requester/);
    // Nothing of the requester's usage: neither what they hold nor what is left, in the text or the RateLimit fields.
    expect(over.body.error).not.toMatch(/hold|40 KiB|24 KiB|remain|left/);
    expect(over.headers.get('ratelimit') ?? '').not.toContain('user-storage');
    expect(over.headers.get('ratelimit-policy') ?? '').not.toContain('user-storage');
    expect(await pushes()).toBe(before);
    expect((await api.raw(`/api/v2/requests/${token}`, { headers: auth(me.token) })).body.state).toBe('pending');

    const huge = await answer([{ name: 'huge.bin', bytes: 65 * KIB }]);
    expect([huge.status, huge.body.code]).toEqual([413, 'payload_too_large']);
    expect(huge.body.error).toMatch(/more than the requester's storage quota/);

    const fits = await answer([{ name: 'small.bin', bytes: 10 * KIB }]);
    expect(fits.status).toBe(201);
    expect(await pushes()).toBe(before + 1);
    // The answer's files are counted: 40 KiB + 4 bytes of payload + 10 KiB.
    expect(await remaining(me.token)).toBe(64 * KIB - 40 * KIB - 10 * KIB - 4);
  });
});

describe('the open requests of a user are limited (PWPUSH_USER_OPEN_REQUESTS)', () => {
  let api: RealApi;

  beforeAll(async () => {
    api = await startRealApi({ rateLimitPerMinute: 0, userOpenRequests: 3 });
  });
  afterEach(() => {
    api.setClock(null);
    expect(api.checker.violations).toEqual([]);
  });
  afterAll(async () => {
    await api?.stop();
  });

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const ask = (token: string, request: Record<string, unknown> = { request: 'one more' }) =>
    api.raw('/api/v2/requests', json({ request }, auth(token)));
  const count = async (userId: string) =>
    Number(
      (await api.db.query<{ n: string }>('select count(*) as n from requests where user_id = $1', [userId]))[0]!.n,
    );

  it('refuses the request past the limit with 429 too_many_open_requests, storing nothing, until one closes', async () => {
    const me = await api.user(`many-${randomUUID()}@example.org`);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    const made = [];
    for (const [i, days] of [3, 1, 2].entries()) {
      const created = await ask(me.token, { request: `ask ${i}`, expire_after_days: days });
      expect(created.status).toBe(201);
      expect(items(created.headers.get('ratelimit-policy'))['open-requests']).toEqual({ q: '3' });
      expect(items(created.headers.get('ratelimit'))['open-requests']).toEqual({ r: String(2 - i) });
      made.push(created.body.url_token as string);
    }
    const over = await ask(me.token);
    expect([over.status, over.body.code]).toEqual([429, 'too_many_open_requests']);
    expect(over.body.error).toMatch(/at most 3 open requests/);
    // The one that expires first does so in a day.
    expect(over.headers.get('retry-after')).toBe('86400');
    expect(items(over.headers.get('ratelimit'))['open-requests']).toEqual({ r: '0', t: '86400' });
    expect(await count(me.userId)).toBe(3);

    // An answered request is no longer open; a revoked one neither.
    expect(
      (await api.raw(`/api/v2/requests/${made[0]}/response`, json({ push: { payload: 'the answer' } }))).status,
    ).toBe(201);
    expect((await ask(me.token)).status).toBe(201);
    expect((await ask(me.token)).status).toBe(429);
    await api.raw(`/api/v2/requests/${made[1]}`, { method: 'DELETE', headers: auth(me.token) });
    expect((await ask(me.token)).status).toBe(201);
    // One past its time is not open either (the sweeper has not run).
    api.setClock(new Date(now.getTime() + 2 * DAY));
    expect((await ask(me.token)).status).toBe(201);
  });

  it('never lets concurrent creates of one user go over the limit', async () => {
    const me = await api.user(`race-${randomUUID()}@example.org`);
    const answers = await Promise.all(Array.from({ length: 8 }, () => ask(me.token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
    expect(await count(me.userId)).toBe(3);
  });
});

describe('the responder’s page over the requester’s quota', () => {
  let app: WebApp;
  beforeAll(async () => {
    app = await startWeb({ userStorageBytes: 16 * KIB });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('answers 429 with a page that says the answer does not fit, without the requester’s figures, and stores nothing', async () => {
    const user = await app.core.users.createUser(`page-${randomUUID()}@example.org`);
    const ctx = { actor: { userId: user.userId, ip: '127.0.0.1', userAgent: '', referrer: '' }, baseUrl: app.baseUrl };
    await app.core.pushes.create({ payload: 'p'.repeat(10 * KIB) }, ctx);
    const request = await app.core.requests.create({ request: 'the wifi password' }, ctx);
    const responder = new Visitor(app.baseUrl);
    const form = await responder.page(`/r/${request.url_token}`);
    const refused = await responder.post(`/r/${request.url_token}`, {
      _csrf: form.csrf,
      payload: 'w'.repeat(8 * KIB),
      passphrase: '',
    });
    expect(refused.status).toBe(429);
    const html = await refused.text();
    expect(html).toMatch(/requester/);
    // No figure of the requester's anywhere in the page; and the refusal says nothing of what the quota holds (the
    // page also carries its scripts' catalogue texts, one of which speaks of a browser that does not hold a key).
    expect(html).not.toMatch(/10 KiB|6 KiB/);
    expect(/<p class="error"[^>]*>([^<]*)<\/p>/.exec(html)?.[1]).toMatch(/^(?![\s\S]*hold)[\s\S]*requester/);
    expect(html).toContain('the wifi password');
    const [row] = await app.db.query<{ state: string }>('select state from requests where url_token = $1', [
      request.url_token,
    ]);
    expect(row!.state).toBe('pending');
  });
});

describe('with the attachments in an object store', () => {
  let s3: S3Server;
  let raw: S3Client;
  let api: RealApi;

  beforeAll(async () => {
    s3 = await startS3Server();
    const settings = s3.settings('req45/');
    raw = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: settings.credentials!,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    api = await startRealApi({
      rateLimitPerMinute: 0,
      userStorageBytes: 64 * KIB,
      userOpenRequests: 3,
      fileStorage: settings,
    });
  });
  afterEach(() => {
    api.setClock(null);
    expect(api.checker.violations).toEqual([]);
  });
  afterAll(async () => {
    await api?.stop();
    raw?.destroy();
    await s3?.close();
  });

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const ask = (token: string, request: Record<string, unknown>) =>
    api.raw('/api/v2/requests', json({ request }, auth(token)));
  const objects = async () => {
    const page = await raw.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: 'req45/request-files/' }));
    return (page.Contents ?? []).map((o) => o.Key!).sort();
  };
  const objectsOf = async (urlToken: string) =>
    (
      await api.db.query<{ object_key: string }>(
        'select f.object_key from request_files f join requests r on r.id = f.request_id where r.url_token = $1',
        [urlToken],
      )
    ).map((r) => r.object_key);
  /** Waits until the store holds exactly `expected` (a close deletes its objects in the background). */
  async function storeHolds(expected: string[]): Promise<void> {
    const end = Date.now() + 10_000;
    while (JSON.stringify(await objects()) !== JSON.stringify([...expected].sort())) {
      if (Date.now() > end) expect(await objects()).toEqual([...expected].sort());
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('deletes a request’s objects as it is revoked, answered or swept, and leaves none of a refused create', async () => {
    const me = await api.user(`store-${randomUUID()}@example.org`);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    api.setClock(now);
    const revoked = await ask(me.token, { request: 'r', files: [file('r.txt', 20 * KIB)] });
    const answered = await ask(me.token, { request: 'a', files: [file('a.txt', 20 * KIB)] });
    const lapsing = await ask(me.token, { request: 'l', expire_after_duration: 0, files: [file('l.txt', 20 * KIB)] });
    expect([revoked.status, answered.status, lapsing.status]).toEqual([201, 201, 201]);
    const [r] = await objectsOf(revoked.body.url_token);
    const [a] = await objectsOf(answered.body.url_token);
    const [l] = await objectsOf(lapsing.body.url_token);
    await storeHolds([r!, a!, l!]);

    // Refused creates (over the open requests, over the storage left) store nothing in the store either.
    const tooMany = await ask(me.token, { request: 'x', files: [file('x.txt', 1 * KIB)] });
    expect([tooMany.status, tooMany.body.code]).toEqual([429, 'too_many_open_requests']);
    await storeHolds([r!, a!, l!]);

    expect(
      (await api.raw(`/api/v2/requests/${revoked.body.url_token}`, { method: 'DELETE', headers: auth(me.token) }))
        .status,
    ).toBe(200);
    await storeHolds([a!, l!]);
    const overBytes = await ask(me.token, { request: 'y', files: [file('y.txt', 30 * KIB)] });
    expect([overBytes.status, overBytes.body.code]).toEqual([429, 'storage_quota_exceeded']);
    await storeHolds([a!, l!]);

    const answer = await api.raw(
      `/api/v2/requests/${answered.body.url_token}/response`,
      json({ push: { payload: 'ok' } }),
    );
    expect(answer.status).toBe(201);
    await storeHolds([l!]);

    await api.core.sweep(new Date(now.getTime() + 15 * 60_000));
    await storeHolds([]);
    expect(
      await api.db.query('select 1 from request_files f join requests r on r.id = f.request_id where r.user_id = $1', [
        me.userId,
      ]),
    ).toEqual([]);
  });
});
