/**
 * `notifyEmails`: the push's link emailed to more recipients (server/src/mail/notify-service.ts); `requestAccessCode`:
 * a one-time code emailed to one of a push's recipients.
 */
import { ApiError, turnOn } from '@secret-push/rules';
import type { Core } from '../../core.js';
import { negotiateLocale } from '../../i18n/i18n.js';
import type { Handlers } from '../operations.js';

export function notifyHandler(core: Core): Pick<Handlers, 'notifyEmails' | 'requestAccessCode'> {
  return {
    // Who may open a push (issue 42): a one-time code emailed to one of its addresses (push/access-codes.ts), in the
    // language `Accept-Language` asks for (English without one).
    requestAccessCode: async ({ params, body, headers, ctx }) => {
      const asked = headers['accept-language'];
      const lang = asked ? negotiateLocale({ acceptLanguage: asked }).code : undefined;
      return { status: 202, body: await core.pushes.requestAccessCode(params.url_token, body.email, ctx, lang) };
    },
    notifyEmails: async ({ params, body, ctx }) => {
      // Email turned off (PWPUSH_NOTIFY_BY_EMAIL=false): the route does not exist, as in the reference.
      if (!core.notify?.routed)
        throw new ApiError(
          'no_route',
          `Emailing a push's link is off on this instance. ${turnOn('notifyByEmail', core.settings.env)}`,
        );
      return { status: 201, body: await core.notify.notify(params.url_token, body, ctx) };
    },
  };
}
