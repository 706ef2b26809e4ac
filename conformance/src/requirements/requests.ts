/**
 * Requests (`/api/v2/requests`, issue 24), gated on `features.requests.enabled` of the version report: Password
 * Pusher Pro's create as pwpush-cli sends it, the responder's view, one answer that becomes a push of the requester,
 * the states and the audit log, a second answer refused with nothing stored, revocation, and the owner-only operations.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx } from '../context.js';

const SOURCE = 'spec: info.description, Requests';

/** Creates a request as pwpush-cli 0.16 does (JSON, both header styles are the client's business). */
async function newRequest(ctx: Ctx, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await ctx.call('createRequest', {
    as: 'a',
    body: { request: { request: `conformance ${unique('ask')}`, expire_after_views: 2, note: 'n', ...extra } },
  });
  expectStatus(res, 201);
  return res.body;
}

async function answer(ctx: Ctx, urlToken: string, payload: string) {
  return ctx.call('respondToRequest', { params: { url_token: urlToken }, as: ctx.viewer, body: { push: { payload } } });
}

async function ownerView(ctx: Ctx, urlToken: string): Promise<any> {
  const res = await ctx.call('getRequest', { params: { url_token: urlToken }, as: 'a' });
  expectStatus(res, 200);
  expectEqual(res.body.audience, 'owner', 'audience of the requester');
  return res.body;
}

async function auditKinds(ctx: Ctx, urlToken: string): Promise<string[]> {
  const res = await ctx.call('getRequestAudit', { params: { url_token: urlToken }, as: 'a' });
  expectStatus(res, 200);
  return (res.body.logs as any[]).map((l) => l.kind);
}

async function activePushCount(ctx: Ctx): Promise<number> {
  const res = await ctx.call('listActivePushes', { as: 'a' });
  expectStatus(res, 200);
  return Number(res.headers.get('x-total-count') ?? (res.body as unknown[]).length);
}

