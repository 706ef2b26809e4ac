/**
 * Two-factor sign-in pages (issue 25): the settings page of a signed-in user (`/users/two_factor`), the enrolment
 * (`setup`, `confirm`), the code step after a right password (`verify`), new recovery codes (`recovery_codes`) and
 * turning it off (`disable`). The
 * enrolment also runs before any session exists, for a password account that PWPUSH_REQUIRE_2FA sends there from
 * sign-in (the `sp_2fa` step of ../sign-in-steps.ts).
 */
import type { Request, Response, Router } from 'express';
import { ApiError, turnOn } from '@secret-push/rules';
import type { AccountUser } from '../../account/account-service.js';
import { actorOf } from '../../http/auth.js';
import type { Translator } from '../../i18n/i18n.js';
import { field } from '../forms.js';
import { PageError, rememberSignInLocale, type PageKit } from '../page-kit.js';
import { createSignInSteps, type PendingFactor } from '../sign-in-steps.js';
import { errorText } from '../error-text.js';
import { recoveryCodesPage, setupPage, twoFactorPage, verifyPage } from '../views/two-factor.js';

/** A wrong code's message, or the limit's (with its Retry-After set); other errors go on. */
function codeRefusal(res: Response, error: unknown, i18n: Translator): { status: number; message: string } {
  if (!(error instanceof ApiError)) throw error;
  if (error.code === 'too_many_attempts') {
    const seconds = error.details.retryAfterSeconds ?? 60;
    res.setHeader('Retry-After', String(seconds));
    return { status: 429, message: i18n.t('twoFactor.tooMany', { minutes: Math.ceil(seconds / 60) }) };
  }
  if (error.code === 'authentication_required') return { status: 401, message: errorText(i18n, error) };
  throw error;
}

export function twoFactorPages(router: Router, kit: PageKit): void {
  const { settings, sessions } = kit;
  const steps = createSignInSteps(settings);
  const now = () => kit.clock?.() ?? new Date();
  const ipOf = (req: Request) => actorOf(req, null, kit.settings.trustProxy).ip;

  /** The user an enrolment is for: the signed-in user, or the one a required enrolment is pending for. */
  async function enrollee(
    req: Request,
    user: AccountUser | null,
  ): Promise<{ user: AccountUser; step?: PendingFactor }> {
    if (user) return { user };
    const step = steps.pendingFactor(req);
    const pending =
      step?.purpose === 'enrol' ? await kit.web().accounts.sessionUser(step.userId, step.sessionVersion) : null;
    if (!pending || !step)
      throw new PageError(401, { key: 'twoFactor.signInFirst.title' }, { key: 'twoFactor.signInFirst.text' });
    return { user: pending, step };
  }

  router.get(
    '/users/two_factor',
    kit.pageRoute('/users/two_factor', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const status = await kit.web().twoFactor.status(v.user.userId);
      kit.send(res, 200, twoFactorPage(v.viewer, { ...status, required: settings.require2fa }));
    }),
  );

  const showSetup = async (req: Request, res: Response, v: Parameters<Parameters<PageKit['pageRoute']>[1]>[2]) => {
    const { user, step } = await enrollee(req, v.user);
    const tf = kit.web().twoFactor;
    const enrolment = (await tf.pending(user.userId, user.email)) ?? (await tf.begin(user.userId, user.email));
    kit.send(res, 200, setupPage(v.viewer, { ...enrolment, required: Boolean(step) }));
  };

  router.get(
    '/users/two_factor/setup',
    kit.pageRoute('/users/two_factor/setup', async (req, res, v) => {
      if (!v.user && !steps.pendingFactor(req)) return kit.redirectToSignIn(req, res);
      await showSetup(req, res, v);
    }),
  );

  router.post(
    '/users/two_factor/setup',
    kit.pageRoute('/users/two_factor/setup', async (req, res, v) => {
      await kit.postedForm(req, v);
      const { user } = await enrollee(req, v.user);
      // A new secret each time the button is pressed: a key shown on another screen before stops counting.
      const status = await kit.web().twoFactor.status(user.userId);
      if (!status.enabled) await kit.web().twoFactor.begin(user.userId, user.email);
      await showSetup(req, res, v);
    }),
  );

  router.post(
    '/users/two_factor/confirm',
    kit.pageRoute('/users/two_factor/confirm', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      const { user, step } = await enrollee(req, v.user);
      const tf = kit.web().twoFactor;
      let codes: string[];
      try {
        codes = await tf.confirm(user.userId, field(form, 'code'), ipOf(req), now());
      } catch (error) {
        const refusal = codeRefusal(res, error, v.viewer.i18n);
        const enrolment = await tf.pending(user.userId, user.email);
        if (!enrolment)
          throw new PageError(409, { key: 'twoFactor.alreadyOn.title' }, { key: 'twoFactor.alreadyOn.text' });
        return kit.send(
          res,
          refusal.status,
          setupPage(v.viewer, { ...enrolment, required: Boolean(step), error: refusal.message }),
        );
      }
      // Every other session of the user ends; this browser gets a session that did both steps.
      await kit.web().accounts.endSessions(user.userId, now());
      const fresh = await kit.web().accounts.sessionUser(user.userId, user.sessionVersion + 1);
      steps.endFactor(req, res);
      let viewer = v.viewer;
      if (fresh) {
        await rememberSignInLocale(kit, req, fresh.userId);
        const csrf = sessions.start(req, res, fresh, 'password+totp');
        viewer = { ...v.viewer, user: { email: fresh.email }, csrf: sessions.csrfToken(csrf, fresh.userId) };
      }
      kit.send(res, 200, recoveryCodesPage(viewer, codes, step?.next ?? '/users/two_factor'));
    }),
  );

  router.get(
    '/users/two_factor/verify',
    kit.pageRoute('/users/two_factor/verify', async (req, res, v) => {
      if (steps.pendingFactor(req)?.purpose !== 'verify') return res.redirect(303, '/users/sign_in');
      kit.send(res, 200, verifyPage(v.viewer));
    }),
  );

  router.post(
    '/users/two_factor/verify',
    kit.pageRoute('/users/two_factor/verify', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      const step = steps.pendingFactor(req);
      const user =
        step?.purpose === 'verify' ? await kit.web().accounts.sessionUser(step.userId, step.sessionVersion) : null;
      if (!step || !user) {
        throw new PageError(401, { key: 'twoFactor.signInAgain.title' }, { key: 'twoFactor.signInAgain.text' });
      }
      try {
        await kit.web().twoFactor.verify(user.userId, field(form, 'code'), ipOf(req), now());
      } catch (error) {
        const refusal = codeRefusal(res, error, v.viewer.i18n);
        return kit.send(res, refusal.status, verifyPage(v.viewer, { error: refusal.message }));
      }
      steps.endFactor(req, res);
      await rememberSignInLocale(kit, req, user.userId);
      sessions.start(req, res, user, step.via === 'oidc' ? 'oidc+totp' : 'password+totp');
      res.redirect(303, step.next);
    }),
  );

  factorChangePages(router, kit);
}

