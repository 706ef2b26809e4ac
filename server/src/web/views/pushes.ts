/** The create page, the page that shows the link to share, the owner's lists and a push's audit log. */
import { acceptedDurations, DURATION_LABELS, FIRST_DAY_DURATION, lifetimeLabel } from '@secret-push/rules';
import type { AuditEntry, Page, PushOwner, Settings } from '../../core.js';
import { html, type Html } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';

export interface CreateFormState {
  kind?: string;
  payload?: string;
  name?: string;
  expireAfterDays?: number;
  /** A lifetime under a day chosen instead of the days (`expire_after_duration` 0..5). */
  expireAfterDuration?: number;
  expireAfterViews?: number;
  retrievalStep?: boolean;
  deletableByViewer?: boolean;
  /** The "Encrypt in my browser" choice as submitted (the instance's default when the form is new). */
  encrypt?: boolean;
  error?: string;
  fields?: Record<string, string[]>;
}

type Kinds = Pick<Settings, 'enableUrlPushes' | 'enableQrPushes' | 'enableFilePushes' | 'filesRequireAuth'>;

function availableKinds(settings: Kinds, signedIn: boolean): string[] {
  const kinds = ['text'];
  if (settings.enableUrlPushes) kinds.push('url');
  if (settings.enableQrPushes) kinds.push('qr');
  if (settings.enableFilePushes && (signedIn || !settings.filesRequireAuth)) kinds.push('file');
  return kinds;
}

const KIND_LABELS: Record<string, string> = { text: 'Text', url: 'URL', qr: 'QR code', file: 'Files' };

export function createPage(viewer: Viewer, settings: Settings, state: CreateFormState = {}): string {
  const kinds = availableKinds(settings, viewer.user !== null);
  const kind = kinds.includes(state.kind ?? '') ? state.kind! : 'text';
  const f = state.fields;
  const days = state.expireAfterDays ?? settings.expireAfterDays.default;
  const views = state.expireAfterViews ?? settings.expireAfterViews.default;
  const retrieval = state.retrievalStep ?? settings.retrievalStepDefault;
  const deletable = state.deletableByViewer ?? settings.deletableByViewerDefault;
  const hasFiles = kinds.includes('file');
  const e2e = settings.clientEncryption;
  return page({
    title: 'New push',
    viewer,
    scripts: e2e.enabled ? ['vendor/secret-push-e2e.js', 'create.js'] : ['create.js'],
    body: html`<h1>Share a secret</h1>
<p class="muted">The link you get works for a limited number of days and views; then the secret is deleted.</p>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
<form method="post" action="/" enctype="multipart/form-data" id="create-form" class="card" novalidate>
  ${csrfField(viewer)}
  <fieldset>
    <legend>Kind of secret</legend>
    <div class="choices">
      ${kinds.map((k) => html`<label><input type="radio" name="kind" value="${k}"${k === kind ? html` checked` : ''}> ${KIND_LABELS[k] ?? k}</label>`)}
    </div>
    ${fieldErrors(f, 'kind')}
  </fieldset>
  <label for="payload" id="payload-label">Secret</label>
  <textarea id="payload" name="payload" autocomplete="off" spellcheck="false"${describedBy(f, 'payload', 'payload-hint')}>${state.payload ?? ''}</textarea>
  <p class="hint" id="payload-hint">Text, a URL (http or https), text for a QR code, or a message that goes with files.</p>
  ${fieldErrors(f, 'payload')}
  ${
    hasFiles
      ? html`<div id="files-field">
    <label for="files">Files</label>
    <input type="file" id="files" name="files" multiple${describedBy(f, 'files', 'files-hint')}>
    <p class="hint" id="files-hint">Up to ${settings.fileMaxCount} files of at most ${Math.floor(settings.fileMaxBytes / 1024 / 1024) || 1} MiB each.</p>
    ${fieldErrors(f, 'files')}
  </div>`
      : ''
  }
  <div class="row">
    <div>
      <label for="expire_after_days">Expire after days</label>
      <input type="number" id="expire_after_days" name="expire_after_days" min="${settings.expireAfterDays.min}" max="${settings.expireAfterDays.max}" value="${days}" required${describedBy(f, 'expire_after_days')}>
      ${fieldErrors(f, 'expire_after_days')}
    </div>
    ${shorterChoice(settings, state, f)}
    <div>
      <label for="expire_after_views">Expire after views</label>
      <input type="number" id="expire_after_views" name="expire_after_views" min="${settings.expireAfterViews.min}" max="${settings.expireAfterViews.max}" value="${views}" required${describedBy(f, 'expire_after_views')}>
      ${fieldErrors(f, 'expire_after_views')}
    </div>
  </div>
  ${e2e.enabled ? encryptChoice(e2e.required, state.encrypt ?? e2e.default, f) : ''}
  <label for="passphrase">Passphrase (optional)</label>
  <input type="password" id="passphrase" name="passphrase" autocomplete="new-password"${describedBy(f, 'passphrase', 'passphrase-hint')}>
  <p class="hint" id="passphrase-hint">The recipient must enter it; send it to them another way.${
    e2e.enabled
      ? ' The server checks it before it hands out the secret (it limits wrong guesses); it is not part of the encryption key.'
      : ''
  }</p>
  ${fieldErrors(f, 'passphrase')}
  ${
    viewer.user
      ? html`<label for="name">Name (only you see it)</label>
  <input type="text" id="name" name="name" maxlength="1024" value="${state.name ?? ''}"${describedBy(f, 'name')}>
  ${fieldErrors(f, 'name')}`
      : ''
  }
  <input type="hidden" name="options_present" value="1">
  <label class="check"><input type="checkbox" name="retrieval_step" value="1"${retrieval ? html` checked` : ''}> Ask the recipient to click before the secret is shown (stops link previewers from using up views)</label>
  <label class="check"><input type="checkbox" name="deletable_by_viewer" value="1"${deletable ? html` checked` : ''}> Let the recipient delete the secret</label>
  <div><button type="submit">Make the secret link</button></div>
</form>`,
  });
}

