/**
 * A workspace's management pages (issue 41): the sections' navigation, the settings form (name, sign-in rules) and
 * the audit trail, a page at a time, each entry said as a sentence in the page's language.
 */
import type { Workspace, WorkspaceAuditEntry } from '@secret-push/sdk/generated';
import { html, type Html } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';

/** The sections of a workspace's pages. */
export type WorkspaceSection = 'members' | 'settings' | 'brand' | 'keys' | 'webhooks' | 'audit';

const manages = (w: Workspace) => w.role === 'owner' || w.role === 'admin';

/** The sections the visitor may open, by role: owners and admins all, auditors the trail, members none but its page. */
function sectionsOf(w: Workspace): WorkspaceSection[] {
  if (manages(w)) return ['members', 'settings', 'brand', 'keys', 'webhooks', 'audit'];
  if (w.role === 'auditor') return ['members', 'audit'];
  return [];
}

const SECTION_PATHS: Record<WorkspaceSection, string> = {
  members: '',
  settings: '/settings',
  brand: '/brand',
  keys: '/keys',
  webhooks: '/webhooks',
  audit: '/audit',
};

/** The navigation between a workspace's sections (nothing for a member, who has only the workspace's page). */
export function sectionsNav(viewer: Viewer, w: Workspace, current: WorkspaceSection): Html {
  const sections = sectionsOf(w);
  if (sections.length === 0) return html``;
  const { t } = viewer.i18n;
  return html`<nav aria-label="${t('workspaces.sections.label', { name: w.name })}" class="section-nav"><ul>${sections.map(
    (s) =>
      html`<li><a href="/workspaces/${w.id}${SECTION_PATHS[s]}"${s === current ? html` aria-current="page"` : ''}>${t(`workspaces.sections.${s}`)}</a></li>`,
  )}</ul></nav>`;
}

export interface SettingsPageState {
  workspace: Workspace;
  /** The values to show (what was sent, after a refusal). */
  values?: { name: string; requireTwoFactor: boolean; requireSingleSignOn: boolean; ssoDomain: string };
  /** The instance's single sign-on provider's name: the single sign-on rule is offered only with one. */
  provider?: string | undefined;
  /** The refusals of a field, said in the page's language, shown beside it. */
  fields?: Record<string, string[]>;
  error?: string;
  notice?: string;
}

function alerts(state: { error?: string; notice?: string }): Html {
  return html`${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}${
    state.notice ? html`<p class="success" role="status">${state.notice}</p>` : ''
  }`;
}

