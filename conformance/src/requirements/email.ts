/**
 * Email of a push's link (Password Pusher's `notify_emails_to` and `notify_emails`), gated on the version report's
 * `features.pushes.email_auto_dispatch`: the shape, the statuses and the refusals need no mail server; delivery needs
 * a way to read the recipients' mailbox (the `mailbox` hook, `--mailbox-url` on the command line). Recipients are
 * addresses at `--mail-domain` (default `example.com`, which accepts no mail: a real relay gives those up).
 *
 * `notifyEmails` allows 5 calls a minute per user: these requirements make at most 3 with user A.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, unique, type Ctx, type MailboxMessage } from '../context.js';

const SECRET = () => `s3cret ${unique('payload')}`;
const STATUSES = ['pending', 'processing', 'completed', 'partially_failed', 'failed'];
const DONE = ['completed', 'partially_failed', 'failed'];

function address(ctx: Ctx, label: string): string {
  return `${unique(label)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')}@${ctx.options.mailDomain ?? 'example.com'}`;
}

/** The `creation_email_send` entries of a push's audit log (as its owner, user A). */
async function mailEntries(ctx: Ctx, urlToken: string): Promise<Record<string, any>[]> {
  const res = await ctx.call('getPushAudit', { params: { url_token: urlToken }, as: 'a' });
  expectStatus(res, 200);
  return (res.body.logs as Record<string, any>[]).filter((l) => l.kind === 'creation_email_send');
}

function expectEntry(entry: Record<string, any> | undefined, recipients: string[], locale: string | null): void {
  expect(entry, 'a creation_email_send entry in the audit log');
  const n = entry.notify_by_email;
  expect(n && typeof n === 'object', 'the entry carries notify_by_email');
  expectEqual(n.recipients, recipients.join(','), 'notify_by_email.recipients');
  expectEqual(n.locale, locale, 'notify_by_email.locale');
  expect(STATUSES.includes(n.status), `notify_by_email.status ${JSON.stringify(n.status)} is one of ${STATUSES}`);
  expect(n.successful_sends === null || typeof n.successful_sends === 'string', 'successful_sends: text or null');
  expect(n.proceed_at === null || !Number.isNaN(Date.parse(n.proceed_at)), 'proceed_at: a timestamp or null');
}

/** A message's subject, text and HTML, to search. */
function textOf(message: MailboxMessage): string {
  return `${message.subject ?? ''}\n${message.text ?? ''}\n${message.html ?? ''}`;
}

