/**
 * The push record: invariants every record of the run must keep (links, times, counts, state, what it never
 * carries), and what later records of a push must repeat from its creation.
 */
import { define } from '../requirement.js';
import { AssertionFailure, expect, expectEqual, expectStatus, unique, type Ctx, type Observed } from '../context.js';

const DAY_MS = 86_400_000;

type Variant = 'create' | 'retrieve' | 'delete' | 'active' | 'expired';
type PushRecord = Record<string, any>;

const VARIANTS: Record<string, [Variant, number]> = {
  createPush: ['create', 201],
  getPush: ['retrieve', 200],
  expirePush: ['delete', 200],
  listActivePushes: ['active', 200],
  listExpiredPushes: ['expired', 200],
};

/** Every push record the run received, with the operation that returned it. */
function pushRecords(observed: Observed[]): { o: Observed; r: PushRecord; variant: Variant }[] {
  const out: { o: Observed; r: PushRecord; variant: Variant }[] = [];
  for (const o of observed) {
    const [variant, status] = VARIANTS[o.target] ?? [];
    if (!variant || o.status !== status || !o.body || typeof o.body !== 'object') continue;
    const items = Array.isArray(o.body) ? o.body : [o.body];
    for (const r of items)
      if (r && typeof r === 'object' && typeof r.url_token === 'string') out.push({ o, r, variant });
  }
  return out;
}

const where = (o: Observed, r: PushRecord) => `${o.url.split('?')[0]} → ${o.status} (${r.url_token})`;

/** Fails on the first of `bad` with a count; notes what was checked otherwise. */
function expectNone(ctx: Ctx, bad: string[], checked: number, what: string): void {
  expect(ctx.partial || checked > 0, `the run observed no ${what} to check`);
  if (bad.length > 0) {
    throw new AssertionFailure(
      `${bad[0]}${bad.length > 1 ? ` (+${bad.length - 1} more problems)` : ''} (${checked} ${what} checked)`,
    );
  }
  ctx.note = `${checked} ${what} checked`;
}

/** The base push links start with: the configured public base URL, else the origin the request went to. */
function linkBase(ctx: Ctx, o: Observed): string {
  return (ctx.options.publicBaseUrl ?? o.origin).replace(/\/+$/, '');
}

/** Strings the run sent under `pick`, long enough that finding one in an answer is no coincidence. */
function sentStrings(observed: Observed[], pick: (o: Observed) => unknown[], minLength: number): string[] {
  const out = new Set<string>();
  for (const o of observed) for (const v of pick(o)) if (typeof v === 'string' && v.length >= minLength) out.add(v);
  return [...out];
}

function hasKey(node: unknown, key: string, skipTop?: string): boolean {
  if (Array.isArray(node)) return node.some((n) => hasKey(n, key));
  if (!node || typeof node !== 'object') return false;
  return Object.entries(node).some(([k, v]) => k !== skipTop && (k === key || hasKey(v, key)));
}

const createdPush = (o: Observed) =>
  o.target === 'createPush' ? ((o.request.body as { push?: Record<string, unknown> } | undefined)?.push ?? {}) : {};

/** Fields a push keeps for life: every later record repeats what the create answer said. */
const KEPT = [
  'url_token',
  'kind',
  'created_at',
  'expires_at',
  'expire_after_days',
  'expire_after_views',
  'deletable_by_viewer',
  'retrieval_step',
  'json_url',
  'html_url',
];

function expectKept(created: PushRecord, later: PushRecord, what: string, extra: string[] = []): void {
  for (const field of [...KEPT, ...extra]) expectEqual(later[field], created[field], `${what}: ${field}`);
}

