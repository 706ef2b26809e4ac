/**
 * Durations to the minute: `expire_after_duration` (Password Pusher Pro's 0..17, the contract's ExpireAfterDuration)
 * honoured exactly, with the record telling the lifetime truthfully. Gated on what the instance reports
 * (`features.pushes.expire_after_duration`): a server that ignores the field is not asked to honour it. No
 * requirement waits for a lifetime to pass; REC-002 checks every record's times, and DUR-007 the countdown.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx } from '../context.js';
import { expect422 } from './pushes.js';

const DAY = 86_400;
/** Seconds of each value (index = value), as the contract's table gives them. */
const DURATION_SECONDS = [
  900,
  1800,
  2700,
  3600,
  21_600,
  43_200,
  ...[1, 2, 3, 4, 5, 6, 7, 14, 21, 30, 60, 90].map((d) => d * DAY),
];
/** The days twin of values 6..17. */
const DAYS_OF = (value: number) => (value >= 6 ? DURATION_SECONDS[value]! / DAY : null);

const SECRET = () => `s3cret ${unique('payload')}`;

function accepted(ctx: Ctx): number[] {
  return ctx.features.pushes.expire_after_duration?.values ?? [];
}

/** The record of a push made with `value` tells its lifetime: exact, the value, its seconds, days rounded up. */
function expectLifetime(record: Record<string, any>, value: number, what: string): void {
  const seconds = DURATION_SECONDS[value]!;
  expectEqual(
    Date.parse(record.expires_at) - Date.parse(record.created_at),
    seconds * 1000,
    `${what}: expires_at − created_at (ms)`,
  );
  expectEqual(record.expire_after_duration, value, `${what}: expire_after_duration`);
  expectEqual(record.expire_after_seconds, seconds, `${what}: expire_after_seconds`);
  expectEqual(record.expire_after_days, Math.ceil(seconds / DAY), `${what}: expire_after_days (rounded up)`);
  expect(
    Number.isInteger(record.seconds_remaining) &&
      record.seconds_remaining <= seconds &&
      record.seconds_remaining >= seconds - 120,
    `${what}: seconds_remaining ${record.seconds_remaining} of ${seconds} just after creation`,
  );
  expectEqual(
    record.days_remaining,
    Math.ceil(record.seconds_remaining / DAY),
    `${what}: days_remaining (seconds_remaining rounded up to days)`,
  );
}

