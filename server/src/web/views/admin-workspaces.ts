/**
 * The admin console's workspaces (issue 41, docs/admin.md): the list (found by name or id, paged) and one workspace's
 * page with its members, pending invitations, keys, webhooks, recent trail and the administrator's actions; the
 * workspaces' part of the storage page. In the console's frame and language (./admin.ts). Nothing here shows a secret:
 * no push, no invitation's link, no key's token, of a webhook only its URL's host.
 */
import type { AdminWorkspaceRow } from '../../admin/admin-workspace-repository.js';
import type { AdminWorkspaces } from '../../admin/admin-workspaces.js';
import { html, type Html } from '../html.js';
import { bytesText, frame, pager, when } from './admin.js';
import { csrfField, type Viewer } from './layout.js';

type Details = Awaited<ReturnType<AdminWorkspaces['workspace']>>;

const quotaText = (bytes: number, quota: number) =>
  quota > 0 ? `${bytesText(bytes)} of ${bytesText(quota)} (${Math.round((100 * bytes) / quota)}%)` : bytesText(bytes);

function owner(w: AdminWorkspaceRow): Html {
  if (w.ownerEmail === null || w.ownerId === null) return html`<strong>none</strong>`;
  return html`<a href="/admin/users/${w.ownerId}">${w.ownerEmail}</a>${w.ownerLocked ? html` <strong class="locked">locked</strong>` : ''}`;
}

const rules = (w: AdminWorkspaceRow) =>
  html`${w.requireTwoFactor ? 'two-factor required' : '–'}${w.requireSingleSignOn ? html`<br>single sign-on required` : ''}${w.ssoDomain ? html`<br>SSO: ${w.ssoDomain}` : ''}`;

export function adminWorkspacesPage(
  viewer: Viewer,
  state: {
    search: string;
    page: number;
    workspaces: AdminWorkspaceRow[];
    total: number;
    size: number;
    quota: number;
    notice?: string;
  },
): string {
  const rows = state.workspaces.map(
    (w) => html`<tr>
  <td><a href="/admin/workspaces/${w.id}">${w.name}</a> <small>#${w.id}</small></td>
  <td>${owner(w)}</td>
  <td>${w.members}</td>
  <td>${w.livePushes}</td>
  <td>${quotaText(w.storedBytes, state.quota)}</td>
  <td>${w.apiKeys}</td>
  <td>${w.webhooks}</td>
  <td>${rules(w)}</td>
</tr>`,
  );
  return frame(
    viewer,
    '/admin/workspaces',
    'Workspaces',
    html`<form method="get" action="/admin/workspaces" role="search">
  <label for="q">Name contains, or id</label>
  <input id="q" name="q" type="search" maxlength="100" value="${state.search}">
  <button type="submit">Search</button>
</form>
${
  state.workspaces.length > 0
    ? html`<table class="admin-workspaces">
  <thead><tr><th>Workspace</th><th>Owner</th><th>Members</th><th>Pushes live</th><th>Storage</th><th>API keys</th><th>Webhooks</th><th>Sign-in rules</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>No workspace matches.</p>`
}
${pager('/admin/workspaces', state.search ? { q: state.search } : {}, state.page, state.total, state.size)}`,
    state.notice,
  );
}

/** A form posting one action on the workspace; `label` is the button's accessible name (its text starts it). */
function actionForm(viewer: Viewer, id: number, action: string, field: Html, text: string, label: string) {
  return html`<form method="post" action="/admin/workspaces/${id}/${action}" class="admin-action admin-inline">
  ${csrfField(viewer)}${field}
  <button type="submit" aria-label="${label}">${text}</button>
</form>`;
}

function members(viewer: Viewer, d: Details): Html {
  const id = d.workspace.id;
  const rows = d.members.map((m) => {
    const subject = html`<input type="hidden" name="user_id" value="${m.userId}">`;
    const actions =
      m.role === 'owner'
        ? html`–`
        : html`${actionForm(viewer, id, 'transfer', subject, 'Make owner', `Make owner: ${m.email}`)}
${actionForm(viewer, id, 'remove_member', subject, 'Remove', `Remove: ${m.email}`)}`;
    return html`<tr>
  <td><a href="/admin/users/${m.userId}">${m.email}</a>${m.locked ? html` <strong class="locked">locked</strong>` : ''}</td>
  <td>${m.role}</td>
  <td>${m.twoFactor ? 'on' : 'off'}</td>
  <td>${when(m.joinedAt)}</td>
  <td>${actions}</td>
</tr>`;
  });
  return html`<h2>Members</h2>
${
  rows.length > 0
    ? html`<table class="admin-members"><thead><tr><th>Email</th><th>Role</th><th>Two-factor</th><th>Joined</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody></table>`
    : html`<p>No member.</p>`
}`;
}

function invitations(d: Details): Html {
  return html`<h2>Pending invitations</h2>
${
  d.invitations.length > 0
    ? html`<table class="admin-invitations"><thead><tr><th>For</th><th>Role</th><th>Made</th><th>Expires</th></tr></thead><tbody>
${d.invitations.map((i) => html`<tr><td>${i.email ?? html`<em>anyone with the link</em>`}</td><td>${i.role}</td><td>${when(i.createdAt)}</td><td>${when(i.expiresAt)}</td></tr>`)}
</tbody></table>`
    : html`<p>No pending invitation.</p>`
}`;
}

