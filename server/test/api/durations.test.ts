/**
 * Durations to the minute (issue 11): `expire_after_duration` (Password Pusher Pro's 0..17) through real HTTP on the
 * real Core, with the services' clock moved rather than slept. Every value gives `expires_at` = creation + its time
 * exactly, the record tells the lifetime truthfully (exact seconds, days rounded up, the enum value), a 15-minute push
 * is expired at every read and erased by the sweeper after 15 minutes, both lifetime fields with different meanings
 * and values out of range answer 422 naming the fields, and an instance's bounds apply. Every answer is checked
 * against the contract (serve.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  expirePush,
  getPush,
  getVersion,
  listActivePushes,
  listExpiredPushes,
  previewPush,
} from '@secret-push/sdk/generated';
import type { PushInput, PushOwner } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

/** The contract's table (`ExpireAfterDuration`), written out here rather than imported: the test states the contract. */
const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SECONDS = [
  15 * MINUTE,
  30 * MINUTE,
  45 * MINUTE,
  HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  3 * DAY,
  4 * DAY,
  5 * DAY,
  6 * DAY,
  7 * DAY,
  14 * DAY,
  21 * DAY,
  30 * DAY,
  60 * DAY,
  90 * DAY,
];

let api: RealApi;
let owner: { token: string; userId: string; email: string };
const T0 = new Date('2031-03-04T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('durations@example.org');
});
afterEach(() => {
  api.setClock(null);
  expect(api.checker.violations).toEqual([]);
});
afterAll(async () => {
  await api?.stop();
});

async function create(push: PushInput): Promise<PushOwner> {
  return expectData(await createPush({ client: api.client, body: { push }, auth: bearer(owner.token) }), 201);
}

async function refused(push: PushInput) {
  return expectError(
    await createPush({ client: api.client, body: { push }, auth: bearer(owner.token) }),
    422,
    'validation_failed',
  );
}

