/** Version, create, retrieve, views, passphrase and preview. */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx } from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;

/** Creates `push` and insists on 422 validation_failed; with `field`, that `errors` names it. */
export async function expect422(ctx: Ctx, push: Record<string, unknown>, field?: string): Promise<void> {
  const res = await ctx.call('createPush', { body: { push }, as: ctx.creator });
  expectStatus(res, 422);
  expectCode(res, 'validation_failed');
  if (field) {
    const errors = res.body?.errors;
    expect(errors && typeof errors === 'object', `422 for ${JSON.stringify(push)} has no errors object`);
    expect(field in errors, `422 errors do not name "${field}" (keys: ${Object.keys(errors).join(', ')})`);
  }
}

export const version = define('VER', [
  {
    id: 'VER-001',
    title: 'GET /version answers 200 with the version report',
    source: 'seed §4 behavior 1; seed §2.2',
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('getVersion');
      expectStatus(res, 200);
      expect(typeof res.body?.features === 'object', 'version report has no features object');
    },
  },
  {
    id: 'VER-002',
    title: 'The report says edition oss, accounts disabled, requests.enabled a boolean, api_version 2.x',
    source: 'seed §2.2 (edition, accounts.enabled, requests.enabled); decisions: Version report; issue 24 (requests)',
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('getVersion');
      expectStatus(res, 200);
      expectEqual(res.body.edition, 'oss', 'edition');
      expectEqual(res.body.features.accounts?.enabled, false, 'features.accounts.enabled');
      expect(typeof res.body.features.requests?.enabled === 'boolean', 'features.requests.enabled is not a boolean');
      expect(/^2(\.\d+)*$/.test(String(res.body.api_version)), `api_version ${res.body.api_version} is not 2.x`);
    },
  },
  {
    id: 'VER-003',
    title: 'GET /version is public: an invalid token is ignored',
    source: 'decisions: Authentication, bullet 2',
    async run(ctx) {
      const res = await ctx.call('getVersion', {
        as: { headers: { authorization: 'Bearer spt_invalid_conformance' } },
      });
      expectStatus(res, 200);
    },
  },
  {
    id: 'VER-004',
    title: 'A .json suffix is accepted (GET /version.json)',
    source: 'decisions: Paths and formats, bullet 1',
    async run(ctx) {
      const res = await ctx.call('getVersion', { jsonSuffix: true });
      expectStatus(res, 200);
      expectEqual(res.body.edition, 'oss', 'edition via .json');
    },
  },
]);

