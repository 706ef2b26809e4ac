/**
 * Idempotent creates: a create retried with the same Idempotency-Key answers the first one's push and makes nothing
 * new. Gated on the version report's `features.pushes.idempotency_keys` (servers without it skip the class).
 */
import { randomUUID } from 'node:crypto';
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Caller, type Ctx, type Res } from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;

function keyed(ctx: Ctx, key: string, push: Record<string, unknown>, as: Caller = ctx.creator): Promise<Res> {
  return ctx.call('createPush', { body: { push }, as, headers: { 'idempotency-key': key } });
}

function replayed(res: Res): boolean {
  return /^true$/i.test(res.headers.get('idempotent-replayed') ?? '');
}

/** The owner's count of active pushes (X-Total-Count of the first page). */
async function activeCount(ctx: Ctx): Promise<number> {
  const res = await ctx.call('listActivePushes', { as: 'a' });
  expectStatus(res, 200);
  const total = Number(res.headers.get('x-total-count'));
  expect(Number.isInteger(total), `X-Total-Count is ${JSON.stringify(res.headers.get('x-total-count'))}`);
  return total;
}

/** Retrieves as the viewer and insists the payload is `secret`: the push exists and holds what was sent. */
async function expectPayload(ctx: Ctx, urlToken: string, secret: string): Promise<void> {
  const res = await ctx.retrieve(urlToken);
  expectStatus(res, 200);
  expectEqual(res.body.payload, secret, `payload of ${urlToken}`);
}

