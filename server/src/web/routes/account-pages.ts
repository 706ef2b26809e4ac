/** Sign-up, sign-in, sign-out and the API token page (the account token, and its API keys). */
import type { Router } from 'express';
import { ApiError, turnOn } from '@secret-push/rules';
import { PASSWORD_MIN } from '../../account/password-strength.js';
import { actorOf, baseUrlOf } from '../../http/auth.js';
import { state } from '../../http/middleware.js';
import { field } from '../forms.js';
import { PageError, signUpClosed, signupsOpen, type PageKit } from '../page-kit.js';
import { safeNext } from '../security.js';
import { viaProvider } from '../session.js';
import { afterPassword, createSignInSteps } from '../sign-in-steps.js';
import { providerLogout } from './oidc-pages.js';
import { errorText } from '../error-text.js';
import { signInPage, signUpPage, tokenPage } from '../views/accounts.js';
import { messagePage } from '../views/layout.js';
import { revokedText } from '../account-sentences.js';
import { tokenPageState } from './api-key-pages.js';
import { signUpSentPage } from './account-mail-pages.js';
import { fieldsLine, fieldTexts } from '../field-text.js';

export function accountPages(router: Router, kit: PageKit): void {
  const { core, settings } = kit;
  const opts = { clock: kit.clock };
  const steps = createSignInSteps(settings);
  // The sign-in page's single sign-on button, and whether passwords are off (PWPUSH_OIDC_ONLY).
  const sso = { provider: settings.oidc?.providerName, passwordOff: settings.oidc?.only ?? false };
  router.get('/api_tokens', (_req, res) => {
    state(res).route = '/api_tokens';
    res.redirect(301, '/users/token');
  });

  router.get(
    '/users/sign_in',
    kit.pageRoute('/users/sign_in', async (req, res, v) => {
      const next = safeNext(req.query.next, '/');
      if (v.user) return res.redirect(303, next);
      kit.send(res, 200, signInPage(v.viewer, { next, ...sso }));
    }),
  );

  router.post(
    '/users/sign_in',
    kit.pageRoute('/users/sign_in', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      if (sso.passwordOff)
        throw new PageError(
          403,
          { key: 'account.passwordOff.title' },
          {
            key: 'account.passwordOff.text',
            values: { provider: sso.provider ?? '', howToTurnOn: turnOn('passwordSignIn', settings.env) },
          },
        );
      const email = field(form, 'email');
      const next = safeNext(field(form, 'next'), '/');
      try {
        const user = await kit
          .web()
          .accounts.signIn(
            email,
            field(form, 'password'),
            actorOf(req, null, kit.settings.trustProxy).ip,
            opts.clock?.(),
          );
        await afterPassword(kit, steps, req, res, user, next);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const status = error.status;
        if (error.details.retryAfterSeconds !== undefined)
          res.setHeader('Retry-After', String(error.details.retryAfterSeconds));
        const message =
          error.code === 'too_many_attempts'
            ? v.viewer.i18n.t('account.signIn.tooMany', {
                minutes: Math.ceil((error.details.retryAfterSeconds ?? 60) / 60),
              })
            : error.code === 'authentication_required'
              ? v.viewer.i18n.t('account.signIn.noMatch')
              : errorText(v.viewer.i18n, error);
        if (error.code === 'service_unavailable') throw error;
        kit.send(res, status, signInPage(v.viewer, { email, next, error: message, ...sso }));
      }
    }),
  );

  router.get(
    '/users/sign_up',
    kit.pageRoute('/users/sign_up', async (req, res, v) => {
      if (!signupsOpen(settings)) throw signUpClosed(settings);
      if (v.user) return res.redirect(303, '/');
      kit.send(res, 200, signUpPage(v.viewer, { next: safeNext(req.query.next, '/') }, PASSWORD_MIN));
    }),
  );

  router.post(
    '/users/sign_up',
    kit.pageRoute('/users/sign_up', async (req, res, v) => {
      if (!signupsOpen(settings)) throw signUpClosed(settings);
      const form = await kit.postedForm(req, v);
      const email = field(form, 'email');
      const next = safeNext(field(form, 'next'), '/');
      try {
        const mail = kit.web().accountMail;
        if (mail) {
          // With email: the address is confirmed by a link first, and the answer is the same whether it is taken.
          await mail.signUp(
            email,
            field(form, 'password'),
            baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy),
            actorOf(req, null, settings.trustProxy).ip,
            opts.clock?.(),
            v.viewer.i18n.locale,
          );
          return kit.send(res, 200, signUpSentPage(v.viewer));
        }
        const user = await kit.web().accounts.signUp(email, field(form, 'password'), opts.clock?.());
        await afterPassword(kit, steps, req, res, user, next);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
        kit.send(
          res,
          422,
          signUpPage(
            v.viewer,
            {
              email,
              next,
              error: fieldsLine(v.viewer.i18n, error, false),
              fields: fieldTexts(v.viewer.i18n, error.details.fields, error.details.advice),
            },
            PASSWORD_MIN,
          ),
        );
      }
    }),
  );

  signOutPages(router, kit);

  const tokenState = (userId: string) => tokenPageState(kit, userId);

  router.get(
    '/users/token',
    kit.pageRoute('/users/token', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      kit.send(res, 200, tokenPage(v.viewer, await tokenState(v.user.userId)));
    }),
  );

  router.post(
    '/users/token',
    kit.pageRoute('/users/token', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await kit.postedForm(req, v);
      // One statement replaces the digest: the old token stops working the moment the new one exists.
      const fresh = await core.users.rotateToken(v.user.email, opts.clock?.());
      await kit
        .web()
        .accountMail?.tokenChanged(
          v.user.userId,
          baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy),
          v.viewer.i18n.locale,
        );
      const status = await kit.web().accounts.tokenStatus(v.user.userId);
      kit.send(res, 200, tokenPage(v.viewer, { ...status, fresh }));
    }),
  );
}

