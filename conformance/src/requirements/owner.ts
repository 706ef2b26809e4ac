/** Delete and authentication (audit-lists.ts: audit logs and owners' lists). */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx } from '../context.js';
import { list, tokens } from './audit-lists.js';

const SECRET = () => `s3cret ${unique('payload')}`;

export const remove = define('DEL', [
  {
    id: 'DEL-001',
    title: 'The owner expires a push: 200 with expired and deleted true; later retrievals get no payload',
    source: 'seed §3 (DELETE → expired); decisions: Preview, audit, lists, delete, bullet 5',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: false }, 'a');
      const res = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(res, 200);
      expectEqual(res.body.expired, true, 'expired');
      expectEqual(res.body.deleted, true, 'deleted');
      expect(!('payload' in res.body), 'the delete response carries a payload');
      const after = await ctx.retrieve(push.url_token);
      expectStatus(after, 200);
      expectEqual(after.body.expired, true, 'expired on retrieval');
      expectEqual(after.body.payload, null, 'payload on retrieval');
    },
  },
  {
    id: 'DEL-002',
    title: 'An anonymous recipient expires a deletable_by_viewer push (200)',
    source: 'seed §5.7; seed §3 (DELETE row)',
    needs: ['creator', 'anonymous'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: true });
      const res = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'anon' });
      expectStatus(res, 200);
      expectEqual(res.body.expired, true, 'expired');
    },
  },
  {
    id: 'DEL-003',
    title: 'An anonymous caller cannot expire a push without deletable_by_viewer (401)',
    source: 'seed §5.8; decisions: Preview, audit, lists, delete, bullet 5',
    needs: ['creator', 'anonymous'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: false });
      const res = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'anon' });
      expectStatus(res, 401);
      const still = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: 'anon' });
      expectStatus(still, 200);
    },
  },
  {
    id: 'DEL-004',
    title: 'Another user cannot expire a push without deletable_by_viewer (403)',
    source: 'seed §5.8; decisions: Preview, audit, lists, delete, bullet 5',
    needs: ['token', 'tokenB'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, deletable_by_viewer: false }, 'a');
      const res = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'b' });
      expectStatus(res, 403);
      expectCode(res, 'forbidden');
      const own = await ctx.call('getPush', { params: { url_token: push.url_token }, as: 'a' });
      expectEqual(own.body?.payload, secret, 'payload after the refused delete');
    },
  },
  {
    id: 'DEL-005',
    title: 'Expiring an already expired push answers 200 unchanged',
    source: 'decisions: Preview, audit, lists, delete, bullet 5',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const first = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(first, 200);
      const second = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(second, 200);
      expectEqual(second.body.expired, true, 'expired');
      expectEqual(second.body.expired_on, first.body.expired_on, 'expired_on after a second delete');
    },
  },
  {
    id: 'DEL-006',
    title: 'Expiring an unknown url_token answers 404',
    source: 'seed §7 (404)',
    needs: ['token'],
    async run(ctx) {
      const res = await ctx.call('expirePush', { params: { url_token: 'unknownconformance0000' }, as: 'a' });
      expectStatus(res, 404);
      expectCode(res, 'not_found');
    },
  },
  {
    id: 'DEL-007',
    title: 'Another user (a recipient) may expire a deletable_by_viewer push (200)',
    source: 'seed §5.7',
    needs: ['token', 'tokenB'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: true }, 'a');
      const res = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'b' });
      expectStatus(res, 200);
      expectEqual(res.body.expired, true, 'expired');
    },
  },
  {
    id: 'DEL-008',
    title: 'A .json suffix is accepted on delete (DELETE /pushes/{url_token}.json)',
    source: 'decisions: Paths and formats, bullet 1',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: true });
      const res = await ctx.call('expirePush', {
        params: { url_token: push.url_token },
        as: ctx.creator,
        jsonSuffix: true,
      });
      expectStatus(res, 200);
      expectEqual(res.body.url_token, push.url_token, 'url_token via .json');
      expectEqual(res.body.expired, true, 'expired via .json');
      expectEqual(res.body.deleted, true, 'deleted via .json');
    },
  },
  {
    id: 'DEL-009',
    title: 'A deleted push leaves the active list and appears in the expired list with deleted true',
    source: 'seed §3 (DELETE → expired); decisions: Preview, audit, lists, delete, bullets 3 and 5',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      expectStatus(await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' }), 200);
      expect(
        !tokens(await list(ctx, 'active')).includes(push.url_token),
        'the deleted push is still in the active list',
      );
      const expired = await list(ctx, 'expired');
      const record = (expired.body as { url_token: string; expired: boolean; deleted: boolean }[]).find(
        (p) => p.url_token === push.url_token,
      );
      expect(record, 'the deleted push is not in the expired list');
      expectEqual(record.expired, true, 'expired in the expired list');
      expectEqual(record.deleted, true, 'deleted in the expired list');
    },
  },
]);

