/** Two-factor sign-in: the settings page, the enrolment (QR code and secret), the recovery codes and the code step. */
import { html } from '../html.js';
import { csrfField, page, type Viewer } from './layout.js';

const errorLine = (error?: string) =>
  error ? html`<p class="error" role="alert" id="form-error">${error}</p>` : html``;

export function twoFactorPage(
  viewer: Viewer,
  state: { enabled: boolean; recoveryCodesLeft: number; required: boolean; error?: string; notice?: string },
): string {
  const body = state.enabled
    ? html`<p>Two-factor sign-in is <strong>on</strong>: after your password, this instance asks for a code from your authenticator app (or one of your recovery codes). You have ${String(state.recoveryCodesLeft)} unused recovery code${state.recoveryCodesLeft === 1 ? '' : 's'}.</p>
<form method="post" action="/users/two_factor/recovery_codes" class="card" novalidate aria-labelledby="renew-title">
  ${csrfField(viewer)}
  <h2 id="renew-title">New recovery codes</h2>
  <p class="hint" id="renew-hint">Running low, or afraid someone saw them? Ten new codes replace all of your codes: the old ones stop working at once.</p>
  <label for="renew-code">Code from your app, or a recovery code</label>
  <input type="text" id="renew-code" name="code" inputmode="text" autocomplete="one-time-code" required aria-describedby="renew-hint">
  <button type="submit">Make new recovery codes</button>
</form>
${
  state.required
    ? html`<p class="hint">This instance requires two-factor sign-in: it cannot be turned off.</p>`
    : html`<form method="post" action="/users/two_factor/disable" class="card" novalidate>
  ${csrfField(viewer)}
  <label for="code">Code from your app, or a recovery code</label>
  <input type="text" id="code" name="code" inputmode="text" autocomplete="one-time-code" required>
  <button type="submit" class="danger">Turn two-factor sign-in off</button>
</form>`
}`
    : html`<p>Two-factor sign-in is <strong>off</strong>. Turn it on to be asked for a code from an authenticator app (any app for TOTP codes) after your password.</p>
<form method="post" action="/users/two_factor/setup">
  ${csrfField(viewer)}
  <button type="submit">Set up two-factor sign-in</button>
</form>`;
  return page({
    title: 'Two-factor sign-in',
    viewer,
    body: html`<h1>Two-factor sign-in</h1>
${state.notice ? html`<p class="success" role="status">${state.notice}</p>` : ''}
${errorLine(state.error)}
<div class="card">${body}</div>
<p class="hint">API tokens are not affected: a token is a credential of its own.</p>`,
  });
}

export function setupPage(viewer: Viewer, state: { secret: string; uri: string; error?: string; required: boolean }) {
  return page({
    title: 'Set up two-factor sign-in',
    viewer,
    scripts: ['vendor/qrcode.js', 'two-factor.js'],
    body: html`<h1>Set up two-factor sign-in</h1>
${state.required ? html`<p class="notice">This instance requires a second factor: set it up to finish signing in.</p>` : ''}
${errorLine(state.error)}
<div class="card">
  <p>Scan this QR code with your authenticator app, or type the key into it.</p>
  <div id="otpauth-qr" class="qr" data-otpauth="${state.uri}" aria-hidden="true"></div>
  <p>Key: <code class="secret" id="totp-secret">${state.secret.match(/.{1,4}/g)!.join(' ')}</code></p>
  <form method="post" action="/users/two_factor/confirm" novalidate>
    ${csrfField(viewer)}
    <label for="code">The 6-digit code the app shows</label>
    <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required>
    <button type="submit">Turn on</button>
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
  return page({
    title: 'Recovery codes',
    viewer,
    body: html`<h1>${why === 'renewed' ? 'New recovery codes' : 'Two-factor sign-in is on'}</h1>
<div class="card" aria-labelledby="codes-title">
  <h2 id="codes-title" tabindex="-1">Your ${why === 'renewed' ? 'new ' : ''}recovery codes</h2>
  ${why === 'renewed' ? html`<p class="notice" role="status" id="codes-replaced">Your earlier recovery codes no longer work, used or not.</p>` : ''}
  <p class="success">Keep them somewhere safe now: they are shown only this once. Each one signs you in once, instead of a code, if you lose your device.</p>
  <ul id="recovery-codes" class="codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
</div>
<p><a href="${next}">Continue</a></p>`,
  });
}

export function verifyPage(viewer: Viewer, state: { error?: string } = {}): string {
  return page({
    title: 'Two-factor sign-in',
    viewer,
    body: html`<h1>Enter your code</h1>
${errorLine(state.error)}
<form method="post" action="/users/two_factor/verify" class="card" novalidate>
  ${csrfField(viewer)}
  <label for="code">Code from your authenticator app, or a recovery code</label>
  <input type="text" id="code" name="code" autocomplete="one-time-code" required autofocus>
  <button type="submit">Sign in</button>
</form>
<p><a href="/users/sign_in">Start again</a></p>`,
  });
}
