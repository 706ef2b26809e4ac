/**
 * Issue 22, an instance without email: no SMTP relay (the default), or email turned off (`PWPUSH_NOTIFY_BY_EMAIL=false`,
 * with a relay). The version report says `email_auto_dispatch: false` (pwpush-cli then leaves `--notify` out), the
 * create fields answer the reference's 422 "are not available", nothing is written, and the notify route answers
 * 422 without a relay and 404 when turned off (the reference does not draw it then). Requests (issue 24) report
 * `features.requests.email_auto_dispatch: false` too, keep their `notify_emails_to`, and no move writes an email.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, getVersion, notifyEmails } from '@secret-push/sdk/generated';
import { makeSettings } from '../support/db.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { bearer, expectData, expectError } from '../api/support/sdk.js';

const UNAVAILABLE = {
  notify_emails_to: ['are not available'],
  notify_emails_to_locale: ['is not available'],
  base: ['Notify by email feature is not enabled'],
};

for (const [what, mail, route] of [
  ['no SMTP relay', makeSettings().mail, 422],
  ['email turned off', { ...makeSettings().mail, smtpUrl: 'smtp://127.0.0.1:9', notifyByEmail: false }, 404],
] as const) {
  describe(`an instance with ${what}`, () => {
    let api: RealApi;
    let owner: { token: string };
    beforeAll(async () => {
      api = await startRealApi({ mail });
      owner = await api.user('owner@example.org');
    });
    afterAll(async () => {
      expect(api.checker.violations).toEqual([]);
      await api.stop();
    });

    it('reports email_auto_dispatch: false', async () => {
      const version = expectData(await getVersion({ client: api.client }));
      expect(version.features.pushes.email_auto_dispatch).toBe(false);
    });

    it("refuses the create fields with the reference's 422, storing nothing", async () => {
      const error = expectError(
        await createPush({
          client: api.client,
          body: { push: { payload: 'off-secret-1', notify_emails_to: 'a@example.net' } },
          auth: bearer(owner.token),
        }),
        422,
        'validation_failed',
      );
      expect(error.errors).toEqual(UNAVAILABLE);
      expect(await api.db.query('select 1 from pushes')).toHaveLength(0);
      // Without the fields (what pwpush-cli sends after reading the version report), creates work as before.
      expectData(
        await createPush({
          client: api.client,
          body: { push: { payload: 'off-secret-2' } },
          auth: bearer(owner.token),
        }),
        201,
      );
    });

    it(`answers notifyEmails with ${route}`, async () => {
      const push = expectData(
        await createPush({
          client: api.client,
          body: { push: { payload: 'off-secret-3' } },
          auth: bearer(owner.token),
        }),
        201,
      );
      const answer = await notifyEmails({
        client: api.client,
        path: { url_token: push.url_token },
        body: { notify_emails_to: 'a@example.net' },
        auth: bearer(owner.token),
      });
      if (route === 404) expectError(answer, 404, 'no_route');
      else expect(expectError(answer, 422, 'validation_failed').errors).toEqual(UNAVAILABLE);
      expect(await api.db.query('select 1 from email_notifications')).toHaveLength(0);
    });

    it("reports features.requests.email_auto_dispatch: false, keeps a request's addresses and mails nothing", async () => {
      const version = expectData(await getVersion({ client: api.client }));
      expect(version.features.requests).toMatchObject({ enabled: true, email_auto_dispatch: false });
      const created = await api.raw('/api/v2/requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ request: { request: 'off-ask', notify_emails_to: 'a@example.net' } }),
      });
      expect(created.status).toBe(201);
      expect(created.body.notify_emails_to).toBe('a@example.net');
      const token = created.body.url_token as string;
      const answered = await api.raw(`/api/v2/requests/${token}/response`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ push: { payload: 'off-answer' } }),
      });
      expect(answered.status).toBe(201);
      // Every move happened (the audit says so), and none wrote an email or its job.
      const audit = await api.raw(`/api/v2/requests/${token}/audit`, {
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(audit.body.logs.map((l: { kind: string }) => l.kind)).toEqual(['creation', 'fulfilled']);
      expect(await api.db.query('select 1 from request_mail')).toHaveLength(0);
    });
  });
}