export const auth = define('AUTH', [
  {
    id: 'AUTH-001',
    title: 'GET /pushes/active without a token answers 401 authentication_required',
    source: 'seed §5.4; seed §5.8',
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('listActivePushes', { as: 'anon' });
      expectStatus(res, 401);
      expectCode(res, 'authentication_required');
    },
  },
  {
    id: 'AUTH-002',
    title: 'An invalid bearer token answers 401 invalid_token',
    source: 'seed §5.8; decisions: Authentication, bullet 2',
    async run(ctx) {
      const res = await ctx.call('listActivePushes', {
        as: { headers: { authorization: 'Bearer spt_conformance_not_a_real_token' } },
      });
      expectStatus(res, 401);
      expectCode(res, 'invalid_token');
    },
  },
  {
    id: 'AUTH-003',
    title: 'An invalid token answers 401 on public operations too (create, retrieve, preview)',
    source: 'decisions: Authentication, bullet 2',
    needs: ['creator'],
    async run(ctx) {
      const bad = { headers: { authorization: 'Bearer spt_conformance_not_a_real_token' } };
      const push = await ctx.create({ payload: SECRET() });
      const created = await ctx.call('createPush', { body: { push: { payload: 'x' } }, as: bad });
      expectStatus(created, 401);
      const got = await ctx.call('getPush', { params: { url_token: push.url_token }, as: bad });
      expectStatus(got, 401);
      const previewed = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: bad });
      expectStatus(previewed, 401);
    },
  },
  {
    id: 'AUTH-004',
    title: 'The legacy X-User-Email + X-User-Token pair authenticates its own user',
    source: 'decisions: Authentication, bullet 1',
    needs: ['token', 'email'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const headers = { 'x-user-email': ctx.options.email!, 'x-user-token': ctx.options.token! };
      const res = await ctx.call('listActivePushes', { as: { headers } });
      expectStatus(res, 200);
      expect(tokens(res).includes(push.url_token), 'the legacy pair does not list the user’s new push');
    },
  },
  {
    id: 'AUTH-005',
    title: "The legacy pair with another user's email answers 401",
    source: 'decisions: Authentication, bullet 1',
    needs: ['token', 'emailB'],
    async run(ctx) {
      const headers = { 'x-user-email': ctx.options.emailB!, 'x-user-token': ctx.options.token! };
      const res = await ctx.call('listActivePushes', { as: { headers } });
      expectStatus(res, 401);
    },
  },
  {
    id: 'AUTH-006',
    title: 'With anonymous access off, create and retrieve without a token answer 401',
    source: 'seed §5.5; decisions: Authentication, bullet 2',
    needs: ['token', 'anonymousOff'],
    async run(ctx) {
      const created = await ctx.call('createPush', { body: { push: { payload: 'x' } }, as: 'anon' });
      expectStatus(created, 401);
      expectCode(created, 'authentication_required');
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const got = await ctx.call('getPush', { params: { url_token: push.url_token }, as: 'anon' });
      expectStatus(got, 401);
    },
  },
  {
    id: 'AUTH-007',
    title: 'With anonymous access on, a push can be created without a token (201)',
    source: 'seed §4 (POST: token may be omitted when anonymous pushes are allowed); seed §5.5',
    needs: ['anonymous'],
    stateless: true,
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'anon');
      expectEqual(push.kind, 'text', 'kind');
    },
  },
  {
    id: 'AUTH-008',
    title: 'A file push without a token answers 401 while files require authentication',
    source: 'seed §5.6; decisions: Create, bullet 4',
    needs: ['file', 'fileAuthRequired', 'anonymous'],
    async run(ctx) {
      const files = [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }];
      const res = await ctx.call('createPush', { body: { push: { files } }, as: 'anon' });
      expectStatus(res, 401);
    },
  },
  {
    id: 'AUTH-009',
    title: 'An invalid token answers 401 invalid_token on every operation but version (legacy pair too)',
    source: 'decisions: Authentication, bullets 1 and 2; seed §5.8',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: true });
      const p = { params: { url_token: push.url_token } };
      const bearer = { headers: { authorization: 'Bearer spt_conformance_not_a_real_token' } };
      const legacy = {
        headers: {
          'x-user-email': ctx.options.email ?? 'nobody@conformance.invalid',
          'x-user-token': 'spt_conformance_not_a_real_token',
        },
      };
      for (const as of [bearer, legacy]) {
        const calls: [string, Parameters<Ctx['call']>[1]][] = [
          ['createPush', { body: { push: { payload: 'x' } } }],
          ['getPush', p],
          ['previewPush', p],
          ['expirePush', p],
          ['getPushAudit', p],
          ['listActivePushes', {}],
          ['listExpiredPushes', {}],
        ];
        for (const [operationId, opts] of calls) {
          const res = await ctx.call(operationId, { ...opts, as });
          expectStatus(res, 401);
          expectCode(res, 'invalid_token');
        }
      }
      const still = await ctx.call('previewPush', { ...p, as: ctx.creator });
      expectStatus(still, 200);
    },
  },
  {
    id: 'AUTH-010',
    title: 'A missing token on an owner operation answers 401 authentication_required (audit, lists, owner delete)',
    source: 'seed §5.4; seed §5.8; decisions: Preview, audit, lists, delete, bullets 2 and 5',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: false });
      const p = { params: { url_token: push.url_token }, as: 'anon' as const };
      for (const res of [
        await ctx.call('getPushAudit', p),
        await ctx.call('listActivePushes', { as: 'anon' }),
        await ctx.call('listExpiredPushes', { as: 'anon' }),
        await ctx.call('expirePush', p),
      ]) {
        expectStatus(res, 401);
        expectCode(res, 'authentication_required');
      }
    },
  },
]);