/**
 * Sign-out (this account's every session ends; with the provider's too when signed in there) and "sign out everywhere"
 * on the token page, which also revokes the API token and every key when asked (issue 45).
 */
function signOutPages(router: Router, kit: PageKit): void {
  const { core, settings, sessions } = kit;
  const opts = { clock: kit.clock };
  router.post(
    '/users/sign_out',
    kit.pageRoute('/users/sign_out', async (req, res, v) => {
      await kit.postedForm(req, v);
      if (v.user) await kit.web().accounts.endSessions(v.user.userId, opts.clock?.());
      const provider = viaProvider(sessions.read(req)?.factors);
      sessions.end(req, res);
      // Signed in with the provider: its own session ends too, where it offers RP-initiated logout.
      const base = baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy);
      const logout = v.user && provider ? await providerLogout(kit, base, { ...v.viewer, user: null }) : null;
      if (logout) return kit.send(res, 200, logout);
      res.redirect(303, '/');
    }),
  );

  router.post(
    '/users/sign_out_everywhere',
    kit.pageRoute('/users/sign_out_everywhere', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      if (!v.user) return kit.redirectToSignIn(req, res);
      const userId = v.user.userId;
      // Asked on the form (on by default): the sessions end, and with them the token and every key, in one transaction.
      const revoked = await core.users.endEverything(
        userId,
        field(form, 'revoke_credentials') === 'on',
        opts.clock?.(),
      );
      const provider = viaProvider(sessions.read(req)?.factors);
      sessions.end(req, res);
      const base = baseUrlOf(req, settings.publicBaseUrl, settings.trustProxy);
      const signedOut = { ...v.viewer, user: null };
      const logout = provider ? await providerLogout(kit, base, signedOut) : null;
      if (logout) return kit.send(res, 200, logout);
      const { t } = signedOut.i18n;
      const said = revoked ? revokedText(signedOut.i18n, revoked) : t('account.signedOutEverywhere.kept');
      kit.send(
        res,
        200,
        messagePage(
          signedOut,
          t('account.signedOutEverywhere.title'),
          t('account.signedOutEverywhere.text', { revoked: said }),
          'notice',
        ),
      );
    }),
  );
}
