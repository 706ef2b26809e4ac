/**
 * The legacy API v1 (openapi/v1), for the clients that still speak it (PassPushPosh and CIPP, both Terraform
 * providers, the .NET, PHP and Rust clients, pwpush-cli ≤ 0.13, Keypirinha, kppwpush). Gated on what the instance
 * answers: `GET /api/v1/version.json` with a v1 report. Every answer is checked against the v1 document; each flow by
 * its effect (what was created is retrieved, the audit shows the views, a delete makes the push expired). Calls use
 * the legacy `X-User-Email` + `X-User-Token` pair (what v1 clients send) when the emails are given.
 */
import { define } from '../requirement.js';
import {
  AssertionFailure,
  expect,
  expectCode,
  expectEqual,
  expectStatus,
  saidByTarget,
  unique,
  type Caller,
  type Ctx,
  type Res,
} from '../context.js';

const SECRET = () => `s3cret ${unique('v1')}`;
/** A token that can name no push (24 characters of the server's alphabet). */
const UNKNOWN = 'zz2zz2zz2zz2zz2zz2zz2zz2';

/** User A or B as v1 clients authenticate: the legacy header pair when the email is known, else the bearer token. */
function user(ctx: Ctx, which: 'a' | 'b'): Caller {
  const email = which === 'a' ? ctx.options.email : ctx.options.emailB;
  const token = which === 'a' ? ctx.options.token : ctx.options.tokenB;
  return email && token ? { headers: { 'x-user-email': email, 'x-user-token': token } } : which;
}

/** Who creates through /p.json: user A, else anonymous. */
function creator(ctx: Ctx): Caller {
  return ctx.hasToken ? user(ctx, 'a') : 'anon';
}

/** POST /p.json with the password wrapper (as PassPushPosh sends it); insists on 201. */
async function createV1(
  ctx: Ctx,
  fields: Record<string, unknown>,
  as: Caller = creator(ctx),
): Promise<Record<string, any>> {
  const res = await ctx.callV1('createPasswordV1', { body: { password: fields }, as });
  expectStatus(res, 201);
  return res.body;
}

function retrieveV1(ctx: Ctx, urlToken: string, query: Record<string, string> = {}, prefix = 'p'): Promise<Res> {
  return ctx.callV1('getPushV1', { params: { prefix, url_token: urlToken }, query, as: ctx.viewer });
}

/** json_url is `{base}/p/{url_token}.json` (PassPushPosh derives its link from it) and html_url the link. */
function expectV1Links(ctx: Ctx, push: Record<string, any>): void {
  const base = (ctx.options.publicBaseUrl ?? ctx.options.baseUrl).replace(/\/+$/, '');
  expectEqual(push.json_url, `${base}/p/${push.url_token}.json`, 'json_url');
  expectEqual(push.html_url, `${base}/p/${push.url_token}${push.retrieval_step ? '/r' : ''}`, 'html_url');
}

