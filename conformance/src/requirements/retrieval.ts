/** Retrieve, views, passphrase and preview (pushes.ts: version and create). */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique } from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;

export const retrieve = define('RET', [
  {
    id: 'RET-001',
    title: 'Retrieval answers 200 with the payload and counts one view',
    source: 'seed §4 behavior 3; decisions: Retrieve, bullet 3',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 3 });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload');
      expectEqual(res.body.views_remaining, 2, 'views_remaining after one view');
      expectEqual(res.body.expired, false, 'expired');
      expectEqual(res.body.files, [], 'files of a text push');
    },
  },
  {
    id: 'RET-002',
    title: 'An unknown url_token answers 404',
    source: 'decisions: Retrieve, bullet 1; seed §7 (404)',
    needs: ['creator'],
    async run(ctx) {
      const res = await ctx.call('getPush', { params: { url_token: 'unknownconformance0000' }, as: ctx.creator });
      expectStatus(res, 404);
      expectCode(res, 'not_found');
    },
  },
  {
    id: 'RET-003',
    title: "The owner's own retrieval does not count a view",
    source: 'decisions: Retrieve, bullet 3',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 2 }, 'a');
      const own = await ctx.retrieve(push.url_token, { as: 'a' });
      expectStatus(own, 200);
      expectEqual(own.body.payload, secret, 'payload for the owner');
      expectEqual(own.body.views_remaining, 2, 'views_remaining after the owner read');
      const viewed = await ctx.retrieve(push.url_token);
      expectStatus(viewed, 200);
      expectEqual(viewed.body.views_remaining, 1, 'views_remaining after one recipient view');
    },
  },
  {
    id: 'RET-004',
    title: 'Retrieval through the .json suffix works the same',
    source: 'decisions: Paths and formats, bullet 1',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret });
      const res = await ctx.retrieve(push.url_token, { jsonSuffix: true });
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload via .json');
    },
  },
]);

