/**
 * The workspaces of the create form (issue 41): which the person may create in (not as an auditor, whose creates the
 * workspace service refuses), and the one a posted form names.
 */
import type { Request } from 'express';
import { validationFailed } from '@secret-push/rules';
import { field } from '../forms.js';
import type { PageKit } from '../page-kit.js';
import type { CreateWorkspace } from '../views/workspace-chooser.js';

export async function createWorkspacesOf(
  kit: PageKit,
  req: Request,
  userId: string | null,
): Promise<CreateWorkspace[] | undefined> {
  if (userId === null || !kit.core.workspaces) return undefined;
  const list = await kit.core.workspaces.list(kit.ctxOf(req, userId));
  return list.filter((w) => w.role !== 'auditor').map((w) => ({ id: w.id, name: w.name }));
}

/** The workspace a posted create form names (`workspace_id`), or undefined: the personal space. */
export function workspaceOfForm(form: FormData): number | undefined {
  const raw = field(form, 'workspace_id').trim();
  if (raw === '') return undefined;
  if (!/^[1-9][0-9]{0,14}$/.test(raw)) throw validationFailed({ workspace_id: ['must be one of your workspaces'] });
  return Number(raw);
}
