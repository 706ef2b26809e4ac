/**
 * Issue 22, an instance without email: no SMTP relay (the default), or email turned off (`PWPUSH_NOTIFY_BY_EMAIL=false`,
 * with a relay). The version report says `email_auto_dispatch: false` (pwpush-cli then leaves `--notify` out), the
 * create fields answer the reference's 422 "are not available", nothing is written, and the notify route answers
 * 422 without a relay and 404 when turned off (the reference does not draw it then).
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
  });
}
