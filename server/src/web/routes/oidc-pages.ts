/**
 * Single sign-on pages (issue 25): `POST /users/oidc/start` (the sign-in page's "Sign in with …" button, CSRF-checked)
 * sends the browser to the provider with a fresh state, nonce and PKCE challenge; `GET /users/oidc/callback` takes
 * the provider's answer, checks it against what this browser started (../sign-in-steps.ts, used once), has
 * ../../account/single-sign-on.ts exchange and check it, and starts a session (after the account's own second factor,
 * when it has one). Any refusal is a page saying why; no session is given and no account made.
 */
import type { Router } from 'express';
import { turnOn } from '@secret-push/rules';
import { claimText } from '../account-sentences.js';
import { SignInRefusal } from '../../account/single-sign-on.js';
import { baseUrlOf } from '../../http/auth.js';
import { field } from '../forms.js';
import { PageError, rememberSignInLocale, type PageKit } from '../page-kit.js';
import { safeNext } from '../security.js';
import { createSignInSteps } from '../sign-in-steps.js';
import { providerStepPage } from '../views/accounts.js';
import { messagePage, type Viewer } from '../views/layout.js';

const OIDC_CALLBACK_PATH = '/users/oidc/callback';

/** What a refusal answers: the person's mistake or their provider's (403), or an answer that is not right (400). */
function refusalPage(refusal: SignInRefusal): PageError {
  const forbidden = ['unverified_email', 'domain', 'no_account', 'linked_elsewhere'].includes(refusal.reason);
  const status = refusal.reason === 'unavailable' ? 503 : forbidden ? 403 : 400;
  return new PageError(
    status,
    { key: 'oidc.refused.title' },
    { key: 'oidc.refused.text', values: { reason: refusal.message } },
  );
}

export function oidcPages(router: Router, kit: PageKit): void {
  const { settings, sessions } = kit;
  const steps = createSignInSteps(settings);
  const sso = () => {
    const service = kit.web().singleSignOn;
    if (!service)
      throw new PageError(
        404,
        { key: 'error.notFound.title' },
        { key: 'oidc.notSetUp', values: { howToTurnOn: turnOn('singleSignOn', settings.env) } },
      );
    return service;
  };

  router.post(
    '/users/oidc/start',
    kit.pageRoute('/users/oidc/start', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      const next = safeNext(field(form, 'next'), '/');
      let started;
      try {
        started = await sso().start(
          `${baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy)}${OIDC_CALLBACK_PATH}`,
        );
      } catch (error) {
        if (error instanceof SignInRefusal) throw refusalPage(error);
        throw error;
      }
      steps.startSso(req, res, { ...started.transaction, next });
      const name = sso().providerName;
      kit.send(
        res,
        200,
        providerStepPage(
          v.viewer,
          v.viewer.i18n.t('account.signIn.withProvider', { provider: name }),
          name,
          started.url,
        ),
      );
    }),
  );

  router.get(
    OIDC_CALLBACK_PATH,
    kit.pageRoute(OIDC_CALLBACK_PATH, async (req, res, v) => {
      const service = sso();
      // Taken (and cleared) first: whatever happens next, this answer cannot be used again in this browser.
      const pending = steps.takeSso(req, res);
      try {
        if (!pending) throw new SignInRefusal('state', v.viewer.i18n.t('oidc.answerUsed'));
        const callback = new URL(req.originalUrl, `${baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy)}/`);
        const claims = await service.finish(callback, pending);
        const { claimed, ...user } = await service.account(claims, kit.clock?.());
        const next = safeNext(pending.next, '/');
        // A locked account (issue 41) gets no session, from the provider either.
        if (!(await kit.web().accounts.sessionUser(user.userId, user.sessionVersion)))
          throw new PageError(403, { key: 'account.locked.title' }, { key: 'account.locked.text' });
        // The account's own second factor is asked after the provider too: its owner turned it on (issue 45).
        if ((await kit.web().twoFactor.status(user.userId)).enabled) {
          steps.startFactor(req, res, user, 'verify', next, 'oidc');
          return res.redirect(303, '/users/two_factor/verify');
        }
        await rememberSignInLocale(kit, req, user.userId);
        const csrf = sessions.start(req, res, user, 'oidc');
        if (!claimed) return res.redirect(303, next);
        // An account nobody had proven the address of became this person's: say what was removed from it.
        const viewer = { ...v.viewer, user: { email: user.email }, csrf: sessions.csrfToken(csrf, user.userId) };
        kit.send(
          res,
          200,
          messagePage(viewer, viewer.i18n.t('account.claim.pageTitle'), claimText(viewer.i18n, claimed), 'notice'),
        );
      } catch (error) {
        if (error instanceof SignInRefusal) throw refusalPage(error);
        throw error;
      }
    }),
  );
}

/** The page sign-out answers a session signed in with the provider: a step to its logout (RP-initiated), or null. */
export async function providerLogout(kit: PageKit, base: string, viewer: Viewer): Promise<string | null> {
  const service = kit.core.web?.singleSignOn;
  const url = service ? await service.logoutUrl(`${base}/`) : null;
  return service && url
    ? providerStepPage(viewer, viewer.i18n.t('account.providerStep.signingOut'), service.providerName, url)
    : null;
}