function keys(viewer: Viewer, d: Details): Html {
  return html`<h2>API keys of the workspace</h2>
${
  d.keys.length > 0
    ? html`<table class="admin-keys"><thead><tr><th>Name</th><th>Scopes</th><th>Made by</th><th>Made</th><th>Expires</th><th>Last used</th><th>Action</th></tr></thead><tbody>
${d.keys.map(
  (
    k,
  ) => html`<tr><td>${k.name}</td><td>${k.scopes.join(', ')}</td><td>${k.madeBy}</td><td>${when(k.createdAt)}</td><td>${when(k.expiresAt)}</td><td>${when(k.lastUsedAt)}</td>
<td>${actionForm(viewer, d.workspace.id, 'revoke_key', html`<input type="hidden" name="key_id" value="${k.id}">`, 'Revoke', `Revoke key: ${k.name}`)}</td></tr>`,
)}
</tbody></table>`
    : html`<p>No API key.</p>`
}`;
}

function webhooks(d: Details): Html {
  return html`<h2>Webhooks</h2>
${
  d.webhooks.length > 0
    ? html`<table class="admin-webhooks"><thead><tr><th>Host</th><th>Enabled</th><th>Made</th></tr></thead><tbody>
${d.webhooks.map((h) => html`<tr><td>${h.host}</td><td>${h.enabled ? 'yes' : 'no'}</td><td>${when(h.createdAt)}</td></tr>`)}
</tbody></table>`
    : html`<p>No webhook.</p>`
}`;
}

function trail(d: Details): Html {
  return html`<h2>Latest entries of the workspace's trail</h2>
${
  d.trail.length > 0
    ? html`<table class="admin-trail"><thead><tr><th>When</th><th>Action</th><th>By</th><th>Member</th><th>Role</th></tr></thead><tbody>
${d.trail.map((t) => html`<tr><td>${when(t.at)}</td><td><code>${t.action}</code></td><td>${t.actorEmail ?? '–'}</td><td>${t.subjectEmail || '–'}</td><td>${t.role ?? '–'}</td></tr>`)}
</tbody></table>`
    : html`<p>No entry yet.</p>`
}`;
}

export function adminWorkspacePage(viewer: Viewer, d: Details, quota: number, notice?: string): string {
  const w = d.workspace;
  return frame(
    viewer,
    '/admin/workspaces',
    w.name,
    html`<dl class="admin-workspace">
  <dt>Id</dt><dd>${w.id}</dd>
  <dt>Made</dt><dd>${when(w.createdAt)}</dd>
  <dt>Owner</dt><dd>${owner(w)}</dd>
  <dt>Members</dt><dd>${w.members}</dd>
  <dt>Pushes live</dt><dd>${w.livePushes}</dd>
  <dt>Storage in use</dt><dd>${quotaText(w.storedBytes, quota)}</dd>
  <dt>Two-factor required</dt><dd>${w.requireTwoFactor ? 'yes' : 'no'}</dd>
  <dt>Single sign-on required</dt><dd>${w.requireSingleSignOn ? 'yes' : 'no'}</dd>
  <dt>Single sign-on domain</dt><dd>${w.ssoDomain ?? '–'}</dd>
</dl>
${members(viewer, d)}
${invitations(d)}
${keys(viewer, d)}
${webhooks(d)}
${trail(d)}
<h2>Delete this workspace</h2>
<p>Deletes the workspace with its pushes (their links stop working), requests, API keys, webhooks, invitations, brand, members and trail. This cannot be undone.</p>
${actionForm(
  viewer,
  w.id,
  'delete',
  html`<label for="confirm">Type the workspace's name to confirm</label> <input id="confirm" name="confirm" autocomplete="off" maxlength="1000" required>`,
  'Delete this workspace',
  `Delete this workspace: ${w.name}`,
)}
<p><a href="/admin/workspaces">All workspaces</a></p>`,
    notice,
  );
}

/** The workspaces' part of the storage page: their count, what they hold, the 20 largest. */
export function workspaceStorage(s: Awaited<ReturnType<AdminWorkspaces['storage']>>, quota: number): Html {
  return html`<h2>Workspaces</h2>
<p>${s.workspaces} workspace(s); ${bytesText(s.countedWorkspaceBytes)} counted against the workspaces' quotas (quota per workspace: ${quota > 0 ? bytesText(quota) : 'no quota'}).</p>
${
  s.topWorkspaces.length > 0
    ? html`<table class="admin-workspace-storage"><thead><tr><th>Workspace</th><th>In use</th><th>Of the quota</th></tr></thead><tbody>
${s.topWorkspaces.map((w) => html`<tr><td><a href="/admin/workspaces/${w.id}">${w.name}</a></td><td>${bytesText(w.bytes)}</td><td>${quota > 0 ? `${Math.round((100 * w.bytes) / quota)}%` : '–'}</td></tr>`)}
</tbody></table>`
    : html`<p>No workspace stores anything.</p>`
}`;
}
