/**
 * Issue 22, the limits that need their own instance: the per-user daily cap (`PWPUSH_NOTIFY_DAILY_LIMIT`, here 3)
 * counts the recipients of creates and of notifyEmails together; an expired push takes no recipients. Refusals
 * queue nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush, getPush, notifyEmails } from '@secret-push/sdk/generated';
import { makeSettings } from '../support/db.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';

let mailbox: Mailbox;
let api: RealApi;

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi({ mail: { ...makeSettings().mail, smtpUrl: mailbox.url, notifyDailyLimit: 3 } });
});

afterAll(async () => {
  expect(api.checker.violations).toEqual([]);
  await api?.stop();
  await mailbox?.stop();
});

const jobs = async () => Number((await api.db.query<{ n: string }>('select count(*) as n from pgboss.job'))[0]!.n);

it('the daily cap counts creates and notifyEmails together: 422 on base past it, nothing queued', async () => {
  const user = await api.user('capped@example.org');
  const push = expectData(
    await createPush({
      client: api.client,
      body: { push: { payload: 'cap-1', notify_emails_to: 'a1@example.net,a2@example.net' } },
      auth: bearer(user.token),
    }),
    201,
  );
  expectData(
    await notifyEmails({
      client: api.client,
      path: { url_token: push.url_token },
      body: { notify_emails_to: 'a3@example.net' },
      auth: bearer(user.token),
    }),
    201,
  );
  const before = await jobs();
  const overCreate = expectError(
    await createPush({
      client: api.client,
      body: { push: { payload: 'cap-2', notify_emails_to: 'b1@example.net' } },
      auth: bearer(user.token),
    }),
    422,
    'validation_failed',
  );
  expect(overCreate.errors).toEqual({ base: ['The maximum number of emails has been reached for today'] });
  const overNotify = expectError(
    await notifyEmails({
      client: api.client,
      path: { url_token: push.url_token },
      body: { notify_emails_to: 'b2@example.net' },
      auth: bearer(user.token),
    }),
    422,
    'validation_failed',
  );
  expect(overNotify.errors).toEqual({ base: ['The maximum number of emails has been reached for today'] });
  expect(await jobs()).toBe(before);
  // The refused create made no push either (the whole create is one transaction).
  expect(await api.db.query(`select 1 from pushes where user_id = $1`, [user.userId])).toHaveLength(1);
  // Another user has a cap of their own.
  const other = await api.user('uncapped@example.org');
  expectData(
    await createPush({
      client: api.client,
      body: { push: { payload: 'cap-3', notify_emails_to: 'c1@example.net' } },
      auth: bearer(other.token),
    }),
    201,
  );
});

it('an expired push takes no recipients', async () => {
  const user = await api.user('expired-owner@example.org');
  const push = expectData(
    await createPush({
      client: api.client,
      body: { push: { payload: 'exp-1', expire_after_views: 1 } },
      auth: bearer(user.token),
    }),
    201,
  );
  expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
  const error = expectError(
    await notifyEmails({
      client: api.client,
      path: { url_token: push.url_token },
      body: { notify_emails_to: 'late@example.net' },
      auth: bearer(user.token),
    }),
    422,
    'validation_failed',
  );
  expect(error.errors).toEqual({
    notify_emails_to: ['are not available for expired pushes'],
    notify_emails_to_locale: ['is not available for expired pushes'],
  });
});