/** A multipart body of text parts (and file parts), built as Go's mime/multipart builds it. */
function multipart(parts: [name: string, value: string, filename?: string][]): {
  rawBody: string;
  contentType: string;
} {
  const boundary = 'conformance-v1-boundary-5c1e';
  const body = parts
    .map(([name, value, filename]) =>
      filename === undefined
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${value}\r\n`,
    )
    .join('');
  return { rawBody: `${body}--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` };
}

export const legacyV1 = define('V1', [
  {
    id: 'V1-001',
    title: 'GET /api/v1/version.json (and /api/v1/version) answers the v1 report with an api_version above 1.0',
    source: 'spec: v1 getVersionV1 (decision 21); client-dialects: PassPushPosh (needs api_version > 1.0)',
    needs: ['v1'],
    async run(ctx) {
      const res = await ctx.callV1('getVersionV1');
      expectStatus(res, 200);
      expect(
        Number.parseFloat(res.body.api_version) > 1.0,
        `api_version ${JSON.stringify(res.body.api_version)} is not above 1.0`,
      );
      const bare = await ctx.callV1('getVersionV1', { withoutSuffix: true });
      expectEqual(
        [bare.status, bare.body?.api_version],
        [200, res.body.api_version],
        'GET /api/v1/version (without .json)',
      );
    },
  },
  {
    id: 'V1-002',
    title: 'POST /p.json in the password wrapper creates the push; GET /p/{url_token}.json retrieves it, one view',
    source: 'spec: v1 createPasswordV1, getPushV1 (decision 3: json_url); client-dialects: PassPushPosh',
    needs: ['v1', 'creator', 'viewer'],
    async run(ctx) {
      const payload = SECRET();
      const push = await createV1(ctx, {
        kind: 'text',
        payload,
        expire_after_days: 2,
        expire_after_views: 3,
        deletable_by_viewer: true,
        retrieval_step: false,
        note: 'v1 note',
      });
      expectEqual(
        [push.kind, push.expire_after_days, push.expire_after_views, push.views_remaining, push.expired],
        ['text', 2, 3, 3, false],
        'the created record',
      );
      expectV1Links(ctx, push);
      const got = await retrieveV1(ctx, push.url_token);
      expectStatus(got, 200);
      expectEqual(
        [got.body.payload, got.body.views_remaining, got.body.expired, got.body.files],
        [payload, 2, false, []],
        'the retrieval',
      );
    },
  },
  {
    id: 'V1-003',
    title:
      'Multipart and form-urlencoded /p.json creates (password[…], numbers and booleans as text) make the same push',
    source:
      'spec: v1 createPasswordV1 (V1PasswordForm, V1Integer, V1Boolean); client-dialects: terraform-provider-pwpush, .NET',
    needs: ['v1', 'creator', 'viewer'],
    async run(ctx) {
      const terraform = SECRET();
      const form = multipart([
        ['password[payload]', terraform],
        ['password[expire_after_days]', '3'],
        ['password[expire_after_views]', '4'],
        ['password[deletable_by_viewer]', 'false'],
        ['password[retrieval_step]', 'true'],
      ]);
      const a = await ctx.callV1('createPasswordV1', { ...form, as: creator(ctx) });
      expectStatus(a, 201);
      expectEqual(
        [a.body.expire_after_days, a.body.expire_after_views, a.body.deletable_by_viewer, a.body.retrieval_step],
        [3, 4, false, true],
        'options read from the multipart form',
      );
      expectEqual((await retrieveV1(ctx, a.body.url_token)).body.payload, terraform, 'payload of the multipart create');
      const dotnet = SECRET();
      const rawBody = `password%5Bpayload%5D=${encodeURIComponent(dotnet)}&password%5Bexpire_after_views%5D=2&password%5Bdeletable_by_viewer%5D=True`;
      const b = await ctx.callV1('createPasswordV1', {
        rawBody,
        contentType: 'application/x-www-form-urlencoded',
        as: creator(ctx),
      });
      expectStatus(b, 201);
      expectEqual(
        [b.body.expire_after_views, b.body.deletable_by_viewer],
        [2, true],
        'options read from the urlencoded form',
      );
      expectEqual((await retrieveV1(ctx, b.body.url_token)).body.payload, dotnet, 'payload of the urlencoded create');
    },
  },
  {
    id: 'V1-004',
    title:
      'Push fields at the top level (no wrapper) are read as the wrapper; a body with neither answers 400 naming it',
    source:
      'spec: v1 V1PasswordRequest (decisions 16 and 17); client-dialects: terraform-provider-pwpusher, PwPush-PHP',
    needs: ['v1', 'creator', 'viewer'],
    async run(ctx) {
      const payload = SECRET();
      const flat = await ctx.callV1('createPasswordV1', {
        body: { payload, passphrase: null, deletable_by_viewer: false, expire_after_views: '2' },
        as: creator(ctx),
      });
      expectStatus(flat, 201);
      expectEqual(
        [flat.body.deletable_by_viewer, flat.body.expire_after_views, flat.body.passphrase_protected],
        [false, 2, false],
        'the flat body read as the wrapper',
      );
      expectEqual((await retrieveV1(ctx, flat.body.url_token)).body.payload, payload, 'payload of the flat body');
      const neither = await ctx.callV1('createPasswordV1', { body: { push: { payload: 'x' } }, as: creator(ctx) });
      expectStatus(neither, 400);
      expectCode(neither, 'missing_push');
      expectEqual(
        neither.body.error,
        'param is missing or the value is empty or invalid: password',
        'error of a body without the wrapper',
      );
    },
  },
  {
    id: 'V1-005',
    title: '?passphrase= retrieves; a missing or wrong one answers 401 with the text PassPushPosh matches',
    source: 'spec: v1 getPushV1 (decision 6); client-dialects: PassPushPosh',
    needs: ['v1', 'creator', 'viewer'],
    async run(ctx) {
      const payload = SECRET();
      const phrase = unique('v1-phrase');
      const push = await createV1(ctx, { payload, passphrase: phrase, expire_after_views: 2 });
      expectEqual(push.passphrase_protected, true, 'passphrase_protected');
      for (const query of [{}, { passphrase: 'not-it' }] as Record<string, string>[]) {
        const refused = await retrieveV1(ctx, push.url_token, query);
        expectStatus(refused, 401);
        expectEqual(
          refused.body.error,
          'This push has a passphrase that was incorrect or not provided.',
          'error of the passphrase 401',
        );
      }
      const got = await retrieveV1(ctx, push.url_token, { passphrase: phrase });
      expectStatus(got, 200);
      expectEqual(got.body.payload, payload, 'payload with ?passphrase=');
    },
  },
  {
    id: 'V1-006',
    title: 'An unknown push answers 404 with error exactly "not-found" (retrieve, preview, audit, delete)',
    source: 'spec: v1 NotFound (decision 7); client-dialects: PassPushPosh (its text only for exactly not-found)',
    needs: ['v1', 'token', 'viewer'],
    async run(ctx) {
      const calls: [string, Res][] = [
        ['retrieve', await retrieveV1(ctx, UNKNOWN)],
        ['preview', await ctx.callV1('previewPushV1', { params: { url_token: UNKNOWN }, as: ctx.viewer })],
        ['audit', await ctx.callV1('getPushAuditV1', { params: { url_token: UNKNOWN }, as: user(ctx, 'a') })],
        ['delete', await ctx.callV1('expirePushV1', { params: { url_token: UNKNOWN }, as: user(ctx, 'a') })],
      ];
      for (const [what, res] of calls) {
        expectStatus(res, 404);
        expectEqual(res.body?.error, 'not-found', `error of the ${what} 404`);
      }
    },
  },
  {
    id: 'V1-007',
    title: 'The audit log answers {"views": […]}, oldest first: creation, failed passphrase and view, with successful',
    source: 'spec: v1 getPushAuditV1 (V1AuditLog, decision 10); client-dialects: PassPushPosh, pwpush-cli ≤ 0.13',
    needs: ['v1', 'token', 'viewer'],
    async run(ctx) {
      const phrase = unique('v1-audit');
      const push = await createV1(
        ctx,
        { payload: SECRET(), passphrase: phrase, expire_after_views: 2 },
        user(ctx, 'a'),
      );
      expectStatus(await retrieveV1(ctx, push.url_token, { passphrase: 'wrong' }), 401);
      expectStatus(await retrieveV1(ctx, push.url_token, { passphrase: phrase }), 200);
      const audit = await ctx.callV1('getPushAuditV1', { params: { url_token: push.url_token }, as: user(ctx, 'a') });
      expectStatus(audit, 200);
      const views = (audit.body?.views ?? []) as { kind: string; successful: boolean }[];
      expectEqual(
        views.map((v) => [v.kind, v.successful]),
        [
          ['creation', true],
          ['failed_passphrase', false],
          ['view', true],
        ],
        'views (kind, successful)',
      );
    },
  },
  {
    id: 'V1-008',
    title:
      'DELETE /p/{url_token}.json by the owner expires the push: 200 expired and deleted, later reads get no payload',
    source: 'spec: v1 expirePushV1; client-dialects: PassPushPosh, both Terraform providers (200 or 404 means gone)',
    needs: ['v1', 'token', 'viewer'],
    async run(ctx) {
      const push = await createV1(
        ctx,
        { payload: SECRET(), expire_after_views: 3, deletable_by_viewer: false },
        user(ctx, 'a'),
      );
      const deleted = await ctx.callV1('expirePushV1', { params: { url_token: push.url_token }, as: user(ctx, 'a') });
      expectStatus(deleted, 200);
      expectEqual([deleted.body.expired, deleted.body.deleted], [true, true], 'the delete answer (expired, deleted)');
      const after = await retrieveV1(ctx, push.url_token);
      expectStatus(after, 200);
      expectEqual([after.body.expired, after.body.payload], [true, null], 'a retrieval after the delete');
      const expired = await ctx.callV1('listExpiredPushesV1', { as: user(ctx, 'a') });
      expectStatus(expired, 200);
      expect(
        (expired.body as { url_token: string }[]).some((p) => p.url_token === push.url_token),
        'the deleted push is not in /p/expired.json',
      );
    },
  },
  {
    id: 'V1-009',
    title: "/p/active.json lists the caller's active pushes in v1 shape (legacy headers); without a token a JSON 401",
    source:
      'spec: v1 listActivePushesV1, listExpiredPushesV1; client-dialects: PassPushPosh, pwpush-cli ≤ 0.13 (login check)',
    needs: ['v1', 'token'],
    async run(ctx) {
      const push = await createV1(ctx, { payload: SECRET(), name: unique('v1-name') }, user(ctx, 'a'));
      const active = await ctx.callV1('listActivePushesV1', { as: user(ctx, 'a') });
      expectStatus(active, 200);
      const listed = (active.body as Record<string, any>[]).find((p) => p.url_token === push.url_token);
      expect(listed, 'the new push is not on page 1 of /p/active.json');
      expectEqual(
        [listed.name, listed.json_url, listed.expired],
        [push.name, push.json_url, false],
        'the listed record',
      );
      const anonymous = await ctx.callV1('listActivePushesV1', { as: 'anon' });
      expectStatus(anonymous, 401);
      expectCode(anonymous, 'authentication_required');
    },
  },
  {
    id: 'V1-010',
    title:
      'An unknown .json path under /p/, /f/, /r/ or /api/v1/ answers a JSON 404 not-found; an undefined method 405',
    source: 'spec: v1 NoRoute, MethodNotAllowed (decision 20: never the HTML page)',
    needs: ['v1'],
    async run(ctx) {
      for (const path of [`/p/${UNKNOWN}/r.json`, `/f/${UNKNOWN}/nothing.json`, '/api/v1/nothing.json']) {
        const res = await ctx.rawV1('NoRoute', 'GET', path);
        if (res.status !== 404)
          throw new AssertionFailure(`GET ${path}: expected 404, got ${res.status}${saidByTarget(res)}`);
        expectEqual([res.body?.error, res.body?.code], ['not-found', 'no_route'], `GET ${path}`);
      }
      const put = await ctx.rawV1('MethodNotAllowed', 'PUT', `/p/${UNKNOWN}.json`);
      expectStatus(put, 405);
      const allow = (put.headers.get('allow') ?? '').split(',').map((m) => m.trim());
      expect(allow.includes('GET') && allow.includes('DELETE'), `Allow ${JSON.stringify(put.headers.get('allow'))}`);
    },
  },
  {
    id: 'V1-011',
    title:
      'A v1 push is the same push in v2: created through /p.json, it is retrieved through v2 with the views shared',
    source: 'spec: v1 info.description (How v1 maps onto the v2 domain: the same pushes)',
    needs: ['v1', 'creator', 'viewer'],
    async run(ctx) {
      const payload = SECRET();
      const push = await createV1(ctx, { payload, expire_after_views: 3 });
      const v2 = await ctx.retrieve(push.url_token);
      expectStatus(v2, 200);
      expectEqual([v2.body.payload, v2.body.views_remaining], [payload, 2], 'the v1 push through v2');
      const v1 = await retrieveV1(ctx, push.url_token);
      expectEqual([v1.body.payload, v1.body.views_remaining], [payload, 1], 'the second view through v1');
    },
  },
  {
    id: 'V1-012',
    title: 'A delete of a push viewers may not delete: anonymous 401, another user 403, "That push is not deletable…"',
    source: 'spec: v1 expirePushV1 (decisions 7 and 9)',
    needs: ['v1', 'token', 'tokenB'],
    async run(ctx) {
      const push = await createV1(ctx, { payload: SECRET(), deletable_by_viewer: false }, user(ctx, 'a'));
      const attempts: [Caller, number][] = [[user(ctx, 'b'), 403]];
      if (ctx.features.anonymous_access) attempts.push(['anon', 401]);
      for (const [as, status] of attempts) {
        const res = await ctx.callV1('expirePushV1', { params: { url_token: push.url_token }, as });
        expectStatus(res, status);
        expectEqual(
          res.body?.error,
          'That push is not deletable by viewers.',
          `error of the refused delete (${status})`,
        );
      }
      const still = await ctx.callV1('previewPushV1', { params: { url_token: push.url_token }, as: user(ctx, 'a') });
      expectStatus(still, 200);
    },
  },
  {
    id: 'V1-013',
    title: 'POST /f.json takes a file as a file_push[files][] part; the retrieval links download its exact bytes',
    source: 'spec: v1 createFilePushV1 (V1FilePushForm); client-dialects: pwpush-cli ≤ 0.13, Keypirinha',
    needs: ['v1', 'token', 'file', 'viewer'],
    async run(ctx) {
      const content = `-----BEGIN KEY----- ${unique('v1-file')}\n`;
      const form = multipart([['file_push[files][]', content, 'id_ed25519']]);
      const created = await ctx.callV1('createFilePushV1', { ...form, as: user(ctx, 'a') });
      expectStatus(created, 201);
      expectEqual(created.body.kind, 'file', 'kind of a /f.json push');
      const got = await retrieveV1(ctx, created.body.url_token, {}, 'f');
      expectStatus(got, 200);
      const file = (got.body.files ?? [])[0];
      expect(file && file.filename === 'id_ed25519', `files ${JSON.stringify(got.body.files)}`);
      const download = await ctx.download('downloadPushFile', file.url);
      expectEqual([download.status, download.bytes.toString('utf8')], [200, content], 'the download (status, bytes)');
    },
  },
  {
    id: 'V1-014',
    title: 'POST /r.json in the url wrapper creates a URL push, retrieved under /r/ and listed under /r/active.json',
    source: 'spec: v1 createUrlPushV1; client-dialects: kppwpush',
    needs: ['v1', 'token', 'url', 'viewer'],
    async run(ctx) {
      const url = `https://example.org/conformance/${unique('v1-url')}`;
      const created = await ctx.callV1('createUrlPushV1', {
        body: { url: { payload: url, expire_after_views: 2 } },
        as: user(ctx, 'a'),
      });
      expectStatus(created, 201);
      expectEqual(created.body.kind, 'url', 'kind of a /r.json push');
      expectEqual((await retrieveV1(ctx, created.body.url_token, {}, 'r')).body.payload, url, 'payload under /r/');
      const active = await ctx.callV1('listActivePushesV1', { params: { prefix: 'r' }, as: user(ctx, 'a') });
      expect(
        (active.body as { url_token: string }[]).some((p) => p.url_token === created.body.url_token),
        'the URL push is not in /r/active.json',
      );
    },
  },
  {
    id: 'V1-015',
    title: 'A v1 create that breaks a rule answers 422: error names the first failing field, errors lists each',
    source: 'spec: v1 UnprocessableEntity (decisions 8 and 12); client-dialects: PassPushPosh (shows only error)',
    needs: ['v1', 'creator'],
    async run(ctx) {
      const res = await ctx.callV1('createPasswordV1', {
        body: { password: { payload: 'x', expire_after_views: 101, deletable_by_viewer: 'maybe' } },
        as: creator(ctx),
      });
      expectStatus(res, 422);
      expectCode(res, 'validation_failed');
      expectEqual(
        Object.keys(res.body?.errors ?? {}).sort(),
        ['deletable_by_viewer', 'expire_after_views'],
        '422 fields',
      );
      expect(
        /^(expire_after_views|deletable_by_viewer): .+ \(and 1 more\)$/.test(String(res.body.error)),
        `error ${JSON.stringify(res.body.error)} does not name the first field`,
      );
    },
  },
  {
    id: 'V1-016',
    title: 'GET /p/{url_token}/preview.json answers the push link without a view',
    source: 'spec: v1 previewPushV1; client-dialects: pwpush-cli ≤ 0.13',
    needs: ['v1', 'creator', 'viewer'],
    async run(ctx) {
      const push = await createV1(ctx, { payload: SECRET(), expire_after_views: 2, retrieval_step: true });
      const preview = await ctx.callV1('previewPushV1', { params: { url_token: push.url_token }, as: ctx.viewer });
      expectStatus(preview, 200);
      expectEqual(preview.body.url, push.html_url, 'preview url');
      expectEqual(
        (await retrieveV1(ctx, push.url_token)).body.views_remaining,
        1,
        'views_remaining after a preview and one view',
      );
    },
  },
]);