export function settingsPage(viewer: Viewer, state: SettingsPageState): string {
  const { t } = viewer.i18n;
  const w = state.workspace;
  const values = state.values ?? {
    name: w.name,
    requireTwoFactor: w.require_two_factor,
    requireSingleSignOn: w.require_single_sign_on,
    ssoDomain: w.sso_domain ?? '',
  };
  const fields = state.fields;
  const title = t('workspaces.settings.title', { name: w.name });
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
${sectionsNav(viewer, w, 'settings')}
${alerts(state)}
${fields?.workspace ? html`<p class="error" role="alert">${fields.workspace.join('; ')}</p>` : ''}
<form method="post" action="/workspaces/${w.id}/settings" class="card" novalidate>
  ${csrfField(viewer)}
  <label for="name">${t('workspaces.name')}</label>
  <input id="name" name="name" required maxlength="100" value="${values.name}"${describedBy(fields, 'name')}>
  ${fieldErrors(fields, 'name')}
  <label class="check"><input type="checkbox" id="require_two_factor" name="require_two_factor" value="on"${
    values.requireTwoFactor ? html` checked` : ''
  }${describedBy(fields, 'require_two_factor', 'two-factor-hint')}> ${t('workspaces.settings.twoFactor')}</label>
  <p class="hint" id="two-factor-hint">${t('workspaces.settings.twoFactorHint')}</p>
  ${fieldErrors(fields, 'require_two_factor')}
  ${
    state.provider
      ? html`<label class="check"><input type="checkbox" id="require_single_sign_on" name="require_single_sign_on" value="on"${
          values.requireSingleSignOn ? html` checked` : ''
        }${describedBy(fields, 'require_single_sign_on', 'single-sign-on-hint')}> ${t('workspaces.settings.singleSignOn')}</label>
  <p class="hint" id="single-sign-on-hint">${t('workspaces.settings.singleSignOnHint', { provider: state.provider })}</p>
  ${fieldErrors(fields, 'require_single_sign_on')}`
      : ''
  }
  <label for="sso_domain">${t('workspaces.settings.ssoDomain')}</label>
  <p class="hint" id="sso-domain-hint">${t('workspaces.settings.ssoDomainHint')}</p>
  <input id="sso_domain" name="sso_domain" maxlength="253" autocomplete="off" spellcheck="false" value="${values.ssoDomain}"${describedBy(fields, 'sso_domain', 'sso-domain-hint')}>
  ${fieldErrors(fields, 'sso_domain')}
  <button type="submit">${t('workspaces.settings.submit')}</button>
</form>`,
  });
}

export interface AuditPageState {
  workspace: Workspace;
  entries: readonly WorkspaceAuditEntry[];
  /** The emails of the workspace's members, by user id (an entry names its actor by id). */
  emails: ReadonlyMap<string, string>;
  page: number;
  pages: number;
}

/** Who did it: a member's email, the subject's own (who acted on themselves), a former member, or the instance's admin. */
function actorOf(viewer: Viewer, state: AuditPageState, e: WorkspaceAuditEntry): string {
  if (e.actor_id === null) return viewer.i18n.t('workspaces.audit.administrator');
  const email = state.emails.get(e.actor_id);
  if (email) return email;
  if (e.actor_id === e.subject_id && e.subject_email !== '') return e.subject_email;
  return viewer.i18n.t('workspaces.audit.formerMember');
}

/** One entry of the trail as a sentence in the page's language. */
function auditSentence(viewer: Viewer, state: AuditPageState, e: WorkspaceAuditEntry): string {
  const { t } = viewer.i18n;
  const actor = actorOf(viewer, state, e);
  const subject = e.subject_email || t('workspaces.invitations.byLink');
  const role = e.role ?? 'member';
  switch (e.action) {
    case 'role_changed':
      return t('workspaces.audit.entry.roleChanged', { actor, subject, role });
    case 'member_removed':
      return t('workspaces.audit.entry.memberRemoved', { actor, subject });
    case 'member_left':
      return t('workspaces.audit.entry.memberLeft', { subject });
    case 'ownership_transferred':
      return t('workspaces.audit.entry.ownershipTransferred', { actor, subject });
    case 'settings_changed':
      return t('workspaces.audit.entry.settingsChanged', { actor });
    case 'member_joined_by_domain':
      return t('workspaces.audit.entry.joinedByDomain', { subject });
    case 'brand_changed':
      return t('workspaces.audit.entry.brandChanged', { actor });
    case 'invitation_created':
      return t('workspaces.audit.entry.invitationCreated', { actor, subject, role });
    case 'invitation_revoked':
      return t('workspaces.audit.entry.invitationRevoked', { actor, subject });
    case 'invitation_accepted':
      return t('workspaces.audit.entry.invitationAccepted', { subject, role });
  }
}

function auditPager(viewer: Viewer, state: AuditPageState): Html {
  if (state.pages <= 1) return html``;
  const { t } = viewer.i18n;
  const base = `/workspaces/${state.workspace.id}/audit`;
  return html`<nav aria-label="${t('workspaces.audit.pages')}" class="section-nav"><ul>
  ${state.page > 1 ? html`<li><a href="${base}?page=${state.page - 1}" rel="prev">${t('workspaces.audit.newer')}</a></li>` : ''}
  <li>${t('workspaces.audit.page', { page: state.page, pages: state.pages })}</li>
  ${state.page < state.pages ? html`<li><a href="${base}?page=${state.page + 1}" rel="next">${t('workspaces.audit.older')}</a></li>` : ''}
</ul></nav>`;
}

export function auditPage(viewer: Viewer, state: AuditPageState): string {
  const { t } = viewer.i18n;
  const w = state.workspace;
  const title = t('workspaces.audit.title', { name: w.name });
  const format = new Intl.DateTimeFormat(viewer.i18n.locale, {
    dateStyle: 'medium',
    timeStyle: 'long',
    timeZone: 'UTC',
  });
  const list =
    state.entries.length > 0
      ? html`<table class="keys">
  <thead><tr><th>${t('workspaces.audit.when')}</th><th>${t('workspaces.audit.what')}</th></tr></thead>
  <tbody>${state.entries.map(
    (e) =>
      html`<tr><td><time datetime="${e.at}">${format.format(new Date(e.at))}</time></td><td>${auditSentence(viewer, state, e)}</td></tr>`,
  )}</tbody>
</table>`
      : html`<p>${t('workspaces.audit.none')}</p>`;
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
${sectionsNav(viewer, w, 'audit')}
<p class="hint">${t('workspaces.audit.hint')}</p>
${list}
${auditPager(viewer, state)}`,
  });
}