export const views = define('VIEW', [
  {
    id: 'VIEW-001',
    title: 'The last view returns the payload with views_remaining 0 and expired false',
    source: 'decisions: Retrieve, bullet 4',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 1 });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload of the last view');
      expectEqual(res.body.views_remaining, 0, 'views_remaining');
      expectEqual(res.body.expired, false, 'expired on the last view');
    },
  },
  {
    id: 'VIEW-002',
    title: 'After the last view, retrieval answers 200 with expired true, payload null, files []',
    source: 'decisions: Retrieve, bullet 1; seed §3 (view limit → expired)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 1 });
      expectStatus(await ctx.retrieve(push.url_token), 200);
      for (let i = 0; i < 2; i++) {
        const res = await ctx.retrieve(push.url_token);
        expectStatus(res, 200);
        expectEqual(res.body.expired, true, 'expired');
        expectEqual(res.body.payload, null, 'payload');
        expectEqual(res.body.files, [], 'files');
        expectEqual(res.body.views_remaining, 0, 'views_remaining');
        expect(res.body.expired_on !== null, 'expired_on is null on an expired push');
      }
    },
  },
  {
    id: 'VIEW-003',
    title: 'expire_after_views N allows exactly N views, counting down views_remaining',
    source: 'seed §2.1 (expire_after_views: maximum number of retrievals)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 3 });
      for (const left of [2, 1, 0]) {
        const res = await ctx.retrieve(push.url_token);
        expectStatus(res, 200);
        expectEqual(res.body.payload, secret, `payload with ${left} views left`);
        expectEqual(res.body.views_remaining, left, 'views_remaining');
      }
      const after = await ctx.retrieve(push.url_token);
      expectStatus(after, 200);
      expectEqual(after.body.payload, null, 'payload after the third view');
    },
  },
  {
    id: 'VIEW-004',
    title: 'Retrievals of an expired push (failed_view) do not count: views_remaining stays as it was',
    source: 'decisions: Retrieve, bullet 1 (failed_view does not count as a view)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 3, deletable_by_viewer: true });
      const viewed = await ctx.retrieve(push.url_token);
      expectStatus(viewed, 200);
      expectEqual(viewed.body.views_remaining, 2, 'views_remaining after one view');
      // Expired by a delete with views left, so a counted failed_view would show.
      const deleted = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: ctx.creator });
      expectStatus(deleted, 200);
      const left = deleted.body.views_remaining;
      for (let i = 1; i <= 3; i++) {
        const res = await ctx.retrieve(push.url_token);
        expectStatus(res, 200);
        expectEqual(res.body.expired, true, 'expired');
        expectEqual(res.body.views_remaining, left, `views_remaining after ${i} retrieval(s) of the expired push`);
      }
    },
  },
  {
    id: 'VIEW-005',
    title: 'A push expired by its view limit reports deleted false (deleted marks an explicit delete)',
    source:
      'decisions: Preview, audit, lists, delete, bullet 5 (delete → deleted: true); seed §3 (view limit → expired)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 1 });
      const last = await ctx.retrieve(push.url_token);
      expectStatus(last, 200);
      expectEqual(last.body.deleted, false, 'deleted on the last view');
      const after = await ctx.retrieve(push.url_token);
      expectStatus(after, 200);
      expectEqual(after.body.expired, true, 'expired after the last view');
      expectEqual(after.body.deleted, false, 'deleted after expiry by views');
    },
  },
  {
    id: 'VIEW-006',
    title: 'The active list and delete report views_remaining as the last retrieval left it',
    source:
      "decisions: Preview, audit, lists, delete, bullets 3 and 5 (from the push's real state); seed §2.1 (expire_after_views)",
    needs: ['token', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 3 }, 'a');
      const first = await ctx.retrieve(push.url_token);
      expectStatus(first, 200);
      expectEqual(first.body.views_remaining, 2, 'views_remaining after one view');
      const active = await ctx.call('listActivePushes', { as: 'a' });
      expectStatus(active, 200);
      const listed = (active.body as { url_token: string; views_remaining: number }[]).find(
        (p) => p.url_token === push.url_token,
      );
      expect(listed, 'the push is not on page 1 of the active list');
      expectEqual(listed.views_remaining, 2, 'views_remaining in the active list after one view');
      expectEqual((await ctx.retrieve(push.url_token)).body?.views_remaining, 1, 'views_remaining after two views');
      const deleted = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(deleted, 200);
      expectEqual(deleted.body.views_remaining, 1, 'views_remaining in the delete answer');
      const after = await ctx.retrieve(push.url_token);
      expectStatus(after, 200);
      expectEqual(after.body.views_remaining, 1, 'views_remaining of the deleted push');
    },
  },
]);

