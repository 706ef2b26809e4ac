/**
 * The workspace pages (issue 41): the signed-in person's workspaces (and a form to make one), a workspace's page
 * (its members; for its owner and admins the role, removal, invitation and hand-over controls and the pending
 * invitations; leaving for everyone), and the join page of an invitation link (`/workspaces/join#<token>`).
 */
import type { AssignableRole, Workspace, WorkspaceInvitation, WorkspaceMember } from '@secret-push/sdk/generated';
import { html, type Html } from '../html.js';
import { providerButton } from './accounts.js';
import { csrfField, page, type Viewer } from './layout.js';
import { sectionsNav } from './workspace-manage.js';

/** The roles a member may be given or invited with (the contract's AssignableRole; ownership moves by hand-over). */
export const ASSIGNABLE_ROLES: readonly AssignableRole[] = ['admin', 'member', 'auditor'];

/** The lifetimes an invitation may be given here (days; the API takes 1 to 30). */
export const INVITATION_DAYS = [1, 7, 14, 30] as const;

export interface WorkspacePageState {
  workspace: Workspace;
  /** The signed-in person's user id (their own row has no controls but "leave"). */
  me: string;
  members: readonly WorkspaceMember[];
  /** The pending invitations, for the owner and admins; null for everyone else. */
  invitations: readonly WorkspaceInvitation[] | null;
  /** Whether the instance sends mail (invitations by email). */
  mail: boolean;
  /** The instance's single sign-on provider's name, or undefined: none (no domain, no single sign-on rule). */
  provider?: string | undefined;
  /** An invitation by link just made: its link, shown this once. */
  freshLink?: string;
  /** A refusal or a bad form, said in the page's language. */
  error?: string;
  notice?: string;
}

const role = (viewer: Viewer, r: string) => viewer.i18n.t('workspaces.role', { role: r });

const when = (viewer: Viewer, at: string) =>
  html`<time datetime="${at}">${new Intl.DateTimeFormat(viewer.i18n.locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(at))}</time>`;

function alerts(state: { error?: string; notice?: string }): Html {
  return html`${state.error ? html`<p class="error" role="alert" id="workspace-error">${state.error}</p>` : ''}${
    state.notice ? html`<p class="success" role="status">${state.notice}</p>` : ''
  }`;
}

export function workspacesPage(viewer: Viewer, workspaces: readonly Workspace[], error?: string): string {
  const { t } = viewer.i18n;
  const list =
    workspaces.length > 0
      ? html`<table class="keys">
  <thead><tr><th>${t('workspaces.name')}</th><th>${t('workspaces.yourRole')}</th></tr></thead>
  <tbody>${workspaces.map((w) => html`<tr><td><a href="/workspaces/${w.id}">${w.name}</a></td><td>${role(viewer, w.role)}</td></tr>`)}</tbody>
</table>`
      : html`<p>${t('workspaces.none')}</p>`;
  return page({
    title: t('workspaces.title'),
    viewer,
    body: html`<h1>${t('workspaces.title')}</h1>
<p class="hint">${t('workspaces.hint')}</p>
${list}
<div class="card" aria-labelledby="new-workspace-title">
  <h2 id="new-workspace-title">${t('workspaces.create.title')}</h2>
  ${alerts({ error })}
  <form method="post" action="/workspaces">
    ${csrfField(viewer)}
    <label for="workspace-name">${t('workspaces.name')}</label>
    <input id="workspace-name" name="name" required maxlength="100"${error ? html` aria-describedby="workspace-error" aria-invalid="true"` : ''}>
    <button type="submit">${t('workspaces.create.submit')}</button>
  </form>
</div>`,
  });
}

/** Whom a row's button acts on, for screen readers (the visible text stays the start of the button's name). */
const who = (name: string) => html`<span class="visually-hidden"> (${name})</span>`;

const manages = (w: Workspace) => w.role === 'owner' || w.role === 'admin';

