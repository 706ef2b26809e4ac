/** `notifyEmails`: the push's link emailed to more recipients (server/src/mail/notify-service.ts). */
import { ApiError, turnOn } from '@secret-push/rules';
import type { Core } from '../../core.js';
import type { Handlers } from '../operations.js';

export function notifyHandler(core: Core): Pick<Handlers, 'notifyEmails'> {
  return {
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