/**
 * The signed-in user's changes to a factor that is on, each after a code (from the app, or a recovery code, counted and
 * limited like every code): new recovery codes, and turning the factor off.
 */
function factorChangePages(router: Router, kit: PageKit): void {
  const { settings } = kit;
  const now = () => kit.clock?.() ?? new Date();
  const ipOf = (req: Request) => actorOf(req, null, kit.settings.trustProxy).ip;

  // New recovery codes: the same proof as turning the factor off (a code from the app, or a recovery code, counted
  // and limited like every code); every earlier code stops working at once, and the new ones are shown this once.
  router.post(
    '/users/two_factor/recovery_codes',
    kit.pageRoute('/users/two_factor/recovery_codes', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const tf = kit.web().twoFactor;
      const before = await tf.status(v.user.userId);
      if (!before.enabled) throw new PageError(409, { key: 'twoFactor.off.title' }, { key: 'twoFactor.off.onFirst' });
      let codes: string[];
      try {
        codes = await tf.renewRecoveryCodes(v.user.userId, field(form, 'code'), ipOf(req), now());
      } catch (error) {
        const refusal = codeRefusal(res, error, v.viewer.i18n);
        const status = await tf.status(v.user.userId);
        const page = twoFactorPage(v.viewer, { ...status, required: settings.require2fa, error: refusal.message });
        return kit.send(res, refusal.status, page);
      }
      kit.send(res, 200, recoveryCodesPage(v.viewer, codes, '/users/two_factor', 'renewed'));
    }),
  );

  router.post(
    '/users/two_factor/disable',
    kit.pageRoute('/users/two_factor/disable', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      if (settings.require2fa)
        throw new PageError(
          403,
          { key: 'twoFactor.required.title' },
          { key: 'twoFactor.required.text', values: { howToTurnOn: turnOn('optionalTwoFactor', settings.env) } },
        );
      const tf = kit.web().twoFactor;
      try {
        await tf.disable(v.user.userId, field(form, 'code'), ipOf(req), now());
      } catch (error) {
        const refusal = codeRefusal(res, error, v.viewer.i18n);
        const status = await tf.status(v.user.userId);
        return kit.send(
          res,
          refusal.status,
          twoFactorPage(v.viewer, { ...status, required: false, error: refusal.message }),
        );
      }
      const status = await tf.status(v.user.userId);
      kit.send(
        res,
        200,
        twoFactorPage(v.viewer, { ...status, required: false, notice: v.viewer.i18n.t('twoFactor.off.done') }),
      );
    }),
  );
}
