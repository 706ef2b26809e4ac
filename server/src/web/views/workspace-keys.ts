/**
 * A workspace's API keys page (issue 41): the keys of the workspace, a form to make one (its token shown once, with a
 * copy button), and the confirmation a revocation asks first (a page of its own: it works without JavaScript).
 */
import type { ApiKey, ApiKeyCreated, Workspace } from '@secret-push/sdk/generated';
import { API_KEY_SCOPES } from '@secret-push/rules';
import { html } from '../html.js';
import { KEY_LIFETIMES_DAYS } from './accounts.js';
import { csrfField, page, type Viewer } from './layout.js';
import { sectionsNav } from './workspace-manage.js';

export interface WorkspaceKeysState {
  workspace: Workspace;
  keys: readonly ApiKey[];
  /** A key just made: its token, shown this once. */
  fresh?: ApiKeyCreated;
  error?: string;
  notice?: string;
}

function when(viewer: Viewer, at: string | null): ReturnType<typeof html> | string {
  if (!at) return viewer.i18n.t('apiKeys.never');
  const format = new Intl.DateTimeFormat(viewer.i18n.locale, { dateStyle: 'medium', timeZone: 'UTC' });
  return html`<time datetime="${at}">${format.format(new Date(at))}</time>`;
}

function freshCard(viewer: Viewer, fresh: ApiKeyCreated | undefined) {
  if (!fresh) return html``;
  const { t } = viewer.i18n;
  return html`<div class="card" aria-labelledby="fresh-key-title">
  <h2 id="fresh-key-title" tabindex="-1">${t('apiKeys.fresh.title', { name: fresh.name })}</h2>
  <p class="success">${t('apiKeys.fresh.once')}</p>
  <p><code class="share secret" id="api-key-token">${fresh.token}</code></p>
  <button type="button" data-copy-target="api-key-token">${t('apiKeys.fresh.copy')}</button>
</div>`;
}

export function workspaceKeysPage(viewer: Viewer, state: WorkspaceKeysState): string {
  const { t } = viewer.i18n;
  const w = state.workspace;
  const title = t('workspaces.keys.title', { name: w.name });
  const rows = state.keys.map(
    (k) => html`<tr>
  <td>${k.name}</td>
  <td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td>
  <td>${when(viewer, k.created_at)}</td>
  <td>${when(viewer, k.expires_at)}</td>
  <td>${when(viewer, k.last_used_at)}</td>
  <td><a href="/workspaces/${w.id}/keys/${k.id}/revoke">${t('apiKeys.revoke')}<span class="visually-hidden"> (${k.name})</span></a></td>
</tr>`,
  );
  const list =
    state.keys.length > 0
      ? html`<table class="keys">
  <thead><tr><th>${t('apiKeys.name')}</th><th>${t('apiKeys.scopes')}</th><th>${t('apiKeys.made')}</th><th>${t('apiKeys.expires')}</th><th>${t('apiKeys.lastUsed')}</th><th><span class="visually-hidden">${t('apiKeys.revoke')}</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
      : html`<p>${t('workspaces.keys.none')}</p>`;
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
${sectionsNav(viewer, w, 'keys')}
${state.notice ? html`<p class="success" role="status">${state.notice}</p>` : ''}
${freshCard(viewer, state.fresh)}
<div class="card" aria-labelledby="keys-title">
  <h2 id="keys-title">${t('apiKeys.title')}</h2>
  <p class="hint">${t('workspaces.keys.hint')}</p>
  ${list}
  <h3 id="make-key-title">${t('apiKeys.make')}</h3>
  ${state.error ? html`<p class="error" role="alert" id="key-error">${state.error}</p>` : ''}
  <form method="post" action="/workspaces/${w.id}/keys" aria-labelledby="make-key-title">
    ${csrfField(viewer)}
    <label for="key-name">${t('apiKeys.name')}</label>
    <input id="key-name" name="name" required maxlength="100"${state.error ? html` aria-describedby="key-error"` : ''}>
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
</div>`,
  });
}

/** Asks before a key of the workspace is revoked (a page of its own, so the check needs no script). */
export function revokeKeyPage(viewer: Viewer, w: Workspace, key: ApiKey): string {
  const { t } = viewer.i18n;
  const title = t('workspaces.keys.revoke.title', { name: key.name });
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
${sectionsNav(viewer, w, 'keys')}
<div class="card">
  <p>${t('workspaces.keys.revoke.text')}</p>
  <form method="post" action="/workspaces/${w.id}/keys/${key.id}/revoke">
    ${csrfField(viewer)}
    <button type="submit" class="danger" id="revoke-confirm">${t('workspaces.keys.revoke.confirm')}</button>
    <a href="/workspaces/${w.id}/keys">${t('workspaces.keys.revoke.cancel')}</a>
  </form>
</div>`,
  });
}
