/** Errors, files, exactly-once and response headers. */
import { define } from '../requirement.js';
import {
  AssertionFailure,
  expect,
  expectCode,
  expectEqual,
  expectStatus,
  saidByTarget,
  unique,
  type Ctx,
} from '../context.js';
import { expect422 } from './pushes.js';

const SECRET = () => `s3cret ${unique('payload')}`;

export const errors = define('ERR', [
  {
    id: 'ERR-001',
    title: 'Every error response of the run is a JSON body with error and a snake_case code',
    source: 'decisions: Errors, sentence 1',
    stateless: true,
    aggregate: true,
    async run(ctx) {
      const errorResponses = ctx.observed.filter((o) => o.status >= 400);
      expect(ctx.partial || errorResponses.length > 0, 'the run observed no error response to check');
      const bad = errorResponses.filter((o) => {
        const body = o.body as { error?: unknown; code?: unknown } | undefined;
        return (
          !body ||
          typeof body.error !== 'string' ||
          typeof body.code !== 'string' ||
          !/^[a-z][a-z0-9_]*$/.test(body.code)
        );
      });
      expect(
        bad.length === 0,
        `${bad.length}/${errorResponses.length} error bodies lack error/code, e.g. ${bad[0]?.method} ${bad[0]?.url} → ${bad[0]?.status} ${JSON.stringify(bad[0]?.text.slice(0, 80))}`,
      );
      const statuses = [...new Set(errorResponses.map((o) => o.status))].sort();
      ctx.note = `${errorResponses.length} error responses checked, statuses ${statuses.join(' ')}`;
    },
  },
  {
    id: 'ERR-002',
    title: 'An unknown path under /api/v2 answers a JSON 404 no_route',
    source: 'decisions: Paths and formats, bullet 1',
    async run(ctx) {
      const res = await ctx.raw('NoRoute', 'GET', '/api/v2/no-such-thing');
      expectStatus(res, 404);
      expectCode(res, 'no_route');
    },
  },
  {
    id: 'ERR-003',
    title: 'A method a path does not define answers a JSON 405 with Allow',
    source: 'decisions: Paths and formats, bullet 1; decisions: Errors (405)',
    async run(ctx) {
      const res = await ctx.raw('MethodNotAllowed', 'PUT', '/api/v2/version');
      expectStatus(res, 405);
      expectCode(res, 'method_not_allowed');
      expect(/GET/i.test(res.headers.get('allow') ?? ''), `Allow is ${JSON.stringify(res.headers.get('allow'))}`);
    },
  },
  {
    id: 'ERR-004',
    title: 'A 422 carries errors: field → non-empty list of messages',
    source: 'decisions: Errors, sentence 1 (422 adds errors)',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('createPush', {
        body: { push: { payload: 'x', expire_after_days: 0 } },
        as: ctx.creator,
      });
      expectStatus(res, 422);
      const errs = res.body?.errors as Record<string, unknown> | undefined;
      expect(errs && typeof errs === 'object' && Object.keys(errs).length > 0, '422 has no errors object');
      for (const [field, messages] of Object.entries(errs)) {
        expect(
          Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string'),
          `errors.${field} is not a non-empty list of strings`,
        );
      }
    },
  },
  {
    id: 'ERR-005',
    title: 'A create body not sent as application/json is refused with a 400 error body',
    source:
      'seed §4 (request bodies are JSON with Content-Type: application/json); decisions: Paths and formats, bullet 2',
    needs: ['creator'],
    // Not in the stateless profile: Prism answers 415 here, a status the decisions do not allow.
    stateless: false,
    async run(ctx) {
      const res = await ctx.call('createPush', { rawBody: 'payload=x', contentType: 'text/plain', as: ctx.creator });
      expectStatus(res, 400);
    },
  },
  {
    id: 'ERR-006',
    title: 'Every v2 path answers an undefined method with 405 and its methods in Allow (DELETE /pushes/active too)',
    source:
      'decisions: Paths and formats, bullet 1 (405; active and expired before {url_token}); decisions: Errors (405)',
    async run(ctx) {
      const t = 'unknownconformance0000';
      const cases: [string, string, string[]][] = [
        ['GET', '/api/v2/pushes', ['POST']],
        ['PATCH', `/api/v2/pushes/${t}`, ['GET', 'DELETE']],
        ['POST', `/api/v2/pushes/${t}/preview`, ['GET']],
        ['PUT', `/api/v2/pushes/${t}/audit`, ['GET']],
        // `active` and `expired` are matched before {url_token}: a 405, not the expiry of a push called "active".
        ['DELETE', '/api/v2/pushes/active', ['GET']],
        ['DELETE', '/api/v2/pushes/expired', ['GET']],
      ];
      for (const [method, path, methods] of cases) {
        const res = await ctx.raw('MethodNotAllowed', method, path, { as: ctx.hasToken ? 'a' : 'anon' });
        if (res.status !== 405)
          throw new AssertionFailure(`${method} ${path}: expected 405, got ${res.status}${saidByTarget(res)}`);
        expectCode(res, 'method_not_allowed');
        const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim().toUpperCase());
        for (const m of methods)
          expect(allow.includes(m), `${method} ${path}: Allow ${JSON.stringify(res.headers.get('allow'))} lacks ${m}`);
        expect(
          !allow.includes(method),
          `${method} ${path}: Allow ${JSON.stringify(res.headers.get('allow'))} names ${method}`,
        );
      }
    },
  },
  {
    id: 'ERR-007',
    title:
      'A create body in another media type than JSON, multipart or form-urlencoded answers 400 unsupported_media_type',
    source: 'decisions: Paths and formats, bullet 2; spec: createPush requestBody (three media types) and 400',
    needs: ['creator'],
    async run(ctx) {
      const cases: [string, string][] = [
        ['text/plain', '{"push":{"payload":"x"}}'],
        ['application/xml', '<push><payload>x</payload></push>'],
      ];
      for (const [contentType, rawBody] of cases) {
        const res = await ctx.call('createPush', { rawBody, contentType, as: ctx.creator });
        expectStatus(res, 400);
        expectCode(res, 'unsupported_media_type');
      }
    },
  },
  {
    id: 'ERR-008',
    title: 'A create body that is not an object, or whose push is not an object, answers 400 missing_push',
    source: 'decisions: Create, bullet 1 (body not an object, or no push object → 400); spec: createPush 400',
    needs: ['creator'],
    async run(ctx) {
      for (const rawBody of ['[]', '42', 'null', '{"push":"x"}', '{"push":[]}', '{"push":null}']) {
        const res = await ctx.call('createPush', { rawBody, as: ctx.creator });
        expect(res.status === 400, `body ${rawBody}: expected 400, got ${res.status}${saidByTarget(res)}`);
        expectCode(res, 'missing_push');
      }
    },
  },
  {
    id: 'ERR-009',
    title: 'Every operation on an unknown url_token answers 404 not_found (retrieve, preview, audit, delete, download)',
    source: 'seed §7 (404); spec: info.description (order of checks: the push before ownership and the passphrase)',
    async run(ctx) {
      const p = { params: { url_token: 'unknownconformance0000' } };
      const calls: [string, Parameters<Ctx['call']>[1]][] = [
        ['getPush', p],
        ['previewPush', p],
        ['expirePush', { ...p, as: ctx.hasToken ? 'a' : 'anon' }],
      ];
      if (ctx.hasToken) calls.push(['getPushAudit', { ...p, as: 'a' }]);
      if (ctx.features.pushes.file_attachments.enabled) {
        calls.push([
          'downloadPushFile',
          {
            params: { ...p.params, file_id: 'nofile' },
            query: { token: 'conformance.not.signed' },
            headers: { accept: '*/*' },
          },
        ]);
      }
      for (const [operationId, opts] of calls) {
        const res = await ctx.call(operationId, { as: ctx.hasToken ? 'a' : 'anon', ...opts });
        expectStatus(res, 404);
        expectCode(res, 'not_found');
      }
      ctx.note = `${calls.map(([id]) => id).join(', ')}`;
    },
  },
]);

