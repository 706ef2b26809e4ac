/**
 * Who may open a push (issue 42), gated on the version report's `features.pushes.recipient_access`: the network
 * allow-list (`allowed_networks`, whenever the report has `networks`) and the specific people's one-time codes
 * (`recipient_emails`, `requestAccessCode`, `X-Access-Code`: when it reports `email_codes`). A code's delivery needs a
 * way to read the recipients' mailbox (the `mailbox` hook, `--mailbox-url`); recipients are addresses at
 * `--mail-domain` (default `example.com`).
 *
 * The suite's own address is unknown to it: a refused retrieval asks for ranges no client comes from (the
 * documentation ranges 192.0.2.0/24 and 2001:db8::/32, RFC 5737 and RFC 3849), an allowed one for every address
 * (0.0.0.0/0 and ::/0). The view count is read after each retrieval by the owner's look (user A), which counts
 * nothing. `requestAccessCode` allows 5 requests per push and 10 per client address in 15 minutes: the class makes
 * 2 in a run (RCPT-007 and RCPT-009), so a client address can run it 5 times in 15 minutes.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx, type Res } from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;
const ELSEWHERE = ['192.0.2.0/24', '2001:db8::/32'];
const ANYWHERE = ['0.0.0.0/0', '::/0'];

function address(ctx: Ctx, label: string): string {
  return `${unique(label)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')}@${ctx.options.mailDomain ?? 'example.com'}`;
}

/** The views left, as the owner's own look (which counts nothing and passes every gate) reads them. */
async function viewsLeft(ctx: Ctx, urlToken: string): Promise<number> {
  const res = await ctx.call('getPush', { params: { url_token: urlToken }, as: 'a' });
  expectStatus(res, 200);
  return res.body.views_remaining as number;
}

async function auditKinds(ctx: Ctx, urlToken: string): Promise<string[]> {
  const res = await ctx.call('getPushAudit', { params: { url_token: urlToken }, as: 'a' });
  expectStatus(res, 200);
  return (res.body.logs as { kind: string }[]).map((l) => l.kind);
}

function retrieveWithCode(ctx: Ctx, urlToken: string, code?: string): Promise<Res> {
  return ctx.retrieve(urlToken, code === undefined ? {} : { headers: { 'x-access-code': code } });
}

function askCode(ctx: Ctx, urlToken: string, email: string): Promise<Res> {
  return ctx.call('requestAccessCode', { params: { url_token: urlToken }, body: { email }, as: ctx.viewer });
}

