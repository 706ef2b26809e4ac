/**
 * Issue 22 in the compiled server (server/dist, what `npm start` runs): the bundle loads the queue and Nodemailer,
 * reports email_auto_dispatch, and delivers a link to a real SMTP server, as pwpush-cli's `--notify` asks for it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCore, type Core } from '../../src/core.js';
import { freePort } from '../../src/db/embedded.js';
import { startCompiledServer, type ServerProcess } from '../support/compiled-server.js';
import { createMigratedDatabase, makeSettings, TEST_KEY_A, type TestDatabase } from '../support/db.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';

let mailbox: Mailbox;
let db: TestDatabase;
let core: Core;
let server: ServerProcess;

beforeAll(async () => {
  mailbox = await startMailbox();
  db = await createMigratedDatabase('sp_mail_compiled');
  // The user is made through the core (the compiled server then finds it in the same database).
  core = await createCore(makeSettings({ databaseUrl: db.url }));
  // Links in email come only from PWPUSH_PUBLIC_BASE_URL: the server's own address, chosen before it starts.
  const port = await freePort();
  server = await startCompiledServer({
    PORT: String(port),
    PWPUSH_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: db.url,
    PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
    PWPUSH_WORKERS: '1',
    PWPUSH_SMTP_URL: mailbox.url,
    PWPUSH_MAIL_FROM: 'Secret Push <no-reply@secrets.example.org>',
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await core?.close();
  await db?.drop();
  await mailbox?.stop();
});

it('creates a push with recipients (pwpush-cli --notify) and the relay receives the link', async () => {
  const version = (await (await fetch(`${server.baseUrl}/api/v2/version`)).json()) as {
    features: { pushes: { email_auto_dispatch: boolean } };
  };
  expect(version.features.pushes.email_auto_dispatch).toBe(true);
  const { token } = await core.users.createUser('cli-owner@example.org');
  const created = await fetch(`${server.baseUrl}/api/v2/pushes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      push: {
        payload: 'compiled-secret-1',
        kind: 'text',
        notify_emails_to: 'zoe@example.net',
        notify_emails_to_locale: 'es',
      },
    }),
  });
  expect(created.status).toBe(201);
  const push = (await created.json()) as { html_url: string };
  const [mail] = await mailbox.waitFor(1, 30_000);
  expect(mail!.to).toEqual(['zoe@example.net']);
  expect(mail!.parsed.subject).toBe('cli-owner@example.org te ha enviado un enlace secreto');
  expect(mail!.parsed.text).toContain(push.html_url);
  expect(mail!.raw).not.toContain('compiled-secret-1');
}, 90_000);