/** A form create (urlencoded or multipart) of `fields` as `push[<name>]`. */
async function formCreate(ctx: Ctx, fields: Record<string, string>, multipart: boolean): Promise<Record<string, any>> {
  let rawBody: string;
  let contentType: string;
  if (multipart) {
    const boundary = 'conformance-duration-7d3f';
    rawBody =
      Object.entries(fields)
        .map(
          ([name, value]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name="push[${name}]"\r\n\r\n${value}\r\n`,
        )
        .join('') + `--${boundary}--\r\n`;
    contentType = `multipart/form-data; boundary=${boundary}`;
  } else {
    rawBody = Object.entries(fields)
      .map(([name, value]) => `push%5B${name}%5D=${encodeURIComponent(value)}`)
      .join('&');
    contentType = 'application/x-www-form-urlencoded';
  }
  const res = await ctx.call('createPush', { rawBody, contentType, as: ctx.creator });
  expectStatus(res, 201);
  return res.body;
}

export const durations = define('DUR', [
  {
    id: 'DUR-001',
    title: 'The report lists the durations it honours: enabled, ascending values within 0..17, min the first of them',
    source: 'spec: VersionReport (features.pushes.expire_after_duration); client-dialects: the Pro duration enum',
    needs: ['duration'],
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('getVersion');
      expectStatus(res, 200);
      const feature = res.body.features.pushes.expire_after_duration;
      expectEqual(feature.enabled, true, 'expire_after_duration.enabled');
      const values: unknown[] = feature.values;
      expect(values.length > 0, 'expire_after_duration.values is empty while enabled');
      expect(
        values.every(
          (v, i) =>
            Number.isInteger(v) &&
            (v as number) >= 0 &&
            (v as number) <= 17 &&
            (i === 0 || (v as number) > (values[i - 1] as number)),
        ),
        `values ${JSON.stringify(values)} are not ascending within 0..17`,
      );
      expectEqual(feature.min, values[0], 'expire_after_duration.min (the first value)');
    },
  },
  {
    id: 'DUR-002',
    title: 'Each value the instance accepts makes a push of exactly its time, and the record says so (days rounded up)',
    source:
      'spec: PushInput.expire_after_duration (honoured exactly); spec: Push (expires_at, expire_after_seconds, days rounded up)',
    needs: ['duration', 'creator'],
    async run(ctx) {
      for (const value of accepted(ctx)) {
        const push = await ctx.create({ payload: SECRET(), expire_after_duration: value });
        expectLifetime(push, value, `expire_after_duration ${value}`);
      }
      ctx.note = `${accepted(ctx).length} values checked`;
    },
  },
  {
    id: 'DUR-003',
    title: 'A push made with expire_after_days says the matching duration (7 days → 12), or null when none matches',
    source: 'spec: Push.expire_after_duration (whichever field created the push); spec: Push.expire_after_seconds',
    needs: ['duration', 'creator'],
    async run(ctx) {
      const values = accepted(ctx).filter((v) => v >= 6);
      expect(values.length > 0, 'the instance accepts no duration of a day or more to compare with days');
      for (const value of values) {
        const days = DAYS_OF(value)!;
        const push = await ctx.create({ payload: SECRET(), expire_after_days: days });
        expectEqual(
          [push.expire_after_duration, push.expire_after_seconds, push.expire_after_days],
          [value, days * DAY, days],
          `a push of ${days} days`,
        );
      }
      // 10 days lies between 7 and 14: within the days bounds when both are accepted, and no value of the enum.
      if (values.includes(12) && values.includes(13)) {
        const push = await ctx.create({ payload: SECRET(), expire_after_days: 10 });
        expectEqual([push.expire_after_duration, push.expire_after_seconds], [null, 10 * DAY], 'a push of 10 days');
      } else ctx.note = '10 days (no value of the enum) not checked: outside the instance bounds';
    },
  },
  {
    id: 'DUR-004',
    title:
      'Both lifetime fields with different meanings answer 422 naming both; the same lifetime through both is taken',
    source: 'spec: PushInput (Lifetime: both fields must mean the same lifetime, else 422 on both)',
    needs: ['duration', 'creator'],
    async run(ctx) {
      for (const [duration, days] of [
        [3, 7],
        [6, 2],
        [12, 1],
      ] as const) {
        const res = await ctx.call('createPush', {
          body: { push: { payload: 'x', expire_after_duration: duration, expire_after_days: days } },
          as: ctx.creator,
        });
        expectStatus(res, 422);
        expectCode(res, 'validation_failed');
        const fields = Object.keys(res.body?.errors ?? {}).sort();
        expectEqual(
          fields,
          ['expire_after_days', 'expire_after_duration'],
          `422 fields for duration ${duration} with ${days} days`,
        );
      }
      const same = accepted(ctx).find((v) => v >= 6);
      if (same !== undefined) {
        const push = await ctx.create({
          payload: SECRET(),
          expire_after_duration: same,
          expire_after_days: DAYS_OF(same)!,
        });
        expectLifetime(push, same, `duration ${same} with its ${DAYS_OF(same)} days`);
      }
    },
  },
  {
    id: 'DUR-005',
    title: 'expire_after_duration outside 0..17 (18, -1) or not an integer (2.5, "3") answers 422 on it',
    source: 'spec: ExpireAfterDuration (0..17); spec: PushInput (out of range → 422, never the default)',
    needs: ['duration', 'creator'],
    async run(ctx) {
      for (const value of [18, -1, 2.5, '3'])
        await expect422(ctx, { payload: 'x', expire_after_duration: value }, 'expire_after_duration');
    },
  },
  {
    id: 'DUR-006',
    title: 'A value the instance does not list answers 422 on expire_after_duration',
    source: 'spec: PushInput.expire_after_duration (instance bounds; PWPUSH_EXPIRE_AFTER_DURATION_MIN)',
    needs: ['durationNarrowed', 'creator'],
    async run(ctx) {
      const refused = DURATION_SECONDS.map((_, v) => v).filter((v) => !accepted(ctx).includes(v));
      for (const value of refused)
        await expect422(ctx, { payload: 'x', expire_after_duration: value }, 'expire_after_duration');
      ctx.note = `values ${refused.join(', ')} refused`;
    },
  },
  {
    id: 'DUR-007',
    title:
      'seconds_remaining counts down: seconds later it is the time left to expires_at at the answer, days rounded up',
    source: 'spec: Push.seconds_remaining (computed by the server); spec: Push.days_remaining (rounded up)',
    needs: ['duration', 'creator', 'viewer'],
    async run(ctx) {
      const value = accepted(ctx)[0]!;
      const push = await ctx.create({ payload: SECRET(), expire_after_duration: value, expire_after_views: 2 });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      const date = Date.parse(res.headers.get('date') ?? '');
      const at = Number.isNaN(date) ? Date.now() : date;
      // Date has whole seconds: the time left as of the answer lies within [floor − 2, ceil] of expires_at − Date.
      const left = (Date.parse(res.body.expires_at) - at) / 1000;
      const remaining = res.body.seconds_remaining;
      expect(
        Number.isInteger(remaining) && remaining >= Math.floor(left) - 2 && remaining <= Math.ceil(left),
        `seconds_remaining ${remaining} 2.5 s after creation, while expires_at is ${left.toFixed(1)} s after the answer's Date`,
      );
      expectEqual(
        res.body.days_remaining,
        Math.ceil(remaining / DAY),
        'days_remaining (seconds_remaining rounded up to days)',
      );
    },
  },
  {
    id: 'DUR-008',
    title: 'A form create (urlencoded or multipart) honours push[expire_after_duration] as pwpush-cli sends it',
    source:
      'spec: createPush requestBody (CreatePushUrlencoded, CreatePushMultipart: push[expire_after_duration]); client-dialects: pwpush-cli',
    needs: ['duration', 'creator'],
    async run(ctx) {
      const value = accepted(ctx)[0]!;
      for (const multipart of [false, true]) {
        const push = await formCreate(
          ctx,
          { payload: SECRET(), expire_after_duration: String(value), retrieval_step: 'False' },
          multipart,
        );
        expectLifetime(push, value, multipart ? 'multipart' : 'urlencoded');
      }
    },
  },
  {
    id: 'DUR-009',
    title: 'Every record carries the lifetime fields: create, retrieve, delete and both owner lists',
    source:
      'spec: Push (expire_after_duration, expire_after_seconds, seconds_remaining: every record where the feature is reported)',
    needs: ['duration', 'token', 'viewer'],
    async run(ctx) {
      const value = accepted(ctx)[0]!;
      const seconds = DURATION_SECONDS[value]!;
      const has = (record: Record<string, any> | undefined, what: string) => {
        expect(record !== undefined, `${what}: the push is not there`);
        expectEqual(
          [record!.expire_after_duration, record!.expire_after_seconds],
          [value, seconds],
          `${what}: expire_after_duration, expire_after_seconds`,
        );
        expect(
          Number.isInteger(record!.seconds_remaining),
          `${what}: seconds_remaining ${JSON.stringify(record!.seconds_remaining)} is no integer`,
        );
      };
      const find = async (list: 'listActivePushes' | 'listExpiredPushes', token: string) => {
        const res = await ctx.call(list, { as: 'a' });
        expectStatus(res, 200);
        return (res.body as Record<string, any>[]).find((p) => p.url_token === token);
      };
      const push = await ctx.create({ payload: SECRET(), expire_after_duration: value, expire_after_views: 2 }, 'a');
      has(push, 'create');
      has(await find('listActivePushes', push.url_token), 'active list');
      const got = await ctx.retrieve(push.url_token);
      expectStatus(got, 200);
      has(got.body, 'retrieve');
      const deleted = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(deleted, 200);
      has(deleted.body, 'delete');
      has(await find('listExpiredPushes', push.url_token), 'expired list');
    },
  },
]);
