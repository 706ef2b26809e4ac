/**
 * A workspace's own trail (`workspace_audit`, Migration20270201000000_workspace_members): who changed what of the
 * workspace, when. The kinds of entry are listed here, once (the table checks only their form since
 * Migration20270204000000_workspace_rules); every writer goes through `WORKSPACE_AUDIT.insert`, in the transaction of
 * the change it records.
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { sql } from '../db/sql.js';

export const WORKSPACE_AUDIT_ACTIONS = [
  'role_changed',
  'member_removed',
  'member_left',
  'ownership_transferred',
  /** The workspace's name or sign-in rules changed (`updateWorkspace`); the subject is the actor. */
  'settings_changed',
  /** A person of the workspace's `sso_domain` joined it at a single sign-on; actor and subject are that person. */
  'member_joined_by_domain',
  /** The workspace's brand was set (`updateWorkspaceBrand`, issue 42); the subject is the actor. */
  'brand_changed',
  /**
   * An invitation made, revoked or accepted (./invitation-repository.ts, which writes `invitation_id` beside): the
   * subject's email is the invited address ('' for a link until it is accepted).
   */
  'invitation_created',
  'invitation_revoked',
  'invitation_accepted',
] as const;

export type WorkspaceAuditAction = (typeof WORKSPACE_AUDIT_ACTIONS)[number];

export const WORKSPACE_AUDIT = {
  insert: sql<{
    workspaceId: number;
    action: WorkspaceAuditAction;
    actorId: string | null;
    subjectId: string;
    subjectEmail: string;
    role: WorkspaceRole | null;
    now: Date;
  }>(
    `insert into workspace_audit (workspace_id, action, actor_id, subject_id, subject_email, role, at)
     values (:workspaceId, :action, :actorId, :subjectId, :subjectEmail, :role, :now)`,
  ),
};