export const requests = define('REQ', [
  {
    id: 'REQ-001',
    title: 'pwpush-cli’s create answers 201 pending with html_url, and the preview’s url is that html_url',
    source: `${SOURCE}; spec: createRequest, previewRequest`,
    needs: ['requests', 'token'],
    async run(ctx) {
      const created = await newRequest(ctx, {
        expire_after_duration: 12,
        deletable_by_viewer: false,
        retrieval_step: true,
      });
      expectEqual(created.state, 'pending', 'state');
      expectEqual(created.expire_after_seconds, 7 * 86400, 'expire_after_seconds of duration 12');
      const preview = await ctx.call('previewRequest', { params: { url_token: created.url_token }, as: 'a' });
      expectStatus(preview, 200);
      expectEqual(preview.body.url, created.html_url, 'preview url');
    },
  },
  {
    id: 'REQ-002',
    title: 'A responder sees the ask and nothing of the requester’s own fields; reading logs nothing',
    source: `${SOURCE}; spec: RequestView`,
    needs: ['requests', 'token', 'viewer'],
    async run(ctx) {
      const created = await newRequest(ctx, { name: 'secret-label' });
      const res = await ctx.call('getRequest', { params: { url_token: created.url_token }, as: ctx.viewer });
      expectStatus(res, 200);
      expectEqual(res.body.audience, 'responder', 'audience of a responder');
      expectEqual(res.body.request, created.request, 'the ask');
      expectEqual(res.body.open, true, 'open');
      for (const key of ['name', 'note', 'notify_emails_to', 'answer'])
        expect(!(key in res.body), `the responder's view carries ${key}`);
      expectEqual(await auditKinds(ctx, created.url_token), ['creation'], 'audit kinds after a responder read it');
    },
  },
  {
    id: 'REQ-003',
    title: 'An answer makes a push of the requester with the request’s settings; the receipt opens nothing',
    source: `${SOURCE}; spec: respondToRequest`,
    needs: ['requests', 'token', 'viewer'],
    async run(ctx) {
      const created = await newRequest(ctx);
      const secret = `answer ${unique()}`;
      const res = await answer(ctx, created.url_token, secret);
      expectStatus(res, 201);
      expect(!JSON.stringify(res.body).includes(secret), 'the receipt carries the secret');
      const owner = await ownerView(ctx, created.url_token);
      expectEqual(owner.state, 'fulfilled', 'state after the answer');
      expect(owner.answer && typeof owner.answer.url_token === 'string', 'the requester’s view has no answer');
      expect(owner.answer.url_token !== created.url_token, 'the answer has the request’s token');
      const active = await ctx.call('listActivePushes', { as: 'a' });
      const push = (active.body as any[]).find((p) => p.url_token === owner.answer.url_token);
      expect(push, 'the answer’s push is not among the requester’s active pushes');
      expectEqual(push.expire_after_views, 2, 'expire_after_views of the answer’s push');
    },
  },
  {
    id: 'REQ-004',
    title: 'The requester’s first retrieval of the answer moves the request to collected; the log shows each move',
    source: `${SOURCE} (states); spec: getRequestAudit`,
    needs: ['requests', 'token', 'viewer'],
    async run(ctx) {
      const created = await newRequest(ctx);
      const secret = `collected ${unique()}`;
      expectStatus(await answer(ctx, created.url_token, secret), 201);
      const before = await ownerView(ctx, created.url_token);
      expectEqual(before.state, 'fulfilled', 'state before the retrieval');
      const got = await ctx.call('getPush', { params: { url_token: before.answer.url_token }, as: 'a' });
      expectStatus(got, 200);
      expectEqual(got.body.payload, secret, 'payload of the answer');
      expectEqual((await ownerView(ctx, created.url_token)).state, 'collected', 'state after the retrieval');
      expectEqual(await auditKinds(ctx, created.url_token), ['creation', 'fulfilled', 'collected'], 'audit kinds');
    },
  },
  {
    id: 'REQ-005',
    title: 'A second answer answers 409 request_answered and stores nothing',
    source: `${SOURCE}; spec: respondToRequest 409`,
    needs: ['requests', 'token', 'viewer'],
    async run(ctx) {
      const created = await newRequest(ctx);
      expectStatus(await answer(ctx, created.url_token, 'first'), 201);
      const count = await activePushCount(ctx);
      const again = await answer(ctx, created.url_token, 'second');
      expectStatus(again, 409);
      expectCode(again, 'request_answered');
      expectEqual(await activePushCount(ctx), count, 'the requester’s active pushes after a refused answer');
    },
  },
  {
    id: 'REQ-006',
    title: 'A revoked request is closed: an answer answers 410 request_closed and stores nothing',
    source: `${SOURCE}; spec: revokeRequest, respondToRequest 410`,
    needs: ['requests', 'token', 'viewer'],
    async run(ctx) {
      const created = await newRequest(ctx);
      const revoked = await ctx.call('revokeRequest', { params: { url_token: created.url_token }, as: 'a' });
      expectStatus(revoked, 200);
      expectEqual(revoked.body.state, 'revoked', 'state after the revocation');
      const count = await activePushCount(ctx);
      const late = await answer(ctx, created.url_token, 'late');
      expectStatus(late, 410);
      expectCode(late, 'request_closed');
      expectEqual(await activePushCount(ctx), count, 'the requester’s active pushes after a refused answer');
      expectEqual(await auditKinds(ctx, created.url_token), ['creation', 'revoked'], 'audit kinds');
    },
  },
  {
    id: 'REQ-007',
    title: 'Preview, audit and revoke are the requester’s: 401 without a token, 403 for another user',
    source: `${SOURCE}; spec: previewRequest, getRequestAudit, revokeRequest`,
    needs: ['requests', 'token', 'tokenB'],
    async run(ctx) {
      const created = await newRequest(ctx);
      const params = { url_token: created.url_token };
      for (const op of ['previewRequest', 'getRequestAudit', 'revokeRequest']) {
        expectStatus(await ctx.call(op, { params, as: 'b' }), 403);
        expectStatus(await ctx.call(op, { params, as: 'anon' }), 401);
      }
      expectEqual((await ownerView(ctx, created.url_token)).state, 'pending', 'state after the refused calls');
    },
  },
  {
    id: 'REQ-008',
    title: 'A create without a token answers 401; an empty ask answers 422 on request',
    source: `${SOURCE}; spec: createRequest`,
    needs: ['requests', 'token'],
    async run(ctx) {
      expectStatus(await ctx.call('createRequest', { as: 'anon', body: { request: { request: 'x' } } }), 401);
      const empty = await ctx.call('createRequest', { as: 'a', body: { request: { request: '' } } });
      expectStatus(empty, 422);
      expect(empty.body.errors && 'request' in empty.body.errors, 'the 422 does not name request');
    },
  },
]);
