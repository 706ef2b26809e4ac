/** Sign-in, sign-up and the API token page. */
import type { ApiKey, ApiKeyCreated } from '@secret-push/sdk/generated';
import { API_KEY_SCOPES } from '@secret-push/rules';
import type { Translator } from '../../i18n/i18n.js';
import { html, htmlMessage } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';

export interface AccountFormState {
  email?: string;
  next?: string;
  error?: string;
  fields?: Record<string, string[]>;
  /** The single sign-on provider's name: a "Sign in with …" button. */
  provider?: string;
  /** Password sign-in is off (PWPUSH_OIDC_ONLY): only the button. */
  passwordOff?: boolean;
}

export function providerButton(viewer: Viewer, state: Pick<AccountFormState, 'provider' | 'next'>) {
  if (!state.provider) return html``;
  // The key of a secret's link is kept in this tab's sessionStorage, not in the form's action: the trip through the
  // provider would drop it from any address anyway (keep-fragment.js).
  return html`<form method="post" action="/users/oidc/start" class="card sso" data-keep-fragment="storage-only">
  ${csrfField(viewer)}
  <input type="hidden" name="next" value="${state.next ?? ''}">
  <button type="submit">${viewer.i18n.t('account.signIn.withProvider', { provider: state.provider })}</button>
</form>`;
}

export function signInPage(viewer: Viewer, state: AccountFormState = {}): string {
  const { t } = viewer.i18n;
  return page({
    title: t('account.signIn.title'),
    viewer,
    // Back to a secret's link after sign-in with its fragment (the key of an end-to-end encrypted secret).
    scripts: ['keep-fragment.js'],
    body: html`<h1>${t('account.signIn.title')}</h1>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
${providerButton(viewer, state)}
${
  state.passwordOff
    ? ''
    : html`<form method="post" action="/users/sign_in" class="card" novalidate data-keep-fragment>
  ${csrfField(viewer)}
  <input type="hidden" name="next" value="${state.next ?? ''}">
  <label for="email">${t('account.email')}</label>
  <input type="email" id="email" name="email" autocomplete="username" required value="${state.email ?? ''}">
  <label for="password">${t('account.password')}</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required>
  <button type="submit">${t('account.signIn.submit')}</button>
</form>
<p><a href="/users/password/new">${t('account.forgot.title')}</a></p>`
}
${viewer.signupsEnabled ? html`<p>${htmlMessage(viewer.i18n, 'account.signIn.noAccount', { signUp: html`<a href="/users/sign_up">${t('account.signIn.signUpLink')}</a>` })}</p>` : ''}`,
  });
}

export function signUpPage(viewer: Viewer, state: AccountFormState = {}, passwordMin = 12): string {
  const f = state.fields;
  const { t } = viewer.i18n;
  return page({
    title: t('account.signUp.pageTitle'),
    viewer,
    scripts: ['keep-fragment.js'],
    body: html`<h1>${t('account.signUp.title')}</h1>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
<form method="post" action="/users/sign_up" class="card" novalidate data-keep-fragment>
  ${csrfField(viewer)}
  <input type="hidden" name="next" value="${state.next ?? ''}">
  <label for="email">${t('account.email')}</label>
  <input type="email" id="email" name="email" autocomplete="username" required value="${state.email ?? ''}"${describedBy(f, 'email')}>
  ${fieldErrors(f, 'email')}
  <label for="password">${t('account.password')}</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${passwordMin}"${describedBy(f, 'password', 'password-hint')}>
  <p class="hint" id="password-hint">${t('account.signUp.passwordHint', { min: passwordMin })}</p>
  ${fieldErrors(f, 'password')}
  <button type="submit">${t('account.signUp.submit')}</button>
</form>
<p>${htmlMessage(viewer.i18n, 'account.signUp.haveAccount', { signIn: html`<a href="/users/sign_in">${t('account.signUp.signInLink')}</a>` })}</p>`,
  });
}

export interface TokenState {
  hasToken: boolean;
  createdAt: string | null;
  /** The token just made: shown this once, never again. */
  fresh?: string;
  /** The account's API keys (never their tokens). */
  keys?: readonly ApiKey[];
  /** A key just made, with its token: shown this once. */
  freshKey?: ApiKeyCreated;
  /** Why the key form was refused. */
  keyError?: string;
}

/** Lifetimes the key form offers, in days (none: until revoked). */
export const KEY_LIFETIMES_DAYS = [7, 30, 90, 365] as const;

const when = (t: Translator['t'], at: string | null) =>
  at ? html`<time datetime="${at}">${at.slice(0, 16).replace('T', ' ')} UTC</time>` : t('apiKeys.never');

