/**
 * A workspace's webhooks page (issue 41) over real HTTP, on the real app and database, with a real receiver on
 * loopback and the generated SDK reading back what the page did: an admin adds a webhook of the workspace (its
 * secret shown once), the API lists it as the workspace's, a push of the workspace reaches it signed, its deliveries
 * are shown, and it is deleted; members and auditors get 403 pages, outsiders 404 pages, forged posts change nothing,
 * bad input is answered on the page, and a webhook of another workspace or a personal one is as unknown as none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, listWebhooks } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startWeb, Visitor, type WebApp } from './support.js';
import { bearer, workspaceCast, type WorkspaceCast } from './workspace-cast.js';

let app: WebApp;
let receiver: Receiver;
let client: ReturnType<typeof createClient>;
let users: WorkspaceCast['users'];
let visitors: WorkspaceCast['visitors'];
let workspaceId: number;
let otherWorkspaceId: number;

beforeAll(async () => {
  receiver = await startReceiver();
  app = await startWeb({ webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] } });
  ({ client, users, visitors, workspaceId, otherWorkspaceId } = await workspaceCast(app, {
    domain: 'hooks-ws.example.org',
    name: 'Hooks',
    otherName: 'Other hooks',
    roles: ['admin', 'member', 'auditor'],
  }));
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
});

const base = () => `/workspaces/${workspaceId}/webhooks`;
const hookRows = () =>
  app.db.query<{ id: string; workspace_id: number | null }>(
    'select id, workspace_id from webhooks order by created_at',
  );

function postPairs(visitor: Visitor, pathname: string, pairs: [string, string][]) {
  return visitor.fetch(pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
    body: new URLSearchParams(pairs).toString(),
  });
}

describe("a workspace's webhooks page", () => {
  it("adds the workspace's webhook (secret once), which the API lists and a workspace push reaches; shows its deliveries; deletes it", async () => {
    const { html, csrf } = await visitors.admin!.page(base());
    expect(html).toContain('This workspace has no webhooks.');
    expect(html).toContain(`href="/workspaces/${workspaceId}/webhooks" aria-current="page"`);
    const made = await postPairs(visitors.admin!, base(), [
      ['_csrf', csrf],
      ['url', receiver.url],
      ['events', 'push.created'],
      ['description', 'team <ops>'],
    ]);
    expect(made.status).toBe(201);
    const page = await made.text();
    const secret = /id="webhook-secret">(whsec_[A-Za-z0-9+/]{43}=)</.exec(page)?.[1];
    expect(secret).toBeDefined();
    expect(page).toContain('team &lt;ops&gt;');
    const listed = await listWebhooks({
      client,
      auth: bearer(users.owner!.token),
      query: { workspace_id: String(workspaceId) },
    });
    expect(listed.data!.webhooks.map((w) => [w.url, w.events, w.workspace_id])).toEqual([
      [receiver.url, ['push.created'], workspaceId],
    ]);
    const hookId = listed.data!.webhooks[0]!.id;
    // A member's push in the workspace reaches it, signed with the secret shown once.
    const push = await createPush({
      client,
      auth: bearer(users.member!.token),
      body: { push: { payload: 'team secret' }, workspace_id: workspaceId } as never,
    });
    expect(push.response?.status).toBe(201);
    const [request] = await receiver.waitFor(1);
    expect(receiver.verify(secret!, request!)).toMatchObject({ type: 'push.created' });
    // Its deliveries, on its own page.
    let log: string;
    const end = Date.now() + 10_000;
    do {
      log = (await visitors.owner!.page(`${base()}/${hookId}`)).html;
      if (log.includes('delivered')) break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < end);
    expect(log).toContain(request!.headers['webhook-id']!);
    expect(log).toContain(`action="${base()}/${hookId}/test"`);
    const again = await visitors.owner!.page(base());
    expect(again.html).not.toContain(secret!);
    const deleted = await visitors.owner!.post(`${base()}/${hookId}/delete`, { _csrf: again.csrf });
    expect([deleted.status, deleted.headers.get('location')]).toEqual([303, base()]);
    expect(await hookRows()).toEqual([]);
  });

  it('answers bad input on the page, making nothing', async () => {
    const { csrf } = await visitors.owner!.page(base());
    const noEvent = await postPairs(visitors.owner!, base(), [
      ['_csrf', csrf],
      ['url', 'https://hooks.example.org/x'],
    ]);
    expect(noEvent.status).toBe(422);
    expect(await noEvent.text()).toContain('Choose at least one event.');
    const noUrl = await postPairs(visitors.owner!, base(), [
      ['_csrf', csrf],
      ['url', 'x'.repeat(3000)],
      ['events', 'push.viewed'],
    ]);
    expect(noUrl.status).toBe(422);
    const notUrl = await postPairs(visitors.owner!, base(), [
      ['_csrf', csrf],
      ['url', 'not a url'],
      ['events', 'push.viewed'],
    ]);
    expect(notUrl.status).toBe(422);
    expect(await hookRows()).toEqual([]);
  });

  it('refuses members and auditors (403), outsiders (404) and forms without CSRF, changing nothing', async () => {
    await app.core.webhooks!.create(
      { userId: users.owner!.userId, workspaceId },
      { url: receiver.url, events: ['push.viewed'], description: '' },
    );
    const [kept] = await hookRows();
    for (const who of ['member', 'auditor']) {
      const page = await visitors[who]!.fetch(base());
      expect(page.status, who).toBe(403);
      expect(await page.text()).toContain('Your role in this workspace does not allow this.');
      expect((await visitors[who]!.fetch(`${base()}/${kept!.id}`)).status, who).toBe(403);
      const { csrf } = await visitors[who]!.page(`/workspaces/${workspaceId}`);
      const forged = await postPairs(visitors[who]!, base(), [
        ['_csrf', csrf],
        ['url', receiver.url],
        ['events', 'push.viewed'],
      ]);
      expect(forged.status, who).toBe(403);
      expect((await visitors[who]!.post(`${base()}/${kept!.id}/delete`, { _csrf: csrf })).status, who).toBe(403);
    }
    const { csrf } = await visitors.outsider!.page('/workspaces');
    expect((await visitors.outsider!.fetch(base())).status).toBe(404);
    expect((await visitors.outsider!.post(`${base()}/${kept!.id}/delete`, { _csrf: csrf })).status).toBe(404);
    expect((await visitors.owner!.post(`${base()}/${kept!.id}/delete`, {})).status).toBe(403);
    expect(await hookRows()).toEqual([{ id: kept!.id, workspace_id: workspaceId }]);
  });

  it("never answers 5xx to hostile ids; another workspace's or a personal webhook is as unknown as none", async () => {
    const theirs = await app.core.webhooks!.create(
      { userId: users.outsider!.userId, workspaceId: otherWorkspaceId },
      { url: receiver.url, events: ['push.viewed'], description: '' },
    );
    const personal = await app.core.webhooks!.create(users.owner!.userId, {
      url: receiver.url,
      events: ['push.viewed'],
      description: '',
    });
    const { csrf } = await visitors.owner!.page(base());
    for (const id of [theirs.id, personal.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000', "'%3B--"]) {
      expect((await visitors.owner!.fetch(`${base()}/${id}`)).status, id).toBe(404);
      for (const action of ['delete', 'test', 'deliveries/00000000-0000-4000-8000-000000000000/retry'])
        expect((await visitors.owner!.post(`${base()}/${id}/${action}`, { _csrf: csrf })).status, id).toBe(404);
    }
    for (const id of ['0', 'abc', '99999999999999999999', `${otherWorkspaceId}`])
      expect((await visitors.owner!.fetch(`/workspaces/${id}/webhooks`)).status, id).toBe(404);
    expect((await hookRows()).length).toBe(3);
  });
});