describe('every duration value', () => {
  it('gives expires_at = creation + its time exactly, and a record that tells the lifetime', async () => {
    api.setClock(T0);
    for (const [value, seconds] of SECONDS.entries()) {
      const push = await create({ payload: `for ${value}`, expire_after_duration: value });
      expect(push.created_at).toBe(T0.toISOString());
      expect(push.expires_at, `value ${value}`).toBe(at(seconds).toISOString());
      expect(
        [
          push.expire_after_duration,
          push.expire_after_seconds,
          push.seconds_remaining,
          push.expire_after_days,
          push.days_remaining,
        ],
        `value ${value}`,
      ).toEqual([value, seconds, seconds, Math.ceil(seconds / DAY), Math.ceil(seconds / DAY)]);
      const [row] = await api.db.query(
        'select expire_after_seconds, expire_after_days, expires_at from pushes where url_token = $1',
        [push.url_token],
      );
      expect(row).toEqual({
        expire_after_seconds: seconds,
        expire_after_days: Math.ceil(seconds / DAY),
        expires_at: at(seconds),
      });
    }
  });

  it('says a push made with days in the enum when one matches, and null when none does', async () => {
    api.setClock(T0);
    const week = await create({ payload: 'week', expire_after_days: 7 });
    expect([week.expire_after_duration, week.expire_after_seconds, week.expires_at]).toEqual([
      12,
      7 * DAY,
      at(7 * DAY).toISOString(),
    ]);
    const ten = await create({ payload: 'ten days', expire_after_days: 10 });
    expect([ten.expire_after_duration, ten.expire_after_seconds]).toEqual([null, 10 * DAY]);
    const byDefault = await create({ payload: 'default' });
    expect([byDefault.expire_after_duration, byDefault.expire_after_days, byDefault.expire_after_seconds]).toEqual([
      12,
      7,
      7 * DAY,
    ]);
  });

  it('counts down seconds_remaining and days_remaining (rounded up) from the server clock', async () => {
    api.setClock(T0);
    const hour = await create({ payload: 'an hour', expire_after_duration: 3 });
    const twoDays = await create({ payload: 'two days', expire_after_duration: 7 });
    const read = async (urlToken: string) =>
      (expectData(await listActivePushes({ client: api.client, auth: bearer(owner.token) })).find(
        (p) => p.url_token === urlToken,
      ) ?? null) as PushOwner | null;
    api.setClock(at(10 * MINUTE));
    expect(await read(hour.url_token)).toMatchObject({
      seconds_remaining: 50 * MINUTE,
      days_remaining: 1,
      expire_after_days: 1,
    });
    api.setClock(at(DAY + 1));
    expect(await read(twoDays.url_token)).toMatchObject({
      seconds_remaining: DAY - 1,
      days_remaining: 1,
      expire_after_days: 2,
    });
    expect(await read(hour.url_token)).toBeNull();
  });

  it('takes expire_after_duration from a multipart body as pwpush-cli sends it (digits, Python booleans)', async () => {
    api.setClock(T0);
    const boundary = 'pwpushcli0123';
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body = `${part('push[payload]', 'cli secret')}${part('push[expire_after_duration]', '4')}${part('push[retrieval_step]', 'False')}--${boundary}--\r\n`;
    const created = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${owner.token}` },
      body,
    });
    expect(created.status).toBe(201);
    expect([created.body.expire_after_duration, created.body.expires_at]).toEqual([4, at(6 * HOUR).toISOString()]);
  });
});

describe('a 15-minute push', () => {
  it('is served until its 15 minutes are up, expired at every read from then on, and erased by the sweeper', async () => {
    api.setClock(T0);
    const push = await create({
      payload: 'fifteen minutes',
      expire_after_duration: 0,
      expire_after_views: 5,
      note: 'gone soon',
    });
    const token = push.url_token;

    api.setClock(at(15 * MINUTE - 1));
    const before = expectData(await getPush({ client: api.client, path: { url_token: token } }));
    expect([before.payload, before.expired, before.seconds_remaining, before.days_remaining]).toEqual([
      'fifteen minutes',
      false,
      1,
      1,
    ]);
    // Nothing swept yet at 14:59: the sweeper decides by expires_at too.
    expect(await api.core.sweep(at(15 * MINUTE - 1))).toMatchObject({ erasedPushes: 0 });

    api.setClock(at(15 * MINUTE));
    // Every read decides by expires_at, before any sweep: retrieval, the lists, delete.
    const after = expectData(await getPush({ client: api.client, path: { url_token: token } }));
    expect([after.payload, after.expired, after.expired_on, after.days_remaining, after.seconds_remaining]).toEqual([
      null,
      true,
      at(15 * MINUTE).toISOString(),
      0,
      0,
    ]);
    const active = expectData(await listActivePushes({ client: api.client, auth: bearer(owner.token) }));
    expect(active.map((p) => p.url_token)).not.toContain(token);
    const expired = expectData(await listExpiredPushes({ client: api.client, auth: bearer(owner.token) }));
    expect(expired.find((p) => p.url_token === token)).toMatchObject({ expired: true, note: '', deleted: false });
    const deleted = expectData(
      await expirePush({ client: api.client, path: { url_token: token }, auth: bearer(owner.token) }),
    );
    expect([deleted.expired, deleted.deleted]).toEqual([true, false]);

    // A second push nobody reads after its time: the sweeper alone erases it, as of its expires_at.
    api.setClock(T0);
    const untouched = await create({ payload: 'never read', expire_after_duration: 0, note: 'n' });
    expect((await api.core.sweep(at(15 * MINUTE))).erasedPushes).toBeGreaterThanOrEqual(1);
    const [row] = await api.db.query(
      'select expired, expired_on, payload_ciphertext, note_ciphertext, passphrase_hash from pushes where url_token = $1',
      [untouched.url_token],
    );
    expect(row).toEqual({
      expired: true,
      expired_on: at(15 * MINUTE),
      payload_ciphertext: null,
      note_ciphertext: null,
      passphrase_hash: null,
    });
    expect(expectData(await previewPush({ client: api.client, path: { url_token: untouched.url_token } })).url).toBe(
      untouched.html_url,
    );
  });
});

describe('both lifetime fields', () => {
  it('are taken together when they mean the same lifetime', async () => {
    api.setClock(T0);
    for (const [duration, days] of [
      [6, 1],
      [12, 7],
      [15, 30],
      [17, 90],
    ] as const) {
      const push = await create({ payload: 'same', expire_after_duration: duration, expire_after_days: days });
      expect([push.expire_after_duration, push.expire_after_days, push.expires_at]).toEqual([
        duration,
        days,
        at(days * DAY).toISOString(),
      ]);
    }
  });

  it('answer 422 naming both when they mean different lifetimes (sub-day durations have no days twin)', async () => {
    const error = await refused({ payload: 'x', expire_after_duration: 3, expire_after_days: 7 });
    expect(error.errors).toEqual({
      expire_after_days: ['conflicts with expire_after_duration 3 (1 hour)'],
      expire_after_duration: ['conflicts with expire_after_days 7 (7 days)'],
    });
    expect(error.error).toBe('expire_after_days: conflicts with expire_after_duration 3 (1 hour) (and 1 more)');
    for (const [duration, days] of [
      [0, 1],
      [5, 1],
      [6, 2],
      [13, 21],
    ] as const) {
      const other = await refused({ payload: 'x', expire_after_duration: duration, expire_after_days: days });
      expect(Object.keys(other.errors ?? {}), `${duration} with ${days}`).toEqual([
        'expire_after_days',
        'expire_after_duration',
      ]);
    }
  });
});

describe('values out of range', () => {
  it('answer 422 on expire_after_duration (never the default)', async () => {
    for (const value of [18, -1, 100]) {
      const error = await refused({ payload: 'x', expire_after_duration: value });
      expect(Object.keys(error.errors ?? {}), String(value)).toEqual(['expire_after_duration']);
      expect(error.error).toMatch(/^expire_after_duration: must be at (most 17|least 0)$/);
    }
    const text = await api.raw('/api/v2/pushes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'x', expire_after_duration: '3' } }),
    });
    expect([text.status, Object.keys(text.body.errors)]).toEqual([422, ['expire_after_duration']]);
  });
});

describe('an instance with narrower bounds (PWPUSH_EXPIRE_AFTER_DURATION_MIN=3, days 2..30)', () => {
  let narrow: RealApi;
  beforeAll(async () => {
    narrow = await startRealApi({ expireAfterDurationMin: 3, expireAfterDays: { default: 7, min: 2, max: 30 } });
  });
  afterAll(async () => {
    await narrow?.stop();
  });

  it('reports the values it accepts and refuses the others with 422', async () => {
    const report = expectData(await getVersion({ client: narrow.client }));
    expect(report.features.pushes.expire_after_duration).toEqual({
      enabled: true,
      min: 3,
      values: [3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    });
    const post = async (push: PushInput) => createPush({ client: narrow.client, body: { push } });
    expect(
      expectError(await post({ payload: 'x', expire_after_duration: 2 }), 422, 'validation_failed').errors,
    ).toEqual({
      expire_after_duration: ['must be at least 3 (1 hour) on this instance'],
    });
    expect(
      expectError(await post({ payload: 'x', expire_after_duration: 16 }), 422, 'validation_failed').errors,
    ).toEqual({
      expire_after_duration: ['must be at most 15 (30 days) on this instance'],
    });
    // One day lies below the days minimum, through either field.
    expect(
      expectError(await post({ payload: 'x', expire_after_duration: 6 }), 422, 'validation_failed').errors,
    ).toEqual({
      expire_after_duration: ['must be one of 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15 on this instance'],
    });
    expect(
      Object.keys(
        expectError(await post({ payload: 'x', expire_after_days: 1 }), 422, 'validation_failed').errors ?? {},
      ),
    ).toEqual(['expire_after_days']);
    const hour = expectData(await post({ payload: 'x', expire_after_duration: 3 }), 201);
    expect(hour.expire_after_seconds).toBe(HOUR);
  });

  it('reports no value and honours none when its days bounds leave none of the enum', async () => {
    const none = await startRealApi({ expireAfterDurationMin: 6, expireAfterDays: { default: 10, min: 8, max: 13 } });
    try {
      const report = expectData(await getVersion({ client: none.client }));
      expect(report.features.pushes.expire_after_duration).toEqual({ enabled: false, min: 6, values: [] });
      const refusedAll = expectError(
        await createPush({ client: none.client, body: { push: { payload: 'x', expire_after_duration: 12 } } }),
        422,
        'validation_failed',
      );
      expect(refusedAll.errors?.expire_after_duration?.[0]).toMatch(/not accepted on this instance/);
    } finally {
      await none.stop();
    }
  });
});
