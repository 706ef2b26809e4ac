/** Sign-in, sign-up and the API token page. */
import type { ApiKey, ApiKeyCreated } from '@secret-push/sdk/generated';
import { API_KEY_SCOPES } from '@secret-push/rules';
import { html } from '../html.js';
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

function providerButton(viewer: Viewer, state: AccountFormState) {
  if (!state.provider) return html``;
  // The key of a secret's link is kept in this tab's sessionStorage, not in the form's action: the trip through the
  // provider would drop it from any address anyway (keep-fragment.js).
  return html`<form method="post" action="/users/oidc/start" class="card sso" data-keep-fragment="storage-only">
  ${csrfField(viewer)}
  <input type="hidden" name="next" value="${state.next ?? ''}">
  <button type="submit">Sign in with ${state.provider}</button>
</form>`;
}

export function signInPage(viewer: Viewer, state: AccountFormState = {}): string {
  return page({
    title: 'Sign in',
    viewer,
    // Back to a secret's link after sign-in with its fragment (the key of an end-to-end encrypted secret).
    scripts: ['keep-fragment.js'],
    body: html`<h1>Sign in</h1>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
${providerButton(viewer, state)}
${
  state.passwordOff
    ? ''
    : html`<form method="post" action="/users/sign_in" class="card" novalidate data-keep-fragment>
  ${csrfField(viewer)}
  <input type="hidden" name="next" value="${state.next ?? ''}">
  <label for="email">Email</label>
  <input type="email" id="email" name="email" autocomplete="username" required value="${state.email ?? ''}">
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>
<p><a href="/users/password/new">Forgot your password?</a></p>`
}
${viewer.signupsEnabled ? html`<p>No account yet? <a href="/users/sign_up">Sign up</a>.</p>` : ''}`,
  });
}

