/** What HTTP and the contract imply for every answer: media types, required headers, the 401 challenge, request ids. */
import { define } from '../requirement.js';
import { documented, mediaType } from '../documented.js';
import {
  AssertionFailure,
  expect,
  expectCode,
  expectStatus,
  unique,
  type Ctx,
  type Observed,
  type Res,
} from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;

function describe(o: Observed): string {
  return `${o.url.split('?')[0]} → ${o.status}`;
}

/** Fails with a count and the first example when `bad` is not empty; notes how many were checked otherwise. */
function expectNone(ctx: Ctx, bad: string[], checked: number, what: string): void {
  expect(ctx.partial || checked > 0, `the run observed no ${what} to check`);
  if (bad.length > 0) {
    throw new AssertionFailure(
      `${bad[0]}${bad.length > 1 ? ` (+${bad.length - 1} more problems)` : ''} (${checked} ${what} checked)`,
    );
  }
  ctx.note = `${checked} ${what} checked`;
}

/** The items of a RateLimit-Policy or RateLimit field (`"name";k=v;…, …`) by name, or null when it is not such a list. */
function rateLimitItems(field: string | null): Record<string, Record<string, string>> | null {
  if (field === null) return {};
  const out: Record<string, Record<string, string>> = {};
  for (const item of field.split(',')) {
    const [name, ...params] = item.trim().split(';');
    const named = /^"([a-z][a-z0-9_-]*)"$/.exec(name ?? '');
    if (!named) return null;
    const values: Record<string, string> = {};
    for (const param of params) {
      const kv = /^([a-z][a-z0-9]*)=("[^"]*"|-?\d+)$/.exec(param.trim());
      if (!kv) return null;
      values[kv[1]!] = kv[2]!;
    }
    out[named[1]!] = values;
  }
  return out;
}

/** A challenge list names the Bearer scheme (RFC 9110 §11.6.1: auth-scheme is case-insensitive). */
function hasBearerChallenge(res: Res): boolean {
  return /(^|,)\s*bearer(\s|,|$)/i.test(res.headers.get('www-authenticate') ?? '');
}

