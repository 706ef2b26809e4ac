/**
 * Requests (issue 24) through real HTTP on the real Core and PostgreSQL: pwpush-cli 0.16's exact `request` bodies
 * (JSON, and multipart with an attached file as Python's requests builds it), its preview, an anonymous answer, the
 * states `pending` → `fulfilled` → `collected` as the requester retrieves the answer's push, a second answer refused
 * with nothing stored, revocation, expiry by time, the audit log, no email without a relay, and the storage quota of the requester.
 * Every answer is checked against the contract (SpecChecker).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from './support/real.js';
import { SpecChecker } from './support/spec-check.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON answers, read field by field
type Json = Record<string, any>;

const CLI_UA = 'pwpush-cli/0.16.0';

/** A multipart body as Python's requests builds it for `data=` + `files=`: text parts, then the file part, which carries no Content-Type. */
function pythonMultipart(fields: Record<string, string>, file: { name: string; filename: string; bytes: Buffer }) {
  const boundary = 'e3b0c44298fc1c149afbf4c8996fb924';
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  chunks.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: new Uint8Array(Buffer.concat(chunks)), type: `multipart/form-data; boundary=${boundary}` };
}

describe('requests over real HTTP', () => {
  let api: RealApi;
  let checker: SpecChecker;
  let checkedFetch: typeof fetch;
  let requester: { token: string; email: string; userId: string };
  let other: { token: string; email: string };

  async function call(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: unknown; raw?: { body: Uint8Array; type: string } } = {},
  ): Promise<{ status: number; body: Json; headers: Headers }> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    let body: BodyInit | undefined;
    if (init.raw) {
      headers['content-type'] = init.raw.type;
      body = init.raw.body as BodyInit;
    } else if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const response = await checkedFetch(`${api.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {}, headers: response.headers };
  }

  /** pwpush-cli's headers: both header styles, its User-Agent. */
  const cli = (user: { token: string; email: string }) => ({
    authorization: `Bearer ${user.token}`,
    'x-user-email': user.email,
    'x-user-token': user.token,
    'user-agent': CLI_UA,
  });
  const bearer = (user: { token: string }) => ({ authorization: `Bearer ${user.token}` });
  const responder = { 'user-agent': 'Mozilla/5.0 (responder)', 'x-forwarded-for': '198.51.100.9' };

  async function pushCountOf(userId: string): Promise<number> {
    const rows = await api.db.query<{ n: string }>('select count(*) as n from pushes where user_id = $1', [userId]);
    return Number(rows[0]!.n);
  }

  async function auditKinds(urlToken: string, user = requester): Promise<string[]> {
    const audit = await call('GET', `/api/v2/requests/${urlToken}/audit`, { headers: bearer(user) });
    expect(audit.status).toBe(200);
    return (audit.body.logs as Json[]).map((l) => l.kind as string);
  }

  beforeAll(async () => {
    api = await startRealApi();
    checker = await SpecChecker.create();
    checkedFetch = checker.fetch();
    requester = await api.user('requester@example.org');
    other = await api.user('someone-else@example.org');
  });

  afterAll(async () => {
    await api?.stop();
  });

  it('reports requests in the version report, edition still oss', async () => {
    const version = await call('GET', '/api/v2/version');
    expect(version.body.edition).toBe('oss');
    expect(version.body.features.requests).toEqual({
      enabled: true,
      email_auto_dispatch: false,
      sealed_answers: ['hpke-x25519-sha256-aes256gcm'],
    });
  });

  it("takes pwpush-cli's JSON create, previews it, and runs the whole life: answer, fulfilled, collected, a refused second answer", async () => {
    // `pwpush request "…" --days 7 --views 2 --note … --name … --notify … --notify-locale es` (7 days → duration 12),
    // with the account_id pwpush-cli adds at the top when configured.
    const created = await call('POST', '/api/v2/requests', {
      headers: cli(requester),
      body: {
        request: {
          request: 'Please send the staging database password',
          notify_emails_to: 'ops@example.org,lead@example.org',
          notify_emails_to_locale: 'es',
          expire_after_views: 2,
          note: 'ticket 4711',
          name: 'staging db',
          deletable_by_viewer: false,
          retrieval_step: true,
          expire_after_duration: 12,
        },
        account_id: 3,
      },
    });
    expect(created.status).toBe(201);
    const token = created.body.url_token as string;
    expect(created.body).toMatchObject({
      audience: 'owner',
      state: 'pending',
      request: 'Please send the staging database password',
      name: 'staging db',
      note: 'ticket 4711',
      expire_after_days: 7,
      expire_after_duration: 12,
      expire_after_seconds: 7 * 86400,
      expire_after_views: 2,
      deletable_by_viewer: false,
      retrieval_step: true,
      notify_emails_to: 'ops@example.org,lead@example.org',
      notify_emails_to_locale: 'es',
      sealing: null,
      answer: null,
      html_url: `${api.baseUrl}/r/${token}`,
    });

    // What pwpush-cli does next: the preview, whose url it prints.
    const preview = await call('GET', `/api/v2/requests/${token}/preview`, { headers: cli(requester) });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ url: created.body.html_url });

    // The responder, anonymous, sees the ask and what an answer may hold, nothing of the requester's own fields.
    const seen = await call('GET', `/api/v2/requests/${token}`, { headers: responder });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({
      audience: 'responder',
      request: 'Please send the staging database password',
      open: true,
      state: 'pending',
      sealing: null,
      files: [],
    });
    expect(seen.body.allowed.kinds).toContain('text');
    for (const key of ['name', 'note', 'notify_emails_to', 'answer']) expect(seen.body).not.toHaveProperty(key);
    // Reading spends and logs nothing.
    expect(await auditKinds(token)).toEqual(['creation']);

    const before = await pushCountOf(requester.userId);
    const answered = await call('POST', `/api/v2/requests/${token}/response`, {
      headers: responder,
      body: { push: { payload: 'hunter2-staging', passphrase: 'blue lagoon', expire_after_views: 99, name: 'x' } },
    });
    expect(answered.status).toBe(201);
    expect(answered.body).toEqual({ url_token: token, state: 'fulfilled', fulfilled_at: expect.any(String) });
    expect(JSON.stringify(answered.body)).not.toContain('hunter2');
    expect(await pushCountOf(requester.userId)).toBe(before + 1);

    // The responder learns nothing more after answering; the requester sees the answer's push.
    const after = await call('GET', `/api/v2/requests/${token}`, { headers: responder });
    expect(after.body).toMatchObject({ open: false, state: 'fulfilled', request: '' });
    const mine = await call('GET', `/api/v2/requests/${token}`, { headers: bearer(requester) });
    expect(mine.body.state).toBe('fulfilled');
    expect(mine.body.fulfilled_at).not.toBeNull();
    const answerToken = mine.body.answer.url_token as string;
    expect(mine.body.answer).toMatchObject({ sealed_key: null, html_url: `${api.baseUrl}/p/${answerToken}/r` });

    // The answer's push is the requester's, with the request's settings (not the responder's), its name and note.
    const active = await call('GET', '/api/v2/pushes/active', { headers: bearer(requester) });
    const push = (active.body as unknown as Json[]).find((p) => p.url_token === answerToken)!;
    expect(push).toMatchObject({
      expire_after_views: 2,
      expire_after_seconds: 7 * 86400,
      deletable_by_viewer: false,
      retrieval_step: true,
      passphrase_protected: true,
      name: 'staging db',
      note: 'ticket 4711',
    });

    // The requester retrieves it: the request becomes collected (once).
    const opened = await call('GET', `/api/v2/pushes/${answerToken}`, {
      headers: { ...bearer(requester), 'x-passphrase': 'blue lagoon' },
    });
    expect(opened.status).toBe(200);
    expect(opened.body.payload).toBe('hunter2-staging');
    const collected = await call('GET', `/api/v2/requests/${token}`, { headers: bearer(requester) });
    expect(collected.body.state).toBe('collected');
    expect(collected.body.collected_at).not.toBeNull();
    await call('GET', `/api/v2/pushes/${answerToken}`, {
      headers: { ...bearer(requester), 'x-passphrase': 'blue lagoon' },
    });
    expect(await auditKinds(token)).toEqual(['creation', 'fulfilled', 'collected']);
    const audit = await call('GET', `/api/v2/requests/${token}/audit`, { headers: bearer(requester) });
    expect(audit.body.logs[1]).toMatchObject({ kind: 'fulfilled', user_agent: 'Mozilla/5.0 (responder)' });
    expect(audit.headers.get('x-total-count')).toBe('3');

    // A second answer: 409, nothing stored.
    const pushesNow = await pushCountOf(requester.userId);
    const again = await call('POST', `/api/v2/requests/${token}/response`, {
      headers: responder,
      body: { push: { payload: 'another secret' } },
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'request_answered' });
    expect(again.body.error).toMatch(/already been answered/);
    expect(await pushCountOf(requester.userId)).toBe(pushesNow);

    // This instance has no mail relay: the addresses are kept (above), and no move wrote an email or a job.
    const [mail] = await api.db.query<{ n: string }>('select count(*) as n from request_mail');
    expect(Number(mail!.n)).toBe(0);

    // Collected requests are listed as expired (closed), not active.
    const expiredList = await call('GET', '/api/v2/requests/expired', { headers: bearer(requester) });
    expect((expiredList.body as unknown as Json[]).map((r) => r.url_token)).toContain(token);
  });

  it("takes pwpush-cli's multipart create with --attach-file (10 days → expire_after_days, Python booleans)", async () => {
    const attachment = Buffer.from('Name:\nPassword:\n');
    const form = pythonMultipart(
      {
        'request[request]': 'Fill in the attached form',
        'request[expire_after_views]': '3',
        'request[deletable_by_viewer]': 'True',
        'request[retrieval_step]': 'False',
        'request[expire_after_days]': '10',
        'request[note]': 'vendor onboarding',
        account_id: '3',
      },
      { name: 'request[files][]', filename: 'template.txt', bytes: attachment },
    );
    const created = await call('POST', '/api/v2/requests', { headers: cli(requester), raw: form });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      state: 'pending',
      expire_after_days: 10,
      expire_after_duration: null,
      expire_after_views: 3,
      deletable_by_viewer: true,
      retrieval_step: false,
      note: 'vendor onboarding',
      files: [{ filename: 'template.txt', size: attachment.length }],
    });
    const token = created.body.url_token as string;
    const preview = await call('GET', `/api/v2/requests/${token}/preview`, { headers: cli(requester) });
    expect(preview.body.url).toBe(`${api.baseUrl}/r/${token}`);

    // The responder gets the attachment with the ask.
    const seen = await call('GET', `/api/v2/requests/${token}`);
    expect(Buffer.from(seen.body.files[0].content as string, 'base64').equals(attachment)).toBe(true);

    // An anonymous responder answers with a file, as multipart (files need no token for an answer).
    const filled = Buffer.from('Name: vendor\nPassword: s3cr3t-vendor\n');
    const answer = pythonMultipart(
      { 'push[payload]': 'here it is' },
      { name: 'push[files][]', filename: 'filled.txt', bytes: filled },
    );
    const answered = await call('POST', `/api/v2/requests/${token}/response`, { headers: responder, raw: answer });
    expect(answered.status).toBe(201);
    const mine = await call('GET', `/api/v2/requests/${token}`, { headers: bearer(requester) });
    expect(mine.body.state).toBe('fulfilled');
    const opened = await call('GET', `/api/v2/pushes/${mine.body.answer.url_token}`, { headers: bearer(requester) });
    expect(opened.body).toMatchObject({ kind: 'file', payload: 'here it is', expire_after_days: 10 });
    const file = await fetch(opened.body.files[0].url as string);
    expect(Buffer.from(await file.arrayBuffer()).equals(filled)).toBe(true);
  });

  it('bounds an anonymous answer by the small body limit (the body is read before the token is looked up)', async () => {
    const created = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'big' } },
    });
    const token = created.body.url_token as string;
    const big = pythonMultipart(
      { 'push[payload]': 'x' },
      { name: 'push[files][]', filename: 'big.bin', bytes: Buffer.alloc(api.settings.bodyLimitBytes + 1024, 7) },
    );
    const pushes = await pushCountOf(requester.userId);
    const refused = await call('POST', `/api/v2/requests/${token}/response`, { raw: big });
    expect(refused.status).toBe(413);
    expect(await pushCountOf(requester.userId)).toBe(pushes);
    // The same body to a token nobody has is refused alike, before anything is looked up.
    expect((await call('POST', '/api/v2/requests/unknowntoken/response', { raw: big })).status).toBe(413);
    expect((await call('GET', `/api/v2/requests/${token}`, { headers: bearer(requester) })).body.state).toBe('pending');
  });

  it('revokes: the request is closed, an answer is refused with 410 and nothing stored, revoking again changes nothing', async () => {
    const created = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'the API key' } },
    });
    const token = created.body.url_token as string;
    expect((await call('DELETE', `/api/v2/requests/${token}`, { headers: bearer(other) })).status).toBe(403);
    expect((await call('DELETE', `/api/v2/requests/${token}`)).status).toBe(401);
    const revoked = await call('DELETE', `/api/v2/requests/${token}`, { headers: bearer(requester) });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ state: 'revoked', answer: null });
    expect(revoked.body.closed_at).not.toBeNull();
    const pushes = await pushCountOf(requester.userId);
    const refused = await call('POST', `/api/v2/requests/${token}/response`, { body: { push: { payload: 'late' } } });
    expect(refused.status).toBe(410);
    expect(refused.body).toMatchObject({ code: 'request_closed' });
    expect(refused.body.error).toMatch(/revoked/);
    expect(await pushCountOf(requester.userId)).toBe(pushes);
    const twice = await call('DELETE', `/api/v2/requests/${token}`, { headers: bearer(requester) });
    expect(twice.body.state).toBe('revoked');
    expect(await auditKinds(token)).toEqual(['creation', 'revoked']);
    const seen = await call('GET', `/api/v2/requests/${token}`);
    expect(seen.body).toMatchObject({ open: false, state: 'revoked', request: '' });
  });

  it('expires a pending request at its time: 410 for an answer, listed as expired, the sweeper records it once', async () => {
    const created = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'quick one', expire_after_duration: 0 } },
    });
    const token = created.body.url_token as string;
    const active = await call('GET', '/api/v2/requests/active', { headers: bearer(requester) });
    expect((active.body as unknown as Json[]).map((r) => r.url_token)).toContain(token);
    api.setClock(new Date(Date.now() + 16 * 60_000));
    try {
      const refused = await call('POST', `/api/v2/requests/${token}/response`, { body: { push: { payload: 'late' } } });
      expect(refused.status).toBe(410);
      expect(refused.body.error).toMatch(/expired/);
      const expired = await call('GET', '/api/v2/requests/expired', { headers: bearer(requester) });
      const row = (expired.body as unknown as Json[]).find((r) => r.url_token === token)!;
      expect(row).toMatchObject({ state: 'expired', closed_at: created.body.expires_at });
      await api.core.sweep(new Date(Date.now() + 16 * 60_000));
      expect(await auditKinds(token)).toEqual(['creation', 'expired']);
    } finally {
      api.setClock(null);
    }
  });

  it('refuses what it must: no token, empty asks, bad addresses, other users, a sealed key on an ordinary request', async () => {
    const anonymous = await call('POST', '/api/v2/requests', { body: { request: { request: 'x' } } });
    expect(anonymous.status).toBe(401);
    const empty = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: ' ' } },
    });
    expect(empty.status).toBe(422);
    expect(empty.body.errors).toHaveProperty('request');
    const badMail = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'x', notify_emails_to: 'ops@example.org, not-an-address' } },
    });
    expect(badMail.status).toBe(422);
    expect(badMail.body.errors).toEqual({ notify_emails_to: ['contains invalid email(s)'] });
    const tooMany = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: {
        request: {
          request: 'x',
          notify_emails_to: 'a@example.org,b@example.org,c@example.org,d@example.org,e@example.org,f@example.org',
        },
      },
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors).toEqual({ notify_emails_to: ['contains more than 5 email(s)'] });
    const injected = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'x', notify_emails_to: 'a@example.org\r\nBcc: x@example.com' } },
    });
    expect(injected.status).toBe(422);
    expect(injected.body.errors).toEqual({ notify_emails_to: ['contains invalid email(s)'] });
    const views = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'x', expire_after_views: 101 } },
    });
    expect(views.status).toBe(422);
    expect(views.body.error).toBe('expire_after_views: must be at most 100');

    const created = await call('POST', '/api/v2/requests', {
      headers: bearer(requester),
      body: { request: { request: 'y' } },
    });
    const token = created.body.url_token as string;
    expect((await call('GET', `/api/v2/requests/${token}/preview`, { headers: bearer(other) })).status).toBe(403);
    expect((await call('GET', `/api/v2/requests/${token}/audit`, { headers: bearer(other) })).status).toBe(403);
    expect((await call('GET', `/api/v2/requests/${token}/preview`)).status).toBe(401);
    expect((await call('GET', '/api/v2/requests/nope')).status).toBe(404);
    // Another signed-in user is a responder like any other.
    expect((await call('GET', `/api/v2/requests/${token}`, { headers: bearer(other) })).body.audience).toBe(
      'responder',
    );
    const sealedKey = `sph1.${'A'.repeat(107)}`;
    const wrong = await call('POST', `/api/v2/requests/${token}/response`, {
      body: { push: { payload: 'z' }, sealed_key: sealedKey },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toHaveProperty('sealed_key');
    const emptyAnswer = await call('POST', `/api/v2/requests/${token}/response`, { body: { push: { payload: '' } } });
    expect(emptyAnswer.status).toBe(422);
    expect(await auditKinds(token)).toEqual(['creation']);
  });

  it('every answer matched the contract', () => {
    expect(checker.violations).toEqual([]);
  });
});

describe('an answer counts against the requester’s storage quota', () => {
  let api: RealApi;
  afterAll(async () => {
    await api?.stop();
  });

  it('refuses an answer over the quota with 429, storing nothing and leaving the request pending', async () => {
    api = await startRealApi({ userStorageBytes: 64 });
    const user = await api.user('small@example.org');
    const headers = { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' };
    const created = (await (
      await fetch(`${api.baseUrl}/api/v2/requests`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ request: { request: 'send a big thing' } }),
      })
    ).json()) as Json;
    const over = await fetch(`${api.baseUrl}/api/v2/requests/${created.url_token}/response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'x'.repeat(65) } }),
    });
    expect(over.status).toBe(413);
    const near = await fetch(`${api.baseUrl}/api/v2/requests/${created.url_token}/response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'x'.repeat(60) } }),
    });
    expect(near.status).toBe(201);
    const second = (await (
      await fetch(`${api.baseUrl}/api/v2/requests`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ request: { request: 'another' } }),
      })
    ).json()) as Json;
    const refused = await fetch(`${api.baseUrl}/api/v2/requests/${second.url_token}/response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'y'.repeat(10) } }),
    });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).code).toBe('storage_quota_exceeded');
    const state = (await (
      await fetch(`${api.baseUrl}/api/v2/requests/${second.url_token}`, { headers })
    ).json()) as Json;
    expect(state.state).toBe('pending');
    const rows = await api.db.query<{ n: string }>('select count(*) as n from pushes where user_id = $1', [
      user.userId,
    ]);
    expect(Number(rows[0]!.n)).toBe(1);
  });
});
