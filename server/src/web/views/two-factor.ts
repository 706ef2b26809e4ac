/** Two-factor sign-in: the settings page, the enrolment (QR code and secret), the recovery codes and the code step. */
import { html, htmlMessage } from '../html.js';
import { csrfField, page, type Viewer } from './layout.js';

const errorLine = (error?: string) =>
  error ? html`<p class="error" role="alert" id="form-error">${error}</p>` : html``;

export function twoFactorPage(
  viewer: Viewer,
  state: { enabled: boolean; recoveryCodesLeft: number; required: boolean; error?: string; notice?: string },
): string {
  const { t } = viewer.i18n;
  const body = state.enabled
    ? html`<p>${htmlMessage(viewer.i18n, 'twoFactor.on.text', { on: html`<strong>${t('twoFactor.on.word')}</strong>`, count: state.recoveryCodesLeft })}</p>
<form method="post" action="/users/two_factor/recovery_codes" class="card" novalidate aria-labelledby="renew-title">
  ${csrfField(viewer)}
  <h2 id="renew-title">${t('twoFactor.renew.title')}</h2>
  <p class="hint" id="renew-hint">${t('twoFactor.renew.hint')}</p>
  <label for="renew-code">${t('twoFactor.code')}</label>
  <input type="text" id="renew-code" name="code" inputmode="text" autocomplete="one-time-code" required aria-describedby="renew-hint">
  <button type="submit">${t('twoFactor.renew.submit')}</button>
</form>
${
  state.required
    ? html`<p class="hint">${t('twoFactor.required.hint')}</p>`
    : html`<form method="post" action="/users/two_factor/disable" class="card" novalidate>
  ${csrfField(viewer)}
  <label for="code">${t('twoFactor.code')}</label>
  <input type="text" id="code" name="code" inputmode="text" autocomplete="one-time-code" required>
  <button type="submit" class="danger">${t('twoFactor.disable')}</button>
</form>`
}`
    : html`<p>${htmlMessage(viewer.i18n, 'twoFactor.off.text', { off: html`<strong>${t('twoFactor.off.word')}</strong>` })}</p>
<form method="post" action="/users/two_factor/setup">
  ${csrfField(viewer)}
  <button type="submit">${t('twoFactor.setup.title')}</button>
</form>`;
  return page({
    title: t('twoFactor.title'),
    viewer,
    body: html`<h1>${t('twoFactor.title')}</h1>
${state.notice ? html`<p class="success" role="status">${state.notice}</p>` : ''}
${errorLine(state.error)}
<div class="card">${body}</div>
<p class="hint">${t('twoFactor.tokensUnaffected')}</p>`,
  });
}

export function setupPage(viewer: Viewer, state: { secret: string; uri: string; error?: string; required: boolean }) {
  const { t } = viewer.i18n;
  return page({
    title: t('twoFactor.setup.title'),
    viewer,
    scripts: ['vendor/qrcode.js', 'two-factor.js'],
    messages: ['js.twoFactor.'],
    body: html`<h1>${t('twoFactor.setup.title')}</h1>
${state.required ? html`<p class="notice">${t('twoFactor.setup.required')}</p>` : ''}
${errorLine(state.error)}
<div class="card">
  <p>${t('twoFactor.setup.scan')}</p>
  <div id="otpauth-qr" class="qr" data-otpauth="${state.uri}" aria-hidden="true"></div>
  <p>${t('twoFactor.setup.key')} <code class="secret" id="totp-secret">${state.secret.match(/.{1,4}/g)!.join(' ')}</code></p>
  <form method="post" action="/users/two_factor/confirm" novalidate>
    ${csrfField(viewer)}
    <label for="code">${t('twoFactor.setup.code')}</label>
    <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required>
    <button type="submit">${t('twoFactor.setup.submit')}</button>
  </form>
</div>`,
  });
}

/** The recovery codes, shown this once: after enrolment, or `renewed` (the earlier codes no longer work). */
export function recoveryCodesPage(
  viewer: Viewer,
  codes: string[],
  next: string,
  why: 'enrolled' | 'renewed' = 'enrolled',
) {
  const { t } = viewer.i18n;
  return page({
    title: t('twoFactor.codes.pageTitle'),
    viewer,
    body: html`<h1>${t(why === 'renewed' ? 'twoFactor.renew.title' : 'twoFactor.codes.onTitle')}</h1>
<div class="card" aria-labelledby="codes-title">
  <h2 id="codes-title" tabindex="-1">${t('twoFactor.codes.title', { why })}</h2>
  ${why === 'renewed' ? html`<p class="notice" role="status" id="codes-replaced">${t('twoFactor.codes.replaced')}</p>` : ''}
  <p class="success">${t('twoFactor.codes.keep')}</p>
  <ul id="recovery-codes" class="codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
</div>
<p><a href="${next}">${t('twoFactor.codes.continue')}</a></p>`,
  });
}

export function verifyPage(viewer: Viewer, state: { error?: string } = {}): string {
  const { t } = viewer.i18n;
  return page({
    title: t('twoFactor.title'),
    viewer,
    body: html`<h1>${t('twoFactor.verify.title')}</h1>
${errorLine(state.error)}
<form method="post" action="/users/two_factor/verify" class="card" novalidate>
  ${csrfField(viewer)}
  <label for="code">${t('twoFactor.verify.code')}</label>
  <input type="text" id="code" name="code" autocomplete="one-time-code" required autofocus>
  <button type="submit">${t('account.signIn.submit')}</button>
</form>
<p><a href="/users/sign_in">${t('twoFactor.verify.again')}</a></p>`,
  });
}
