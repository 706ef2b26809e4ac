/**
 * The workspace area's services, wired once for the core (issue 41): the workspaces and their members, and their
 * invitations (which mail through `queue`, null when the instance sends no mail: invitations by link only then).
 */
import type { Settings } from '../config/settings.js';
import { guarded } from '../db/database-errors.js';
import type { Db } from '../db/sql.js';
import type { JobQueue } from '../jobs/queue.js';
import { createInvitationRepository } from './invitation-repository.js';
import { createInvitationService, type InvitationService } from './invitation-service.js';
import { createMemberRepository } from './member-repository.js';
import { createWorkspaceRepository } from './workspace-repository.js';
import { createWorkspaceService, type WorkspaceService } from './workspace-service.js';

export function workspaceArea(
  db: Db,
  settings: Settings,
  queue: JobQueue | null,
): { workspaces: WorkspaceService; invitations: InvitationService } {
  const repository = createWorkspaceRepository(db);
  return {
    workspaces: guarded(
      createWorkspaceService(
        repository,
        createMemberRepository(db),
        settings.oidc ? { allowedDomains: settings.oidc.allowedDomains } : null,
      ),
    ),
    invitations: guarded(
      createInvitationService({
        invitations: createInvitationRepository(db),
        workspaces: repository,
        queue: settings.mail.smtpUrl === null ? null : queue,
        publicBaseUrl: settings.publicBaseUrl,
      }),
    ),
  };
}