/** The messages that reached `recipient`, once there are `count` of them (waiting at most a minute). */
async function arrived(ctx: Ctx, recipient: string, count: number): Promise<MailboxMessage[]> {
  const end = Date.now() + 60_000;
  for (;;) {
    const messages = await ctx.options.mailbox!(recipient);
    if (messages.length >= count || Date.now() > end) return messages;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits (at most a minute) for the entries to finish; the last state seen. */
async function finished(ctx: Ctx, urlToken: string, count: number): Promise<Record<string, any>[]> {
  const end = Date.now() + 60_000;
  for (;;) {
    const entries = await mailEntries(ctx, urlToken);
    const done = entries.filter((e) => DONE.includes(e.notify_by_email?.status));
    if (done.length >= count || Date.now() > end) return entries;
    await new Promise((r) => setTimeout(r, 500));
  }
}

export const email = define('EMAIL', [
  {
    id: 'EMAIL-001',
    title:
      'A create with notify_emails_to answers 201 echoing it; the audit gets creation_email_send with notify_by_email',
    source: 'spec: schemas/PushInput notify_emails_to; spec: schemas/NotifyByEmail; reference §2.2, §2.5',
    needs: ['token', 'emailDispatch'],
    async run(ctx) {
      const to = [address(ctx, 'ana'), address(ctx, 'ben')];
      const res = await ctx.call('createPush', {
        body: { push: { payload: SECRET(), notify_emails_to: to.join(', '), notify_emails_to_locale: 'fr' } },
        as: 'a',
      });
      expectStatus(res, 201);
      expectEqual(res.body.notify_emails_to, to.join(', '), 'notify_emails_to echoed');
      expectEqual(res.body.notify_emails_to_locale, 'fr', 'notify_emails_to_locale echoed');
      const entries = await mailEntries(ctx, res.body.url_token);
      expectEqual(entries.length, 1, 'creation_email_send entries');
      expectEntry(entries[0], to, 'fr');
    },
  },
  {
    id: 'EMAIL-002',
    title: 'notifyEmails answers 201 and adds an entry; another user 403, no token 401, an unknown push 404',
    source: 'spec: paths/pushes-{url_token}-notify_emails; reference §2.8',
    needs: ['token', 'tokenB', 'emailDispatch'],
    async run(ctx) {
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const params = { url_token: push.url_token };
      const to = address(ctx, 'cara');
      const body = { notify_emails_to: to };
      const anon = await ctx.call('notifyEmails', { params, body, as: 'anon' });
      expectStatus(anon, 401);
      const other = await ctx.call('notifyEmails', { params, body, as: 'b' });
      expectStatus(other, 403);
      expectCode(other, 'forbidden');
      const ok = await ctx.call('notifyEmails', { params, body, as: 'a' });
      expectStatus(ok, 201);
      expect(typeof ok.body.message === 'string' && ok.body.message.length > 0, 'a message');
      expectEntry((await mailEntries(ctx, push.url_token))[0], [to], null);
      const unknown = await ctx.call('notifyEmails', {
        params: { url_token: `${push.url_token.slice(0, -4)}zzzz` },
        body,
        as: 'b',
      });
      expectStatus(unknown, 404);
    },
  },
  {
    id: 'EMAIL-003',
    title: 'Bad lists (commas, duplicates, over 5, header injection, non-ASCII) and unknown locales: 422 on the field',
    source: 'spec: schemas/PushInput notify_emails_to, notify_emails_to_locale; reference §2.8 (messages)',
    needs: ['token', 'emailDispatch'],
    async run(ctx) {
      const a = address(ctx, 'dan');
      const cases: [string, Record<string, unknown>, string, string][] = [
        [
          'commas',
          { notify_emails_to: `${a},,${address(ctx, 'x')}` },
          'notify_emails_to',
          'has commas used in the wrong way',
        ],
        [
          'duplicates',
          { notify_emails_to: `${a},${a.toUpperCase()}` },
          'notify_emails_to',
          'contains duplicate emails',
        ],
        [
          'more than 5',
          { notify_emails_to: Array.from({ length: 6 }, (_, i) => address(ctx, `m${i}`)).join(',') },
          'notify_emails_to',
          'contains more than 5 email(s)',
        ],
        [
          'header injection',
          { notify_emails_to: `${a}\r\nBcc: x@example.com` },
          'notify_emails_to',
          'contains invalid email(s)',
        ],
        ['non-ASCII domain', { notify_emails_to: 'ana@exämple.org' }, 'notify_emails_to', 'contains invalid email(s)'],
        [
          'unknown locale',
          { notify_emails_to: a, notify_emails_to_locale: 'xx-YY' },
          'notify_emails_to_locale',
          'is not within the available options',
        ],
      ];
      for (const [what, fields, field, message] of cases) {
        const payload = SECRET();
        const res = await ctx.call('createPush', { body: { push: { payload, ...fields } }, as: 'a' });
        expectStatus(res, 422);
        expectCode(res, 'validation_failed');
        expect(
          Array.isArray(res.body.errors?.[field]) && res.body.errors[field].includes(message),
          `${what}: errors.${field} holds ${JSON.stringify(message)} (got ${JSON.stringify(res.body.errors)})`,
        );
      }
    },
  },
  {
    id: 'EMAIL-004',
    title: 'More than 5 recipients for one push in all (create and notifyEmails together) answers 422 on base',
    source: 'spec: schemas/PushInput notify_emails_to (5 per push in all); reference §2.8',
    needs: ['token', 'emailDispatch'],
    async run(ctx) {
      const first = Array.from({ length: 4 }, (_, i) => address(ctx, `f${i}`));
      const push = await ctx.create({ payload: SECRET(), notify_emails_to: first.join(',') }, 'a');
      const res = await ctx.call('notifyEmails', {
        params: { url_token: push.url_token },
        body: { notify_emails_to: `${address(ctx, 'g1')},${address(ctx, 'g2')}` },
        as: 'a',
      });
      expectStatus(res, 422);
      expect(
        Array.isArray(res.body.errors?.base) && /up to 5 email/.test(res.body.errors.base[0]),
        `errors.base names the limit (got ${JSON.stringify(res.body.errors)})`,
      );
      expectEqual((await mailEntries(ctx, push.url_token)).length, 1, 'creation_email_send entries');
    },
  },
  {
    id: 'EMAIL-005',
    title: 'An anonymous create with notify_emails_to answers 422: recipients need an owner',
    source: 'spec: schemas/PushInput notify_emails_to (needs a token); reference §2.8',
    needs: ['anonymous', 'emailDispatch'],
    async run(ctx) {
      const res = await ctx.call('createPush', {
        body: { push: { payload: SECRET(), notify_emails_to: address(ctx, 'anon') } },
        as: 'anon',
      });
      expectStatus(res, 422);
      expect(res.body.errors?.notify_emails_to, 'errors.notify_emails_to');
    },
  },
  {
    id: 'EMAIL-006',
    title: 'Without email, notify_emails_to on create answers 422 "are not available", notifyEmails 404 or 422',
    source: 'spec: paths/pushes-{url_token}-notify_emails; reference §2.1, §2.8 (feature unavailable)',
    needs: ['token', 'emailOff'],
    async run(ctx) {
      const res = await ctx.call('createPush', {
        body: { push: { payload: SECRET(), notify_emails_to: address(ctx, 'off') } },
        as: 'a',
      });
      expectStatus(res, 422);
      expectEqual(res.body.errors?.notify_emails_to?.[0], 'are not available', 'errors.notify_emails_to');
      const push = await ctx.create({ payload: SECRET() }, 'a');
      const notify = await ctx.call('notifyEmails', {
        params: { url_token: push.url_token },
        body: { notify_emails_to: address(ctx, 'off2') },
        as: 'a',
      });
      expectStatus(notify, 404, 422);
    },
  },
  {
    id: 'EMAIL-007',
    title: 'Each recipient gets one message with the link, without payload or passphrase; the entry ends completed',
    source: 'spec: info.description, Events (Email: what a message holds); spec: schemas/NotifyByEmail',
    needs: ['token', 'emailDispatch', 'mailbox'],
    async run(ctx) {
      const to = [address(ctx, 'hal'), address(ctx, 'ivy')];
      const payload = SECRET();
      const passphrase = `pass ${unique('phrase')}`;
      const push = await ctx.create({ payload, passphrase, notify_emails_to: to.join(',') }, 'a');
      const [entry] = await finished(ctx, push.url_token, 1);
      expectEqual(entry?.notify_by_email?.status, 'completed', 'notify_by_email.status');
      expectEqual(entry?.notify_by_email?.successful_sends, to.join(','), 'notify_by_email.successful_sends');
      for (const recipient of to) {
        const messages = await ctx.options.mailbox!(recipient);
        expectEqual(messages.length, 1, `messages to ${recipient}`);
        const all = `${messages[0]!.subject ?? ''}\n${messages[0]!.text ?? ''}\n${messages[0]!.html ?? ''}`;
        expect(all.includes(push.html_url), `the message to ${recipient} holds the link ${push.html_url}`);
        expect(!all.includes(payload), `the message to ${recipient} holds the payload`);
        expect(!all.includes(passphrase), `the message to ${recipient} holds the passphrase`);
      }
    },
  },
  {
    id: 'EMAIL-008',
    title: "A request's link is mailed to each responder; no request email holds the ask, note or answer",
    source: 'spec: info.description, Requests (each move is mailed; no message holds the ask, note or answer)',
    needs: ['requests', 'token', 'requestEmail', 'mailbox'],
    async run(ctx) {
      const to = [address(ctx, 'kim'), address(ctx, 'lou')];
      const ask = `the ask ${unique('ask')}`;
      const note = `the note ${unique('note')}`;
      const created = await ctx.call('createRequest', {
        as: 'a',
        body: { request: { request: ask, note, notify_emails_to: to.join(',') } },
      });
      expectStatus(created, 201);
      const link: string = created.body.html_url;
      expect(typeof link === 'string' && link.includes(created.body.url_token), 'html_url names the request');
      for (const recipient of to) {
        const messages = await arrived(ctx, recipient, 1);
        expectEqual(messages.length, 1, `messages to ${recipient}`);
        const all = textOf(messages[0]!);
        expect(all.includes(link), `the message to ${recipient} holds the request's link ${link}`);
        expect(!all.includes(ask), `the message to ${recipient} holds the ask`);
        expect(!all.includes(note), `the message to ${recipient} holds the note`);
      }
      const requester = ctx.options.email;
      if (!requester) return;
      const before = (await ctx.options.mailbox!(requester)).length;
      const payload = SECRET();
      const answered = await ctx.call('respondToRequest', {
        params: { url_token: created.body.url_token },
        as: ctx.viewer,
        body: { push: { payload } },
      });
      expectStatus(answered, 201);
      const notices = (await arrived(ctx, requester, before + 1)).slice(before);
      expect(notices.length >= 1, `a notice of the answer reached the requester ${requester}`);
      for (const notice of notices) {
        const all = textOf(notice);
        expect(!all.includes(payload), 'the notice holds the answer');
        expect(!all.includes(ask), 'the notice holds the ask');
        expect(!all.includes(link), "the notice holds the responder's link");
      }
    },
  },
]);