function roleOptions(viewer: Viewer, selected: string): Html {
  return html`${ASSIGNABLE_ROLES.map(
    (r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${role(viewer, r)}</option>`,
  )}`;
}

/** The controls on another member's row, for the owner and admins (the owner's own row has none). */
function memberControls(viewer: Viewer, state: WorkspacePageState, m: WorkspaceMember): Html {
  const { t } = viewer.i18n;
  const base = `/workspaces/${state.workspace.id}/members/${m.user_id}`;
  if (!manages(state.workspace) || m.user_id === state.me || m.role === 'owner') return html``;
  const label = `role-${m.user_id}`;
  return html`<form method="post" action="${base}/role" class="inline">
    ${csrfField(viewer)}
    <label for="${label}" class="visually-hidden">${t('workspaces.members.roleOf', { email: m.email })}</label>
    <select id="${label}" name="role">${roleOptions(viewer, m.role)}</select>
    <button type="submit" class="secondary">${t('workspaces.members.changeRole')}</button>
  </form>
  <form method="post" action="${base}/remove" class="inline">
    ${csrfField(viewer)}
    <button type="submit" class="danger">${t('workspaces.members.remove')}${who(m.email)}</button>
  </form>${
    state.workspace.role === 'owner'
      ? html`<form method="post" action="${base}/ownership" class="inline">
    ${csrfField(viewer)}
    <button type="submit" class="secondary">${t('workspaces.members.handOver')}${who(m.email)}</button>
  </form>`
      : ''
  }`;
}

function inviteCard(viewer: Viewer, state: WorkspacePageState): Html {
  const { t } = viewer.i18n;
  const id = state.workspace.id;
  const fresh = state.freshLink
    ? html`<div class="card" aria-labelledby="fresh-link-title">
  <h3 id="fresh-link-title" tabindex="-1">${t('workspaces.invite.fresh.title')}</h3>
  <p class="success">${t('workspaces.invite.fresh.once')}</p>
  <label for="invitation-link">${t('workspaces.invite.fresh.link')}</label>
  <input id="invitation-link" class="share" readonly value="${state.freshLink}">
  <button type="button" data-copy-target="invitation-link">${t('workspaces.invite.fresh.copy')}</button>
</div>`
    : '';
  const pending =
    state.invitations && state.invitations.length > 0
      ? html`<table class="keys">
  <caption>${t('workspaces.invitations.title')}</caption>
  <thead><tr><th>${t('workspaces.invitations.to')}</th><th>${t('workspaces.yourRole')}</th><th>${t('workspaces.invitations.expires')}</th><th><span class="visually-hidden">${t('workspaces.invitations.revoke')}</span></th></tr></thead>
  <tbody>${state.invitations.map(
    (
      i,
    ) => html`<tr><td>${i.email ?? t('workspaces.invitations.byLink')}</td><td>${role(viewer, i.role)}</td><td>${when(viewer, i.expires_at)}</td>
  <td><form method="post" action="/workspaces/${id}/invitations/${i.id}/revoke">${csrfField(viewer)}<button type="submit" class="danger">${t('workspaces.invitations.revoke')}${who(i.email ?? t('workspaces.invitations.byLink'))}</button></form></td></tr>`,
  )}</tbody>
</table>`
      : html`<p>${t('workspaces.invitations.none')}</p>`;
  return html`<div class="card" aria-labelledby="invite-title">
  <h2 id="invite-title">${t('workspaces.invite.title')}</h2>
  ${fresh}
  <form method="post" action="/workspaces/${id}/invitations">
    ${csrfField(viewer)}
    ${
      state.mail
        ? html`<label for="invite-email">${t('workspaces.invite.email')}</label>
    <p class="hint" id="invite-email-hint">${t('workspaces.invite.emailHint')}</p>
    <input id="invite-email" name="email" type="email" maxlength="320" aria-describedby="invite-email-hint">`
        : html`<p class="hint">${t('workspaces.invite.linkOnly')}</p>`
    }
    <label for="invite-role">${t('workspaces.invite.role')}</label>
    <select id="invite-role" name="role">${roleOptions(viewer, 'member')}</select>
    <label for="invite-days">${t('workspaces.invite.days')}</label>
    <select id="invite-days" name="expires_in_days">${INVITATION_DAYS.map(
      (d) => html`<option value="${d}"${d === 7 ? html` selected` : ''}>${t('apiKeys.inDays', { days: d })}</option>`,
    )}</select>
    <button type="submit">${t('workspaces.invite.submit')}</button>
  </form>
  ${pending}
</div>`;
}

/** The owner's deletion of the workspace, behind its name typed again (`deleteWorkspace`'s confirmation). */
function deleteCard(viewer: Viewer, w: Workspace): Html {
  const { t } = viewer.i18n;
  return html`<div class="card" aria-labelledby="delete-title">
  <h2 id="delete-title">${t('workspaces.delete.title')}</h2>
  <p class="hint" id="delete-hint">${t('workspaces.delete.hint')}</p>
  <form method="post" action="/workspaces/${w.id}/delete">
    ${csrfField(viewer)}
    <label for="delete-confirm">${t('workspaces.delete.confirm')}</label>
    <input id="delete-confirm" name="confirm" required maxlength="1000" autocomplete="off" spellcheck="false" aria-describedby="delete-hint">
    <button type="submit" class="danger">${t('workspaces.delete.submit')}</button>
  </form>
</div>`;
}

/**
 * A member the workspace's sign-in rules shut out: the refusal, and for single sign-on the provider's button, which
 * comes back to the workspace's page.
 */
export function shutOutPage(
  viewer: Viewer,
  state: { workspace: Workspace; error: string; provider?: string | undefined },
): string {
  const w = state.workspace;
  return page({
    title: w.name,
    viewer,
    body: html`<h1>${w.name}</h1>
