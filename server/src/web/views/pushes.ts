/** The create page, the page that shows the link to share, the owner's lists and a push's audit log. */
import { acceptedDurations, DURATION_SECONDS, FIRST_DAY_DURATION } from '@secret-push/rules';
import type { Translator } from '../../i18n/i18n.js';
import type { AuditEntry, Page, PushOwner, Settings } from '../../core.js';
import { html, htmlMessage, type Html } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';
import { whereChooser, type CreateWorkspace } from './workspace-chooser.js';

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
  /** The workspaces the person may create in ("Where"; none: no chooser), and the one chosen. */
  workspaces?: readonly CreateWorkspace[];
  workspaceId?: number;
}

type Kinds = Pick<Settings, 'enableUrlPushes' | 'enableQrPushes' | 'enableFilePushes' | 'filesRequireAuth'>;

function availableKinds(settings: Kinds, signedIn: boolean): string[] {
  const kinds = ['text'];
  if (settings.enableUrlPushes) kinds.push('url');
  if (settings.enableQrPushes) kinds.push('qr');
  if (settings.enableFilePushes && (signedIn || !settings.filesRequireAuth)) kinds.push('file');
  return kinds;
}

/** A push's kind, in the page's language. */
function kindLabel(t: Translator['t'], kind: string): string {
  return ['text', 'url', 'qr', 'file'].includes(kind) ? t('pushes.kind', { kind }) : kind;
}

/** A lifetime (15 minutes, 6 hours, 3 days) in the page's language, by its largest whole unit. */
function lifetimeText(t: Translator['t'], seconds: number): string {
  if (seconds % 86_400 === 0) return t('pushes.lifetime', { unit: 'days', count: seconds / 86_400 });
  if (seconds % 3600 === 0) return t('pushes.lifetime', { unit: 'hours', count: seconds / 3600 });
  return t('pushes.lifetime', { unit: 'minutes', count: Math.round(seconds / 60) });
}

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
  const { t } = viewer.i18n;
  return page({
    title: t('create.pageTitle'),
    viewer,
    scripts: e2e.enabled ? ['vendor/secret-push-e2e.js', 'create.js'] : ['create.js'],
    messages: ['js.create.'],
    body: html`<h1>${t('create.title')}</h1>
<p class="muted">${t('create.intro')}</p>
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ''}
<form method="post" action="/" enctype="multipart/form-data" id="create-form" class="card" novalidate>
  ${csrfField(viewer)}
  <fieldset>
    <legend>${t('create.kind.legend')}</legend>
    <div class="choices">
      ${kinds.map((k) => html`<label><input type="radio" name="kind" value="${k}"${k === kind ? html` checked` : ''}> ${kindLabel(t, k)}</label>`)}
    </div>
    ${fieldErrors(f, 'kind')}
  </fieldset>
  ${whereChooser(viewer, state.workspaces, state.workspaceId)}${fieldErrors(f, 'workspace_id')}
  <label for="payload" id="payload-label">${t('create.payload.label')}</label>
  <textarea id="payload" name="payload" autocomplete="off" spellcheck="false"${describedBy(f, 'payload', 'payload-hint')}>${state.payload ?? ''}</textarea>
  <p class="hint" id="payload-hint">${t('create.payload.hint')}</p>
  ${fieldErrors(f, 'payload')}
  ${
    hasFiles
      ? html`<div id="files-field">
    <label for="files">${t('create.files.label')}</label>
    <input type="file" id="files" name="files" multiple${describedBy(f, 'files', 'files-hint')}>
    <p class="hint" id="files-hint">${t('create.files.hint', { count: settings.fileMaxCount, mib: Math.floor(settings.fileMaxBytes / 1024 / 1024) || 1 })}</p>
    ${fieldErrors(f, 'files')}
  </div>`
      : ''
  }
  <div class="row">
    <div>
      <label for="expire_after_days">${t('create.days.label')}</label>
      <input type="number" id="expire_after_days" name="expire_after_days" min="${settings.expireAfterDays.min}" max="${settings.expireAfterDays.max}" value="${days}" required${describedBy(f, 'expire_after_days')}>
      ${fieldErrors(f, 'expire_after_days')}
    </div>
    ${shorterChoice(t, settings, state, f)}
    <div>
      <label for="expire_after_views">${t('create.views.label')}</label>
      <input type="number" id="expire_after_views" name="expire_after_views" min="${settings.expireAfterViews.min}" max="${settings.expireAfterViews.max}" value="${views}" required${describedBy(f, 'expire_after_views')}>
      ${fieldErrors(f, 'expire_after_views')}
    </div>
  </div>
  ${e2e.enabled ? encryptChoice(viewer.i18n, e2e.required, state.encrypt ?? e2e.default, f) : ''}
  <label for="passphrase">${t('create.passphrase.label')}</label>
  <input type="password" id="passphrase" name="passphrase" autocomplete="new-password"${describedBy(f, 'passphrase', 'passphrase-hint')}>
  <p class="hint" id="passphrase-hint">${t(e2e.enabled ? 'create.passphrase.hintE2e' : 'create.passphrase.hint')}</p>
  ${fieldErrors(f, 'passphrase')}
  ${
    viewer.user
      ? html`<label for="name">${t('create.name.label')}</label>
  <input type="text" id="name" name="name" maxlength="1024" value="${state.name ?? ''}"${describedBy(f, 'name')}>
  ${fieldErrors(f, 'name')}`
      : ''
  }
  <input type="hidden" name="options_present" value="1">
  <label class="check"><input type="checkbox" name="retrieval_step" value="1"${retrieval ? html` checked` : ''}> ${t('create.retrievalStep')}</label>
  <label class="check"><input type="checkbox" name="deletable_by_viewer" value="1"${deletable ? html` checked` : ''}> ${t('create.deletableByViewer')}</label>
  <div><button type="submit">${t('create.submit')}</button></div>
</form>`,
  });
}

