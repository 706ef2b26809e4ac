/**
 * The account's webhooks page, through real HTTP on the real app and database, with a real receiver on loopback: a
 * signed-in user adds a webhook (its secret shown once), sees it listed, sends a test event that arrives signed,
 * sees the delivery in the log, and deletes it; bad input and a private target (with the default settings) are
 * refused on the page with nothing made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'correct horse battery staple';
let app: WebApp;
let strict: WebApp;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  app = await startWeb({ webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] } });
  strict = await startWeb({ webhooks: { enabled: true, allowPrivate: false, retrySchedule: [1] } });
});

afterAll(async () => {
  await app?.stop();
  await strict?.stop();
  await receiver?.stop();
});

function postForm(visitor: Visitor, base: string, pathname: string, pairs: [string, string][]) {
  return visitor.fetch(pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams(pairs).toString(),
  });
}

describe('the webhooks page', () => {
  it('adds a webhook with its secret shown once, tests it, shows the delivery, and deletes it', async () => {
    const visitor = new Visitor(app.baseUrl);
    expect((await visitor.signUp('hooks-page@example.org', PASSWORD)).status).toBe(303);
    const { html, csrf } = await visitor.page('/users/webhooks');
    expect(html).toContain('You have no webhooks.');
    const made = await postForm(visitor, app.baseUrl, '/users/webhooks', [
      ['_csrf', csrf],
      ['url', receiver.url],
      ['events', 'push.viewed'],
      ['events', 'push.expired'],
      ['description', 'chat <ops>'],
    ]);
    expect(made.status).toBe(201);
    const page = await made.text();
    const secret = /id="webhook-secret">(whsec_[A-Za-z0-9+/]{43}=)</.exec(page)?.[1];
    expect(secret).toBeDefined();
    expect(page).toContain('chat &lt;ops&gt;');
    expect(page).not.toContain('chat <ops>');
    const again = await visitor.page('/users/webhooks');
    expect(again.html).not.toContain(secret!);
    const [row] = await app.db.query<{ id: string }>('select id from webhooks');

    const tested = await postForm(visitor, app.baseUrl, `/users/webhooks/${row!.id}/test`, [['_csrf', again.csrf]]);
    expect([tested.status, tested.headers.get('location')]).toEqual([303, `/users/webhooks/${row!.id}`]);
    const [request] = await receiver.waitFor(1);
    expect(receiver.verify(secret!, request!)).toMatchObject({ type: 'webhook.test', data: { webhook_id: row!.id } });
    let log: string;
    const end = Date.now() + 10_000;
    do {
      log = (await visitor.page(`/users/webhooks/${row!.id}`)).html;
      if (log.includes('delivered')) break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < end);
    expect(log).toContain(request!.headers['webhook-id']!);
    expect(log).toContain('delivered');

    const deleted = await postForm(visitor, app.baseUrl, `/users/webhooks/${row!.id}/delete`, [['_csrf', again.csrf]]);
    expect([deleted.status, deleted.headers.get('location')]).toEqual([303, '/users/webhooks']);
    expect((await visitor.page('/users/webhooks')).html).toContain('You have no webhooks.');
    // Another user's webhook is not found; a form without CSRF is refused.
    const other = new Visitor(app.baseUrl);
    expect((await other.signUp('hooks-other@example.org', PASSWORD)).status).toBe(303);
    expect((await other.fetch(`/users/webhooks/${row!.id}`)).status).toBe(404);
    const noCsrf = await postForm(visitor, app.baseUrl, '/users/webhooks', [
      ['url', receiver.url],
      ['events', 'push.viewed'],
    ]);
    expect(noCsrf.status).toBe(403);
  });

  it('refuses no event, and a private target by default, with nothing made', async () => {
    const visitor = new Visitor(strict.baseUrl);
    expect((await visitor.signUp('hooks-strict@example.org', PASSWORD)).status).toBe(303);
    const { csrf } = await visitor.page('/users/webhooks');
    const noEvent = await postForm(visitor, strict.baseUrl, '/users/webhooks', [
      ['_csrf', csrf],
      ['url', 'https://hooks.example.org/x'],
    ]);
    expect(noEvent.status).toBe(422);
    expect(await noEvent.text()).toContain('Choose at least one event.');
    const loopback = await postForm(visitor, strict.baseUrl, '/users/webhooks', [
      ['_csrf', csrf],
      ['url', 'http://localhost:9/hook'],
      ['events', 'push.viewed'],
    ]);
    expect(loopback.status).toBe(422);
    expect(await loopback.text()).toContain('private or reserved address');
    expect(await strict.db.query('select id from webhooks')).toEqual([]);
  });
});
