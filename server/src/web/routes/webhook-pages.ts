/** The account's webhooks page: list, add (the secret shown once), delete, each one's deliveries, test, retry. */
import type { Router } from 'express';
import type { WebhookEventType } from '@secret-push/sdk/generated';
import { ApiError, turnOn } from '@secret-push/rules';
import type { Translator } from '../../i18n/i18n.js';
import type { WebhookService } from '../../webhooks/webhook-service.js';
import { field } from '../forms.js';
import type { PageKit } from '../page-kit.js';
import { deliveriesPage, PAGE_EVENTS, webhooksPage, type WebhooksState } from '../views/webhooks.js';
import { fieldsLine } from '../field-text.js';

/** The add form → a new webhook, or what is wrong with it (said for people). */
export function hookFromForm(
  form: FormData,
  t: Translator['t'],
): { url: string; events: WebhookEventType[]; description: string } | string {
  const url = field(form, 'url').trim();
  const events = [...new Set(form.getAll('events'))].filter((e): e is WebhookEventType =>
    (PAGE_EVENTS as readonly unknown[]).includes(e),
  );
  const description = field(form, 'description').trim();
  if (url.length === 0 || url.length > 2048) return t('webhooks.error.url');
  if (events.length === 0) return t('webhooks.error.noEvent');
  if (description.length > 200) return t('webhooks.error.description');
  return { url, events, description };
}

/** The service, or a 404 page when webhooks are off. */
export function serviceOf(kit: PageKit): WebhookService {
  if (!kit.core.webhooks)
    throw new ApiError('not_found', `Webhooks are off on this instance. ${turnOn('webhooks', kit.core.settings.env)}`);
  return kit.core.webhooks;
}

export function webhookPages(router: Router, kit: PageKit): void {
  const mail = kit.core.settings.mail.smtpUrl !== null;
  const stateOf = async (userId: string, extra: Partial<WebhooksState> = {}): Promise<WebhooksState> => {
    const hooks = serviceOf(kit);
    return {
      webhooks: await hooks.list(userId),
      receipts: mail ? await hooks.receipts(userId) : null,
      ...extra,
    };
  };
  const signedIn = (v: { user: { userId: string } | null }) => v.user;

  router.get(
    '/users/webhooks',
    kit.pageRoute('/users/webhooks', async (req, res, v) => {
      const user = signedIn(v);
      if (!user) return kit.redirectToSignIn(req, res);
      kit.send(res, 200, webhooksPage(v.viewer, await stateOf(user.userId)));
    }),
  );

  router.post(
    '/users/webhooks',
    kit.pageRoute('/users/webhooks', async (req, res, v) => {
      const user = signedIn(v);
      if (!user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const refuse = async (error: string) =>
        kit.send(res, 422, webhooksPage(v.viewer, await stateOf(user.userId, { error })));
      const input = hookFromForm(form, v.viewer.i18n.t);
      if (typeof input === 'string') return refuse(input);
      try {
        const fresh = await serviceOf(kit).create(user.userId, input);
        kit.send(res, 201, webhooksPage(v.viewer, await stateOf(user.userId, { fresh })));
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
        await refuse(fieldsLine(v.viewer.i18n, error));
      }
    }),
  );

  router.post(
    '/users/webhooks/receipts',
    kit.pageRoute('/users/webhooks/receipts', async (req, res, v) => {
      const user = signedIn(v);
      if (!user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      await serviceOf(kit).setReceipts(user.userId, field(form, 'on') === 'true');
      res.redirect(303, '/users/webhooks');
    }),
  );

  router.get(
    '/users/webhooks/:id',
    kit.pageRoute('/users/webhooks/:id', async (req, res, v) => {
      const user = signedIn(v);
      if (!user) return kit.redirectToSignIn(req, res);
      const hooks = serviceOf(kit);
      const hook = await hooks.get(user.userId, String(req.params.id));
      const { items } = await hooks.deliveries(user.userId, hook.id, 1);
      kit.send(res, 200, deliveriesPage(v.viewer, hook, items));
    }),
  );

  const action = (
    path: string,
    run: (hooks: WebhookService, userId: string, id: string, delivery: string) => Promise<unknown>,
    back: (id: string) => string,
  ) =>
    router.post(
      path,
      kit.pageRoute(path, async (req, res, v) => {
        const user = signedIn(v);
        if (!user) return kit.redirectToSignIn(req, res);
        await kit.postedForm(req, v);
        const id = String(req.params.id);
        await run(serviceOf(kit), user.userId, id, String(req.params.delivery ?? ''));
        res.redirect(303, back(id));
      }),
    );
  action(
    '/users/webhooks/:id/delete',
    (hooks, userId, id) => hooks.remove(userId, id),
    () => '/users/webhooks',
  );
  action(
    '/users/webhooks/:id/test',
    (hooks, userId, id) => hooks.test(userId, id),
    (id) => `/users/webhooks/${id}`,
  );
  action(
    '/users/webhooks/:id/deliveries/:delivery/retry',
    (hooks, userId, id, delivery) => hooks.retry(userId, id, delivery),
    (id) => `/users/webhooks/${id}`,
  );
}
