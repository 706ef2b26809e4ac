/**
 * The admin console's pages (issue 41, docs/admin.md): one frame with the sections' navigation, then each section.
 * Nothing here shows a secret: users by email and counts, storage in bytes, queue counts, settings with secrets
 * masked (admin/settings-in-force.ts), security events and the admin audit.
 */
import type { AdminAuditEntry } from '../../admin/admin-repository.js';
import type { AdminService, AdminUser } from '../../admin/admin-service.js';
import type { SettingInForce } from '../../admin/settings-in-force.js';
import { html, type Html } from '../html.js';
import { csrfField, page, type Viewer } from './layout.js';

/**
 * The console's sections, in the order of its navigation. The workspaces' pages are ./admin-workspaces.ts, their
 * routes web/routes/admin-workspace-pages.ts (behind the same guard, `adminRoute`).
 */
const ADMIN_SECTIONS: readonly { path: string; title: string }[] = [
  { path: '/admin/users', title: 'Users' },
  { path: '/admin/workspaces', title: 'Workspaces' },
  { path: '/admin/storage', title: 'Storage' },
  { path: '/admin/queues', title: 'Queues' },
  { path: '/admin/settings', title: 'Settings' },
  { path: '/admin/security', title: 'Security events' },
  { path: '/admin/audit', title: 'Admin audit' },
];

export const when = (at: Date | null) =>
  at
    ? html`<time datetime="${at.toISOString()}">${at.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`
    : html`–`;