/** The lifetimes under a day the instance accepts, offered instead of the days (absent when it accepts none). */
function shorterChoice(
  t: Translator['t'],
  settings: Settings,
  state: CreateFormState,
  f: CreateFormState['fields'],
): Html | string {
  const shorter = acceptedDurations(settings).filter((value) => value < FIRST_DAY_DURATION);
  if (shorter.length === 0) return '';
  return html`<div>
      <label for="expire_after_duration">${t('create.duration.label')}</label>
      <select id="expire_after_duration" name="expire_after_duration"${describedBy(f, 'expire_after_duration')}>
        <option value="">${t('create.duration.days')}</option>
        ${shorter.map((value) => html`<option value="${String(value)}"${state.expireAfterDuration === value ? html` selected` : ''}>${t('create.duration.after', { lifetime: lifetimeText(t, DURATION_SECONDS[value]!) })}</option>`)}
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
function encryptChoice(
  i18n: Translator,
  required: boolean,
  checked: boolean,
  f: Record<string, string[]> | undefined,
): Html {
  const { t } = i18n;
  return html`<div id="encrypt-field">
  ${required ? html`<input type="hidden" name="encrypt_in_browser" value="1">` : ''}
  <label class="check"><input type="checkbox" id="encrypt_in_browser"${required ? html` disabled` : html` name="encrypt_in_browser"`} value="1"${checked || required ? html` checked` : ''}${describedBy(f, 'client_encryption', 'encrypt-hint')}> ${t(required ? 'create.encrypt.labelRequired' : 'create.encrypt.label')}</label>
  <p class="hint" id="encrypt-hint">${htmlMessage(i18n, 'create.encrypt.hint', { hash: html`<code>#</code>` })}</p>
  <noscript><p class="hint">${t('create.encrypt.needsScript')}</p></noscript>
  ${fieldErrors(f, 'client_encryption')}
  <p class="error" id="encrypt-error" role="alert" hidden></p>
</div>`;
}

export function createdPage(viewer: Viewer, push: PushOwner): string {
  const e2e = push.client_encryption !== null;
  const { t } = viewer.i18n;
  return page({
    title: t('created.pageTitle'),
    viewer,
    // create.js puts the key from this page's fragment into the link (the server never had it).
    scripts: e2e ? ['create.js'] : [],
    body: html`<h1 id="created-title" tabindex="-1">${t('created.title')}</h1>
<div class="card">
  <p class="success" role="status">${t('created.stored')}</p>
  ${
    e2e
      ? html`<p class="muted" id="e2e-created">${htmlMessage(viewer.i18n, 'created.e2e', { key: html`<code>#k=</code>` })}</p>
  <p class="error" id="key-missing" role="alert" hidden>${t('created.keyMissing')}</p>`
      : ''
  }
  <p><a class="share" id="share-link" href="${push.html_url}" rel="noopener noreferrer"${e2e ? html` data-e2e="1"` : ''}>${push.html_url}</a></p>
  <button type="button" data-copy-target="share-link">${t('created.copy')}</button>
  <p class="hint">${t('created.lifetime', { lifetime: lifetimeText(t, push.expire_after_seconds ?? push.expire_after_days * 86_400), views: push.expire_after_views, passphrase: push.passphrase_protected ? 'yes' : 'no' })}</p>
</div>
<p><a href="/">${t('created.another')}</a>${viewer.user ? html` · <a href="/pushes/active">${t('layout.nav.myPushes')}</a> · <a href="/pushes/${push.url_token}/audit">${t('audit.title')}</a>` : ''}</p>`,
  });
}

function when(iso: string | null | undefined): Html {
  if (!iso) return html`–`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')}</time>`;
}

function pager(t: Translator['t'], base: string, p: Page<unknown>): Html {
  const last = Math.max(1, Math.ceil(p.total / p.perPage));
  const join = base.includes('?') ? '&' : '?';
  return html`<nav class="pager" aria-label="${t('pushes.pager.label')}">
  ${p.page > 1 ? html`<a href="${base}${join}page=${p.page - 1}" rel="prev">${t('pushes.pager.newer')}</a>` : ''}
  <span>${t('pushes.pager.page', { page: p.page, last })}</span>
  ${p.page < last ? html`<a href="${base}${join}page=${p.page + 1}" rel="next">${t('pushes.pager.older')}</a>` : ''}
</nav>`;
}

