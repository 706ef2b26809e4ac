/**
 * The create form's "Where" chooser (issue 41): the signed-in person's personal space or one of the workspaces they
 * may create in. Shown only to someone who belongs to any; the push then goes through the create service's
 * `workspaceId`, so the workspace's rules (membership, `require_two_factor`) apply as on the API.
 */
import { html, type Html } from '../html.js';
import type { Viewer } from './layout.js';

/** A workspace the person may create in (the create page lists them). */
export interface CreateWorkspace {
  id: number;
  name: string;
}

export function whereChooser(
  viewer: Viewer,
  workspaces: readonly CreateWorkspace[] | undefined,
  selected: number | undefined,
): Html {
  if (!workspaces || workspaces.length === 0) return html``;
  const { t } = viewer.i18n;
  return html`<label for="create-where">${t('create.where.label')}</label>
  <select id="create-where" name="workspace_id">
    <option value="">${t('create.where.personal')}</option>
    ${workspaces.map(
      (w) => html`<option value="${w.id}"${w.id === selected ? html` selected` : ''}>${w.name}</option>`,
    )}
  </select>`;
}