export const records = define('REC', [
  {
    id: 'REC-001',
    title: "Every push record's json_url is {base}/api/v2/pushes/{url_token}, html_url {base}/p/{url_token}[/r]",
    source:
      'decisions: The push record, bullet 4 (/r when retrieval_step is on); decisions: Preview, audit, lists, delete, bullet 1',
    aggregate: true,
    async run(ctx) {
      const bad: string[] = [];
      const all = pushRecords(ctx.observed);
      for (const { o, r } of all) {
        const base = linkBase(ctx, o);
        const json = `${base}/api/v2/pushes/${r.url_token}`;
        const html = `${base}/p/${r.url_token}${r.retrieval_step === true ? '/r' : ''}`;
        if (r.json_url !== json) bad.push(`${where(o, r)}: json_url ${r.json_url}, expected ${json}`);
        if (r.html_url !== html) bad.push(`${where(o, r)}: html_url ${r.html_url}, expected ${html}`);
      }
      let previews = 0;
      for (const o of ctx.observed.filter((x) => x.target === 'previewPush' && x.status === 200)) {
        const token = /\/pushes\/([^/?]+)\/preview/.exec(o.url)?.[1];
        const url = (o.body as { url?: unknown } | undefined)?.url;
        if (!token) continue;
        previews++;
        const html = `${linkBase(ctx, o)}/p/${decodeURIComponent(token)}`;
        if (url !== html && url !== `${html}/r`)
          bad.push(`${o.url.split('?')[0]}: preview url ${String(url)}, expected ${html}[/r]`);
      }
      expectNone(ctx, bad, all.length + previews, 'push records and previews');
    },
  },
  {
    id: 'REC-002',
    title: "Every record's expires_at is created_at + its lifetime (days rounded up), views and time left within it",
    source:
      'decisions: The push record, bullet 2 (expires_at); seed §2.1 (expire_after_days, expire_after_views); spec: Push (expire_after_seconds)',
    aggregate: true,
    async run(ctx) {
      const bad: string[] = [];
      const all = pushRecords(ctx.observed);
      const within = (v: unknown, max: unknown) =>
        Number.isInteger(v) && (v as number) >= 0 && (v as number) <= (max as number);
      for (const { o, r } of all) {
        const created = Date.parse(r.created_at);
        const expires = Date.parse(r.expires_at);
        const span = expires - created;
        // The lifetime is expire_after_seconds where the server sends it (durations), else whole days.
        const exact = typeof r.expire_after_seconds === 'number';
        const lifetime = exact ? r.expire_after_seconds * 1000 : r.expire_after_days * DAY_MS;
        if (span !== lifetime)
          bad.push(`${where(o, r)}: expires_at − created_at is ${span / 1000} s, its lifetime ${lifetime / 1000} s`);
        if (r.expire_after_days !== Math.ceil(span / DAY_MS))
          bad.push(`${where(o, r)}: expire_after_days ${r.expire_after_days} for a lifetime of ${span / DAY_MS} days`);
        if (exact && !within(r.seconds_remaining, r.expire_after_seconds))
          bad.push(`${where(o, r)}: seconds_remaining ${r.seconds_remaining} of ${r.expire_after_seconds}`);
        // Days left are the time left rounded up: from whole seconds, or from the exact time (a second's difference).
        const daysLeft = [Math.ceil(r.seconds_remaining / 86_400), Math.ceil((r.seconds_remaining + 1) / 86_400)];
        if (exact && !daysLeft.includes(r.days_remaining)) {
          bad.push(
            `${where(o, r)}: days_remaining ${r.days_remaining} is not seconds_remaining ${r.seconds_remaining} rounded up to days`,
          );
        }
        if (Date.parse(r.updated_at) < created)
          bad.push(`${where(o, r)}: updated_at ${r.updated_at} before created_at ${r.created_at}`);
        if (r.expired_on !== null && !(Date.parse(r.expired_on) >= created && Date.parse(r.expired_on) <= expires)) {
          bad.push(`${where(o, r)}: expired_on ${r.expired_on} outside created_at..expires_at`);
        }
        if (!within(r.views_remaining, r.expire_after_views))
          bad.push(`${where(o, r)}: views_remaining ${r.views_remaining} of ${r.expire_after_views}`);
        if (!within(r.days_remaining, r.expire_after_days))
          bad.push(`${where(o, r)}: days_remaining ${r.days_remaining} of ${r.expire_after_days}`);
      }
      expectNone(ctx, bad, all.length, 'push records');
    },
  },
  {
    id: 'REC-003',
    title: 'Every record is consistent: expired_on set exactly when expired, deleted only if expired, lists by state',
    source: 'decisions: Retrieve, bullets 1 and 4; decisions: Preview, audit, lists, delete, bullets 3 and 5; seed §3',
    aggregate: true,
    async run(ctx) {
      const bad: string[] = [];
      const all = pushRecords(ctx.observed);
      for (const { o, r, variant } of all) {
        const at = where(o, r);
        if ((r.expired === true) !== (r.expired_on !== null))
          bad.push(`${at}: expired ${r.expired} with expired_on ${r.expired_on}`);
        if (r.deleted === true && r.expired !== true) bad.push(`${at}: deleted but not expired`);
        if (variant === 'active' && r.expired !== false) bad.push(`${at}: an expired push in the active list`);
        if (variant === 'expired' && r.expired !== true) bad.push(`${at}: an active push in the expired list`);
        if (variant === 'retrieve' && r.expired === true && (r.payload !== null || (r.files ?? []).length > 0)) {
          bad.push(`${at}: an expired push answered with its payload or files`);
        }
        // Only the retrieval that used the last view answers an active record with no views left.
        const lastView = variant === 'retrieve' && typeof r.payload === 'string';
        if (r.expired === false && r.views_remaining === 0 && !lastView)
          bad.push(`${at}: active with views_remaining 0`);
      }
      expectNone(ctx, bad, all.length, 'push records');
    },
  },
  {
    id: 'REC-004',
    title: 'No answer of the run carries a passphrase: no passphrase key, no passphrase the run sent',
    source:
      'decisions: The push record, bullet 3 (never the passphrase); spec: ErrorResponse (error never contains a secret)',
    stateless: true,
    aggregate: true,
    async run(ctx) {
      const phrases = sentStrings(
        ctx.observed,
        (o) => [
          createdPush(o).passphrase,
          o.request.headers['x-passphrase'],
          new URLSearchParams(o.url.split('?')[1] ?? '').get('passphrase'),
        ],
        6,
      );
      const bad: string[] = [];
      for (const o of ctx.observed) {
        // A 422's errors map names the passphrase field; that is a field name, not the passphrase.
        if (hasKey(o.body, 'passphrase', o.status >= 400 ? 'errors' : undefined))
          bad.push(`${o.url.split('?')[0]} → ${o.status} has a passphrase key`);
        const leaked = phrases.find((p) => o.text.includes(p));
        if (leaked)
          bad.push(
            `${o.url.split('?')[0]} → ${o.status} contains a passphrase the run sent (${leaked.length} characters)`,
          );
      }
      expectNone(ctx, bad, ctx.observed.length, 'answers');
    },
  },
  {
    id: 'REC-005',
    title: 'Only a retrieval carries the payload: create, delete, list, preview, audit and error answers never do',
    source:
      'decisions: The push record, bullet 5 (retrieval adds payload and files); spec: ErrorResponse (never a secret)',
    aggregate: true,
    async run(ctx) {
      const payloads = sentStrings(ctx.observed, (o) => [createdPush(o).payload], 12);
      const bad: string[] = [];
      const all = pushRecords(ctx.observed).filter(({ variant }) => variant !== 'retrieve');
      for (const { o, r } of all) {
        if ('payload' in r || 'files' in r) bad.push(`${where(o, r)}: carries ${'payload' in r ? 'payload' : 'files'}`);
      }
      const quiet = new Set([
        'createPush',
        'expirePush',
        'listActivePushes',
        'listExpiredPushes',
        'previewPush',
        'getPushAudit',
      ]);
      const answers = ctx.observed.filter((o) => o.status >= 400 || quiet.has(o.target));
      for (const o of answers) {
        if (payloads.some((p) => o.text.includes(p)))
          bad.push(`${o.url.split('?')[0]} → ${o.status} contains a payload the run sent`);
      }
      expectNone(ctx, bad, all.length + answers.length, 'records and answers');
    },
  },
  {
    id: 'REC-006',
    title: "A recipient never sees the owner's name or note: retrieval and delete by a non-owner carry neither",
    source: 'decisions: The push record, bullet 5 (owner views add name and note); decisions: Create, bullet 8',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const name = unique('rec-name');
      const note = unique('rec-note');
      const push = await ctx.create(
        { payload: `s3cret ${unique('payload')}`, name, note, deletable_by_viewer: true },
        'a',
      );
      const got = await ctx.retrieve(push.url_token);
      expectStatus(got, 200);
      const deleted = await ctx.call('expirePush', { params: { url_token: push.url_token }, as: ctx.viewer });
      expectStatus(deleted, 200);
      for (const [what, res] of [
        ['retrieval', got],
        ['delete', deleted],
      ] as const) {
        for (const key of ['name', 'note']) expect(!(key in res.body), `the recipient's ${what} carries ${key}`);
        expect(
          !res.text.includes(note) && !res.text.includes(name),
          `the recipient's ${what} contains the owner's name or note`,
        );
      }
    },
  },
  {
    id: 'REC-007',
    title: 'Retrieval, lists, preview and delete repeat the kind, options and times the push was created with',
    source:
      'seed §2.1 (kind, expire_after_days, expire_after_views, deletable_by_viewer, retrieval_step); decisions: The push record',
    needs: ['token', 'viewer'],
    async run(ctx) {
      const url = ctx.features.pushes.url_pushes.enabled;
      const payload = url ? `https://example.org/conformance/${unique('rec')}` : `s3cret ${unique('payload')}`;
      const phrase = unique('rec-phrase');
      const asked = {
        kind: url ? 'url' : 'text',
        expire_after_days: 4,
        expire_after_views: 3,
        deletable_by_viewer: true,
        retrieval_step: true,
      };
      const created = await ctx.create({ ...asked, payload, passphrase: phrase, name: 'rec' }, 'a');
      for (const [field, value] of Object.entries(asked)) expectEqual(created[field], value, `create: ${field}`);
      const got = await ctx.retrieve(created.url_token, { headers: { 'x-passphrase': phrase } });
      expectStatus(got, 200);
      expectEqual(got.body.payload, payload, 'payload');
      expectKept(created, got.body, 'retrieval', ['passphrase_protected']);
      const active = await ctx.call('listActivePushes', { as: 'a' });
      expectStatus(active, 200);
      const listed = (active.body as PushRecord[]).find((p) => p.url_token === created.url_token);
      expect(listed, 'the push is not on page 1 of the active list');
      expectKept(created, listed, 'active list', ['passphrase_protected', 'name']);
      const preview = await ctx.call('previewPush', { params: { url_token: created.url_token }, as: ctx.viewer });
      expectStatus(preview, 200);
      expectEqual(preview.body.url, created.html_url, 'preview url');
      const deleted = await ctx.call('expirePush', { params: { url_token: created.url_token }, as: 'a' });
      expectStatus(deleted, 200);
      expectKept(created, deleted.body, 'delete');
    },
  },
]);
