/**
 * The statements of a workspace's member management (issue 41): the members with their emails, and each change
 * (a role, a removal, a departure, a hand-over) in one transaction that locks the memberships it reads, applies the
 * change and writes the workspace's audit trail (`workspace_audit`, Migration20270201000000_workspace_members).
 * Who may make which change is decided by `judgeMemberChange` (rules/src/workspaces.ts), called under the locks.
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { MAX_MEMBERS_PER_WORKSPACE, type MemberChange, type MemberStanding } from '@secret-push/rules';
import { sql, type Db } from '../db/sql.js';
import { WORKSPACE_AUDIT, type WorkspaceAuditAction } from './workspace-audit.js';

/** A member with their sign-in email. */
export interface MemberRecord {
  userId: string;
  email: string;
  role: WorkspaceRole;
  joinedAt: Date;
}

type MemberRow = { user_id: string; email: string; role: WorkspaceRole; created_at: Date };

const M = {
  list: sql<{ workspaceId: number; limit: number }, MemberRow>(
    `select m.user_id, u.email, m.role, m.created_at
     from workspace_members m join users u on u.id = m.user_id
     where m.workspace_id = :workspaceId
     order by (m.role = 'owner') desc, m.created_at, m.user_id limit :limit`,
  ),
  /** The actor's and the subject's memberships, locked in one order (two changes at once never deadlock). */
  lock: sql<{ workspaceId: number; ids: string[] }, MemberRow>(
    `select m.user_id, u.email, m.role, m.created_at
     from workspace_members m join users u on u.id = m.user_id
     where m.workspace_id = :workspaceId and m.user_id = any(cast(:ids as uuid[]))
     order by m.user_id for update of m`,
  ),
  setRole: sql<{ workspaceId: number; userId: string; role: WorkspaceRole }>(
    'update workspace_members set role = :role where workspace_id = :workspaceId and user_id = :userId',
  ),
  remove: sql<{ workspaceId: number; userId: string }>(
    'delete from workspace_members where workspace_id = :workspaceId and user_id = :userId',
  ),
};

const fromRow = (r: MemberRow): MemberRecord => ({
  userId: r.user_id,
  email: r.email,
  role: r.role,
  joinedAt: new Date(r.created_at),
});

const ACTION: Record<MemberChange['kind'], WorkspaceAuditAction> = {
  role: 'role_changed',
  remove: 'member_removed',
  leave: 'member_left',
  transfer: 'ownership_transferred',
};

/**
 * Applies a change the rules allowed (`judgeMemberChange`, called first under the locks) to `target`, with its audit
 * entry, in `tx`: a role set, a hand-over (`formerOwnerId`, the owner then, steps down to admin first: the partial
 * unique index allows one owner at any moment; null when the workspace has none), or a removal. `actorId` is who the
 * trail names: the member who acted, or an instance administrator (the admin console, ../admin/).
 */
export async function applyMemberChange(
  tx: Db,
  workspaceId: number,
  change: MemberChange,
  target: MemberRecord,
  by: { actorId: string; formerOwnerId: string | null },
  now: Date,
): Promise<MemberRecord> {
  let changed: MemberRecord = target;
  if (change.kind === 'role') {
    await tx.query(M.setRole, { workspaceId, userId: target.userId, role: change.role });
    changed = { ...target, role: change.role };
  } else if (change.kind === 'transfer') {
    if (by.formerOwnerId !== null) await tx.query(M.setRole, { workspaceId, userId: by.formerOwnerId, role: 'admin' });
    await tx.query(M.setRole, { workspaceId, userId: target.userId, role: 'owner' });
    changed = { ...target, role: 'owner' };
  } else {
    await tx.query(M.remove, { workspaceId, userId: target.userId });
  }
  await tx.query(WORKSPACE_AUDIT.insert, {
    workspaceId,
    action: ACTION[change.kind],
    actorId: by.actorId,
    subjectId: target.userId,
    subjectEmail: target.email,
    role: change.kind === 'role' || change.kind === 'transfer' ? changed.role : null,
    now,
  });
  return changed;
}

export interface MemberRepository {
  /** The workspace's members, the owner first; null when `userId` is not one of them (or no such workspace). */
  list(workspaceId: number, userId: string): Promise<MemberRecord[] | null>;
  /**
   * Makes `change` by `actorId` to `subjectId` (the actor themself for a departure) once `judge` allows it, under
   * locks on both memberships, with its audit entry; answers the subject as changed (removed: as they were). Null
   * when the actor is not a member (or no such workspace); `judge` throws every other refusal, and nothing changes.
   */
  change(
    workspaceId: number,
    actorId: string,
    subjectId: string,
    change: MemberChange,
    judge: (actor: MemberStanding, subject: MemberStanding | null) => void,
    now: Date,
  ): Promise<MemberRecord | null>;
}

export function createMemberRepository(db: Db): MemberRepository {
  return {
    async list(workspaceId, userId) {
      const rows = (await db.query(M.list, { workspaceId, limit: MAX_MEMBERS_PER_WORKSPACE })).map(fromRow);
      return rows.some((r) => r.userId === userId) ? rows : null;
    },

    async change(workspaceId, actorId, subjectId, change, judge, now) {
      return db.transaction(async (tx) => {
        const rows = (await tx.query(M.lock, { workspaceId, ids: [actorId, subjectId] })).map(fromRow);
        const actor = rows.find((r) => r.userId === actorId);
        if (!actor) return null;
        const subject = rows.find((r) => r.userId === subjectId) ?? null;
        judge(actor, subject);
        return applyMemberChange(tx, workspaceId, change, subject!, { actorId, formerOwnerId: actorId }, now);
      });
    },
  };
}
