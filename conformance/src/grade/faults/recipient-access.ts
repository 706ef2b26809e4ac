/**
 * Faults in who may open a push (issue 42, the RCPT class): the network allow-list or the recipient list ignored,
 * refusals answered or audited wrongly, the lists shown to recipients, the codes' answers telling who is listed, and
 * codes accepted when wrong or twice. Each models its bug by changing what goes upstream, or by answering from what
 * the journal knows (the payload the client sent), as the bug would.
 */
import { define } from '../fault.js';
import type { Exchange } from '../proxy.js';

/** The push's lists as the client asked for them (journal), empty when none. */
function listsOf(ex: Exchange): { networks: string[]; emails: string[] } {
  const input = ex.push?.input ?? {};
  return {
    networks: Array.isArray(input.allowed_networks) ? (input.allowed_networks as string[]) : [],
    emails: Array.isArray(input.recipient_emails) ? (input.recipient_emails as string[]) : [],
  };
}

/**
 * The faults of the codes: only an instance with an SMTP relay reports `email_codes`, so they are graded there
 * (conformance/test/grade.test.ts grades them on their own instance, with the RCPT class alone).
 */
export const ACCESS_CODE_FAULTS: readonly string[] = [
  'recipient-emails-ignored',
  'wrong-access-code-accepted',
  'access-code-reusable',
  'access-code-challenge-missing',
  'access-code-request-tells-listed',
  'wrong-access-code-not-audited',
];

function codeOf(ex: Exchange): string | undefined {
  return ex.op === 'getPush' ? ex.requestHeaders['x-access-code'] : undefined;
}

/** The push as a recipient would have got it, made from the journal: the create's record and the sent payload. */
function openedFromJournal(ex: Exchange): void {
  const pushed = ex.push;
  if (!pushed) return;
  const record: Record<string, any> = { ...pushed.created, payload: pushed.input.payload ?? null, files: [] };
  for (const ownerOnly of ['recipient_emails', 'allowed_networks', 'name', 'note', 'notify_emails_to'])
    delete record[ownerOnly];
  ex.status = 200;
  ex.headers['content-type'] = 'application/json; charset=utf-8';
  delete ex.headers['www-authenticate'];
  ex.json = record;
}

/** Drops one kind of entry from the audit log of a push made with a list. */
function hideEntries(ex: Exchange, kind: string, which: 'networks' | 'emails'): void {
  if (ex.op !== 'getPushAudit' || ex.status !== 200 || listsOf(ex)[which].length === 0) return;
  const body = ex.json;
  if (!Array.isArray(body?.logs)) return;
  ex.json = { ...body, logs: (body.logs as { kind: string }[]).filter((l) => l.kind !== kind) };
}

function isCode(ex: Exchange, code: string): boolean {
  return ex.json?.code === code;
}

export const accessOptionFaults = define('option', [
  {
    name: 'allowed-networks-ignored',
    models: 'allowed_networks is ignored on create: the push opens from anywhere and the owner is shown no ranges',
    killers: ['RCPT-002', 'RCPT-003'],
    start: () => ({
      request(ex) {
        const body = ex.requestJson;
        if (ex.op !== 'createPush' || !body?.push || !('allowed_networks' in body.push)) return;
        delete body.push.allowed_networks;
        ex.requestJson = body;
      },
    }),
  },
  {
    name: 'recipient-emails-ignored',
    models: 'recipient_emails is ignored on create: anyone with the link opens the push without a code',
    killers: ['RCPT-006'],
    start: () => ({
      request(ex) {
        const body = ex.requestJson;
        if (ex.op !== 'createPush' || !body?.push || !('recipient_emails' in body.push)) return;
        delete body.push.recipient_emails;
        ex.requestJson = body;
      },
    }),
  },
]);

export const accessAuthFaults = define('auth', [
  {
    name: 'network-gate-open',
    models: 'the ranges are stored but not checked: a retrieval from elsewhere gets the secret',
    killers: ['RCPT-003'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.status === 403 && isCode(ex, 'network_not_allowed')) openedFromJournal(ex);
      },
    }),
  },
  {
    name: 'wrong-access-code-accepted',
    models: 'any code is accepted: a wrong code opens a push for specific people',
    killers: ['RCPT-008'],
    start: () => ({
      response(ex) {
        if (codeOf(ex) !== undefined && ex.status === 401 && isCode(ex, 'access_code_incorrect')) openedFromJournal(ex);
      },
    }),
  },
  {
    name: 'access-code-reusable',
    models: 'a code is not used up: the same code opens the push again',
    killers: ['RCPT-009'],
    start: () => {
      const opened = new Set<string>();
      return {
        response(ex) {
          const code = codeOf(ex);
          if (code === undefined) return;
          const key = `${ex.params.url_token} ${code.replace(/[\s-]/g, '')}`;
          if (ex.status === 200) opened.add(key);
          else if (ex.status === 401 && opened.has(key)) openedFromJournal(ex);
        },
      };
    },
  },
]);

export const accessStatusFaults = define('status', [
  {
    name: 'network-refusal-as-not-found',
    models: 'a retrieval from outside the ranges answers 404 not_found instead of 403 network_not_allowed',
    killers: ['RCPT-003'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.status === 403 && isCode(ex, 'network_not_allowed'))
          ex.fail(404, 'not_found', 'No push has this token.');
      },
    }),
  },
]);

export const accessHeaderFaults = define('header', [
  {
    name: 'access-code-challenge-missing',
    models: 'the 401 access_code_required has no WWW-Authenticate challenge',
    killers: ['RCPT-006'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.status === 401 && isCode(ex, 'access_code_required'))
          delete ex.headers['www-authenticate'];
      },
    }),
  },
]);

export const accessLeakFaults = define('leak', [
  {
    name: 'recipient-lists-shown',
    models: "a recipient's answers show the push's allowed_networks and recipient_emails",
    killers: ['RCPT-004', 'RCPT-003', 'RCPT-006'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'getPush' || ex.byOwner) return;
        const { networks, emails } = listsOf(ex);
        if (networks.length + emails.length === 0) return;
        const body = ex.json;
        if (!body || typeof body !== 'object') return;
        ex.json = {
          ...body,
          ...(networks.length ? { allowed_networks: networks } : {}),
          ...(emails.length ? { recipient_emails: emails } : {}),
        };
      },
    }),
  },
  {
    name: 'access-code-request-tells-listed',
    models: 'requestAccessCode refuses an address that is not listed (422), telling who is',
    killers: ['RCPT-007'],
    start: () => ({
      request(ex) {
        if (ex.op !== 'requestAccessCode') return;
        const email = String(ex.requestJson?.email ?? '').toLowerCase();
        const { emails } = listsOf(ex);
        if (emails.length > 0 && !emails.some((e) => e.toLowerCase() === email))
          ex.fail(422, 'validation_failed', 'email is not one of the recipients');
      },
    }),
  },
]);

export const accessValueFaults = define('value', [
  {
    name: 'network-refusal-not-audited',
    models: 'a retrieval refused for its network is not logged (no failed_view)',
    killers: ['RCPT-003'],
    start: () => ({
      response(ex) {
        hideEntries(ex, 'failed_view', 'networks');
      },
    }),
  },
  {
    name: 'wrong-access-code-not-audited',
    models: 'a wrong code is not logged as a failed attempt (no failed_passphrase)',
    killers: ['RCPT-008'],
    start: () => ({
      response(ex) {
        hideEntries(ex, 'failed_passphrase', 'emails');
      },
    }),
  },
]);
