/**
 * The request pages (issue 24), through the same domain calls as the API: "Request a secret" and the requester's list
 * and request for signed-in users, and the responder's page `/r/{token}`, which a crawler may GET at no cost (reading
 * a request changes nothing). Sealed requests are made and answered by requests.js in the browser.
 */
import type { Request, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { RequestInput, RequestOwner, RequestView } from '@secret-push/sdk/generated';
import { field } from '../forms.js';
import { PageError, type PageKit } from '../page-kit.js';
import { workspaceBrand } from '../workspace-brand.js';
import { errorText } from '../error-text.js';
import { answeredPage, answerPage, newRequestPage, requestListPage, requestOwnerPage } from '../views/requests.js';
import { fieldTexts } from '../field-text.js';

const REFUSALS: ReadonlySet<string> = new Set([
  'validation_failed',
  'storage_quota_exceeded',
  'payload_too_large',
  'too_many_open_requests',
]);
const CLOSED: ReadonlySet<string> = new Set(['request_answered', 'request_closed']);

function intOf(raw: string): number | undefined {
  return /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : undefined;
}

function tokenOf(req: Request): string {
  return String(req.params.url_token ?? '');
}

function pageNumber(req: Request): number {
  const raw = req.query.page;
  if (raw === undefined) return 1;
  if (typeof raw !== 'string' || !/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 200)
    throw new PageError(400, { key: 'error.noSuchPage.title' }, { key: 'error.noSuchPage.message' });
  return Number(raw);
}

export function requestPages(router: Router, kit: PageKit): void {
  const { core } = kit;
  if (!core.settings.enableRequests) return;

  router.get(
    '/requests/new',
    kit.pageRoute('/requests/new', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      kit.send(res, 200, newRequestPage(v.viewer));
    }),
  );

  router.post(
    '/requests',
    kit.pageRoute('/requests', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const input: RequestInput = { request: field(form, 'request') };
      const days = intOf(field(form, 'expire_after_days'));
      const views = intOf(field(form, 'expire_after_views'));
      if (days !== undefined) input.expire_after_days = days;
      if (views !== undefined) input.expire_after_views = views;
      const publicKey = field(form, 'public_key');
      try {
        if (publicKey !== '') input.public_key = JSON.parse(publicKey) as RequestInput['public_key'];
        else if (form.has('seal'))
          throw new ApiError('validation_failed', 'public_key', {
            fields: {
              public_key: [v.viewer.i18n.t('requests.error.sealNeedsScript')],
            },
          });
        const created = await core.requests.create(input, kit.ctxOf(req, v.user.userId));
        res.redirect(303, `/requests/${created.url_token}`);
      } catch (error) {
        if (error instanceof SyntaxError)
          throw new PageError(400, { key: 'error.badForm.title' }, { key: 'requests.error.publicKeyNotJson' });
        if (!(error instanceof ApiError) || !REFUSALS.has(error.code)) throw error;
        const state = {
          request: input.request,
          // A limit's refusal says which and what to do; a field's, where.
          error: error.details.fields ? v.viewer.i18n.t('requests.error.fields') : errorText(v.viewer.i18n, error),
          fields: fieldTexts(v.viewer.i18n, error.details.fields),
        };
        kit.send(res, error.status, newRequestPage(v.viewer, state));
      }
    }),
  );

  for (const which of ['active', 'expired'] as const) {
    router.get(
      `/requests/${which}`,
      kit.pageRoute(`/requests/${which}`, async (req, res, v) => {
        if (!v.user) return kit.redirectToSignIn(req, res);
        const result = await core.requests.list(which, pageNumber(req), kit.ctxOf(req, v.user.userId));
        kit.send(res, 200, requestListPage(v.viewer, which, result));
      }),
    );
  }

  router.get(
    '/requests/:url_token',
    kit.pageRoute('/requests/:url_token', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const record = await core.requests.get(tokenOf(req), kit.ctxOf(req, v.user.userId));
      if (record.audience !== 'owner') return res.redirect(303, `/r/${record.url_token}`);
      kit.send(res, 200, requestOwnerPage(v.viewer, record as RequestOwner));
    }),
  );

  router.post(
    '/requests/:url_token/revoke',
    kit.pageRoute('/requests/:url_token/revoke', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await kit.postedForm(req, v);
      const revoked = await core.requests.revoke(tokenOf(req), kit.ctxOf(req, v.user.userId));
      res.redirect(303, `/requests/${revoked.url_token}`);
    }),
  );

  // The responder's page: a GET shows the ask and spends nothing.
  router.get(
    '/r/:url_token',
    kit.pageRoute('/r/:url_token', async (req, res, v) => {
      // As the API: an instance without anonymous access takes answers from its users only.
      if (!v.user && !core.settings.allowAnonymous) return kit.redirectToSignIn(req, res);
      const record = await core.requests.get(tokenOf(req), kit.ctxOf(req, null));
      // An open request of a workspace carries its brand (issue 42); a closed one the instance's.
      if (record.state === 'pending')
        await workspaceBrand(kit, v, (await core.workspaceBrands?.requestWorkspace(tokenOf(req))) ?? null);
      kit.send(res, 200, answerPage(v.viewer, record as RequestView));
    }),
  );

  router.post(
    '/r/:url_token',
    kit.pageRoute('/r/:url_token', async (req, res, v) => {
      if (!v.user && !core.settings.allowAnonymous) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const ctx = kit.ctxOf(req, v.user?.userId ?? null);
      const passphrase = field(form, 'passphrase');
      try {
        await core.requests.respond(
          tokenOf(req),
          { push: { payload: field(form, 'payload'), ...(passphrase !== '' ? { passphrase } : {}) } },
          ctx,
        );
        await workspaceBrand(kit, v, (await core.workspaceBrands?.requestWorkspace(tokenOf(req))) ?? null);
        kit.send(res, 201, answeredPage(v.viewer));
      } catch (error) {
        if (!(error instanceof ApiError) || !(REFUSALS.has(error.code) || CLOSED.has(error.code))) throw error;
        const view = (await core.requests.get(tokenOf(req), kit.ctxOf(req, null))) as RequestView;
        kit.send(
          res,
          error.status,
          answerPage(v.viewer, view, {
            error: errorText(v.viewer.i18n, error),
            fields: fieldTexts(v.viewer.i18n, error.details.fields),
          }),
        );
      }
    }),
  );
}
