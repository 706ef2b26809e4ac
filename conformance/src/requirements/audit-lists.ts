/** Audit logs and owners' lists (owner.ts: delete and authentication). */
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
  type Res,
} from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;
const kinds = (res: Res) => (res.body.logs as { kind: string }[]).map((l) => l.kind);

function links(res: Res): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (res.headers.get('link') ?? '').split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?([a-z]+)"?/.exec(part.trim());
    if (match) out[match[2]!] = match[1]!;
  }
  return out;
}

function totalCount(res: Res): number {
  const raw = res.headers.get('x-total-count');
  expect(raw !== null && /^\d+$/.test(raw), `X-Total-Count is ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** An owner's list of pushes, active or expired (a page of it), insisting on 200 and an array. */
export async function list(ctx: Ctx, state: 'active' | 'expired', page?: number, as: 'a' | 'b' = 'a'): Promise<Res> {
  const res = await ctx.call(state === 'active' ? 'listActivePushes' : 'listExpiredPushes', {
    as,
    query: page === undefined ? {} : { page },
  });
  expectStatus(res, 200);
  expect(Array.isArray(res.body), `${state} list is not an array`);
  return res;
}

/**
 * Page values that lenient parsers (Number(), parseInt, a coercing validator) read as 1..200 but that are not a
 * plain integer: exponent, hex, surrounding spaces, a fraction, a negative. Sent percent-encoded, verbatim.
 */
const NOT_INTEGER_PAGES = ['1e2', '0x10', '%205', '5%20', '2.5', '-1'];

async function expectInvalidPage(ctx: Ctx, operationId: string, rawPage: string, params?: Record<string, string>) {
  const res = await ctx.call(operationId, { as: 'a', params, rawQuery: `page=${rawPage}` });
  if (res.status !== 400) {
    throw new AssertionFailure(
      `${operationId} with page=${rawPage}: expected 400, got ${res.status}${saidByTarget(res)}`,
    );
  }
  expectCode(res, 'invalid_page');
}

/** The url_tokens of a list. */
export const tokens = (res: Res) => (res.body as { url_token: string }[]).map((p) => p.url_token);

export const audit = define('AUD', [
  {
    id: 'AUD-001',
    title: 'A new push has one audit entry, creation',
    source: 'seed §4 behavior 5; decisions: Preview, audit, lists, delete, bullet 2',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const res = await ctx.call('getPushAudit', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(res, 200);
      expectEqual(kinds(res), ['creation'], 'audit kinds');
    },
  },
  {
    id: 'AUD-002',
    title: 'Audit records failed_passphrase, view, owner_view, expire, failed_view, oldest first',
    source: 'decisions: Preview, audit, lists, delete, bullet 2; decisions: Retrieve, bullets 1-3',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), passphrase: 'open sesame' }, 'a');
      const p = { params: { url_token: push.url_token } };
      expectStatus(await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': 'nope' } }), 401);
      expectStatus(await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': 'open sesame' } }), 200);
      expectStatus(await ctx.call('getPush', { ...p, as: 'a', headers: { 'x-passphrase': 'open sesame' } }), 200);
      expectStatus(await ctx.call('expirePush', { ...p, as: 'a' }), 200);
      expectStatus(await ctx.retrieve(push.url_token), 200);
      const res = await ctx.call('getPushAudit', { ...p, as: 'a' });
      expectStatus(res, 200);
      expectEqual(
        kinds(res),
        ['creation', 'failed_passphrase', 'view', 'owner_view', 'expire', 'failed_view'],
        'audit kinds in order',
      );
    },
  },
  {
    id: 'AUD-003',
    title: 'Audit without a token answers 401',
    source: 'seed §5.4; seed §5.8',
    needs: ['creator'],
    stateless: true,
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() });
      const res = await ctx.call('getPushAudit', { params: { url_token: push.url_token }, as: 'anon' });
      expectStatus(res, 401);
    },
  },
  {
    id: 'AUD-004',
    title: "Another user's audit request answers 403",
    source: 'seed §5.4 (ownership); seed §5.8',
    needs: ['token', 'tokenB'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const res = await ctx.call('getPushAudit', { params: { url_token: push.url_token }, as: 'b' });
      expectStatus(res, 403);
      expectCode(res, 'forbidden');
    },
  },
  {
    id: 'AUD-005',
    title: 'Audit of an unknown url_token answers 404',
    source: 'seed §7 (404)',
    needs: ['token'],
    async run(ctx) {
      const res = await ctx.call('getPushAudit', { params: { url_token: 'unknownconformance0000' }, as: 'a' });
      expectStatus(res, 404);
    },
  },
  {
    id: 'AUD-006',
    title: 'Audit pages hold 50 entries, oldest first, with Link and X-Total-Count',
    source: 'decisions: Preview, audit, lists, delete, bullets 2 and 3',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 60 }, 'a');
      for (let i = 0; i < 55; i++) expectStatus(await ctx.retrieve(push.url_token), 200);
      const p = { params: { url_token: push.url_token }, as: 'a' as const };
      const first = await ctx.call('getPushAudit', { ...p, query: { page: 1 } });
      expectStatus(first, 200);
      expectEqual(first.body.logs.length, 50, 'entries on page 1');
      expectEqual(totalCount(first), 56, 'X-Total-Count');
      expect(
        /[?&]page=2\b/.test(links(first).next ?? ''),
        `page 1 Link has no rel=next to page 2: ${first.headers.get('link')}`,
      );
      expectEqual(kinds(first)[0], 'creation', 'first entry');
      const second = await ctx.call('getPushAudit', { ...p, query: { page: 2 } });
      expectStatus(second, 200);
      expectEqual(second.body.logs.length, 6, 'entries on page 2');
      expect(links(second).prev !== undefined, `page 2 Link has no rel=prev: ${second.headers.get('link')}`);
      const all = [...first.body.logs, ...second.body.logs].map((l: { created_at: string }) =>
        Date.parse(l.created_at),
      );
      expect(
        all.every((t, i) => i === 0 || t >= all[i - 1]!),
        'audit entries are not oldest first',
      );
      const past = await ctx.call('getPushAudit', { ...p, query: { page: 3 } });
      expectStatus(past, 200);
      expectEqual(past.body.logs, [], 'page past the end');
    },
  },
  {
    id: 'AUD-007',
    title: 'Audit with page 0 answers 400 invalid_page',
    source: 'decisions: Preview, audit, lists, delete, bullet 4 (page); seed §8',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const res = await ctx.call('getPushAudit', {
        params: { url_token: push.url_token },
        as: 'a',
        query: { page: 0 },
      });
      expectStatus(res, 400);
      expectCode(res, 'invalid_page');
    },
  },
  {
    id: 'AUD-008',
    title: 'A .json suffix is accepted on audit (GET /pushes/{url_token}/audit.json)',
    source: 'decisions: Paths and formats, bullet 1',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const res = await ctx.call('getPushAudit', { params: { url_token: push.url_token }, as: 'a', jsonSuffix: true });
      expectStatus(res, 200);
      expectEqual(kinds(res), ['creation'], 'audit kinds via .json');
    },
  },
  {
    id: 'AUD-009',
    title: "Audit's page must be a plain integer 1..200: 201, 1e2, 0x10, ' 5', '5 ', 2.5, -1 answer 400 invalid_page",
    source: 'decisions: Preview, audit, lists, delete, bullet 4 (anything else → 400); seed §8',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      for (const page of ['201', ...NOT_INTEGER_PAGES]) {
        await expectInvalidPage(ctx, 'getPushAudit', page, { url_token: push.url_token });
      }
    },
  },
  {
    id: 'AUD-010',
    title: "An audit entry records the caller's User-Agent and Referer, cut to 255 characters, and an address",
    source: 'decisions: Preview, audit, lists, delete, bullet 2 (ip, user_agent, referrer); spec: AuditEntry',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const agent = `secret-push-conformance ${unique('agent')} `.padEnd(300, 'u');
      const referrer = `https://referrer.conformance.invalid/${unique('ref')}`;
      expectStatus(await ctx.retrieve(push.url_token, { headers: { 'user-agent': agent, referer: referrer } }), 200);
      const res = await ctx.call('getPushAudit', { params: { url_token: push.url_token }, as: 'a' });
      expectStatus(res, 200);
      const view = (res.body.logs as { kind: string; ip: string; user_agent: string; referrer: string }[]).find(
        (l) => l.kind === 'view',
      );
      expect(view, `no view entry (kinds: ${kinds(res).join(', ')})`);
      expectEqual(view.user_agent, agent.slice(0, 255), 'user_agent of the view');
      expectEqual(view.referrer, referrer, 'referrer of the view');
      expect(typeof view.ip === 'string' && view.ip.length > 0, `ip of the view is ${JSON.stringify(view.ip)}`);
    },
  },
]);

