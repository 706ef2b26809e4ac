/**
 * The workspace area's services, wired once for the core (issue 41): the workspaces, their members and trail, their
 * brands (issue 42, with what a workspace's mails carry), and their invitations, which mail through the job queue
 * (null when the instance sends no mail: invitations by link only then). The invitations come second: the queue
 * starts after the brands, whose mails it sends.
 */
import type { Settings } from '../config/settings.js';
import { guarded } from '../db/database-errors.js';
import type { Db } from '../db/sql.js';
import type { JobQueue } from '../jobs/queue.js';
import { createAuditTrail } from './audit-trail.js';
import { createBrandRepository } from './brand-repository.js';
import { createWorkspaceBrandService, mailBrandResolver } from './brand-service.js';
import { createInvitationRepository } from './invitation-repository.js';
import { createInvitationService, type InvitationService } from './invitation-service.js';
import { createMemberRepository } from './member-repository.js';
import { createWorkspaceDeletion } from './workspace-deletion.js';
import { createWorkspaceRepository, type WorkspaceRepository } from './workspace-repository.js';
import { createWorkspaceService } from './workspace-service.js';

export function workspaceArea(
  db: Db,
  settings: Settings,
  objectsGone?: (keys: string[]) => void,
  log?: (facts: Record<string, unknown>) => void,
) {
  const repository = createWorkspaceRepository(db, settings.oidc?.issuer ?? null);
  const brands = createBrandRepository(db);
  const deletion = createWorkspaceDeletion(db, objectsGone, log);
  return {
    repository,
    deletion,
    workspaces: guarded(
      createWorkspaceService(
        repository,
        createMemberRepository(db),
        createAuditTrail(db),
        settings.oidc ? { allowedDomains: settings.oidc.allowedDomains } : null,
        deletion,
      ),
    ),
    workspaceBrands: guarded(createWorkspaceBrandService(repository, brands)),
    mailBrandOf: mailBrandResolver(brands, settings.brand),
  };
}

export function invitationArea(
  db: Db,
  settings: Settings,
  repository: WorkspaceRepository,
  queue: JobQueue | null,
): InvitationService {
  return guarded(
    createInvitationService({
      invitations: createInvitationRepository(db, settings.oidc?.issuer ?? null),
      workspaces: repository,
      queue: settings.mail.smtpUrl === null ? null : queue,
      publicBaseUrl: settings.publicBaseUrl,
    }),
  );
}
