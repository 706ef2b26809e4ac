/**
 * The account pages that need email (server/src/account/account-mail.ts): the sign-up confirmation link, "forgot
 * password" and the reset link. A link opened by GET only shows a form (a mail scanner that follows links uses
 * nothing); the POST of that form does it. Without an SMTP relay these pages say so, and the other account pages
 * behave as before.
 */
import type { Request, Response, Router } from 'express';
import { ApiError, turnOn, type ServerEnv } from '@secret-push/rules';
import { claimText, revokedText } from '../account-sentences.js';
import { PASSWORD_MIN } from '../../account/password-strength.js';
import { actorOf, baseUrlOf } from '../../http/auth.js';
import { field } from '../forms.js';
import { html } from '../html.js';
import type { PageKit } from '../page-kit.js';
import { afterPassword, createSignInSteps } from '../sign-in-steps.js';
import { errorText } from '../error-text.js';
import { csrfField, describedBy, fieldErrors, messagePage, page, type Viewer } from '../views/layout.js';
import { fieldsLine, fieldTexts } from '../field-text.js';

/** The answer of "Forgot your password?" without an SMTP relay: what to do now, and the setting that changes it. */
const noMail = (viewer: Viewer, env: ServerEnv) =>
  messagePage(
    viewer,
    viewer.i18n.t('account.forgot.title'),
    viewer.i18n.t('account.forgot.noMail', {
      command: 'npm run users -- set-password',
      howToTurnOn: turnOn('email', env),
    }),
    'notice',
  );

function forgotPage(viewer: Viewer, state: { email?: string; error?: string } = {}): string {
  const { t } = viewer.i18n;
  return page({
    title: t('account.forgot.title'),
    viewer,
    body: html`<h1>${t('account.forgot.title')}</h1>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
<form method="post" action="/users/password/new" class="card" novalidate>
  ${csrfField(viewer)}
  <label for="email">${t('account.email')}</label>
  <input type="email" id="email" name="email" autocomplete="username" required value="${state.email ?? ''}">
  <p class="hint">${t('account.forgot.hint')}</p>
  <button type="submit">${t('account.forgot.submit')}</button>
</form>`,
  });
}

function resetPage(
  viewer: Viewer,
  token: string,
  fields?: Record<string, string[]>,
  error?: string,
  revokeCredentials = true,
): string {
  const { t } = viewer.i18n;
  return page({
    title: t('account.reset.title'),
    viewer,
    body: html`<h1>${t('account.reset.title')}</h1>
${error ? html`<p class="error" role="alert" id="form-error">${error}</p>` : ''}
<form method="post" action="/users/password/edit" class="card" novalidate>
  ${csrfField(viewer)}
  <input type="hidden" name="token" value="${token}">
  <label for="password">${t('account.reset.password')}</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}"${describedBy(fields, 'password', 'password-hint')}>
  <p class="hint" id="password-hint">${t('account.reset.passwordHint', { min: PASSWORD_MIN })}</p>
  ${fieldErrors(fields, 'password')}
  <label class="check"><input type="checkbox" name="revoke_credentials" value="on"${revokeCredentials ? html` checked` : ''}> ${t('account.reset.revoke')}</label>
  <button type="submit">${t('account.reset.submit')}</button>
</form>`,
  });
}

function confirmPage(viewer: Viewer, token: string): string {
  const { t } = viewer.i18n;
  return page({
    title: t('account.confirm.title'),
    viewer,
    body: html`<h1>${t('account.confirm.title')}</h1>
<form method="post" action="/users/confirm" class="card">
  ${csrfField(viewer)}
  <input type="hidden" name="token" value="${token}">
  <p>${t('account.confirm.text')}</p>
  <button type="submit">${t('account.confirm.submit')}</button>
</form>`,
  });
}

/** The answer to a sign-up when the instance sends email: the same whether or not the address has an account. */
export function signUpSentPage(viewer: Viewer): string {
  return messagePage(
    viewer,
    viewer.i18n.t('account.checkEmail.title'),
    viewer.i18n.t('account.checkEmail.signUp'),
    'notice',
  );
}

const tokenOf = (value: unknown): string => (typeof value === 'string' && value.length <= 128 ? value : '');