export const passphrase = define('PASS', [
  {
    id: 'PASS-001',
    title: 'A passphrase push retrieved without one answers 401 passphrase_required',
    source: 'decisions: Retrieve, bullet 2',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), passphrase: 'open sesame' });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 401);
      expectCode(res, 'passphrase_required');
    },
  },
  {
    id: 'PASS-002',
    title: 'A wrong passphrase answers 401 passphrase_incorrect',
    source: 'decisions: Retrieve, bullet 2',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), passphrase: 'open sesame' });
      const res = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': 'open barley' } });
      expectStatus(res, 401);
      expectCode(res, 'passphrase_incorrect');
    },
  },
  {
    id: 'PASS-003',
    title: 'The right passphrase in X-Passphrase retrieves the payload',
    source: 'decisions: Retrieve, bullet 2',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, passphrase: 'open sesame' });
      const res = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': 'open sesame' } });
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload');
      expectEqual(res.body.passphrase_protected, true, 'passphrase_protected');
    },
  },
  {
    id: 'PASS-004',
    title: 'The right passphrase in the passphrase query parameter retrieves the payload',
    source: 'seed §4 (GET push: passphrase query)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, passphrase: 'open sesame' });
      const res = await ctx.retrieve(push.url_token, { query: { passphrase: 'open sesame' } });
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload');
    },
  },
  {
    id: 'PASS-005',
    title: 'After 5 failed attempts within a minute, the next answers 429 with Retry-After',
    source: 'decisions: Retrieve, bullet 2',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), passphrase: 'open sesame' });
      for (let i = 1; i <= 5; i++) {
        const res = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': `wrong ${i}` } });
        expectStatus(res, 401);
      }
      const res = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': 'wrong 6' } });
      expectStatus(res, 429);
      expectCode(res, 'too_many_attempts');
      const retryAfter = res.headers.get('retry-after');
      expect(retryAfter !== null && /^\d+$/.test(retryAfter), `Retry-After is ${JSON.stringify(retryAfter)}`);
    },
  },
  {
    id: 'PASS-006',
    title: 'No response carries the passphrase; passphrase_protected says it is set',
    source: 'decisions: The push record, bullet 3',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const phrase = unique('phrase');
      const push = await ctx.create({ payload: SECRET(), passphrase: phrase });
      expectEqual(push.passphrase_protected, true, 'passphrase_protected on create');
      const res = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': phrase } });
      expectStatus(res, 200);
      for (const [what, body] of [
        ['create', push],
        ['retrieve', res.body],
      ] as const) {
        expect(!('passphrase' in body), `${what} response has a passphrase key`);
        expect(!JSON.stringify(body).includes(phrase), `${what} response contains the passphrase`);
      }
    },
  },
  {
    id: 'PASS-007',
    title: 'The attempt limit holds across processes: 5 failures split over two, then 429 on either',
    source: 'decisions: Retrieve, bullet 2 (on every instance)',
    needs: ['creator', 'viewer', 'secondProcess'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), passphrase: 'open sesame' });
      const bases = [undefined, ctx.options.baseUrl2];
      for (let i = 0; i < 5; i++) {
        const res = await ctx.retrieve(push.url_token, {
          base: bases[i % 2],
          headers: { 'x-passphrase': `wrong ${i}` },
        });
        expectStatus(res, 401);
      }
      for (const base of bases) {
        const res = await ctx.retrieve(push.url_token, { base, headers: { 'x-passphrase': 'wrong again' } });
        expectStatus(res, 429);
        expectCode(res, 'too_many_attempts');
      }
    },
  },
  {
    id: 'PASS-008',
    title: 'A retrieval passphrase over 1,024 characters (header or query) answers 400, not the payload',
    source:
      'seed §4 (GET push: passphrase parameter); seed §7 (400 invalid parameters); decisions: Create, bullet 7 (1..1024)',
    needs: ['creator', 'viewer'],
    stateless: true,
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), passphrase: 'open sesame' });
      const long = 'p'.repeat(1025);
      const byHeader = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': long } });
      expectStatus(byHeader, 400);
      const byQuery = await ctx.retrieve(push.url_token, { query: { passphrase: long } });
      expectStatus(byQuery, 400);
    },
  },
  {
    id: 'PASS-009',
    title: 'An over-long retrieval passphrase answers 400 invalid_parameter, uses no view and is no failed attempt',
    source:
      'seed §7 (400 invalid parameters); spec: getPush (400 invalid_parameter; checks before the push and the passphrase)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, passphrase: 'open sesame', expire_after_views: 2 });
      const long = 'p'.repeat(1025);
      for (let i = 0; i < 3; i++) {
        const byHeader = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': long } });
        expectStatus(byHeader, 400);
        expectCode(byHeader, 'invalid_parameter');
        const byQuery = await ctx.retrieve(push.url_token, { query: { passphrase: long } });
        expectStatus(byQuery, 400);
        expectCode(byQuery, 'invalid_parameter');
      }
      // Six refused requests: were they attempts, the limit (5 a minute) would answer 429 now.
      const res = await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': 'open sesame' } });
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload after the refused requests');
      expectEqual(res.body.views_remaining, 1, 'views_remaining after the refused requests and one view');
    },
  },
]);