export function signUpPage(viewer: Viewer, state: AccountFormState = {}, passwordMin = 12): string {
  const f = state.fields;
  return page({
    title: 'Sign up',
    viewer,
    scripts: ['keep-fragment.js'],
    body: html`<h1>Make an account</h1>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
<form method="post" action="/users/sign_up" class="card" novalidate data-keep-fragment>
  ${csrfField(viewer)}
  <input type="hidden" name="next" value="${state.next ?? ''}">
  <label for="email">Email</label>
  <input type="email" id="email" name="email" autocomplete="username" required value="${state.email ?? ''}"${describedBy(f, 'email')}>
  ${fieldErrors(f, 'email')}
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required minlength="${passwordMin}"${describedBy(f, 'password', 'password-hint')}>
  <p class="hint" id="password-hint">At least ${passwordMin} characters, and not easy to guess: several uncommon words, or a long random password.</p>
  ${fieldErrors(f, 'password')}
  <button type="submit">Sign up</button>
</form>
<p>Have an account? <a href="/users/sign_in">Sign in</a>.</p>`,
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

const when = (at: string | null) =>
  at ? html`<time datetime="${at}">${at.slice(0, 16).replace('T', ' ')} UTC</time>` : html`never`;

function apiKeysCard(viewer: Viewer, state: TokenState) {
  const keys = state.keys ?? [];
  const fresh = state.freshKey
    ? html`<div class="card" aria-labelledby="fresh-key-title">
  <h2 id="fresh-key-title" tabindex="-1">Your new API key “${state.freshKey.name}”</h2>
  <p class="success">Copy it now: it is shown only this once.</p>
  <p><code class="share secret" id="api-key-token">${state.freshKey.token}</code></p>
  <button type="button" data-copy-target="api-key-token">Copy the key</button>
</div>`
    : '';
  const rows = keys.map(
    (k) => html`<tr>
  <td>${k.name}</td>
  <td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td>
  <td>${when(k.created_at)}</td>
  <td>${k.expires_at ? when(k.expires_at) : 'never'}</td>
  <td>${when(k.last_used_at)}</td>
  <td><form method="post" action="/users/token/keys/${k.id}/revoke">
    ${csrfField(viewer)}
    <button type="submit" class="danger">Revoke</button>
  </form></td>
</tr>`,
  );
  const list =
    keys.length > 0
      ? html`<table class="keys">
  <thead><tr><th>Name</th><th>Scopes</th><th>Made</th><th>Expires</th><th>Last used</th><th></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
      : html`<p>You have no API keys.</p>`;
  return html`${fresh}
<div class="card" aria-labelledby="keys-title">
  <h2 id="keys-title">API keys</h2>
  <p class="hint">Keys with only the scopes a job needs (a CI job that creates pushes needs only <code>pushes:create</code>), and an expiry. Sent like the token; revoking one stops it at once.</p>
  ${list}
  <h3>Make a key</h3>
  ${state.keyError ? html`<p class="error" role="alert">${state.keyError}</p>` : ''}
  <form method="post" action="/users/token/keys">
    ${csrfField(viewer)}
    <label for="key-name">Name</label>
    <input id="key-name" name="name" required maxlength="100">
    <fieldset><legend>Scopes</legend>
    ${API_KEY_SCOPES.map(
      (s) => html`<label><input type="checkbox" name="scopes" value="${s}"> <code>${s}</code></label> `,
    )}
    </fieldset>
    <label for="key-expiry">Expires</label>
    <select id="key-expiry" name="expires_in_days">
      ${KEY_LIFETIMES_DAYS.map((d) => html`<option value="${d}"${d === 90 ? html` selected` : ''}>in ${d} days</option>`)}
      <option value="never">never (until revoked)</option>
    </select>
    <button type="submit">Make a key</button>
  </form>
</div>`;
}

export function tokenPage(viewer: Viewer, state: TokenState): string {
  const fresh = state.fresh
    ? html`<div class="card" aria-labelledby="fresh-title">
  <h2 id="fresh-title" tabindex="-1">Your new API token</h2>
  <p class="success">Copy it now: it is shown only this once. Any token you had before has stopped working.</p>
  <p><code class="share secret" id="api-token">${state.fresh}</code></p>
  <button type="button" data-copy-target="api-token">Copy the token</button>
</div>`
    : '';
  const status = state.hasToken
    ? html`<p>You have an API token${state.createdAt ? html`, made on <time datetime="${state.createdAt}">${state.createdAt.slice(0, 16).replace('T', ' ')} UTC</time>` : ''}. It is stored only as a digest, so it cannot be shown again; make a new one if you lost it.</p>`
    : html`<p>You have no API token yet.</p>`;
  return page({
    title: 'API token',
    viewer,
    body: html`<h1>API token</h1>
${fresh}
<div class="card">
  ${status}
  <p class="hint">Send it as <code>Authorization: Bearer &lt;token&gt;</code> to the <a href="/help/api">JSON API</a>.</p>
  <form method="post" action="/users/token">
    ${csrfField(viewer)}
    <button type="submit"${state.hasToken ? html` class="danger"` : ''}>${state.hasToken ? 'Make a new token (the current one stops working)' : 'Make a token'}</button>
  </form>
</div>
${apiKeysCard(viewer, state)}
<div class="card" aria-labelledby="everywhere-title">
  <h2 id="everywhere-title">Sign out everywhere</h2>
  <p>Ends every signed-in session of this account, in every browser. Signing out at the top of the page does too.</p>
  <form method="post" action="/users/sign_out_everywhere">
    ${csrfField(viewer)}
    <label class="check"><input type="checkbox" name="revoke_credentials" value="on" checked> Also revoke the API token and every API key (keep this on if someone else may have had them: scripts that use them stop working)</label>
    <button type="submit" class="danger">End every session</button>
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
<p>Taking you to ${provider}… <a href="${url}" id="provider-link">Continue</a> if nothing happens.</p>`,
  });
}