export function accountMailPages(router: Router, kit: PageKit): void {
  const steps = createSignInSteps(kit.settings);
  const now = () => kit.clock?.() ?? new Date();
  const base = (req: Request) => baseUrlOf(req, kit.settings.publicBaseUrl, kit.settings.trustProxy);
  const invalidLink = (res: Response, viewer: Viewer) =>
    kit.send(
      res,
      404,
      messagePage(viewer, viewer.i18n.t('account.badLink.title'), viewer.i18n.t('account.badLink.text')),
    );

  router.get(
    '/users/password/new',
    kit.pageRoute('/users/password/new', async (_req, res, v) => {
      if (!kit.web().accountMail) return kit.send(res, 200, noMail(v.viewer, kit.settings.env));
      kit.send(res, 200, forgotPage(v.viewer));
    }),
  );

  router.post(
    '/users/password/new',
    kit.pageRoute('/users/password/new', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      const mail = kit.web().accountMail;
      if (!mail) return kit.send(res, 200, noMail(v.viewer, kit.settings.env));
      const email = field(form, 'email');
      try {
        await mail.requestReset(
          email,
          base(req),
          actorOf(req, null, kit.settings.trustProxy).ip,
          now(),
          v.viewer.i18n.locale,
        );
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
        return kit.send(res, 422, forgotPage(v.viewer, { email, error: v.viewer.i18n.t('account.forgot.enterEmail') }));
      }
      kit.send(
        res,
        200,
        messagePage(
          v.viewer,
          v.viewer.i18n.t('account.checkEmail.title'),
          v.viewer.i18n.t('account.checkEmail.reset'),
          'notice',
        ),
      );
    }),
  );

  router.get(
    '/users/password/edit',
    kit.pageRoute('/users/password/edit', async (req, res, v) => {
      const token = tokenOf(req.query.token);
      const mail = kit.web().accountMail;
      if (!mail || !(await mail.resetValid(token, now()))) return invalidLink(res, v.viewer);
      kit.send(res, 200, resetPage(v.viewer, token));
    }),
  );

  router.post(
    '/users/password/edit',
    kit.pageRoute('/users/password/edit', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      const token = tokenOf(field(form, 'token'));
      const mail = kit.web().accountMail;
      if (!mail) return invalidLink(res, v.viewer);
      const revokeCredentials = field(form, 'revoke_credentials') === 'on';
      let done: Awaited<ReturnType<typeof mail.reset>>;
      try {
        const options = { revokeCredentials, locale: v.viewer.i18n.locale };
        done = await mail.reset(token, field(form, 'password'), base(req), options, now());
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'validation_failed')
          return kit.send(
            res,
            422,
            resetPage(
              v.viewer,
              token,
              fieldTexts(v.viewer.i18n, error.details.fields, error.details.advice),
              fieldsLine(v.viewer.i18n, error, false),
              revokeCredentials,
            ),
          );
        if (error.code === 'not_found') return invalidLink(res, v.viewer);
        throw error;
      }
      kit.send(
        res,
        200,
        messagePage(
          v.viewer,
          v.viewer.i18n.t('account.passwordChanged.title'),
          [
            v.viewer.i18n.t('account.passwordChanged.text'),
            ...(done.revoked ? [revokedText(v.viewer.i18n, done.revoked)] : []),
            ...(done.claimed ? [claimText(v.viewer.i18n, done.claimed)] : []),
          ].join(' '),
          'notice',
        ),
      );
    }),
  );

  router.get(
    '/users/confirm',
    kit.pageRoute('/users/confirm', async (req, res, v) => {
      const token = tokenOf(req.query.token);
      if (!kit.web().accountMail || token === '') return invalidLink(res, v.viewer);
      kit.send(res, 200, confirmPage(v.viewer, token));
    }),
  );

  router.post(
    '/users/confirm',
    kit.pageRoute('/users/confirm', async (req, res, v) => {
      const form = await kit.postedForm(req, v);
      const mail = kit.web().accountMail;
      if (!mail) return invalidLink(res, v.viewer);
      try {
        const user = await mail.confirm(tokenOf(field(form, 'token')), now());
        // As after a password sign-in: a second factor first where the instance requires one.
        await afterPassword(kit, steps, req, res, user, '/');
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'not_found') throw error;
        kit.send(
          res,
          404,
          messagePage(v.viewer, v.viewer.i18n.t('account.badLink.title'), errorText(v.viewer.i18n, error)),
        );
      }
    }),
  );
}
