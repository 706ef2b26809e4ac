/**
 * Who may open it (issue 42), on the recipient's page: the forms a push for specific people shows before its secret
 * (ask for a code by email, enter it; or sign in at the single sign-on provider as one of the addresses), the page of
 * a network that may not open a push, and the secret as the server shows it to a browser without JavaScript.
 *
 * The forms are plain POST forms (no script needed; keyboard-only like any form): `/p/{token}/access_code` answers
 * with a redirect back to the page (`?code_sent=1`), `/p/{token}/open` with the secret itself (it cannot be fetched
 * again by a GET: a view is spent once). With JavaScript, recipient.js sends the code form itself, through the same
 * step as the reveal, so an end-to-end encrypted secret is decrypted in the page. The page never lists the addresses.
 */
import { ACCESS_CODE_SECONDS } from '@secret-push/rules';
import type { Push, PushRetrieval } from '@secret-push/sdk/generated';
import { html, type Html } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';

/** What the code forms show: what was typed, an answer to the last form, which ways of proof the instance has. */
export interface AccessFormState {
  /** An SMTP relay is set: codes can be emailed. */
  codes: boolean;
  /** The single sign-on provider's name, when one is set and the visitor is not signed in there. */
  provider: string | null;
  /** The address of a visitor signed in at the provider (not one of the push's, or the page would not ask). */
  signedInAs?: string | null;
  /** A code was asked for (the redirect after the request form). */
  codeSent?: boolean;
  email?: string;
  /** The code the visitor typed, kept when only the passphrase was wrong (the code is not used up then). */
  code?: string;
  /** Errors of the fields (`email`, `access_code`, `passphrase`), shown next to them. */
  fields?: Record<string, string[]>;
  /** An error of the whole step (too many attempts), shown at the top. */
  error?: string;
}

function secretPath(push: Push): string {
  return `/p/${encodeURIComponent(push.url_token)}`;
}

/** The hidden fields every form of the page sends: the CSRF token, and the way back (keep-fragment.js reads it). */
function hidden(viewer: Viewer, push: Push): Html {
  return html`${csrfField(viewer)}<input type="hidden" name="next" value="${secretPath(push)}">`;
}

function requestForm(viewer: Viewer, push: Push, state: AccessFormState): Html {
  const { t } = viewer.i18n;
  const errors = state.fields;
  return html`<form method="post" action="${secretPath(push)}/access_code" id="code-request-form" data-keep-fragment novalidate>
    ${hidden(viewer, push)}
    <label for="access-email">${t('recipient.access.emailLabel')}</label>
    <input type="email" id="access-email" name="email" autocomplete="email" required maxlength="254" value="${state.email ?? ''}"${describedBy(errors, 'email', 'access-email-hint')}>
    ${fieldErrors(errors, 'email')}
    <p class="hint" id="access-email-hint">${t('recipient.access.emailHint')}</p>
    <button type="submit"${state.codeSent ? html` class="secondary"` : ''}>${t('recipient.access.send')}</button>
  </form>`;
}

function codeForm(viewer: Viewer, push: Push, state: AccessFormState): Html {
  const { t } = viewer.i18n;
  const errors = state.fields;
  return html`<form method="post" action="${secretPath(push)}/open" id="code-form" data-keep-fragment novalidate>
    ${hidden(viewer, push)}
    <label for="access_code">${t('recipient.access.codeLabel')}</label>
    <input type="text" id="access_code" name="access_code" inputmode="numeric" autocomplete="one-time-code" required maxlength="32" value="${state.code ?? ''}"${describedBy(errors, 'access_code', 'access-code-hint')}>
    ${fieldErrors(errors, 'access_code')}
    <p class="hint" id="access-code-hint">${t('recipient.access.codeHint')}</p>
    ${
      push.passphrase_protected
        ? html`<label for="passphrase">${t('recipient.passphrase.label')}</label>
    <input type="password" id="passphrase" name="passphrase" autocomplete="off" required${describedBy(errors, 'passphrase', 'passphrase-hint')}>
    ${fieldErrors(errors, 'passphrase')}
    <p class="hint" id="passphrase-hint">${t('recipient.passphrase.hint')}</p>`
        : ''
    }
    <button type="submit">${t('recipient.reveal')}</button>
  </form>`;
}