/** Bytes for people: 1.5 MiB. */
export function bytesText(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

export function frame(viewer: Viewer, current: string, title: string, body: Html, notice?: string): string {
  return page({
    title: `Admin · ${title}`,
    viewer,
    body: html`<nav aria-label="Admin console" class="admin-nav"><ul>
  ${ADMIN_SECTIONS.map((s) => html`<li><a href="${s.path}"${s.path === current ? html` aria-current="page"` : ''}>${s.title}</a></li>`)}
</ul></nav>
<h1>${title}</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${body}`,
  });
}

export function adminHomePage(viewer: Viewer): string {
  return frame(
    viewer,
    '/admin',
    'Admin console',
    html`<p>You administer this instance. Every action you take here is written to the <a href="/admin/audit">admin audit</a>. No page here shows a secret.</p>
<ul>${ADMIN_SECTIONS.map((s) => html`<li><a href="${s.path}">${s.title}</a></li>`)}</ul>`,
  );
}

export function pager(base: string, query: Record<string, string>, page: number, total: number, size: number): Html {
  const last = Math.max(1, Math.ceil(total / size));
  const link = (p: number) => `${base}?${new URLSearchParams({ ...query, page: String(p) }).toString()}`;
  return html`<p class="pager">Page ${page} of ${last} (${total})
  ${page > 1 ? html` · <a href="${link(page - 1)}" rel="prev">Previous</a>` : ''}
  ${page < last ? html` · <a href="${link(page + 1)}" rel="next">Next</a>` : ''}</p>`;
}

function flags(u: AdminUser): Html {
  return html`${u.admin ? html`<strong>admin</strong>${u.adminBy === 'setting' ? ' (setting)' : ''} ` : ''}${u.lockedAt ? html`<strong class="locked">locked</strong> ` : ''}${u.twoFactor ? '2FA ' : ''}`;
}

export function adminUsersPage(
  viewer: Viewer,
  state: { search: string; page: number; users: AdminUser[]; total: number; size: number; notice?: string },
): string {
  const rows = state.users.map(
    (u) => html`<tr>
  <td><a href="/admin/users/${u.id}">${u.email}</a></td>
  <td>${when(u.createdAt)}</td>
  <td>${flags(u)}</td>
  <td>${bytesText(u.storedBytes)}</td>
  <td>${u.apiKeys}</td>
</tr>`,
  );
  return frame(
    viewer,
    '/admin/users',
    'Users',
    html`<form method="get" action="/admin/users" role="search">
  <label for="q">Email contains</label>
  <input id="q" name="q" type="search" maxlength="320" value="${state.search}">
  <button type="submit">Search</button>
</form>
${
  state.users.length > 0
    ? html`<table class="admin-users">
  <thead><tr><th>Email</th><th>Made</th><th>Flags</th><th>Storage</th><th>API keys</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>No user matches.</p>`
}
${pager('/admin/users', state.search ? { q: state.search } : {}, state.page, state.total, state.size)}`,
    state.notice,
  );
}

function actionForm(viewer: Viewer, user: AdminUser, action: string, label: string, danger = false, extra?: Html) {
  return html`<form method="post" action="/admin/users/${user.id}/${action}" class="admin-action">
  ${csrfField(viewer)}${extra ?? ''}
  <button type="submit"${danger ? html` class="danger"` : ''}>${label}</button>
</form>`;
}

/** A user's workspaces and roles, as the user's page lists them. */
export type UserWorkspaces = readonly { id: number; name: string; role: string }[];

function userWorkspaces(workspaces: UserWorkspaces): Html {
  return html`<h2>Workspaces</h2>
${
  workspaces.length > 0
    ? html`<table class="admin-user-workspaces"><thead><tr><th>Workspace</th><th>Role</th></tr></thead><tbody>
${workspaces.map((w) => html`<tr><td><a href="/admin/workspaces/${w.id}">${w.name}</a></td><td>${w.role}</td></tr>`)}
</tbody></table>`
    : html`<p>No workspace.</p>`
}`;
}

export function adminUserPage(
  viewer: Viewer,
  user: AdminUser,
  self: boolean,
  notice?: string,
  workspaces: UserWorkspaces = [],
): string {
  const actions = self
    ? html`<p>This is your own account: lock, reset and delete it with <code>npm run users</code>, not here.</p>`
    : html`${user.lockedAt ? actionForm(viewer, user, 'unlock', 'Unlock') : actionForm(viewer, user, 'lock', 'Lock: no sign-in, token, keys or sessions')}
${user.twoFactor ? actionForm(viewer, user, 'reset_two_factor', 'Reset two-factor sign-in') : ''}
${actionForm(
  viewer,
  user,
  'delete',
  'Delete the user and every push they made',
  true,
  html`<label for="confirm">Type the email to confirm</label> <input id="confirm" name="confirm" autocomplete="off" maxlength="320" required>`,
)}`;
  return frame(
    viewer,
    '/admin/users',
    user.email,
    html`<dl class="admin-user">
  <dt>Made</dt><dd>${when(user.createdAt)}</dd>
  <dt>Administrator</dt><dd>${user.admin ? (user.adminBy === 'setting' ? 'yes (PWPUSH_ADMIN_EMAILS)' : 'yes') : 'no'}</dd>
  <dt>Locked</dt><dd>${user.lockedAt ? when(user.lockedAt) : 'no'}</dd>
  <dt>Password</dt><dd>${user.hasPassword ? 'set' : 'none'}</dd>
  <dt>Two-factor</dt><dd>${user.twoFactor ? 'on' : 'off'}</dd>
  <dt>Storage in use</dt><dd>${bytesText(user.storedBytes)}</dd>
  <dt>API keys</dt><dd>${user.apiKeys}</dd>
</dl>
${userWorkspaces(workspaces)}
${actions}
<p><a href="/admin/users">All users</a></p>`,
    notice,
  );
}

export function adminStoragePage(
  viewer: Viewer,
  s: Awaited<ReturnType<AdminService['storage']>>,
  quotas: { userBytes: number; anonymousBytesPerHour: number },
  workspaces: Html = html``,
): string {
  const quota = (n: number) => (n > 0 ? bytesText(n) : 'no quota');
  return frame(
    viewer,
    '/admin/storage',
    'Storage and quotas',
    html`<dl class="admin-counts">
  <dt>Users</dt><dd>${s.users} (${s.lockedUsers} locked)</dd>
  <dt>Active pushes</dt><dd>${s.activePushes}, holding ${bytesText(s.activeBytes)}</dd>
  <dt>Counted against users' quotas</dt><dd>${bytesText(s.countedUserBytes)} (quota per user: ${quota(quotas.userBytes)})</dd>
  <dt>Anonymous this hour</dt><dd>${bytesText(s.anonymousBytesThisHour)} from ${s.anonymousAddressesThisHour} address(es) (quota per address: ${quota(quotas.anonymousBytesPerHour)})</dd>
</dl>
<h2>Largest users</h2>
${
  s.topUsers.length > 0
    ? html`<table><thead><tr><th>Email</th><th>In use</th><th>Of the quota</th></tr></thead><tbody>
${s.topUsers.map((u) => html`<tr><td>${u.email}</td><td>${bytesText(u.bytes)}</td><td>${quotas.userBytes > 0 ? `${Math.round((100 * u.bytes) / quotas.userBytes)}%` : '–'}</td></tr>`)}
</tbody></table>`
    : html`<p>No user stores anything.</p>`
}
${workspaces}`,
  );
}

export function adminQueuesPage(viewer: Viewer, q: Awaited<ReturnType<AdminService['queues']>>): string {
  const deliveries =
    q.deliveries.length > 0
      ? html`<table><thead><tr><th>State</th><th>Deliveries</th></tr></thead><tbody>
${q.deliveries.map((d) => html`<tr><td>${d.status}</td><td>${d.count}</td></tr>`)}</tbody></table>`
      : html`<p>No webhook deliveries.</p>`;
  const jobs =
    q.jobs === null
      ? html`<p>The job queue is not installed.</p>`
      : q.jobs.length > 0
        ? html`<table><thead><tr><th>Queue</th><th>State</th><th>Jobs</th></tr></thead><tbody>
${q.jobs.map((j) => html`<tr><td>${j.queue}</td><td>${j.state}</td><td>${j.count}</td></tr>`)}</tbody></table>`
        : html`<p>No jobs.</p>`;
  return frame(
    viewer,
    '/admin/queues',
    'Queues',
    html`<h2>Webhook deliveries</h2>${deliveries}
<h2>Email and other jobs (pg-boss)</h2>
<p>Backlog: the <code>created</code> and <code>retry</code> states; <code>completed</code> and <code>failed</code> jobs are kept a while by the queue.</p>
${jobs}`,
  );
}

export function adminSettingsPage(viewer: Viewer, rows: SettingInForce[]): string {
  return frame(
    viewer,
    '/admin/settings',
    'Settings in force',
    html`<p>The settings this server process runs with (docs/settings.md names their variables). A secret shows only whether it is set.</p>
<table class="admin-settings"><thead><tr><th>Setting</th><th>Value</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td><code>${r.path}</code></td><td>${r.secret ? html`<em>${r.value}</em>` : r.value}</td></tr>`)}
</tbody></table>`,
  );
}

export function adminSecurityPage(
  viewer: Viewer,
  state: Awaited<ReturnType<AdminService['securityEvents']>> & { page: number; size: number },
): string {
  return frame(
    viewer,
    '/admin/security',
    'Security events',
    html`<h2>Locked accounts</h2>
${
  state.locked.length > 0
    ? html`<ul>${state.locked.map((l) => html`<li>${l.email}, locked ${when(l.lockedAt)}</li>`)}</ul>`
    : html`<p>No account is locked.</p>`
}
<h2>Latest events</h2>
${
  state.events.length > 0
    ? html`<table class="admin-events"><thead><tr><th>When</th><th>Event</th><th>Email</th><th>From</th></tr></thead><tbody>
${state.events.map((e) => html`<tr><td>${when(e.at)}</td><td><code>${e.kind}</code></td><td>${e.email}</td><td>${e.ip}</td></tr>`)}
</tbody></table>`
    : html`<p>No events.</p>`
}
${pager('/admin/security', {}, state.page, state.total, state.size)}`,
  );
}

export function adminAuditPage(
  viewer: Viewer,
  state: { entries: AdminAuditEntry[]; total: number; page: number; size: number },
): string {
  return frame(
    viewer,
    '/admin/audit',
    'Admin audit',
    html`${
      state.entries.length > 0
        ? html`<table class="admin-audit"><thead><tr><th>When</th><th>Administrator</th><th>Action</th><th>User</th><th>Workspace</th><th>From</th></tr></thead><tbody>
${state.entries.map((e) => html`<tr><td>${when(e.at)}</td><td>${e.adminEmail}</td><td><code>${e.action}</code></td><td>${e.targetEmail ?? '–'}</td><td>${e.workspaceId === null ? '–' : html`#${e.workspaceId} ${e.workspaceName ?? ''}`}</td><td>${e.ip}<br><small>${e.userAgent}</small></td></tr>`)}
</tbody></table>`
        : html`<p>No admin action yet.</p>`
    }
${pager('/admin/audit', {}, state.page, state.total, state.size)}`,
  );
}

/** The page of an admin action refused for its session: not signed in with the second factor, or too long ago. */
export function adminSignInAgainPage(viewer: Viewer, reason: string): string {
  return frame(
    viewer,
    '/admin',
    'Sign in again',
    html`<p class="error" role="alert">${reason}</p>
<form method="post" action="/users/sign_out">${csrfField(viewer)}<button type="submit">Sign out, then sign in again</button></form>`,
  );
}
