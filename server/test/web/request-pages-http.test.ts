/**
 * The request pages without a browser (issue 24): a signed-in requester's form makes an ordinary request, the
 * responder's page shows the ask (a GET spends and logs nothing) and takes one answer by a plain form (no script), a
 * second answer gets the "closed" page with 409 and stores nothing, the requester's page links to the answer; the
 * sealing box without a script refuses rather than make an unsealed request; an instance without anonymous access
 * sends a signed-out responder to sign in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';

describe('request pages over HTTP', () => {
  let app: WebApp;
  beforeAll(async () => {
    app = await startWeb();
  });
  afterAll(async () => {
    await app?.stop();
  });

  const kinds = async (token: string) =>
    (
      await app.db.query<{ kind: string }>(
        `select kind from request_audit_entries e join requests r on r.id = e.request_id
         where r.url_token = $1 order by e.created_at, e.id`,
        [token],
      )
    ).map((r) => r.kind);

  it('asks, answers by a plain form once, and links the requester to the answer', async () => {
    const requester = new Visitor(app.baseUrl);
    expect((await requester.signUp('pages-requester@example.org', PASSWORD)).status).toBe(303);
    const form = await requester.page('/requests/new');
    expect(form.html).toContain('Request a secret');
    const made = await requester.post('/requests', {
      _csrf: form.csrf,
      request: 'The <b>wifi</b> password',
      expire_after_days: '3',
      expire_after_views: '1',
      public_key: '',
    });
    expect(made.status).toBe(303);
    const ownerPath = made.headers.get('location')!;
    const token = ownerPath.split('/')[2]!;
    const owner = await requester.page(ownerPath);
    expect(owner.html).toContain(`${app.baseUrl}/r/${token}`);
    expect(owner.html).toContain('Waiting for an answer');

    const responder = new Visitor(app.baseUrl);
    const answerPage = await responder.page(`/r/${token}`);
    expect(answerPage.response.status).toBe(200);
    // The ask is shown escaped, and reading it logs nothing.
    expect(answerPage.html).toContain('The &lt;b&gt;wifi&lt;/b&gt; password');
    expect(await kinds(token)).toEqual(['creation']);
    const sent = await responder.post(`/r/${token}`, {
      _csrf: answerPage.csrf,
      payload: 'correct horse',
      passphrase: '',
    });
    expect(sent.status).toBe(201);
    expect(await sent.text()).toContain('Sent');

    const again = await responder.post(`/r/${token}`, { _csrf: answerPage.csrf, payload: 'second', passphrase: '' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('This request is closed');
    const [count] = await app.db.query<{ n: string }>(
      'select count(*) as n from pushes p join requests r on r.answer_push_id = p.id where r.url_token = $1',
      [token],
    );
    expect(Number(count!.n)).toBe(1);

    const answered = await requester.page(ownerPath);
    expect(answered.html).toContain('Answered');
    expect(answered.html).toMatch(/id="open-answer" href="http:\/\/[^"]+\/p\/[a-z2-7]+"/);
    // Answered but not yet opened: still among the active requests, with its state.
    const list = await requester.page('/requests/active');
    expect(list.html).toContain(`/requests/${token}`);
    expect(list.html).toContain('data-state="fulfilled"');
    expect((await requester.page('/requests/expired')).html).not.toContain(`/requests/${token}`);
    expect(await kinds(token)).toEqual(['creation', 'fulfilled']);
  });

  it('refuses the sealing box without a script instead of making an unsealed request', async () => {
    const requester = new Visitor(app.baseUrl);
    await requester.signUp('pages-sealer@example.org', PASSWORD);
    const form = await requester.page('/requests/new');
    const refused = await requester.post('/requests', {
      _csrf: form.csrf,
      request: 'sealed please',
      seal: '1',
      public_key: '',
    });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Sealing needs JavaScript');
    const [row] = await app.db.query<{ n: string }>(
      "select count(*) as n from requests where user_id = (select id from users where email = 'pages-sealer@example.org')",
    );
    expect(Number(row!.n)).toBe(0);
  });

  it('sends signed-out visitors to sign in, for the requester’s pages and, without anonymous access, the responder’s', async () => {
    const anon = new Visitor(app.baseUrl);
    expect((await anon.fetch('/requests/new')).status).toBe(302);
    const closed = await startWeb({ allowAnonymous: false });
    try {
      const user = await closed.core.users.createUser('closed-requester@example.org');
      const created = await closed.core.requests.create(
        { request: 'members only' },
        { actor: { userId: user.userId, ip: '127.0.0.1', userAgent: '', referrer: '' }, baseUrl: closed.baseUrl },
      );
      const visitor = new Visitor(closed.baseUrl);
      const answer = await visitor.fetch(`/r/${created.url_token}`);
      expect(answer.status).toBe(302);
      expect(answer.headers.get('location')).toMatch(/^\/users\/sign_in/);
    } finally {
      await closed.stop();
    }
  });
});