function apiKeysCard(viewer: Viewer, state: TokenState) {
  const keys = state.keys ?? [];
  const { t } = viewer.i18n;
  const fresh = state.freshKey
    ? html`<div class="card" aria-labelledby="fresh-key-title">
  <h2 id="fresh-key-title" tabindex="-1">${t('apiKeys.fresh.title', { name: state.freshKey.name })}</h2>
  <p class="success">${t('apiKeys.fresh.once')}</p>
  <p><code class="share secret" id="api-key-token">${state.freshKey.token}</code></p>
  <button type="button" data-copy-target="api-key-token">${t('apiKeys.fresh.copy')}</button>
</div>`
    : '';
  const rows = keys.map(
    (k) => html`<tr>
  <td>${k.name}</td>
  <td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td>
  <td>${when(t, k.created_at)}</td>
  <td>${when(t, k.expires_at)}</td>
  <td>${when(t, k.last_used_at)}</td>
  <td><form method="post" action="/users/token/keys/${k.id}/revoke">
    ${csrfField(viewer)}
    <button type="submit" class="danger">${t('apiKeys.revoke')}</button>
  </form></td>
</tr>`,
  );
  const list =
    keys.length > 0
      ? html`<table class="keys">
  <thead><tr><th>${t('apiKeys.name')}</th><th>${t('apiKeys.scopes')}</th><th>${t('apiKeys.made')}</th><th>${t('apiKeys.expires')}</th><th>${t('apiKeys.lastUsed')}</th><th></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
      : html`<p>${t('apiKeys.none')}</p>`;
  return html`${fresh}
<div class="card" aria-labelledby="keys-title">
  <h2 id="keys-title">${t('apiKeys.title')}</h2>
  <p class="hint">${htmlMessage(viewer.i18n, 'apiKeys.hint', { scope: html`<code>pushes:create</code>` })}</p>
  ${list}
  <h3>${t('apiKeys.make')}</h3>
  ${state.keyError ? html`<p class="error" role="alert">${state.keyError}</p>` : ''}
  <form method="post" action="/users/token/keys">
    ${csrfField(viewer)}
    <label for="key-name">${t('apiKeys.name')}</label>
    <input id="key-name" name="name" required maxlength="100">
    <fieldset><legend>${t('apiKeys.scopes')}</legend>
    ${API_KEY_SCOPES.map(
      (s) => html`<label><input type="checkbox" name="scopes" value="${s}"> <code>${s}</code></label> `,
    )}
    </fieldset>
    <label for="key-expiry">${t('apiKeys.expires')}</label>
    <select id="key-expiry" name="expires_in_days">
      ${KEY_LIFETIMES_DAYS.map((d) => html`<option value="${d}"${d === 90 ? html` selected` : ''}>${t('apiKeys.inDays', { days: d })}</option>`)}
      <option value="never">${t('apiKeys.neverRevoked')}</option>
    </select>
    <button type="submit">${t('apiKeys.make')}</button>
  </form>
</div>`;
}

export function tokenPage(viewer: Viewer, state: TokenState): string {
  const { t } = viewer.i18n;
  const fresh = state.fresh
    ? html`<div class="card" aria-labelledby="fresh-title">
  <h2 id="fresh-title" tabindex="-1">${t('token.fresh.title')}</h2>
  <p class="success">${t('token.fresh.once')}</p>
  <p><code class="share secret" id="api-token">${state.fresh}</code></p>
  <button type="button" data-copy-target="api-token">${t('token.fresh.copy')}</button>
</div>`
    : '';
  const status = state.hasToken
    ? html`<p>${
        state.createdAt
          ? htmlMessage(viewer.i18n, 'token.hasMadeOn', {
              when: html`<time datetime="${state.createdAt}">${state.createdAt.slice(0, 16).replace('T', ' ')} UTC</time>`,
            })
          : t('token.has')
      }</p>`
    : html`<p>${t('token.none')}</p>`;
  return page({
    title: t('token.title'),
    viewer,
    body: html`<h1>${t('token.title')}</h1>
${fresh}
<div class="card">
  ${status}
  <p class="hint">${htmlMessage(viewer.i18n, 'token.hint', { header: html`<code>Authorization: Bearer &lt;token&gt;</code>`, api: html`<a href="/help/api">${t('token.api')}</a>` })}</p>
  <form method="post" action="/users/token">
    ${csrfField(viewer)}
    <button type="submit"${state.hasToken ? html` class="danger"` : ''}>${t(state.hasToken ? 'token.makeNew' : 'token.make')}</button>
  </form>
</div>
${apiKeysCard(viewer, state)}
<div class="card" aria-labelledby="everywhere-title">
  <h2 id="everywhere-title">${t('token.everywhere.title')}</h2>
  <p>${t('token.everywhere.text')}</p>
  <form method="post" action="/users/sign_out_everywhere">
    ${csrfField(viewer)}
    <label class="check"><input type="checkbox" name="revoke_credentials" value="on" checked> ${t('token.everywhere.revoke')}</label>
    <button type="submit" class="danger">${t('token.everywhere.submit')}</button>
  </form>
</div>`,
  });
}

/**
 * A step to the single sign-on provider (sign-in, or its logout): a refresh to its URL, with a link for browsers that
 * do not follow it. A redirect would not do: the pages' CSP (`form-action 'self'`) forbids a form post to be
 * redirected to another site.
 */
export function providerStepPage(viewer: Viewer, title: string, provider: string, url: string): string {
  return page({
    title,
    viewer,
    head: html`<meta http-equiv="refresh" content="0;url=${url}">`,
    body: html`<h1>${title}</h1>
<p>${htmlMessage(viewer.i18n, 'account.providerStep.text', { provider, continue: html`<a href="${url}" id="provider-link">${viewer.i18n.t('account.providerStep.continue')}</a>` })}</p>`,
  });
}