export const create = define('CRE', [
  {
    id: 'CRE-001',
    title: 'A push with only a payload is created (201) as kind text',
    source: 'seed §2.1 (kind default text); seed §4 behavior 2',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      expectEqual(push.kind, 'text', 'kind');
      expectEqual(push.expired, false, 'expired');
      expect(!('payload' in push), 'the create response carries the payload');
    },
  },
  {
    id: 'CRE-002',
    title: 'Omitted fields take the defaults: 7 days, 5 views, deletable_by_viewer true, retrieval_step false',
    source: 'decisions: Create, bullets 5 and 6',
    needs: ['creator'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      expectEqual(push.expire_after_days, ctx.options.defaultDays ?? 7, 'expire_after_days');
      expectEqual(push.expire_after_views, ctx.options.defaultViews ?? 5, 'expire_after_views');
      expectEqual(push.views_remaining, push.expire_after_views, 'views_remaining of a new push');
      expectEqual(push.deletable_by_viewer, true, 'deletable_by_viewer');
      expectEqual(push.retrieval_step, false, 'retrieval_step');
      expectEqual(push.passphrase_protected, false, 'passphrase_protected');
    },
  },
  {
    id: 'CRE-003',
    title: 'Given fields are kept; json_url and html_url (…/r with retrieval_step) point at the push',
    source: 'decisions: The push record, bullets 2, 4 and 5',
    needs: ['creator'],
    async run(ctx) {
      const name = unique('name');
      const push = await ctx.create({
        payload: SECRET(),
        expire_after_days: 3,
        expire_after_views: 2,
        deletable_by_viewer: false,
        retrieval_step: true,
        name,
        note: 'a note',
      });
      expectEqual(push.expire_after_days, 3, 'expire_after_days');
      expectEqual(push.expire_after_views, 2, 'expire_after_views');
      expectEqual(push.views_remaining, 2, 'views_remaining');
      expectEqual(push.deletable_by_viewer, false, 'deletable_by_viewer');
      expectEqual(push.retrieval_step, true, 'retrieval_step');
      expectEqual(push.name, name, 'name');
      expectEqual(push.note, 'a note', 'note');
      expect(String(push.json_url).endsWith(`/api/v2/pushes/${push.url_token}`), `json_url ${push.json_url}`);
      expect(String(push.html_url).endsWith(`/p/${push.url_token}/r`), `html_url ${push.html_url}`);
      const created = Date.parse(push.created_at);
      expectEqual(Date.parse(push.expires_at) - created, 3 * 86_400_000, 'expires_at − created_at (ms)');
    },
  },
  {
    id: 'CRE-004',
    title: 'A url push is created with kind url',
    source: 'seed §2.1 (kind); decisions: Create, bullet 3',
    needs: ['creator', 'url'],
    async run(ctx) {
      const push = await ctx.create({ kind: 'url', payload: 'https://example.org/secret-place' });
      expectEqual(push.kind, 'url', 'kind');
    },
  },
  {
    id: 'CRE-005',
    title: 'A qr push is created with kind qr',
    source: 'seed §2.1 (kind); decisions: Create, bullet 3',
    needs: ['creator', 'qr'],
    async run(ctx) {
      const push = await ctx.create({ kind: 'qr', payload: 'WIFI:S:lab;T:WPA;P:hunter2;;' });
      expectEqual(push.kind, 'qr', 'kind');
    },
  },
  {
    id: 'CRE-006',
    title: 'Files without a kind make a file push',
    source: 'seed §2.1 (files: kind becomes file)',
    needs: ['file'],
    async run(ctx) {
      const push = await ctx.create({
        files: [{ filename: 'key.txt', content_type: 'text/plain', content: Buffer.from('k').toString('base64') }],
      });
      expectEqual(push.kind, 'file', 'kind');
    },
  },
  {
    id: 'CRE-007',
    title: 'expire_after_days outside 1..90 (0, 91) answers 422',
    source: 'decisions: Create, bullet 5',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      await expect422(ctx, { payload: 'x', expire_after_days: 0 });
      await expect422(ctx, { payload: 'x', expire_after_days: 91 });
    },
  },
  {
    id: 'CRE-008',
    title: 'expire_after_views outside 1..100 (0, 101) answers 422',
    source: 'decisions: Create, bullet 5',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      await expect422(ctx, { payload: 'x', expire_after_views: 0 });
      await expect422(ctx, { payload: 'x', expire_after_views: 101 });
    },
  },
  {
    id: 'CRE-009',
    title: 'A 422 names the offending field in errors',
    source: 'decisions: Create, bullet 1 (422 with per-field messages)',
    needs: ['creator'],
    async run(ctx) {
      await expect422(ctx, { payload: 'x', expire_after_views: 0 }, 'expire_after_views');
      await expect422(ctx, { payload: 'x', expire_after_days: 91 }, 'expire_after_days');
    },
  },
  {
    id: 'CRE-010',
    title: 'An unknown kind answers 422',
    source: 'decisions: Create, bullet 2',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      await expect422(ctx, { payload: 'x', kind: 'carrier-pigeon' });
    },
  },
  {
    id: 'CRE-011',
    title: 'A text push without a payload, or with an empty one, answers 422',
    source: 'seed §2.1 (payload required); decisions: Create, bullet 3',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      await expect422(ctx, { name: 'no payload' });
      await expect422(ctx, { kind: 'text', payload: '' });
    },
  },
  {
    id: 'CRE-012',
    title: 'A body without a push object answers 400 (not 422)',
    source: 'decisions: Create, bullet 1',
    needs: ['creator'],
    async run(ctx) {
      const res = await ctx.call('createPush', { body: { payload: 'x' }, as: ctx.creator });
      expectStatus(res, 400);
      expectCode(res, 'missing_push');
    },
  },
  {
    id: 'CRE-013',
    title: 'A body that is not JSON answers 400',
    source: 'decisions: Create, bullet 1; seed §7 (400)',
    needs: ['creator'],
    async run(ctx) {
      const res = await ctx.call('createPush', { rawBody: '{"push": {"payload": ', as: ctx.creator });
      expectStatus(res, 400);
      expectCode(res, 'invalid_json');
    },
  },
  {
    id: 'CRE-014',
    title: 'A url push whose payload is not an absolute http(s) URL answers 422',
    source: 'decisions: Create, bullet 3',
    needs: ['creator', 'url'],
    stateless: true,
    async run(ctx) {
      await expect422(ctx, { kind: 'url', payload: 'not a url' });
      await expect422(ctx, { kind: 'url', payload: 'ftp://example.org/file' });
    },
  },
  {
    id: 'CRE-015',
    title: 'Unknown properties inside push are ignored (201)',
    source: 'decisions: Create, bullet 9',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      // Fields of other dialects (Password Pusher Pro's account_id, workspace_id) and plain typos. (notify_emails_to is
      // no unknown field: the EMAIL class checks it.)
      const push = await ctx.create({
        payload: SECRET(),
        account_id: 7,
        workspace_id: 'w-1',
        retrieval_step_x: 'y',
      });
      expectEqual(push.kind, 'text', 'kind');
    },
  },
  {
    id: 'CRE-016',
    title: 'A kind the instance disables answers 422',
    source: 'decisions: Create, bullet 2',
    needs: ['creator', 'kindDisabled'],
    async run(ctx) {
      const p = ctx.features.pushes;
      if (!p.url_pushes.enabled) await expect422(ctx, { kind: 'url', payload: 'https://example.org/' }, 'kind');
      if (!p.qr_code_pushes.enabled) await expect422(ctx, { kind: 'qr', payload: 'qr text' }, 'kind');
      if (!p.file_attachments.enabled) {
        const files = [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }];
        const res = await ctx.call('createPush', { body: { push: { kind: 'file', files } }, as: ctx.creator });
        // Without a token on an instance where files need one, 401 comes first; both refuse the push.
        expectStatus(res, 422, ...(ctx.creator === 'anon' ? [401] : []));
      }
    },
  },
  {
    id: 'CRE-017',
    title: 'A qr payload over 1,024 characters answers 422',
    source: 'decisions: Create, bullet 3',
    needs: ['creator', 'qr'],
    stateless: true,
    async run(ctx) {
      await expect422(ctx, { kind: 'qr', payload: 'q'.repeat(1025) });
    },
  },
  {
    id: 'CRE-018',
    title: 'A .json suffix is accepted on create (POST /pushes.json → 201)',
    source: 'decisions: Paths and formats, bullet 1',
    needs: ['creator'],
    async run(ctx) {
      const res = await ctx.call('createPush', {
        body: { push: { payload: SECRET() } },
        as: ctx.creator,
        jsonSuffix: true,
      });
      expectStatus(res, 201);
      expectEqual(res.body.kind, 'text', 'kind via .json');
      expect(typeof res.body.url_token === 'string' && res.body.url_token.length > 0, 'no url_token via .json');
    },
  },
  {
    id: 'CRE-019',
    title: "Each create rule's 422 names its field: payload (missing, empty, url, qr), kind, expiry days and views",
    source: 'decisions: Create, bullets 1, 2, 3 and 5',
    needs: ['creator'],
    async run(ctx) {
      await expect422(ctx, { name: 'no payload' }, 'payload');
      await expect422(ctx, { kind: 'text', payload: '' }, 'payload');
      await expect422(ctx, { kind: 'carrier-pigeon', payload: 'x' }, 'kind');
      for (const days of [0, 91]) await expect422(ctx, { payload: 'x', expire_after_days: days }, 'expire_after_days');
      for (const views of [0, 101])
        await expect422(ctx, { payload: 'x', expire_after_views: views }, 'expire_after_views');
      const p = ctx.features.pushes;
      const unchecked: string[] = [];
      if (p.url_pushes.enabled) {
        await expect422(ctx, { kind: 'url', payload: 'not a url' }, 'payload');
        await expect422(ctx, { kind: 'url', payload: 'ftp://example.org/file' }, 'payload');
      } else unchecked.push('url');
      if (p.qr_code_pushes.enabled) await expect422(ctx, { kind: 'qr', payload: 'q'.repeat(1025) }, 'payload');
      else unchecked.push('qr');
      if (unchecked.length) ctx.note = `${unchecked.join(' and ')} rules not checked: disabled on this instance`;
    },
  },
  {
    id: 'CRE-020',
    title: 'A passphrase empty or over 1,024, a name over 1,024 or a note over 10,000 characters answers 422 on it',
    source: 'decisions: Create, bullets 1, 7 and 8',
    needs: ['creator'],
    async run(ctx) {
      await expect422(ctx, { payload: 'x', passphrase: 'p'.repeat(1025) }, 'passphrase');
      await expect422(ctx, { payload: 'x', passphrase: '' }, 'passphrase');
      await expect422(ctx, { payload: 'x', name: 'n'.repeat(1025) }, 'name');
      await expect422(ctx, { payload: 'x', note: 'n'.repeat(10_001) }, 'note');
      // The bounds themselves are allowed.
      const push = await ctx.create({
        payload: 'x',
        passphrase: 'p'.repeat(1024),
        name: 'n'.repeat(1024),
        note: 'n'.repeat(10_000),
      });
      expectEqual(push.passphrase_protected, true, 'passphrase_protected with a 1,024-character passphrase');
    },
  },
  {
    id: 'CRE-021',
    title: "A create body over the instance's limit (--max-body-bytes) answers 413 payload_too_large",
    source: 'decisions: Create, bullet 10 (a clear 413); decisions: Errors (413)',
    needs: ['creator', 'maxBodyBytes'],
    async run(ctx) {
      const limit = ctx.options.maxBodyBytes!;
      // A well-formed create body of exactly limit + 1 bytes (ASCII, so characters = bytes).
      const head = '{"push":{"payload":"x","note":"';
      const tail = '"}}';
      const size = limit + 1;
      expect(size > head.length + tail.length, `--max-body-bytes ${limit} is smaller than any create body`);
      const rawBody = head + 'n'.repeat(size - head.length - tail.length) + tail;
      const res = await ctx.call('createPush', { rawBody, as: ctx.creator });
      expectStatus(res, 413);
      expectCode(res, 'payload_too_large');
      ctx.note = `${size} bytes sent`;
    },
  },
  {
    id: 'CRE-022',
    title: 'Files on a text, url or qr push answer 422 (only file pushes take files)',
    source: 'spec: PushInput (only file pushes take files); decisions: Create, bullet 1 (422 per field)',
    needs: ['file'],
    async run(ctx) {
      const files = [{ filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('a').toString('base64') }];
      const kinds: [string, string][] = [['text', 'a secret']];
      if (ctx.features.pushes.url_pushes.enabled) kinds.push(['url', 'https://example.org/']);
      if (ctx.features.pushes.qr_code_pushes.enabled) kinds.push(['qr', 'qr text']);
      for (const [kind, payload] of kinds) await expect422(ctx, { kind, payload, files });
    },
  },
  {
    id: 'CRE-023',
    title: 'Query parameters an operation does not define are ignored (create and retrieve answer as without them)',
    source: 'spec: info.description (Conventions: unknown query parameters are ignored)',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const secret = SECRET();
      const created = await ctx.call('createPush', {
        body: { push: { payload: secret } },
        as: ctx.creator,
        rawQuery: 'locale=fr&_=1700000000',
      });
      expectStatus(created, 201);
      const res = await ctx.retrieve(created.body.url_token, { rawQuery: 'locale=fr&page=x&_=1700000000' });
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload');
    },
  },
  {
    id: 'CRE-024',
    title:
      'A create as form-urlencoded or multipart (bracketed names, numbers and booleans as text) makes the same push',
    source:
      'spec: createPush requestBody (CreatePushUrlencoded, CreatePushMultipart); client-dialects: pwpush-cli, pwpush-mcp',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const urlencoded = SECRET();
      const form = `push%5Bpayload%5D=${encodeURIComponent(urlencoded)}&push%5Bexpire_after_views%5D=3&push%5Bretrieval_step%5D=True&push%5Bdeletable_by_viewer%5D=0`;
      const a = await ctx.call('createPush', {
        rawBody: form,
        contentType: 'application/x-www-form-urlencoded',
        as: ctx.creator,
      });
      expectStatus(a, 201);
      expectEqual(
        [a.body.expire_after_views, a.body.retrieval_step, a.body.deletable_by_viewer],
        [3, true, false],
        'options read from the form',
      );
      expectEqual((await ctx.retrieve(a.body.url_token)).body.payload, urlencoded, 'payload');
      const multipart = SECRET();
      const boundary = 'conformance-boundary-7d3f';
      const part = (name: string, value: string) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      const raw = `${part('push[payload]', multipart)}${part('push[expire_after_views]', '2')}${part('push[retrieval_step]', 'false')}--${boundary}--\r\n`;
      const b = await ctx.call('createPush', {
        rawBody: raw,
        contentType: `multipart/form-data; boundary=${boundary}`,
        as: ctx.creator,
      });
      expectStatus(b, 201);
      expectEqual(
        [b.body.expire_after_views, b.body.retrieval_step],
        [2, false],
        'options read from the multipart form',
      );
      expectEqual((await ctx.retrieve(b.body.url_token)).body.payload, multipart, 'payload');
    },
  },
]);

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