export const preview = define('PREV', [
  {
    id: 'PREV-001',
    title: 'Preview answers 200 with a url',
    source: 'seed §4 behavior 4; decisions: Preview, audit, lists, delete, bullet 1',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      const res = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: ctx.creator });
      expectStatus(res, 200);
      expect(typeof res.body?.url === 'string', 'preview has no url');
    },
  },
  {
    id: 'PREV-002',
    title: "Preview's url is the push's html_url ({base}/p/{url_token})",
    source: 'decisions: Preview, audit, lists, delete, bullet 1; decisions: The push record, bullet 4',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      const res = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: ctx.creator });
      expectStatus(res, 200);
      expectEqual(res.body.url, push.html_url, 'preview url');
      expect(String(push.html_url).endsWith(`/p/${push.url_token}`), `html_url ${push.html_url}`);
    },
  },
  {
    id: 'PREV-003',
    title: 'Preview does not count a view',
    source: 'seed §4 behavior 4; decisions: Preview, audit, lists, delete, bullet 1',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 2 });
      for (let i = 0; i < 2; i++) {
        expectStatus(await ctx.call('previewPush', { params: { url_token: push.url_token }, as: ctx.viewer }), 200);
      }
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expect(res.body.payload !== null, 'payload gone after two previews and one view');
      expectEqual(res.body.views_remaining, 1, 'views_remaining after two previews and one view');
    },
  },
  {
    id: 'PREV-004',
    title: 'Preview works on an expired push',
    source: 'decisions: Preview, audit, lists, delete, bullet 1',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 1 });
      expectStatus(await ctx.retrieve(push.url_token), 200);
      const res = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: ctx.viewer });
      expectStatus(res, 200);
      expectEqual(res.body.url, push.html_url, 'preview url of an expired push');
    },
  },
  {
    id: 'PREV-005',
    title: 'Preview of an unknown url_token answers 404',
    source: 'decisions: Preview, audit, lists, delete, bullet 1',
    needs: ['creator'],
    async run(ctx) {
      const res = await ctx.call('previewPush', { params: { url_token: 'unknownconformance0000' }, as: ctx.creator });
      expectStatus(res, 404);
      expectCode(res, 'not_found');
    },
  },
  {
    id: 'PREV-006',
    title: 'Preview adds no audit entry',
    source: 'decisions: Preview, audit, lists, delete, bullet 1',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      expectStatus(await ctx.call('previewPush', { params: { url_token: push.url_token }, as: 'a' }), 200);
      const audit = await ctx.call('getPushAudit', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(audit, 200);
      expectEqual(
        audit.body.logs.map((l: { kind: string }) => l.kind),
        ['creation'],
        'audit kinds',
      );
    },
  },
  {
    id: 'PREV-007',
    title: 'A .json suffix is accepted on preview (GET /pushes/{url_token}/preview.json)',
    source: 'decisions: Paths and formats, bullet 1',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      const res = await ctx.call('previewPush', {
        params: { url_token: push.url_token },
        as: ctx.creator,
        jsonSuffix: true,
      });
      expectStatus(res, 200);
      expectEqual(res.body.url, push.html_url, 'preview url via .json');
    },
  },
  {
    id: 'PREV-008',
    title: "Preview's url follows retrieval_step: {base}/p/{url_token}/r when it is on",
    source: 'decisions: Preview, audit, lists, delete, bullet 1; decisions: The push record, bullet 4',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), retrieval_step: true });
      const res = await ctx.call('previewPush', { params: { url_token: push.url_token }, as: ctx.creator });
      expectStatus(res, 200);
      expect(
        String(res.body.url).endsWith(`/p/${push.url_token}/r`),
        `preview url ${res.body.url} with retrieval_step on`,
      );
      expectEqual(res.body.url, push.html_url, 'preview url');
    },
  },
]);