export const httpHeaders = define('HDR', [
  {
    id: 'HDR-003',
    title: 'Every answer of the run has the media type its operation documents for its status',
    source:
      "decisions: Paths and formats, bullet 2 (bodies are JSON); decisions: Errors, sentence 1; spec: each response's content",
    stateless: true,
    aggregate: true,
    async run(ctx) {
      const bad: string[] = [];
      let checked = 0;
      for (const o of ctx.observed) {
        const doc = documented(ctx.contractOf(o), o.target, o.status);
        if (!doc || doc.mediaTypes.length === 0) continue;
        checked++;
        const type = mediaType(o.headers.get('content-type'));
        if (!doc.mediaTypes.includes(type)) {
          bad.push(
            `${describe(o)} is ${JSON.stringify(o.headers.get('content-type'))}, documented ${doc.mediaTypes.join(' or ')}`,
          );
        }
      }
      expectNone(ctx, bad, checked, 'answers');
    },
  },
  {
    id: 'HDR-004',
    title: 'Every answer of the run carries the headers its documented response marks required',
    source:
      'spec: required response headers (Cache-Control, X-Request-Id, Allow, Retry-After, X-Total-Count, WWW-Authenticate, …)',
    stateless: true,
    aggregate: true,
    async run(ctx) {
      const bad: string[] = [];
      let checked = 0;
      for (const o of ctx.observed) {
        const doc = documented(ctx.contractOf(o), o.target, o.status);
        if (!doc) continue;
        checked++;
        const missing = doc.requiredHeaders.filter((name) => !o.headers.has(name));
        if (missing.length > 0) bad.push(`${describe(o)} lacks ${missing.join(', ')}`);
      }
      expectNone(ctx, bad, checked, 'answers');
    },
  },
  {
    id: 'HDR-005',
    title: 'A 401 for a missing or invalid token sends a WWW-Authenticate challenge with the Bearer scheme',
    source: 'RFC 9110 §15.5.2 (a 401 sends WWW-Authenticate); spec: components/headers/WwwAuthenticate',
    async run(ctx) {
      const bad = { headers: { authorization: 'Bearer spt_conformance_not_a_real_token' } };
      const checks: [string, Res][] = [
        ['GET /pushes/active without a token', await ctx.call('listActivePushes', { as: 'anon' })],
        [
          'GET /pushes/{url_token} with an invalid token',
          await ctx.call('getPush', { params: { url_token: 'unknownconformance0000' }, as: bad }),
        ],
      ];
      checks.push([
        'POST /pushes with an invalid token',
        await ctx.call('createPush', { body: { push: { payload: 'x' } }, as: bad }),
      ]);
      if (ctx.features.anonymous_access) {
        const push = await ctx.create({ payload: SECRET(), deletable_by_viewer: false });
        checks.push([
          'an anonymous DELETE of an owner-only push',
          await ctx.call('expirePush', { params: { url_token: push.url_token }, as: 'anon' }),
        ]);
      }
      for (const [what, res] of checks) {
        expectStatus(res, 401);
        expect(
          hasBearerChallenge(res),
          `${what}: 401 with WWW-Authenticate ${JSON.stringify(res.headers.get('www-authenticate'))}`,
        );
      }
    },
  },
  {
    id: 'HDR-006',
    title: 'X-Request-Id echoes a safe id the client sends (also as request_id in errors), else is a fresh id',
    source: 'spec: info.description (Conventions: X-Request-Id); spec: components/headers/RequestId',
    async run(ctx) {
      const id = `conformance.${unique('req')}`;
      const version = await ctx.call('getVersion', { headers: { 'x-request-id': id } });
      expectStatus(version, 200);
      expect(
        version.headers.get('x-request-id') === id,
        `X-Request-Id ${JSON.stringify(version.headers.get('x-request-id'))}, sent ${id}`,
      );
      const error = await ctx.raw('NoRoute', 'GET', '/api/v2/no-such-thing', { headers: { 'x-request-id': id } });
      expectStatus(error, 404);
      expectCode(error, 'no_route');
      expect(
        error.headers.get('x-request-id') === id,
        `error X-Request-Id ${JSON.stringify(error.headers.get('x-request-id'))}, sent ${id}`,
      );
      const inBody = (error.body as { request_id?: unknown }).request_id;
      expect(inBody === undefined || inBody === id, `error body request_id ${JSON.stringify(inBody)}, sent ${id}`);
      // Unsafe ids (spaces, over 128 characters) are replaced, never echoed into logs and answers.
      for (const unsafe of ['has space', 'x'.repeat(129)]) {
        const res = await ctx.call('getVersion', { headers: { 'x-request-id': unsafe } });
        const echoed = res.headers.get('x-request-id');
        expect(
          echoed !== null && echoed !== '' && echoed !== unsafe,
          `unsafe X-Request-Id ${JSON.stringify(unsafe.slice(0, 20))} echoed`,
        );
      }
      const [one, two] = [await ctx.call('getVersion'), await ctx.call('getVersion')];
      const ids = [one.headers.get('x-request-id'), two.headers.get('x-request-id')];
      expect(
        ids.every((v) => v !== null && v.length > 0) && ids[0] !== ids[1],
        `two requests got X-Request-Id ${JSON.stringify(ids)}`,
      );
    },
  },
  {
    id: 'HDR-008',
    title: 'RateLimit fields, where sent, are lists of named policies; each RateLimit item names a listed policy',
    source: 'spec: components/headers/RateLimit and RateLimitPolicy (IETF draft-ietf-httpapi-ratelimit-headers)',
    stateless: true,
    aggregate: true,
    async run(ctx) {
      const bad: string[] = [];
      let checked = 0;
      for (const o of ctx.observed) {
        const policy = o.headers.get('ratelimit-policy');
        const limit = o.headers.get('ratelimit');
        if (policy === null && limit === null) continue;
        checked++;
        const policies = rateLimitItems(policy);
        const limits = rateLimitItems(limit);
        if (!policies || !limits) {
          bad.push(
            `${describe(o)}: RateLimit-Policy ${JSON.stringify(policy)} / RateLimit ${JSON.stringify(limit)} is not a list of "name";key=value items`,
          );
          continue;
        }
        for (const [name, params] of Object.entries(policies)) {
          if (!/^\d+$/.test(params.q ?? '')) bad.push(`${describe(o)}: policy "${name}" has no quota q`);
        }
        for (const [name, params] of Object.entries(limits)) {
          if (!(name in policies))
            bad.push(`${describe(o)}: RateLimit names "${name}", which RateLimit-Policy does not list`);
          if (!/^\d+$/.test(params.r ?? '')) bad.push(`${describe(o)}: RateLimit "${name}" has no remaining r`);
          if (params.t !== undefined && !/^\d+$/.test(params.t))
            bad.push(`${describe(o)}: RateLimit "${name}" has t=${params.t}`);
        }
      }
      if (checked === 0) {
        ctx.note = 'no answer carried RateLimit fields (the target runs without a limit, or does not send them)';
        return;
      }
      expectNone(ctx, bad, checked, 'answers with RateLimit fields');
    },
  },
  {
    id: 'HDR-007',
    title: 'A passphrase 401 (missing or wrong) also sends a WWW-Authenticate challenge, as every 401 must',
    source: 'RFC 9110 §15.5.2 (a 401 sends at least one challenge); spec: components/responses/PassphraseUnauthorized',
    needs: ['creator', 'viewer'],
    async run(ctx) {
      const passphrase = unique('gate');
      const push = await ctx.create({ payload: SECRET(), passphrase });
      const checks: [string, Res][] = [
        ['no passphrase', await ctx.retrieve(push.url_token)],
        [
          'a wrong passphrase',
          await ctx.retrieve(push.url_token, { headers: { 'x-passphrase': `${passphrase}-wrong` } }),
        ],
      ];
      for (const [what, res] of checks) {
        expectStatus(res, 401);
        // RFC 9110 §11.6.1: a challenge starts with an auth-scheme token; which scheme is the implementation's choice.
        const challenge = res.headers.get('www-authenticate') ?? '';
        expect(
          /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s|,|$)/.test(challenge),
          `${what}: 401 with WWW-Authenticate ${JSON.stringify(res.headers.get('www-authenticate'))}`,
        );
      }
    },
  },
]);