const FILE_BYTES = Buffer.from('-----BEGIN CONFORMANCE KEY-----\n\u00e9\u0000\u00ff\n', 'latin1');

async function filePush(ctx: Ctx, views = 5) {
  return ctx.create({
    payload: 'see attachment',
    expire_after_views: views,
    files: [
      { filename: 'id_conformance', content_type: 'application/x-pem-file', content: FILE_BYTES.toString('base64') },
    ],
  });
}

export const files = define('FILE', [
  {
    id: 'FILE-001',
    title: 'Retrieving a file push lists its files with id, filename, content_type, size and url',
    source: 'decisions: Retrieve, bullet 7',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const push = await filePush(ctx);
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expectEqual(res.body.kind, 'file', 'kind');
      expectEqual(res.body.files.length, 1, 'number of files');
      const [file] = res.body.files;
      expectEqual(file.filename, 'id_conformance', 'filename');
      expectEqual(file.content_type, 'application/x-pem-file', 'content_type');
      expectEqual(file.size, FILE_BYTES.length, 'size');
    },
  },
  {
    id: 'FILE-002',
    title: 'The signed link downloads the exact bytes and does not count a view',
    source: 'decisions: Retrieve, bullet 7',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const push = await filePush(ctx, 2);
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      for (let i = 0; i < 2; i++) {
        const download = await ctx.download('downloadPushFile', res.body.files[0].url);
        expectEqual(download.status, 200, 'download status');
        expect(download.bytes.equals(FILE_BYTES), 'downloaded bytes differ from the upload');
      }
      const again = await ctx.retrieve(push.url_token);
      expectStatus(again, 200);
      expectEqual(again.body.views_remaining, 0, 'views_remaining after two downloads and two views');
      expect(again.body.payload !== null, 'the second view got no payload: a download counted as a view');
    },
  },
  {
    id: 'FILE-003',
    title: 'A tampered download token answers 403',
    source: 'decisions: Retrieve, bullet 7 (signed download link)',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const push = await filePush(ctx);
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      const file = res.body.files[0];
      const token = new URL(file.url).searchParams.get('token') ?? '';
      const tampered = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const bad = await ctx.call('downloadPushFile', {
        params: { url_token: push.url_token, file_id: file.id },
        query: { token: tampered },
        headers: { accept: '*/*' },
      });
      expectStatus(bad, 403);
    },
  },
  {
    id: 'FILE-004',
    title: 'A file push without files answers 422',
    source: 'decisions: Create, bullet 4 (a file push needs at least one file)',
    needs: ['file'],
    async run(ctx) {
      const res = await ctx.call('createPush', { body: { push: { kind: 'file', payload: 'x' } }, as: ctx.creator });
      expectStatus(res, 422);
    },
  },
  {
    id: 'FILE-005',
    title: 'A file push with 11 files, or a file kind with none, answers 422 naming files',
    source: 'decisions: Create, bullets 1 and 4 (at least one file; at most 10)',
    needs: ['file'],
    async run(ctx) {
      const file = (i: number) => ({
        filename: `f${i}.txt`,
        content_type: 'text/plain',
        content: Buffer.from(`f${i}`).toString('base64'),
      });
      await expect422(ctx, { files: Array.from({ length: 11 }, (_, i) => file(i)) }, 'files');
      await expect422(ctx, { kind: 'file', files: Array.from({ length: 11 }, (_, i) => file(i)) }, 'files');
      await expect422(ctx, { kind: 'file', payload: 'x' }, 'files');
      await expect422(ctx, { kind: 'file', files: [] }, 'files');
    },
  },
  {
    id: 'FILE-006',
    title: 'A link issued by the last view still downloads the bytes after the push expired',
    source: 'decisions: Retrieve, bullet 7 (links issued before expiry stay valid until they lapse)',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const push = await filePush(ctx, 1);
      const last = await ctx.retrieve(push.url_token);
      expectStatus(last, 200);
      expectEqual(last.body.views_remaining, 0, 'views_remaining on the last view');
      const url = last.body.files?.[0]?.url;
      expect(typeof url === 'string', 'the last view lists no file url');
      const after = await ctx.retrieve(push.url_token);
      expectStatus(after, 200);
      expectEqual(after.body.expired, true, 'expired after the last view');
      expectEqual(after.body.files, [], 'files of the expired push');
      const download = await ctx.download('downloadPushFile', url);
      expectEqual(download.status, 200, 'download status after expiry');
      expect(download.bytes.equals(FILE_BYTES), 'downloaded bytes differ from the upload');
    },
  },
  {
    id: 'FILE-007',
    title: 'The download link is a JWT whose exp is at most 5 minutes after it was issued',
    source: 'decisions: Retrieve, bullet 7 (a JWT, 5-minute lifetime)',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const push = await filePush(ctx);
      const before = Math.floor(Date.now() / 1000);
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      const url = res.body.files?.[0]?.url;
      expect(typeof url === 'string', 'the retrieval lists no file url');
      const token = new URL(url).searchParams.get('token') ?? '';
      const parts = token.split('.');
      expect(parts.length === 3, `the link's token is not a JWT (${parts.length} parts)`);
      let claims: { exp?: unknown; iat?: unknown };
      try {
        claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
      } catch {
        throw new AssertionFailure("the link's JWT payload is not JSON");
      }
      expect(
        typeof claims.exp === 'number',
        `the link's JWT has no numeric exp (claims: ${Object.keys(claims).join(', ')})`,
      );
      const exp = claims.exp;
      if (typeof claims.iat === 'number') {
        expect(exp - claims.iat <= 300, `exp − iat is ${exp - claims.iat} s, over 5 minutes`);
        expect(exp > claims.iat, `exp ${exp} is not after iat ${claims.iat}`);
      }
      // Against this machine's clock, with a minute of leeway for clock skew.
      const skew = 60;
      expect(exp <= before + 300 + skew, `exp is ${exp - before} s after the request, over 5 minutes`);
      expect(exp > before - skew, `exp is already ${before - exp} s in the past`);
      ctx.note = `exp ${exp - before} s after the request`;
    },
  },
  {
    id: 'FILE-008',
    title:
      'A download is application/octet-stream, an attachment with the file name, and X-Content-Type-Options: nosniff',
    source: 'spec: downloadPushFile 200 (octet-stream, Content-Disposition, nosniff); decisions: Retrieve, bullet 7',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const push = await filePush(ctx);
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      const download = await ctx.download('downloadPushFile', res.body.files[0].url);
      expectEqual(download.status, 200, 'download status');
      const type = download.headers.get('content-type');
      expect(/^application\/octet-stream\s*(;|$)/i.test(type ?? ''), `Content-Type ${JSON.stringify(type)}`);
      const disposition = download.headers.get('content-disposition') ?? '';
      expect(
        /^attachment\s*(;|$)/i.test(disposition),
        `Content-Disposition ${JSON.stringify(disposition)} is not an attachment`,
      );
      expect(
        disposition.includes('id_conformance'),
        `Content-Disposition ${JSON.stringify(disposition)} does not name the file`,
      );
      expectEqual(download.headers.get('x-content-type-options'), 'nosniff', 'X-Content-Type-Options');
    },
  },
  {
    id: 'FILE-009',
    title: "A download with another file's link answers 403 invalid_link, one without a token 400 invalid_parameter",
    source: 'decisions: Retrieve, bullet 7 (a signed link per file); spec: downloadPushFile 400 and 403',
    needs: ['file', 'viewer'],
    async run(ctx) {
      const file = (name: string) => ({
        filename: name,
        content_type: 'text/plain',
        content: Buffer.from(name).toString('base64'),
      });
      const push = await ctx.create({ payload: 'two files', files: [file('one.txt'), file('two.txt')] });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      const [one, two] = res.body.files as { id: string; url: string }[];
      expect(one && two && one.id !== two.id, 'the retrieval does not list two files with distinct ids');
      const token = new URL(one.url).searchParams.get('token') ?? '';
      const params = { url_token: push.url_token, file_id: two.id };
      const crossed = await ctx.call('downloadPushFile', { params, query: { token }, headers: { accept: '*/*' } });
      expectStatus(crossed, 403);
      expectCode(crossed, 'invalid_link');
      const none = await ctx.call('downloadPushFile', { params, headers: { accept: '*/*' } });
      expectStatus(none, 400);
      expectCode(none, 'invalid_parameter');
    },
  },
]);