/**
 * The owner's list of their personal pushes, or with `workspace` the pushes of that workspace the visitor sees (every
 * one for its owner, admins and auditors; their own for a member), by the API's `listActivePushes?workspace_id=`.
 */
export function listPage(
  viewer: Viewer,
  state: 'active' | 'expired',
  p: Page<PushOwner>,
  workspace?: { id: number; name: string },
): string {
  const { t } = viewer.i18n;
  const query = workspace ? `?workspace_id=${workspace.id}` : '';
  const title = t('pushes.list.title', { state });
  const rows = p.items.map(
    (push) => html`<tr>
  <td data-label="${t('pushes.list.created')}">${when(push.created_at)}</td>
  <td data-label="${t('pushes.list.kind')}">${kindLabel(t, push.kind)}${push.client_encryption ? html` <span class="muted">${t('pushes.list.encrypted')}</span>` : ''}</td>
  <td data-label="${t('pushes.list.name')}">${push.name ?? ''}</td>
  <td data-label="${t('pushes.list.left')}">${state === 'active' ? t('pushes.list.remaining', { views: push.views_remaining, days: push.days_remaining }) : html`${t('pushes.list.expiredOn')} ${when(push.expired_on)}${push.deleted ? ` ${t('pushes.list.deleted')}` : ''}`}</td>
  <td data-label="${t('pushes.list.actions')}">
    <a href="/pushes/${push.url_token}/audit">${t('audit.title')}<span class="visually-hidden"> ${t('pushes.list.ofPush', { created: push.created_at })}</span></a>
    ${
      state === 'active'
        ? html`<form method="post" action="/pushes/${push.url_token}/expire">${csrfField(viewer)}<button type="submit" class="danger">${t('pushes.list.expire')}<span class="visually-hidden"> ${t('pushes.list.expireWhich', { created: push.created_at })}</span></button></form>`
        : ''
    }
  </td>
</tr>`,
  );
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
${workspace ? html`<p id="list-workspace">${t('workspaces.pushes.of', { name: workspace.name })} <a href="/workspaces/${workspace.id}">${t('workspaces.pushes.back')}</a></p>` : ''}
<p><a href="/pushes/active${query}"${state === 'active' ? html` aria-current="page"` : ''}>${t('pushes.list.active')}</a> · <a href="/pushes/expired${query}"${state === 'expired' ? html` aria-current="page"` : ''}>${t('pushes.list.expired')}</a></p>
${
  p.items.length === 0
    ? html`<p class="notice">${t('pushes.list.none', { state, onPage: p.page > 1 ? 'yes' : 'no' })}</p>`
    : html`<table>
  <caption class="visually-hidden">${t('pushes.list.caption', { title })}</caption>
  <thead><tr><th scope="col">${t('pushes.list.createdUtc')}</th><th scope="col">${t('pushes.list.kind')}</th><th scope="col">${t('pushes.list.name')}</th><th scope="col">${state === 'active' ? t('pushes.list.left') : t('pushes.list.expired')}</th><th scope="col">${t('pushes.list.actions')}</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
}
${pager(t, `/pushes/${state}${query}`, p)}`,
  });
}

const AUDIT_KINDS = ['creation', 'view', 'owner_view', 'failed_view', 'failed_passphrase', 'expire'];

export function auditPage(viewer: Viewer, urlToken: string, p: Page<AuditEntry>): string {
  const { t } = viewer.i18n;
  return page({
    title: t('audit.title'),
    viewer,
    body: html`<h1>${t('audit.title')}</h1>
<p class="muted">${htmlMessage(viewer.i18n, 'audit.intro', { push: html`<code>${urlToken.slice(0, 8)}…</code>` })}</p>
${
  p.items.length === 0
    ? html`<p class="notice">${t('audit.none')}</p>`
    : html`<table>
  <thead><tr><th scope="col">${t('audit.whenUtc')}</th><th scope="col">${t('audit.event')}</th><th scope="col">${t('audit.ip')}</th><th scope="col">${t('audit.browser')}</th></tr></thead>
  <tbody>${p.items.map(
    (e) =>
      html`<tr><td data-label="${t('audit.when')}">${when(e.created_at)}</td><td data-label="${t('audit.event')}">${AUDIT_KINDS.includes(e.kind) ? t('audit.kind', { kind: e.kind }) : e.kind}</td><td data-label="${t('audit.ipShort')}">${e.ip}</td><td data-label="${t('audit.browser')}">${e.user_agent}</td></tr>`,
  )}</tbody>
</table>`
}
${pager(t, `/pushes/${urlToken}/audit`, p)}
<p><a href="/pushes/active">${t('audit.back')}</a></p>`,
  });
}