/** The lifetimes under a day the instance accepts, offered instead of the days (absent when it accepts none). */
function shorterChoice(settings: Settings, state: CreateFormState, f: CreateFormState['fields']): Html | string {
  const shorter = acceptedDurations(settings).filter((value) => value < FIRST_DAY_DURATION);
  if (shorter.length === 0) return '';
  return html`<div>
      <label for="expire_after_duration">Or expire sooner</label>
      <select id="expire_after_duration" name="expire_after_duration"${describedBy(f, 'expire_after_duration')}>
        <option value="">after the days</option>
        ${shorter.map((value) => html`<option value="${String(value)}"${state.expireAfterDuration === value ? html` selected` : ''}>after ${DURATION_LABELS[value]!}</option>`)}
      </select>
      ${fieldErrors(f, 'expire_after_duration')}
    </div>`;
}

/**
 * The "Encrypt in my browser" choice. create.js encrypts the payload, the file names and the file bytes with the
 * key it makes (`SecretPushE2E.sealPush`), sends the envelopes with `client_encryption`, and carries the key to the
 * page that shows the link in the fragment of the form's action, which browsers never send. Without script the box
 * still posts `encrypt_in_browser`, and the server refuses rather than store the plaintext. When the instance
 * requires encryption the box cannot be unticked (a hidden field posts the choice; a disabled box posts nothing).
 */
function encryptChoice(required: boolean, checked: boolean, f: Record<string, string[]> | undefined): Html {
  return html`<div id="encrypt-field">
  ${required ? html`<input type="hidden" name="encrypt_in_browser" value="1">` : ''}
  <label class="check"><input type="checkbox" id="encrypt_in_browser"${required ? html` disabled` : html` name="encrypt_in_browser"`} value="1"${checked || required ? html` checked` : ''}${describedBy(f, 'client_encryption', 'encrypt-hint')}> Encrypt in my browser${required ? ' (this site requires it)' : ''}</label>
  <p class="hint" id="encrypt-hint">The secret, file names and files are encrypted on this device before they are sent; the server stores only ciphertext and cannot read it. The key goes only into the link (after <code>#</code>, which browsers never send to a server): anyone with the whole link can open the secret. The name you give it is not encrypted.</p>
  <noscript><p class="hint">Encrypting in the browser needs JavaScript.</p></noscript>
  ${fieldErrors(f, 'client_encryption')}
  <p class="error" id="encrypt-error" role="alert" hidden></p>
</div>`;
}

export function createdPage(viewer: Viewer, push: PushOwner): string {
  const e2e = push.client_encryption !== null;
  return page({
    title: 'Secret link',
    viewer,
    // create.js puts the key from this page's fragment into the link (the server never had it).
    scripts: e2e ? ['create.js'] : [],
    body: html`<h1 id="created-title" tabindex="-1">Your secret link</h1>
<div class="card">
  <p class="success" role="status">The secret is stored. Share this link with the recipient:</p>
  ${
    e2e
      ? html`<p class="muted" id="e2e-created">It was encrypted in your browser: the server holds only ciphertext. The key is the part of the link after <code>#k=</code>; share the whole link, and keep it safe, since nobody (this server included) can open the secret without it.</p>
  <p class="error" id="key-missing" role="alert" hidden>The key of this secret did not reach this page, so nobody can open the secret. Make it again.</p>`
      : ''
  }
  <p><a class="share" id="share-link" href="${push.html_url}" rel="noopener noreferrer"${e2e ? html` data-e2e="1"` : ''}>${push.html_url}</a></p>
  <button type="button" data-copy-target="share-link">Copy the link</button>
  <p class="hint">It works for ${lifetimeLabel(push.expire_after_seconds ?? push.expire_after_days * 86_400)} or ${push.expire_after_views} view${push.expire_after_views === 1 ? '' : 's'}, whichever comes first${push.passphrase_protected ? ', and needs the passphrase' : ''}.</p>
</div>
<p><a href="/">Make another</a>${viewer.user ? html` · <a href="/pushes/active">My pushes</a> · <a href="/pushes/${push.url_token}/audit">Audit log</a>` : ''}</p>`,
  });
}

