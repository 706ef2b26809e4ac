/** Version and create (retrieval.ts: retrieve, views, passphrase and preview). */
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
    title: 'Edition oss, accounts.enabled = workspaces.enabled, requests.enabled a boolean, api_version 2.x',
    source:
      'seed §2.2 (edition, accounts.enabled, requests.enabled); decisions: Version report; issue 24 (requests); issue 41 (accounts: the Pro accounts API of workspaces)',
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('getVersion');
      expectStatus(res, 200);
      expectEqual(res.body.edition, 'oss', 'edition');
      // Pro clients (pwpush-cli, the Chrome extension) call GET /api/v2/accounts only when this is true.
      const workspaces = res.body.features.workspaces?.enabled === true;
      expectEqual(res.body.features.accounts?.enabled, workspaces, 'features.accounts.enabled');
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
      // Plain typos, and fields of other dialects: Password Pusher Pro's account_id and workspace_id (in the shapes Pro
      // clients send, a number and digits) are unknown to an instance that serves no workspaces; one that does gives
      // them a meaning (the create names a workspace: the TEAM class's matter). (notify_emails_to is no unknown field:
      // the EMAIL class checks it.)
      const proIds = ctx.features.workspaces?.enabled ? {} : { account_id: 7, workspace_id: '7' };
      const push = await ctx.create({
        payload: SECRET(),
        ...proIds,
        retrieval_step_x: 'y',
        expire_afer_days: 3,
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