/** The 8 digits of the newest message to `to`, once one has come (waiting at most a minute). */
async function codeFor(ctx: Ctx, to: string, count: number): Promise<string> {
  const end = Date.now() + 60_000;
  for (;;) {
    const messages = await ctx.options.mailbox!(to);
    if (messages.length >= count) {
      const last = messages[messages.length - 1]!;
      const match = /\b(\d{4})[ -]?(\d{4})\b/.exec(`${last.subject ?? ''}\n${last.text ?? ''}`);
      expect(match, `the message to ${to} holds no 8-digit code`);
      return `${match[1]}${match[2]}`;
    }
    expect(Date.now() < end, `no code reached ${to} within a minute (${messages.length} of ${count} messages)`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Neither list in a recipient's answer, nor any of its entries anywhere in it. */
function expectListsHidden(res: Res, entries: string[]): void {
  const body = res.body && typeof res.body === 'object' ? (res.body as Record<string, unknown>) : {};
  expect(!('recipient_emails' in body), `${res.operation} ${res.status} shows recipient_emails to a recipient`);
  expect(!('allowed_networks' in body), `${res.operation} ${res.status} shows allowed_networks to a recipient`);
  for (const entry of entries)
    expect(!res.text.includes(entry), `${res.operation} ${res.status} shows ${entry} to a recipient`);
}

export const recipientAccess = define('RCPT', [
  {
    id: 'RCPT-001',
    title: 'The version report describes recipient access: networks, email_codes, single_sign_on and both maxima',
    source: 'spec: schemas/VersionReport (features.pushes.recipient_access)',
    needs: ['recipientAccess'],
    async run(ctx) {
      const res = await ctx.call('getVersion');
      expectStatus(res, 200);
      const r = res.body.features.pushes.recipient_access;
      for (const flag of ['networks', 'email_codes', 'single_sign_on'])
        expect(typeof r[flag] === 'boolean', `recipient_access.${flag} is not a boolean`);
      for (const max of ['max_emails', 'max_networks'])
        expect(Number.isInteger(r[max]) && r[max] >= 0, `recipient_access.${max} is not a count`);
      if (!r.email_codes && !r.single_sign_on) expectEqual(r.max_emails, 0, 'max_emails without codes or sign-on');
    },
  },
  {
    id: 'RCPT-002',
    title: "A create with allowed_networks answers 201 with the ranges normalized in the owner's record",
    source: 'spec: schemas/PushInput allowed_networks; spec: schemas/PushOwner allowed_networks',
    needs: ['token', 'recipientNetworks'],
    async run(ctx) {
      const made = await ctx.create({ payload: SECRET(), allowed_networks: ['192.0.2.7', '2001:DB8:0:0::1'] }, 'a');
      expectEqual(made.allowed_networks, ['192.0.2.7/32', '2001:db8::1/128'], 'allowed_networks of the 201');
    },
  },
  {
    id: 'RCPT-003',
    title: 'A retrieval from outside the ranges answers 403 network_not_allowed, spends no view and is audited',
    source: 'spec: paths getPush 403 (network_not_allowed); spec: schemas/PushInput allowed_networks',
    needs: ['token', 'viewer', 'recipientNetworks'],
    async run(ctx) {
      const secret = SECRET();
      const made = await ctx.create({ payload: secret, expire_after_views: 3, allowed_networks: ELSEWHERE }, 'a');
      for (let i = 0; i < 2; i++) {
        const res = await ctx.retrieve(made.url_token);
        expectStatus(res, 403);
        expectCode(res, 'network_not_allowed');
        expect(!res.text.includes(secret), 'the refusal carries the payload');
        expectListsHidden(res, ELSEWHERE);
      }
      expectEqual(await viewsLeft(ctx, made.url_token), 3, 'views_remaining after two refused retrievals');
      const kinds = await auditKinds(ctx, made.url_token);
      expect(kinds.includes('failed_view'), `no failed_view in the audit log (${kinds.join(', ')})`);
      expect(!kinds.includes('view'), 'a refused retrieval is logged as a view');
    },
  },
  {
    id: 'RCPT-004',
    title: 'A retrieval from inside the ranges answers 200 with the payload and spends one view',
    source: 'spec: schemas/PushInput allowed_networks',
    needs: ['token', 'viewer', 'recipientNetworks'],
    async run(ctx) {
      const secret = SECRET();
      const made = await ctx.create({ payload: secret, expire_after_views: 3, allowed_networks: ANYWHERE }, 'a');
      const res = await ctx.retrieve(made.url_token);
      expectStatus(res, 200);
      expectEqual(res.body.payload, secret, 'payload');
      expectListsHidden(res, []);
      expectEqual(await viewsLeft(ctx, made.url_token), 2, 'views_remaining after one retrieval');
    },
  },
  {
    id: 'RCPT-005',
    title: 'Bad ranges (host bits set, not a range, more than max_networks) answer 422 on allowed_networks',
    source: 'spec: schemas/PushInput allowed_networks',
    needs: ['token', 'recipientNetworks'],
    async run(ctx) {
      const max = ctx.features.pushes.recipient_access!.max_networks;
      const tooMany = Array.from({ length: max + 1 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
      for (const allowed_networks of [['10.0.0.1/8'], ['not a network'], tooMany]) {
        const res = await ctx.call('createPush', { body: { push: { payload: SECRET(), allowed_networks } }, as: 'a' });
        expectStatus(res, 422);
        expectCode(res, 'validation_failed');
        const errors = (res.body?.errors ?? {}) as Record<string, unknown>;
        expect(
          'allowed_networks' in errors,
          `the 422 for ${JSON.stringify(allowed_networks).slice(0, 40)} does not name allowed_networks`,
        );
      }
    },
  },
  {
    id: 'RCPT-006',
    title:
      'Without a code, a push for specific people answers 401 access_code_required with its challenge; no view spent',
    source: 'spec: paths getPush 401 (access_code_required, WWW-Authenticate AccessCode)',
    needs: ['token', 'viewer', 'accessCodes'],
    async run(ctx) {
      const to = address(ctx, 'ana');
      const made = await ctx.create({ payload: SECRET(), expire_after_views: 2, recipient_emails: [to] }, 'a');
      expectEqual(made.recipient_emails, [to], 'recipient_emails of the 201');
      const res = await retrieveWithCode(ctx, made.url_token);
      expectStatus(res, 401);
      expectCode(res, 'access_code_required');
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(/^AccessCode\b/i.test(challenge), `WWW-Authenticate is ${JSON.stringify(challenge)}, not AccessCode`);
      expectListsHidden(res, [to]);
      expectEqual(await viewsLeft(ctx, made.url_token), 2, 'views_remaining after a retrieval without a code');
    },
  },
  {
    id: 'RCPT-007',
    title: 'requestAccessCode for an address that is not listed answers 202 {expires_in}, as for a listed one',
    source: 'spec: paths requestAccessCode 202 ("the same 202 whether or not the address is listed")',
    needs: ['token', 'viewer', 'accessCodes'],
    async run(ctx) {
      // The listed address's answer is RCPT-009's: one request here, as the limit per client address is small.
      const to = address(ctx, 'ben');
      const made = await ctx.create({ payload: SECRET(), recipient_emails: [to] }, 'a');
      const other = await askCode(ctx, made.url_token, address(ctx, 'mallory'));
      expectStatus(other, 202);
      expectEqual(Object.keys(other.body ?? {}), ['expires_in'], 'the fields of the 202');
      expect(Number.isInteger(other.body.expires_in) && other.body.expires_in > 0, 'expires_in is not a count');
      expectListsHidden(other, [to]);
    },
  },
  {
    id: 'RCPT-008',
    title: 'A wrong code answers 401 access_code_incorrect, spends no view and is audited as a failed attempt',
    source: 'spec: paths getPush 401 (access_code_incorrect); spec: schemas/AuditEntry (failed_passphrase)',
    needs: ['token', 'viewer', 'accessCodes'],
    async run(ctx) {
      const made = await ctx.create(
        { payload: SECRET(), expire_after_views: 2, recipient_emails: [address(ctx, 'cy')] },
        'a',
      );
      const res = await retrieveWithCode(ctx, made.url_token, '0000 0000');
      expectStatus(res, 401);
      expectCode(res, 'access_code_incorrect');
      expectEqual(await viewsLeft(ctx, made.url_token), 2, 'views_remaining after a wrong code');
      const kinds = await auditKinds(ctx, made.url_token);
      expect(kinds.includes('failed_passphrase'), `no failed_passphrase in the audit log (${kinds.join(', ')})`);
    },
  },
  {
    id: 'RCPT-009',
    title: 'The mailed code opens its push once (one view spent), opens no other push, and is refused when used again',
    source: 'spec: paths requestAccessCode; spec: parameters/AccessCodeHeader',
    needs: ['token', 'viewer', 'accessCodes', 'mailbox'],
    async run(ctx) {
      const to = address(ctx, 'dee');
      const secret = SECRET();
      const made = await ctx.create({ payload: secret, expire_after_views: 3, recipient_emails: [to] }, 'a');
      const other = await ctx.create({ payload: SECRET(), expire_after_views: 3, recipient_emails: [to] }, 'a');
      const asked = await askCode(ctx, made.url_token, to);
      expectStatus(asked, 202);
      expectEqual(Object.keys(asked.body ?? {}), ['expires_in'], 'the fields of the 202');
      const code = await codeFor(ctx, to, 1);
      // Another push's code is a wrong code there (and is not used up by the try).
      const elsewhere = await retrieveWithCode(ctx, other.url_token, code);
      expectStatus(elsewhere, 401);
      expectCode(elsewhere, 'access_code_incorrect');
      const opened = await retrieveWithCode(ctx, made.url_token, code);
      expectStatus(opened, 200);
      expectEqual(opened.body.payload, secret, 'payload opened with the code');
      expectListsHidden(opened, [to]);
      expectEqual(await viewsLeft(ctx, made.url_token), 2, 'views_remaining after the right code');
      const again = await retrieveWithCode(ctx, made.url_token, code);
      expectStatus(again, 401);
      expectCode(again, 'access_code_incorrect');
      expectEqual(await viewsLeft(ctx, made.url_token), 2, 'views_remaining after the used code again');
      expectEqual(await viewsLeft(ctx, other.url_token), 3, "the other push's views_remaining");
    },
  },
]);