export const idempotency = define('IDEM', [
  {
    id: 'IDEM-001',
    title: 'A retry with the same Idempotency-Key and body answers 201 with the same push, marked Idempotent-Replayed',
    source: 'spec: parameters/IdempotencyKey; spec: headers/IdempotentReplayed',
    needs: ['creator', 'idempotency'],
    async run(ctx) {
      const key = randomUUID();
      const push = { payload: SECRET(), expire_after_views: 3 };
      const first = await keyed(ctx, key, push);
      expectStatus(first, 201);
      expect(!replayed(first), 'the first create is marked Idempotent-Replayed');
      const again = await keyed(ctx, key, push);
      expectStatus(again, 201);
      expectEqual(again.body.url_token, first.body.url_token, 'url_token of the replay');
      expect(
        replayed(again),
        `the replay carries Idempotent-Replayed ${JSON.stringify(again.headers.get('idempotent-replayed'))}`,
      );
      for (const field of ['created_at', 'expires_at', 'expire_after_views', 'expire_after_days']) {
        expectEqual(again.body[field], first.body[field], `${field} of the replay`);
      }
    },
  },
  {
    id: 'IDEM-002',
    title: 'A replayed create makes no second push: the owner has one more active push, not two',
    source: 'spec: parameters/IdempotencyKey ("creates nothing")',
    needs: ['token', 'idempotency'],
    async run(ctx) {
      const key = randomUUID();
      const push = { payload: SECRET() };
      const before = await activeCount(ctx);
      for (let i = 0; i < 3; i++) expectStatus(await keyed(ctx, key, push, 'a'), 201);
      const after = await activeCount(ctx);
      expectEqual(after - before, 1, 'active pushes added by three creates with one key');
    },
  },
  {
    id: 'IDEM-003',
    title: 'The same key with another body answers 422 idempotency_key_reused, and the first push keeps its payload',
    source: 'spec: parameters/IdempotencyKey; spec: examples/ErrIdempotencyKeyReused',
    needs: ['creator', 'viewer', 'idempotency'],
    async run(ctx) {
      const key = randomUUID();
      const secret = SECRET();
      const first = await keyed(ctx, key, { payload: secret, expire_after_views: 3 });
      expectStatus(first, 201);
      const other = await keyed(ctx, key, { payload: SECRET(), expire_after_views: 3 });
      expectStatus(other, 422);
      expectCode(other, 'idempotency_key_reused');
      await expectPayload(ctx, first.body.url_token, secret);
    },
  },
  {
    id: 'IDEM-004',
    title: 'Concurrent creates with one key make one push: each answer is that push or 409 idempotency_key_in_use',
    source: 'spec: parameters/IdempotencyKey; spec: examples/ErrIdempotencyKeyInUse',
    needs: ['creator', 'idempotency'],
    async run(ctx) {
      const key = randomUUID();
      const push = { payload: SECRET(), expire_after_views: 3 };
      const answers = await Promise.all(Array.from({ length: 6 }, () => keyed(ctx, key, push)));
      for (const res of answers) expectStatus(res, 201, 409);
      const created = answers.filter((r) => r.status === 201);
      const tokens = new Set(created.map((r) => r.body.url_token));
      expectEqual(tokens.size, 1, 'distinct url_tokens among the 201 answers');
      expectEqual(created.filter((r) => !replayed(r)).length, 1, '201 answers not marked Idempotent-Replayed');
      for (const res of answers.filter((r) => r.status === 409)) expectCode(res, 'idempotency_key_in_use');
      ctx.note = `${created.length} × 201, ${answers.length - created.length} × 409`;
    },
  },
  {
    id: 'IDEM-005',
    title: "A key is the caller's own: another caller's create with the same key and body makes its own push",
    source: 'spec: parameters/IdempotencyKey ("from the same caller")',
    needs: ['token', 'viewer', 'idempotency'],
    async run(ctx) {
      const key = randomUUID();
      const push = { payload: SECRET() };
      const mine = await keyed(ctx, key, push, 'a');
      expectStatus(mine, 201);
      const theirs = await keyed(ctx, key, push, ctx.viewer);
      expectStatus(theirs, 201);
      expect(theirs.body.url_token !== mine.body.url_token, "another caller's create answered the first caller's push");
      expect(!replayed(theirs), "another caller's create is marked Idempotent-Replayed");
    },
  },
  {
    id: 'IDEM-006',
    title: 'A create refused with 422 leaves its key free: the corrected body with that key creates the push',
    source: 'spec: parameters/IdempotencyKey ("A create that failed (4xx, 503) leaves the key free")',
    needs: ['creator', 'viewer', 'idempotency'],
    async run(ctx) {
      const key = randomUUID();
      const refused = await keyed(ctx, key, { payload: SECRET(), expire_after_days: 0 });
      expectStatus(refused, 422);
      expectCode(refused, 'validation_failed');
      const secret = SECRET();
      const fixed = await keyed(ctx, key, { payload: secret, expire_after_views: 3 });
      expectStatus(fixed, 201);
      expect(!replayed(fixed), 'the corrected create is marked Idempotent-Replayed');
      await expectPayload(ctx, fixed.body.url_token, secret);
    },
  },
  {
    id: 'IDEM-007',
    title: 'An Idempotency-Key that is not 1 to 255 visible ASCII characters answers 400 and creates nothing',
    source: 'spec: parameters/IdempotencyKey (schema)',
    needs: ['token', 'idempotency'],
    async run(ctx) {
      const before = await activeCount(ctx);
      for (const key of ['has a space', 'k'.repeat(256)]) {
        const res = await keyed(ctx, key, { payload: SECRET() }, 'a');
        expectStatus(res, 400);
      }
      expectEqual(await activeCount(ctx), before, 'active pushes after two refused creates');
    },
  },
  {
    id: 'IDEM-008',
    title: 'Creates without a key are not deduplicated: two identical bodies make two pushes',
    source: 'spec: parameters/IdempotencyKey (required: false)',
    needs: ['creator', 'idempotency'],
    async run(ctx) {
      const push = { payload: SECRET() };
      const a = await ctx.create(push);
      const b = await ctx.create(push);
      expect(a.url_token !== b.url_token, 'two creates without a key answered the same push');
    },
  },
]);
