/**
 * The recipient's page (`/p/{token}`, `/p/{token}/r`) and its JSON steps. Page GETs never call
 * `core.pushes.retrieve`: the page is rendered from the push's state, and the secret is fetched by the page script
 * when the person acts, through the API (anonymous visitors of an open instance) or through the steps
 * `POST /p/{token}/reveal` and `POST /p/{token}/delete` (signed-in visitors; on a closed instance the only way).
 */
import type { Request, Response, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { RequestContext } from '../../core.js';
import { answerFailure } from '../../http/errors.js';
import { state } from '../../http/middleware.js';
import { FormError, readJson } from '../forms.js';
import { PageError, type PageKit } from '../page-kit.js';
import { comesFromOurPages, pageHeaders } from '../security.js';
import { recipientPage, signInRequiredPage } from '../views/recipient.js';
import { networkRefusedPage } from '../views/recipient-access.js';
import { accessOffer, recipientAccessPages, signedInEmailOf } from './recipient-access-pages.js';
import { workspaceBrand } from '../workspace-brand.js';

/** The recipient page's JSON steps: a passphrase (at most 1,024 characters) and nothing else. */
const STEP_BODY_BYTES = 16 * 1024;
/** The header the recipient page's script sends its CSRF token in (a custom header: cross-site pages cannot set it). */
const CSRF_HEADER = 'x-csrf-token';

export function recipientPages(router: Router, kit: PageKit): void {
  const { core, settings, sessions } = kit;
  const recipient = (retrievalPage: boolean) =>
    kit.pageRoute(retrievalPage ? '/p/:url_token/r' : '/p/:url_token', async (req, res, v) => {
      const urlToken = String(req.params.url_token ?? '');
      if (!v.user && !settings.allowAnonymous) {
        // A closed instance: only its users open secrets. Nothing is looked up, so the prompt says nothing about the
        // push (not even whether it exists) and consumes nothing; after sign-in the visitor comes back to this link.
        kit.send(
          res,
          200,
          signInRequiredPage(v.viewer, `/p/${encodeURIComponent(urlToken)}${retrievalPage ? '/r' : ''}`),
        );
        return;
      }
      // State only (a SELECT): no view is counted and nothing is written, whoever fetches the page.
      const ctx = kit.ctxOf(req, v.user?.userId ?? null);
      const found = await kit.web().pushPage(urlToken, ctx, signedInEmailOf(kit, req, v));
      if (!found) throw new PageError(404, { key: 'error.notFound.title' }, { key: 'recipient.notFound' });
      const { push, access } = found;
      // Who may open it (issue 42): a network the push leaves out is told so at once; specific people prove it first.
      if (access.networkRefused && !push.expired) return kit.send(res, 403, networkRefusedPage(v.viewer));
      // A live push of a workspace carries its brand; an expired one the instance's (a dead link names no workspace).
      if (!push.expired) await workspaceBrand(kit, v, found.workspaceId);
      const codeSent = req.query.code_sent === '1';
      const form = access.needsProof ? { access: { ...accessOffer(kit, req, v), codeSent } } : {};
      // Signed-in visitors open the secret as themselves (the owner's look is an owner_view, limits and audit as in
      // the API) through the page's own step; anonymous visitors of an open instance through the API, as any client.
      kit.send(res, 200, recipientPage(v.viewer, push, { retrievalPage, reveal: v.user ? 'web' : 'api', ...form }));
    });
  router.get('/p/:url_token', recipient(false));
  router.get('/p/:url_token/r', recipient(true));
  // The code forms of a push for specific people (issue 42), without JavaScript.
  recipientAccessPages(router, kit);

  /**
   * A JSON step of the recipient page. In order: the visitor (a closed instance refuses anonymous visitors with the
   * API's 401 authentication_required), the same-origin check and the CSRF token from `X-CSRF-Token` (403), the body
   * (application/json only, 16 KiB), then the domain call as the session's user. Failures answer the API's error body
   * and status (Retry-After on 429 and 503), so the page handles both paths alike. Nothing is consumed before every
   * check has passed.
   */
  const recipientStep =
    (
      route: string,
      act: (req: Request, ctx: RequestContext, body: Record<string, unknown>, email: string | null) => Promise<unknown>,
    ) =>
    async (req: Request, res: Response): Promise<void> => {
      state(res).route = route;
      pageHeaders(res);
      try {
        const v = await kit.visit(req, res);
        const userId = v.user?.userId ?? null;
        if (!userId && !settings.allowAnonymous) {
          throw new ApiError(
            'authentication_required',
            'This instance requires sign-in. Sign in and open the link again.',
          );
        }
        if (!comesFromOurPages(req, settings.publicBaseUrl) || !sessions.csrfValid(req, req.get(CSRF_HEADER), userId)) {
          throw new ApiError(
            'csrf_rejected',
            'This request did not come from this site, or the page has expired. Reload the page and try again.',
          );
        }
        let body: unknown;
        try {
          body = await readJson(req, STEP_BODY_BYTES);
        } catch (error) {
          if (!(error instanceof FormError)) throw error;
          const code =
            error.status === 413 ? 'payload_too_large' : error.status === 415 ? 'body_not_json' : 'invalid_json';
          throw new ApiError(code, error.message);
        }
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          throw new ApiError('bad_request', 'The request body must be a JSON object.');
        }
        // A session begun at the single sign-on provider stands for its email, which the provider verified (issue 42).
        const signedInEmail = signedInEmailOf(kit, req, v);
        const result = await act(req, kit.ctxOf(req, userId), body as Record<string, unknown>, signedInEmail);
        res.status(200).json(result);
      } catch (error) {
        answerFailure(res, error);
      }
    };

  // Reveal: the API's getPush for the session's user; the passphrase comes in the body, never in a URL.
  router.post(
    '/p/:url_token/reveal',
    recipientStep('/p/:url_token/reveal', async (req, ctx, body, signedInEmail) => {
      const { passphrase, access_code: accessCode } = body;
      if (passphrase !== undefined && passphrase !== null && typeof passphrase !== 'string') {
        throw new ApiError('bad_request', 'The passphrase must be a string.');
      }
      if (accessCode !== undefined && (typeof accessCode !== 'string' || accessCode.length > 32)) {
        throw new ApiError('bad_request', 'The access code must be a string of at most 32 characters.');
      }
      // Who may open it (issue 42): a code from requestAccessCode, or the signed-in provider's verified email.
      const proof = { accessCode, signedInEmail };
      return core.pushes.retrieve(String(req.params.url_token ?? ''), passphrase ?? undefined, ctx, { proof });
    }),
  );

  // Delete now: the API's expirePush for the session's user (the owner, or anyone when the push is deletable by viewers).
  router.post(
    '/p/:url_token/delete',
    recipientStep('/p/:url_token/delete', async (req, ctx) =>
      core.pushes.expire(String(req.params.url_token ?? ''), ctx),
    ),
  );
}