${alerts(state)}
${state.provider ? providerButton(viewer, { provider: state.provider, next: `/workspaces/${w.id}` }) : ''}
<p><a href="/workspaces">${viewer.i18n.t('workspaces.all')}</a></p>`,
  });
}

export function workspacePage(viewer: Viewer, state: WorkspacePageState): string {
  const { t } = viewer.i18n;
  const w = state.workspace;
  const rows = state.members.map(
    (m) => html`<tr>
  <td>${m.email}${m.user_id === state.me ? html` <small>(${t('workspaces.members.you')})</small>` : ''}</td>
  <td>${role(viewer, m.role)}</td>
  <td>${when(viewer, m.joined_at)}</td>
  <td>${memberControls(viewer, state, m)}</td>
</tr>`,
  );
  return page({
    title: w.name,
    viewer,
    body: html`<h1>${w.name}</h1>
<p>${t('workspaces.youAre', { role: w.role })} <a href="/workspaces">${t('workspaces.all')}</a></p>
${sectionsNav(viewer, w, 'members')}
${alerts(state)}
<p><a href="/pushes/active?workspace_id=${w.id}" id="workspace-pushes">${t(w.role === 'member' ? 'workspaces.pushes.own' : 'workspaces.pushes.all')}</a></p>
<div class="card" aria-labelledby="members-title">
  <h2 id="members-title">${t('workspaces.members.title')}</h2>
  <table class="keys">
    <thead><tr><th>${t('workspaces.members.email')}</th><th>${t('workspaces.members.role')}</th><th>${t('workspaces.members.joined')}</th><th><span class="visually-hidden">${t('workspaces.members.actions')}</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table>
</div>
${manages(w) ? inviteCard(viewer, state) : ''}
<div class="card" aria-labelledby="leave-title">
  <h2 id="leave-title">${t('workspaces.leave.title')}</h2>
  <p class="hint">${t(w.role === 'owner' ? 'workspaces.leave.ownerHint' : 'workspaces.leave.hint')}</p>
  <form method="post" action="/workspaces/${w.id}/leave">
    ${csrfField(viewer)}
    <button type="submit" class="danger">${t('workspaces.leave.submit')}</button>
  </form>
</div>
${w.role === 'owner' ? deleteCard(viewer, w) : ''}`,
  });
}

/**
 * The join page as it opens: the token is in the address's fragment, which the browser never sends. Signed out, the
 * page asks to sign in (join.js keeps the token in this tab meanwhile); signed in, join.js puts the token into the
 * form and sends it (a POST body: no access log sees it), and the answer shows what the invitation offers.
 */
export function joinPage(viewer: Viewer): string {
  const { t } = viewer.i18n;
  const body = viewer.user
    ? html`<p id="join-wait" hidden>${t('workspaces.join.reading')}</p>
<form method="post" action="/workspaces/join" id="join-form">
  ${csrfField(viewer)}
  <label for="join-token">${t('workspaces.join.token')}</label>
  <p class="hint" id="join-token-hint">${t('workspaces.join.tokenHint')}</p>
  <input id="join-token" name="token" required maxlength="200" autocomplete="off" spellcheck="false" aria-describedby="join-token-hint">
  <button type="submit">${t('workspaces.join.show')}</button>
</form>`
    : html`<p>${t('workspaces.join.signInFirst')}</p>
<p><a href="/users/sign_in?next=%2Fworkspaces%2Fjoin" id="join-sign-in">${t('layout.nav.signIn')}</a>${
        viewer.signupsEnabled
          ? html` · <a href="/users/sign_up?next=%2Fworkspaces%2Fjoin">${t('layout.nav.signUp')}</a>`
          : ''
      }</p>
<p class="hint">${t('workspaces.join.kept')}</p>`;
  return page({
    title: t('workspaces.join.title'),
    viewer,
    body: html`<h1>${t('workspaces.join.title')}</h1>
${body}`,
    scripts: ['join.js'],
  });
}

export interface JoinOffer {
  workspaceId: number;
  name: string;
  role: AssignableRole;
  memberRole: string | null;
}

/** What the invitation offers, and the button that accepts it (the token goes back in the form's body). */
export function joinOfferPage(viewer: Viewer, offer: JoinOffer, token: string): string {
  const { t } = viewer.i18n;
  const body =
    offer.memberRole !== null
      ? html`<p>${t('workspaces.join.already', { name: offer.name, role: offer.memberRole })}</p>
<p><a href="/workspaces/${offer.workspaceId}">${t('workspaces.join.open', { name: offer.name })}</a></p>`
      : html`<p>${t('workspaces.join.offer', { name: offer.name, role: offer.role })}</p>
<form method="post" action="/workspaces/join/accept">
  ${csrfField(viewer)}
  <input type="hidden" name="token" value="${token}">
  <button type="submit" id="join-accept">${t('workspaces.join.accept', { name: offer.name })}</button>
</form>`;
  return page({
    title: t('workspaces.join.title'),
    viewer,
    body: html`<h1>${t('workspaces.join.title')}</h1>
${body}`,
  });
}