function providerForm(viewer: Viewer, push: Push, provider: string, alone: boolean): Html {
  const { t } = viewer.i18n;
  // As the sign-in page's button: the key of an end-to-end encrypted link waits in this tab (keep-fragment.js).
  return html`<form method="post" action="/users/oidc/start" id="sso-form" data-keep-fragment="storage-only">
    ${hidden(viewer, push)}
    ${alone ? '' : html`<p>${t('recipient.access.ssoText', { provider })}</p>`}
    <button type="submit"${alone ? '' : html` class="secondary"`}>${t('recipient.access.ssoButton', { provider })}</button>
  </form>`;
}

/** The part of the page that stands between a push for specific people and its secret. */
export function accessForms(viewer: Viewer, push: Push, state: AccessFormState): Html {
  const { t } = viewer.i18n;
  const minutes = ACCESS_CODE_SECONDS / 60;
  return html`<div id="access-step">
  <p id="access-intro">${
    state.codes
      ? t('recipient.access.intro')
      : state.provider
        ? t('recipient.access.introSso', { provider: state.provider })
        : t('recipient.access.notListed', { email: state.signedInAs ?? '' })
  }</p>
  ${state.error ? html`<p class="error" role="alert" id="access-error">${state.error}</p>` : ''}
  ${state.codeSent ? html`<p class="notice" role="status" id="code-sent">${t('recipient.access.sent', { minutes })}</p>` : ''}
  ${state.codes ? html`${requestForm(viewer, push, state)}${codeForm(viewer, push, state)}` : ''}
  ${state.provider ? providerForm(viewer, push, state.provider, !state.codes) : ''}
</div>`;
}

/** A visitor whose network the push's `allowed_networks` leave out: said at once, nothing fetched or spent. */
export function networkRefusedPage(viewer: Viewer): string {
  const { t } = viewer.i18n;
  return page({
    title: t('recipient.network.title'),
    viewer,
    bare: true,
    body: html`<section id="network-refused" class="card" aria-labelledby="network-title">
  <h1 id="network-title">${t('recipient.network.title')}</h1>
  <p class="error" role="alert">${t('recipient.network.text')}</p>
</section>`,
  });
}

/**
 * The secret, as the answer to the code form sent without JavaScript: text in a `<pre>`, a URL as a link, a QR code's
 * text, files as their download links. Never cached (the page headers' `no-store`).
 */
export function openedPage(viewer: Viewer, push: PushRetrieval): string {
  const { t } = viewer.i18n;
  const payload = typeof push.payload === 'string' ? push.payload : '';
  const files = push.files ?? [];
  const value =
    push.kind === 'url' && /^https?:\/\//i.test(payload)
      ? html`<p><a href="${payload}" rel="noopener noreferrer" id="secret-value" class="share">${payload}</a></p>`
      : payload !== '' || push.kind !== 'file'
        ? html`<pre class="secret" id="secret-value" tabindex="0">${payload}</pre>`
        : '';
  const list =
    files.length > 0
      ? html`<h2>${t('js.recipient.filesHeading', { count: files.length })}</h2>
  <ul class="files">${files.map((f) => html`<li><a href="${f.url}" rel="noopener noreferrer">${f.filename}</a></li>`)}</ul>
  <p class="muted">${t('js.recipient.downloadWindow')}</p>`
      : '';
  return page({
    title: t('recipient.revealed.title'),
    viewer,
    bare: true,
    body: html`<section id="revealed" class="card" aria-labelledby="revealed-title">
  <h1 id="revealed-title">${t('recipient.revealed.title')}</h1>
  <div id="secret-content">${value}${list}</div>
  ${push.views_remaining === 0 ? html`<p class="muted" id="expiry-info">${t('js.recipient.lastView')}</p>` : ''}
</section>`,
  });
}