async function burst(ctx: Ctx, urlToken: string, n: number, bases: (string | undefined)[] = [undefined]) {
  return Promise.all(Array.from({ length: n }, (_, i) => ctx.retrieve(urlToken, { base: bases[i % bases.length] })));
}

export const once = define('ONCE', [
  {
    id: 'ONCE-001',
    title: '20 concurrent retrievals of a one-view push deliver the payload exactly once',
    source: 'decisions: Retrieve, bullet 5 (exactly once)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 1 });
      const answers = await burst(ctx, push.url_token, 20);
      const delivered = answers.filter((r) => r.status === 200 && r.body?.payload === secret);
      expectEqual(delivered.length, 1, 'answers carrying the payload');
      const others = answers.filter((r) => !delivered.includes(r));
      for (const r of others) {
        expectStatus(r, 200);
        expectEqual(r.body.expired, true, 'expired on a losing retrieval');
      }
      ctx.note = `1 of 20 got the payload`;
    },
  },
  {
    id: 'ONCE-002',
    title: '12 concurrent retrievals of a three-view push deliver it exactly three times',
    source: 'decisions: Retrieve, bullet 5 (exactly once); seed §2.1 (expire_after_views)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 3 });
      const answers = await burst(ctx, push.url_token, 12);
      const delivered = answers.filter((r) => r.status === 200 && r.body?.payload === secret);
      expectEqual(delivered.length, 3, 'answers carrying the payload');
      const remaining = delivered.map((r) => r.body.views_remaining as number).sort();
      expectEqual(remaining, [0, 1, 2], 'views_remaining of the three deliveries');
    },
  },
  {
    id: 'ONCE-003',
    title: '20 concurrent retrievals spread over two processes deliver a one-view push exactly once',
    source: 'decisions: Retrieve, bullet 5 (also when they hit different server processes)',
    needs: ['creator', 'viewer', 'secondProcess'],
    async run(ctx) {
      const secret = SECRET();
      const push = await ctx.create({ payload: secret, expire_after_views: 1 });
      const answers = await burst(ctx, push.url_token, 20, [undefined, ctx.options.baseUrl2]);
      const delivered = answers.filter((r) => r.status === 200 && r.body?.payload === secret);
      expectEqual(delivered.length, 1, 'answers carrying the payload');
      for (const r of answers.filter((x) => !delivered.includes(x))) {
        expectStatus(r, 200);
        expectEqual(r.body.expired, true, 'expired on a losing retrieval');
      }
    },
  },
]);