export const lists = define('LIST', [
  {
    id: 'LIST-001',
    title: 'A new push heads the active list, owner variant (name, note), newest first',
    source:
      'seed §4 behavior 5; decisions: Preview, audit, lists, delete, bullet 3; decisions: The push record, bullet 5',
    needs: ['token'],
    async run(ctx) {
      const name = unique('list-name');
      const push = await ctx.create({ payload: SECRET(), name, note: 'n' }, 'a');
      const res = await list(ctx, 'active');
      const mine = (res.body as { url_token: string; name: string; note: string }[]).find(
        (p) => p.url_token === push.url_token,
      );
      expect(mine, 'the new push is not in the active list');
      expectEqual(mine.name, name, 'name in the list');
      expectEqual(mine.note, 'n', 'note in the list');
      expectEqual(tokens(res)[0], push.url_token, 'first item of the active list');
      const times = (res.body as { created_at: string }[]).map((p) => Date.parse(p.created_at));
      expect(
        times.every((t, i) => i === 0 || t <= times[i - 1]!),
        'active list is not newest first',
      );
      expect(!JSON.stringify(res.body).includes('s3cret payload'), 'the list carries a payload');
    },
  },
  {
    id: 'LIST-002',
    title: 'A push expired by views leaves the active list and appears in the expired list',
    source: 'seed §3; seed §4 behavior 5',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET(), expire_after_views: 1 }, 'a');
      expect(tokens(await list(ctx, 'active')).includes(push.url_token), 'new push missing from active');
      expectStatus(await ctx.retrieve(push.url_token), 200);
      expect(!tokens(await list(ctx, 'active')).includes(push.url_token), 'expired push still in active');
      const expired = await list(ctx, 'expired');
      const record = (expired.body as { url_token: string; expired: boolean }[]).find(
        (p) => p.url_token === push.url_token,
      );
      expect(record, 'expired push missing from the expired list');
      expectEqual(record.expired, true, 'expired flag in the expired list');
    },
  },
  {
    id: 'LIST-003',
    title: 'GET /pushes/expired without a token answers 401',
    source: 'seed §5.4; seed §5.8',
    stateless: true,
    async run(ctx) {
      const res = await ctx.call('listExpiredPushes', { as: 'anon' });
      expectStatus(res, 401);
    },
  },
  {
    id: 'LIST-004',
    title: 'page 0, 201 or not an integer answers 400 invalid_page',
    source: 'seed §8 (page 1 to 200); decisions: Preview, audit, lists, delete, bullet 4',
    needs: ['token'],
    stateless: true,
    async run(ctx) {
      for (const page of ['0', '201', 'two']) {
        const res = await ctx.call('listActivePushes', { as: 'a', query: { page } });
        expectStatus(res, 400);
        expectCode(res, 'invalid_page');
      }
    },
  },
  {
    id: 'LIST-005',
    title: 'Lists page by 50 with Link rel next/prev and X-Total-Count; past the end is []',
    source: 'decisions: Preview, audit, lists, delete, bullet 3',
    needs: ['token'],
    async run(ctx) {
      let first = await list(ctx, 'active', 1);
      const missing = 51 - totalCount(first);
      for (let i = 0; i < missing; i++) await ctx.create({ payload: SECRET() }, 'a');
      if (missing > 0) first = await list(ctx, 'active', 1);
      const total = totalCount(first);
      expect(total >= 51, `X-Total-Count ${total} after making 51 pushes`);
      expectEqual(first.body.length, 50, 'items on page 1');
      expect(/[?&]page=2\b/.test(links(first).next ?? ''), `page 1 Link has no rel=next: ${first.headers.get('link')}`);
      const lastPage = Math.ceil(total / 50);
      const last = await list(ctx, 'active', lastPage);
      expectEqual(last.body.length, total - 50 * (lastPage - 1), `items on page ${lastPage}`);
      expect(links(last).prev !== undefined, `last page Link has no rel=prev: ${last.headers.get('link')}`);
      expect(links(last).next === undefined, 'last page Link has rel=next');
      const past = await list(ctx, 'active', lastPage + 1);
      expectEqual(past.body, [], 'page past the end');
      const seen = new Set([...tokens(first), ...tokens(last)]);
      expect(lastPage > 2 || seen.size === first.body.length + last.body.length, 'pages overlap');
    },
  },
  {
    id: 'LIST-006',
    title: "A user's lists never show another user's pushes",
    source: 'seed §4 behavior 5 (the authenticated user’s pushes)',
    needs: ['token', 'tokenB'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const res = await list(ctx, 'active', 1, 'b');
      expect(!tokens(res).includes(push.url_token), "user B's active list shows user A's push");
    },
  },
  {
    id: 'LIST-007',
    title: 'A .json suffix is accepted on both lists (GET /pushes/active.json, /pushes/expired.json)',
    source: 'decisions: Paths and formats, bullet 1',
    needs: ['token'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const active = await ctx.call('listActivePushes', { as: 'a', jsonSuffix: true });
      expectStatus(active, 200);
      expect(
        Array.isArray(active.body) && tokens(active).includes(push.url_token),
        'active.json does not list the new push',
      );
      const expired = await ctx.call('listExpiredPushes', { as: 'a', jsonSuffix: true });
      expectStatus(expired, 200);
      expect(Array.isArray(expired.body), 'expired.json is not an array');
    },
  },
  {
    id: 'LIST-008',
    title: "Both lists' page must be a plain integer: 1e2, 0x10, ' 5', '5 ', 2.5, -1 answer 400 invalid_page",
    source: 'decisions: Preview, audit, lists, delete, bullet 4 (anything else → 400); seed §8',
    needs: ['token'],
    async run(ctx) {
      for (const operationId of ['listActivePushes', 'listExpiredPushes']) {
        for (const page of NOT_INTEGER_PAGES) await expectInvalidPage(ctx, operationId, page);
      }
    },
  },
  {
    id: 'LIST-009',
    title: 'Page 2 links rel=prev to page 1 and page 1 has no rel=prev',
    source: 'decisions: Preview, audit, lists, delete, bullet 3 (Link rel next/prev)',
    needs: ['token'],
    async run(ctx) {
      const missing = 51 - totalCount(await list(ctx, 'active', 1));
      for (let i = 0; i < missing; i++) await ctx.create({ payload: SECRET() }, 'a');
      const first = await list(ctx, 'active', 1);
      expect(links(first).prev === undefined, `page 1 Link has rel=prev: ${first.headers.get('link')}`);
      const second = await list(ctx, 'active', 2);
      const prev = links(second).prev;
      expect(prev !== undefined, `page 2 Link has no rel=prev: ${second.headers.get('link')}`);
      const target = new URL(prev, ctx.options.baseUrl);
      expect(
        /\/api\/v2\/pushes\/active(\.json)?$/.test(target.pathname),
        `page 2 rel=prev points at ${target.pathname}`,
      );
      expect(
        target.searchParams.get('page') === '1' || target.searchParams.get('page') === null,
        `page 2 rel=prev is not page 1: ${prev}`,
      );
    },
  },
  {
    id: 'LIST-010',
    title: 'The expired list is newest first: of two pushes made and expired in turn, the later one comes first',
    source: 'decisions: Preview, audit, lists, delete, bullet 3 (newest first)',
    needs: ['token'],
    async run(ctx) {
      const older = await ctx.create({ payload: SECRET() }, 'a');
      const newer = await ctx.create({ payload: SECRET() }, 'a');
      for (const push of [older, newer]) {
        expectStatus(await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'a' }), 200);
      }
      const order = tokens(await list(ctx, 'expired'));
      const [i, j] = [order.indexOf(newer.url_token), order.indexOf(older.url_token)];
      expect(i >= 0 && j >= 0, 'the two expired pushes are not on page 1 of the expired list');
      expect(i < j, `the expired list shows the older push at ${j + 1} before the newer at ${i + 1}`);
    },
  },
]);
