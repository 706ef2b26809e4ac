/**
 * Issue 42: the mails of a workspace's pushes and requests carry the workspace's brand (its name at the top, its
 * accent on the button, its footer and links), through a real SMTP server (test/support/mailbox.ts), and still name
 * the instance that carries them; a personal push's mail keeps the instance's brand. The link's mail
 * (`notify_emails_to`), the access code's mail of a push for specific people and a request's link mail are checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, requestAccessCode, updateWorkspaceBrand } from '@secret-push/sdk/generated';
import { brandSettings } from '../../src/config/brand-settings.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';

const FAST_QUEUE = { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 };

let mailbox: Mailbox;
let api: RealApi;
let owner: { token: string; email: string; userId: string };
let workspaceId: number;

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      publicBaseUrl: 'https://secrets.acme.example',
      mail: {
        smtpUrl: mailbox.url,
        from: 'Acme Secrets <no-reply@secrets.acme.example>',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Acme Secrets',
        attempts: 3,
        retrySeconds: 1,
      },
      brand: brandSettings({ PWPUSH_BRAND_FOOTER_TEXT: 'The instance footer' }, 'Acme Secrets'),
    },
    { core: { queue: FAST_QUEUE } },
  );
  owner = await api.user('owner@acme.example');
  const auth = bearer(owner.token);
  workspaceId = expectData(
    await createWorkspace({ client: api.client, auth, body: { workspace: { name: 'Globex' } } }),
    201,
  ).id;
  expectData(
    await updateWorkspaceBrand({
      client: api.client,
      auth,
      path: { workspace_id: workspaceId },
      body: {
        brand: {
          name: 'Globex Service Desk',
          accent_color: '#005a32',
          footer_text: 'Globex Corp · 2 Example Road',
          imprint_url: 'https://globex.example/imprint',
        },
      },
    }),
  );
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
});

async function post(path: string, body: unknown) {
  const made = await api.raw(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
    body: JSON.stringify(body),
  });
  expect(made.status).toBe(201);
  return made.body as { html_url: string; url_token: string };
}

const mailTo = async (address: string, count: number) =>
  (await mailbox.waitFor(count)).find((m) => m.to.includes(address))!;

function expectWorkspaceBrand(mail: Awaited<ReturnType<typeof mailTo>>) {
  const html = mail.parsed.html as string;
  const text = mail.parsed.text!;
  expect(text.startsWith('Globex Service Desk\n')).toBe(true);
  expect(html).toContain('<p style="font-weight:bold;font-size:1.2em">Globex Service Desk</p>');
  expect(html).toContain('Globex Corp · 2 Example Road · <a href="https://globex.example/imprint">Imprint</a>');
  expect(text).toContain('--\nGlobex Corp · 2 Example Road\nImprint: https://globex.example/imprint');
  // Still the instance that carries it, and none of the instance's own footer.
  expect(text).toContain('Acme Secrets');
  expect(text).not.toContain('The instance footer');
}

describe("a workspace's mails", () => {
  it("send a workspace push's link in its brand, a personal push's in the instance's, never the secret", async () => {
    const payload = 'workspace-payload-81c2';
    const made = await post('/api/v2/pushes', {
      push: { payload, notify_emails_to: 'ana@example.net' },
      workspace_id: workspaceId,
    });
    const mail = await mailTo('ana@example.net', 1);
    expectWorkspaceBrand(mail);
    expect(mail.parsed.html as string).toContain(
      `href="${made.html_url}" style="display:inline-block;padding:.5em 1em;background:#005a32;`,
    );
    expect(mail.raw).not.toContain(payload);

    await post('/api/v2/pushes', { push: { payload: 'personal', notify_emails_to: 'ben@example.net' } });
    const personal = await mailTo('ben@example.net', 2);
    expect(personal.parsed.text).not.toContain('Globex');
    expect(personal.parsed.text).toContain('The instance footer');
  });

  it("sends the access code of a workspace push for specific people in the workspace's brand", async () => {
    const before = mailbox.messages.length;
    const made = await post('/api/v2/pushes', {
      push: { payload: 'for-carol', recipient_emails: ['carol@example.net'] },
      workspace_id: workspaceId,
    });
    expectData(
      await requestAccessCode({
        client: api.client,
        path: { url_token: made.url_token },
        body: { email: 'carol@example.net' },
      }),
      202,
    );
    const mail = await mailTo('carol@example.net', before + 1);
    expectWorkspaceBrand(mail);
    expect(mail.parsed.text).toMatch(/\d{4} \d{4}/);
  });

  it("sends an open workspace request's link in the workspace's brand", async () => {
    const before = mailbox.messages.length;
    // A request made in the workspace (requests name no workspace on the wire yet): its column written at insert, as
    // a workspace's create writes it, by a trigger for this one create.
    await api.db.query(`create function test_in_workspace() returns trigger language plpgsql as $$
      begin new.workspace_id := ${Number(workspaceId)}; return new; end $$`);
    await api.db.query(
      'create trigger test_in_workspace before insert on requests for each row execute function test_in_workspace()',
    );
    try {
      await post('/api/v2/requests', { request: { request: 'a key', notify_emails_to: 'dan@example.net' } });
    } finally {
      await api.db.query('drop trigger test_in_workspace on requests');
      await api.db.query('drop function test_in_workspace()');
    }
    const mail = await mailTo('dan@example.net', before + 1);
    expectWorkspaceBrand(mail);
  });
});