export const headers = define('HDR', [
  {
    id: 'HDR-001',
    title: 'A retrieval that carries the payload sends Cache-Control: no-store',
    source: 'decisions: Retrieve, bullet 8',
    needs: ['creator', 'viewer'],
    stateless: true,
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      const res = await ctx.retrieve(push.url_token);
      expectStatus(res, 200);
      expect(typeof res.body?.payload === 'string', 'retrieval carries no payload');
      expect(
        /(^|,)\s*no-store\s*(,|$)/.test(res.headers.get('cache-control') ?? ''),
        `Cache-Control is ${JSON.stringify(res.headers.get('cache-control'))}`,
      );
    },
  },
  {
    id: 'HDR-002',
    title: 'Every response of the run that can carry a secret or a push record sends Cache-Control: no-store',
    source: 'decisions: Retrieve, bullet 8',
    stateless: true,
    aggregate: true,
    async run(ctx) {
      const relevant = ctx.observed.filter((o) => o.target !== 'getVersion' && !o.target.startsWith('#'));
      expect(ctx.partial || relevant.length > 0, 'the run observed no push response to check');
      const bad = relevant.filter((o) => !/(^|,)\s*no-store\s*(,|$)/.test(o.cacheControl ?? ''));
      expect(
        bad.length === 0,
        `${bad.length}/${relevant.length} responses without no-store, e.g. ${bad[0]?.method} ${bad[0]?.url} → ${bad[0]?.status}`,
      );
      ctx.note = `${relevant.length} responses checked`;
    },
  },
]);
