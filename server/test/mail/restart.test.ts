/**
 * Issue 22: a restart in the middle loses nothing and sends nothing twice. The API (this process) enqueues a
 * delivery with the push; a separate server process takes the job and is killed (SIGKILL) while the relay holds the
 * message's data unanswered; a new process, started after, delivers it once the dead one's heartbeat has lapsed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush, getPushAudit } from '@secret-push/sdk/generated';
import { repoRoot } from '../../src/config/settings.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData } from '../api/support/sdk.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { TEST_KEY_A } from '../support/db.js';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'mail-worker.ts');

let mailbox: Mailbox;
let api: RealApi;
const children: ChildProcess[] = [];

function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--conditions=@secret-push/source', '--import', 'tsx', WORKER], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PWPUSH_ENV: 'test',
      DATABASE_URL: api.db.url,
      PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
      PWPUSH_SMTP_URL: mailbox.url,
      PWPUSH_PUBLIC_BASE_URL: api.baseUrl,
      PWPUSH_MAIL_FROM: 'no-reply@secrets.example.org',
      PWPUSH_MAIL_ATTEMPTS: '5',
      PWPUSH_MAIL_RETRY_SECONDS: '1',
      PWPUSH_LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      output += c.toString();
      if (output.includes('ready')) resolve(child);
    });
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}): ${output}`)));
  });
}

async function notification(urlToken: string) {
  const [row] = await api.db.query<{ status: string; attempts: number }>(
    'select status, attempts from email_notifications where push_id = (select id from pushes where url_token = $1)',
    [urlToken],
  );
  return row!;
}

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      mail: {
        smtpUrl: mailbox.url,
        from: 'no-reply@secrets.example.org',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Secret Push',
        attempts: 5,
        retrySeconds: 1,
      },
    },
    // This process enqueues only: the deliveries are the child processes' work.
    { core: { jobWorkers: false, queue: { heartbeatSeconds: 10, monitorIntervalSeconds: 1 } } },
  );
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await api?.stop();
  await mailbox?.stop();
});

it('a process killed mid-delivery: the message is delivered after the restart, exactly once', async () => {
  const owner = await api.user('restart-owner@example.org');
  mailbox.holdData(true);
  const held = mailbox.dataHeld();
  const push = expectData(
    await createPush({
      client: api.client,
      body: { push: { payload: 'restart-secret-1', notify_emails_to: 'kim@example.net' } },
      auth: bearer(owner.token),
    }),
    201,
  );
  expect(await notification(push.url_token)).toEqual({ status: 'pending', attempts: 0 });

  const first = await startWorker();
  await held; // the first process is sending: the relay has the data and has not answered
  expect(await notification(push.url_token)).toEqual({ status: 'processing', attempts: 1 });
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  mailbox.holdData(false);
  expect(mailbox.messages).toHaveLength(0);

  await startWorker();
  await mailbox.waitFor(1, 60_000);
  const end = Date.now() + 60_000;
  let entry;
  for (;;) {
    const audit = expectData(
      await getPushAudit({ client: api.client, path: { url_token: push.url_token }, auth: bearer(owner.token) }),
    );
    entry = audit.logs.find((l) => l.kind === 'creation_email_send');
    if (entry?.notify_by_email?.status === 'completed' || Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(entry!.notify_by_email).toMatchObject({ status: 'completed', successful_sends: 'kim@example.net' });
  await new Promise((r) => setTimeout(r, 3000)); // time for a duplicate to show up, if there were one
  expect(mailbox.messages.map((m) => m.to)).toEqual([['kim@example.net']]);
  expect((await notification(push.url_token)).attempts).toBe(2);
}, 120_000);