function when(iso: string | null | undefined): Html {
  if (!iso) return html`–`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')}</time>`;
}

function pager(base: string, p: Page<unknown>): Html {
  const last = Math.max(1, Math.ceil(p.total / p.perPage));
  return html`<nav class="pager" aria-label="Pages">
  ${p.page > 1 ? html`<a href="${base}?page=${p.page - 1}" rel="prev">Newer</a>` : ''}
  <span>Page ${p.page} of ${last}</span>
  ${p.page < last ? html`<a href="${base}?page=${p.page + 1}" rel="next">Older</a>` : ''}
</nav>`;
}

export function listPage(viewer: Viewer, state: 'active' | 'expired', p: Page<PushOwner>): string {
  const title = state === 'active' ? 'Active pushes' : 'Expired pushes';
  const rows = p.items.map(
    (push) => html`<tr>
  <td data-label="Created">${when(push.created_at)}</td>
  <td data-label="Kind">${KIND_LABELS[push.kind] ?? push.kind}${push.client_encryption ? html` <span class="muted">(encrypted in the browser)</span>` : ''}</td>
  <td data-label="Name">${push.name ?? ''}</td>
  <td data-label="Left">${state === 'active' ? html`${push.views_remaining} views, ${push.days_remaining} days` : html`expired ${when(push.expired_on)}${push.deleted ? ' (deleted)' : ''}`}</td>
  <td data-label="Actions">
    <a href="/pushes/${push.url_token}/audit">Audit log<span class="visually-hidden"> of the push made ${push.created_at}</span></a>
    ${
      state === 'active'
        ? html`<form method="post" action="/pushes/${push.url_token}/expire">${csrfField(viewer)}<button type="submit" class="danger">Expire<span class="visually-hidden"> the push made ${push.created_at}</span></button></form>`
        : ''
    }
  </td>
</tr>`,
  );
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
<p><a href="/pushes/active"${state === 'active' ? html` aria-current="page"` : ''}>Active</a> · <a href="/pushes/expired"${state === 'expired' ? html` aria-current="page"` : ''}>Expired</a></p>
${
  p.items.length === 0
    ? html`<p class="notice">No ${state} pushes${p.page > 1 ? ' on this page' : ''}.</p>`
    : html`<table>
  <caption class="visually-hidden">${title}, newest first</caption>
  <thead><tr><th scope="col">Created (UTC)</th><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">${state === 'active' ? 'Left' : 'Expired'}</th><th scope="col">Actions</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
}
${pager(`/pushes/${state}`, p)}`,
  });
}

const AUDIT_LABELS: Record<string, string> = {
  creation: 'Created',
  view: 'Viewed',
  owner_view: 'Viewed by you',
  failed_view: 'Opened after expiry',
  failed_passphrase: 'Wrong or missing passphrase',
  expire: 'Expired / deleted',
};

export function auditPage(viewer: Viewer, urlToken: string, p: Page<AuditEntry>): string {
  return page({
    title: 'Audit log',
    viewer,
    body: html`<h1>Audit log</h1>
<p class="muted">Push <code>${urlToken.slice(0, 8)}…</code>, oldest first.</p>
${
  p.items.length === 0
    ? html`<p class="notice">No entries.</p>`
    : html`<table>
  <thead><tr><th scope="col">When (UTC)</th><th scope="col">Event</th><th scope="col">IP address</th><th scope="col">Browser</th></tr></thead>
  <tbody>${p.items.map(
    (e) =>
      html`<tr><td data-label="When">${when(e.created_at)}</td><td data-label="Event">${AUDIT_LABELS[e.kind] ?? e.kind}</td><td data-label="IP">${e.ip}</td><td data-label="Browser">${e.user_agent}</td></tr>`,
  )}</tbody>
</table>`
}
${pager(`/pushes/${urlToken}/audit`, p)}
<p><a href="/pushes/active">Back to my pushes</a></p>`,
  });
}
