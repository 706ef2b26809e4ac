/**
 * The recipient page, rendered from the push's state only (never its secret): the secret is fetched by
 * /assets/recipient.js when the person acts, so a GET of this page consumes nothing. The script fetches it through
 * the API (`reveal: 'api'`, anonymous visitors of an open instance) or through the page's own POST step
 * (`reveal: 'web'`, signed-in visitors: the session is the credential, the CSRF token goes in a header).
 *
 * An end-to-end encrypted push (`client_encryption`) is decrypted by the script with the key in the link's fragment
 * (the SDK's own code, /assets/vendor/secret-push-e2e.js); a link without its key, or a browser without WebCrypto, is
 * told so before anything is fetched, so no view is spent.
 */
import type { Push } from '../../core.js';
import { html, htmlMessage } from '../html.js';
import { page, type Viewer } from './layout.js';
import { accessForms, type AccessFormState } from './recipient-access.js';

export interface RecipientOptions {
  retrievalPage: boolean;
  /** How the script opens and deletes the secret: the API without credentials, or POST /p/{token}/reveal|delete. */
  reveal: 'api' | 'web';
  /** A push for specific people that this visitor has not shown to be one of (issue 42): the code forms first. */
  access?: AccessFormState;
}

export function recipientPage(viewer: Viewer, push: Push, opts: RecipientOptions): string {
  // Fetch on load only when nothing stands between the link and the secret: no retrieval step, no passphrase.
  const auto = !push.retrieval_step && !push.passphrase_protected && !opts.retrievalPage && !opts.access;
  const { t } = viewer.i18n;
  const gone = html`<section id="gone" class="card"${push.expired ? '' : html` hidden`} aria-labelledby="gone-title">
  <h1 id="gone-title" tabindex="-1">${t('recipient.gone.title')}</h1>
  <p id="gone-text">${t('recipient.gone.text')}</p>
</section>`;
  if (push.expired) {
    return page({ title: t('recipient.gone.pageTitle'), viewer, bare: true, body: gone });
  }
  const marker = push.client_encryption;
  const scripts = [
    ...(push.kind === 'qr' ? ['vendor/qrcode.js'] : []),
    ...(marker ? ['vendor/secret-push-e2e.js'] : []),
    // Before recipient.js reads the fragment: puts back a key kept across a sign-in (single sign-on, second factor).
    'keep-fragment.js',
    'recipient.js',
  ];
  return page({
    title: t('recipient.pageTitle'),
    viewer,
    bare: true,
    scripts,
    messages: ['js.recipient.', 'js.apiError.'],
    body: html`<section id="push" class="card" data-token="${push.url_token}" data-auto="${auto ? 'true' : 'false'}" data-reveal="${opts.reveal}"${opts.reveal === 'web' ? html` data-csrf="${viewer.csrf}"` : ''}${marker ? html` data-e2e="${marker.scheme}:${marker.version}"` : ''} aria-labelledby="push-title">
  <h1 id="push-title">${t('recipient.title')}</h1>
  ${marker ? html`<p class="muted" id="e2e-note">${t('recipient.e2eNote')}</p>` : ''}
  <p id="push-error" class="error" role="alert" hidden></p>
  ${
    opts.access
      ? accessForms(viewer, push, opts.access)
      : push.passphrase_protected
        ? html`<form id="passphrase-form" novalidate>
    <label for="passphrase">${t('recipient.passphrase.label')}</label>
    <input type="password" id="passphrase" name="passphrase" autocomplete="off" required aria-describedby="passphrase-hint">
    <p class="hint" id="passphrase-hint">${t(marker ? 'recipient.passphrase.hintE2e' : 'recipient.passphrase.hint')}</p>
    <button type="submit">${t('recipient.reveal')}</button>
  </form>`
        : auto
          ? html`<p class="muted" id="auto-note">${t('recipient.opening')}</p>`
          : html`<div id="reveal-step">
    <p>${t('recipient.revealStep')}</p>
    <button type="button" id="reveal">${t('recipient.reveal')}</button>
  </div>`
  }
  <p id="loading" class="muted" hidden>${t('recipient.loading')}</p>
  ${
    // The code forms work without a script, except for a secret only the page's script can decrypt.
    opts.access && !marker ? '' : html`<noscript><p class="error">${t('recipient.noscript')}</p></noscript>`
  }
</section>
<section id="revealed" class="card" hidden aria-labelledby="revealed-title">
  <h1 id="revealed-title" tabindex="-1">${t('recipient.revealed.title')}</h1>
  <div id="secret-content"></div>
  <p id="expiry-info" class="muted"></p>
  <div id="delete-area" hidden>
    <button type="button" class="danger" id="delete-now">${t('recipient.deleteNow')}</button>
    <p class="hint">${t('recipient.deleteHint')}</p>
    <p id="delete-status" role="status"></p>
  </div>
</section>
${gone}`,
  });
}

/**
 * What a signed-out visitor of a closed instance (PWPUSH_ALLOW_ANONYMOUS=false) sees at a recipient link: a prompt to
 * sign in and come back. It says nothing about the push (not even whether it exists); its one script carries the
 * link's fragment (an end-to-end encrypted secret's key) onto the sign-in links, so the key comes back with it.
 */
export function signInRequiredPage(viewer: Viewer, next: string): string {
  const back = encodeURIComponent(next);
  const { t } = viewer.i18n;
  const signIn = html`<a class="button" id="sign-in-link" href="/users/sign_in?next=${back}" data-keep-fragment>${t('recipient.signIn.link')}</a>`;
  const signUp = html`<a href="/users/sign_up?next=${back}" data-keep-fragment>${t('recipient.signIn.signUpLink')}</a>`;
  return page({
    title: t('recipient.signIn.title'),
    viewer,
    bare: true,
    scripts: ['keep-fragment.js'],
    body: html`<section id="sign-in-required" class="card" aria-labelledby="sign-in-title">
  <h1 id="sign-in-title">${t('recipient.signIn.title')}</h1>
  <p>${t('recipient.signIn.text')}</p>
  <p>${
    viewer.signupsEnabled
      ? htmlMessage(viewer.i18n, 'recipient.signIn.nextOrSignUp', { signIn, signUp })
      : htmlMessage(viewer.i18n, 'recipient.signIn.next', { signIn })
  }</p>
</section>`,
  });
}
