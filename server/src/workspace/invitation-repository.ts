/**
 * The statements of a workspace's invitations (issue 41; `workspace_invitations`,
 * Migration20270205000000_workspace_invitations). Each create, revocation and acceptance runs in one transaction
 * that locks the workspace's row first (so the bounds are exact when two run at once), writes the change and its
 * `workspace_audit` row, and, for an invitation by email, enqueues its mail. Who may do what is decided by the
 * rules in rules/src/invitations.ts, called under the lock.
 */
import type { AssignableRole, WorkspaceRole } from '@secret-push/sdk/generated';
import type { MemberStanding } from '@secret-push/rules';
import { sql, type Db } from '../db/sql.js';
import type { WorkspaceAuditAction } from './workspace-audit.js';
import { SSO_BLOCKED, type SignOnProof } from './workspace-rules.js';
import { shutOut } from './workspace-service.js';

/** An invitation as its workspace's owners and admins see it (never its token). */
export interface InvitationRecord {
  id: string;
  workspaceId: number;
  email: string | null;
  role: AssignableRole;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

type InvitationRow = {
  id: string;
  workspace_id: number;
  email: string | null;
  role: AssignableRole;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
};

const PENDING = 'i.accepted_at is null and i.revoked_at is null and i.expires_at > :now';
const COLUMNS = `i.id, i.workspace_id, i.email, i.role, u.email as invited_by, i.created_at, i.expires_at`;

const I = {
  /** The workspace's row, locked: creates and acceptances of one workspace take turns. */
  lockWorkspace: sql<{ workspaceId: number }, { name: string }>(
    'select name from workspaces where id = :workspaceId for update',
  ),
  /** The member's role, and whether the workspace's sign-in rules shut them out (as `roleOf` reads them). */
  standing: sql<
    { workspaceId: number; userId: string; viaSso: SignOnProof; issuer: string },
    { role: WorkspaceRole; blocked: boolean; sso_blocked: boolean }
  >(
    `select m.role, w.require_two_factor and u.totp_enabled_at is null as blocked, ${SSO_BLOCKED}
     from workspace_members m join workspaces w on w.id = m.workspace_id join users u on u.id = m.user_id
     where m.workspace_id = :workspaceId and m.user_id = :userId for share of m`,
  ),
  room: sql<{ workspaceId: number; now: Date }, { pending: number; members: number }>(
    `select (select count(*)::int from workspace_invitations i where i.workspace_id = :workspaceId and ${PENDING})
              as pending,
            (select count(*)::int from workspace_members where workspace_id = :workspaceId) as members`,
  ),
  insert: sql<
    {
      id: string;
      workspaceId: number;
      email: string | null;
      role: AssignableRole;
      digest: string | null;
      userId: string;
      now: Date;
      expiresAt: Date;
    },
    InvitationRow
  >(
    `with made as (
       insert into workspace_invitations (id, workspace_id, email, role, token_digest, invited_by, created_at, expires_at)
       values (:id, :workspaceId, :email, :role, :digest, :userId, :now, :expiresAt)
       returning *
     )
     select ${COLUMNS} from made i left join users u on u.id = i.invited_by`,
  ),
  list: sql<{ workspaceId: number; now: Date; limit: number }, InvitationRow>(
    `select ${COLUMNS} from workspace_invitations i left join users u on u.id = i.invited_by
     where i.workspace_id = :workspaceId and ${PENDING} order by i.created_at desc, i.id limit :limit`,
  ),
  revoke: sql<{ workspaceId: number; id: string; now: Date }, InvitationRow>(
    `with done as (
       update workspace_invitations i set revoked_at = :now
       where i.id = :id and i.workspace_id = :workspaceId and ${PENDING}
       returning i.*
     )
     select ${COLUMNS} from done i left join users u on u.id = i.invited_by`,
  ),
  /** The workspace of a token's invitation (read before its lock is taken: the workspace's row is locked first). */
  workspaceOf: sql<{ digest: string }, { workspace_id: number }>(
    'select workspace_id from workspace_invitations where token_digest = :digest',
  ),
  /** The invitation of a token: pending, or already accepted by this user (a retried accept). */
  byDigest: sql<{ digest: string; userId: string; now: Date }, InvitationRow & { accepted_by: string | null }>(
    `select ${COLUMNS}, i.accepted_by from workspace_invitations i left join users u on u.id = i.invited_by
     where i.token_digest = :digest and i.revoked_at is null
       and ((i.accepted_at is null and i.expires_at > :now) or i.accepted_by = :userId)
     for update of i`,
  ),
  accepted: sql<{ id: string; userId: string; now: Date }>(
    'update workspace_invitations set accepted_at = :now, accepted_by = :userId where id = :id',
  ),
  join: sql<{ workspaceId: number; userId: string; role: AssignableRole; now: Date }>(
    `insert into workspace_members (workspace_id, user_id, role, created_at)
     values (:workspaceId, :userId, :role, :now)`,
  ),
  user: sql<{ userId: string }, { email: string; verified: boolean }>(
    'select email, email_confirmed_at is not null as verified from users where id = :userId',
  ),
  audit: sql<{
    workspaceId: number;
    action: Extract<WorkspaceAuditAction, `invitation_${string}`>;
    actorId: string;
    subjectId: string | null;
    subjectEmail: string;
    role: AssignableRole;
    invitationId: string;
    now: Date;
  }>(
    `insert into workspace_audit (workspace_id, action, actor_id, subject_id, subject_email, role, invitation_id, at)
     values (:workspaceId, :action, :actorId, :subjectId, :subjectEmail, :role, :invitationId, :now)`,
  ),
  /**
   * What a token offers, read without changing anything (the join page shows it before the button): the workspace,
   * the role, the invited address, the caller's role there now (null: not a member) and the caller's own address.
   */
  preview: sql<
    { digest: string; userId: string; now: Date },
    {
      workspace_id: number;
      name: string;
      role: AssignableRole;
      email: string | null;
      member_role: WorkspaceRole | null;
      user_email: string;
      verified: boolean;
    }
  >(
    `select i.workspace_id, w.name, i.role, i.email, m.role as member_role, u.email as user_email,
            u.email_confirmed_at is not null as verified
     from workspace_invitations i join workspaces w on w.id = i.workspace_id join users u on u.id = :userId
     left join workspace_members m on m.workspace_id = i.workspace_id and m.user_id = :userId
     where i.token_digest = :digest and i.revoked_at is null
       and ((i.accepted_at is null and i.expires_at > :now) or i.accepted_by = :userId)`,
  ),
  /** The mail job's: a pending invitation by email, its workspace's name and the languages to write in. */
  forMail: sql<
    { id: string; now: Date },
    {
      email: string;
      workspace: string;
      role: AssignableRole;
      invitee_locale: string | null;
      inviter_locale: string | null;
    }
  >(
    `select i.email, w.name as workspace, i.role, (select locale from users where email = i.email) as invitee_locale,
            inviter.locale as inviter_locale
     from workspace_invitations i join workspaces w on w.id = i.workspace_id
     left join users inviter on inviter.id = i.invited_by
     where i.id = :id and i.email is not null and ${PENDING}`,
  ),
  setDigest: sql<{ id: string; digest: string; now: Date }>(
    `update workspace_invitations i set token_digest = :digest where i.id = :id and ${PENDING}`,
  ),
};

export const invitationStatements = { forMail: I.forMail, setDigest: I.setDigest };

const fromRow = (r: InvitationRow): InvitationRecord => ({
  id: r.id,
  workspaceId: Number(r.workspace_id),
  email: r.email,
  role: r.role,
  invitedBy: r.invited_by,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

/** What a create stores: the invitation (its token's digest for one by link) and, in its transaction, the mail job. */
interface NewInvitation {
  id: string;
  email: string | null;
  role: AssignableRole;
  digest: string | null;
  expiresAt: Date;
  /** Runs in the create's transaction once the row is written (the mail job of an invitation by email). */
  enqueue?: (tx: Db) => Promise<void>;
}

/** What a token offers its holder (InvitationRepository.preview). */
interface InvitationOffer {
  workspaceId: number;
  name: string;
  role: AssignableRole;
  /** The invited address (null: an invitation by link). */
  email: string | null;
  /** The holder's role in the workspace now, or null: not a member. */
  memberRole: WorkspaceRole | null;
  user: { email: string; verified: boolean };
}

/** The workspace and role an acceptance ended in, and whether it changed anything. */
interface Joined {
  workspaceId: number;
  role: WorkspaceRole;
  changed: boolean;
}

/** Who manages a workspace's invitations, and how their credential stands to single sign-on. */
interface InvitationCaller {
  userId: string;
  viaSso: SignOnProof;
}

export interface InvitationRepository {
  /**
   * Makes the invitation by `actorId` once `judge` allows it (the actor's standing, the pending invitations and the
   * members counted under the workspace's lock); null when the actor is not a member (or no such workspace).
   */
  create(
    workspaceId: number,
    caller: InvitationCaller,
    invitation: NewInvitation,
    judge: (actor: MemberStanding, room: { pending: number; members: number }) => void,
    now: Date,
  ): Promise<InvitationRecord | null>;
  /** The pending invitations, newest first, once `judge` allows the actor; null when the actor is not a member. */
  list(
    workspaceId: number,
    caller: InvitationCaller,
    judge: (actor: MemberStanding) => void,
    now: Date,
  ): Promise<InvitationRecord[] | null>;
  /**
   * Revokes a pending invitation once `judge` allows the actor; null when the actor is not a member, 'none' when the
   * workspace has no pending invitation of this id.
   */
  revoke(
    workspaceId: number,
    caller: InvitationCaller,
    id: string,
    judge: (actor: MemberStanding) => void,
    now: Date,
  ): Promise<InvitationRecord | null | 'none'>;
  /**
   * Accepts the invitation of `digest` for `userId`, `judge` deciding first (the invited address and the user's,
   * the members' count); null when no pending invitation has it. A user already a member joins nothing (changed
   * false); the invitation stays pending then, unless this user accepted it before.
   */
  /** What the pending invitation of `digest` offers `userId` (or one this user accepted); null: none. Reads only. */
  preview(digest: string, userId: string, now: Date): Promise<InvitationOffer | null>;
  accept(
    digest: string,
    userId: string,
    judge: (invited: string | null, user: { email: string; verified: boolean }, members: number) => void,
    now: Date,
  ): Promise<Joined | null>;
}

/** `issuer`: the instance's single sign-on provider, or null without one. */
export function createInvitationRepository(db: Db, issuer: string | null = null): InvitationRepository {
  /**
   * The actor's standing under the workspace's lock, or null: not a member (or no such workspace). A member the
   * workspace's sign-in rules shut out is refused here (403 `two_factor_required`, `single_sign_on_required`) when
   * `managing` (an invitation made, listed or revoked); accepting stays open, the rules then apply to the new member
   * as to any other.
   */
  const standing = async (tx: Db, workspaceId: number, caller: InvitationCaller, managing = true) => {
    const [workspace] = await tx.query(I.lockWorkspace, { workspaceId });
    if (!workspace) return null;
    const { userId, viaSso } = caller;
    const [member] = await tx.query(I.standing, { workspaceId, userId, viaSso, issuer: issuer ?? '' });
    const refused = managing && member ? shutOut({ blocked: member.blocked, ssoBlocked: member.sso_blocked }) : null;
    if (refused) throw refused;
    return member ? ({ userId, role: member.role } satisfies MemberStanding) : null;
  };
  return {
    async create(workspaceId, caller, invitation, judge, now) {
      const actorId = caller.userId;
      return db.transaction(async (tx) => {
        const actor = await standing(tx, workspaceId, caller);
        if (!actor) return null;
        const [room] = await tx.query(I.room, { workspaceId, now });
        judge(actor, room!);
        const [row] = await tx.query(I.insert, { ...invitation, workspaceId, userId: actorId, now });
        await tx.query(I.audit, {
          workspaceId,
          action: 'invitation_created',
          actorId,
          subjectId: null,
          subjectEmail: invitation.email ?? '',
          role: invitation.role,
          invitationId: invitation.id,
          now,
        });
        await invitation.enqueue?.(tx);
        return fromRow(row!);
      });
    },

    async list(workspaceId, caller, judge, now) {
      return db.transaction(async (tx) => {
        const actor = await standing(tx, workspaceId, caller);
        if (!actor) return null;
        judge(actor);
        return (await tx.query(I.list, { workspaceId, now, limit: 100 })).map(fromRow);
      });
    },

    async revoke(workspaceId, caller, id, judge, now) {
      const actorId = caller.userId;
      return db.transaction(async (tx) => {
        const actor = await standing(tx, workspaceId, caller);
        if (!actor) return null;
        judge(actor);
        const [row] = await tx.query(I.revoke, { workspaceId, id, now });
        if (!row) return 'none';
        await tx.query(I.audit, {
          workspaceId,
          action: 'invitation_revoked',
          actorId,
          subjectId: null,
          subjectEmail: row.email ?? '',
          role: row.role,
          invitationId: id,
          now,
        });
        return fromRow(row);
      });
    },

    async preview(digest, userId, now) {
      const [row] = await db.query(I.preview, { digest, userId, now });
      if (!row) return null;
      return {
        workspaceId: Number(row.workspace_id),
        name: row.name,
        role: row.role,
        email: row.email,
        memberRole: row.member_role,
        user: { email: row.user_email, verified: row.verified },
      };
    },

    async accept(digest, userId, judge, now) {
      return db.transaction(async (tx) => {
        const [where] = await tx.query(I.workspaceOf, { digest });
        if (!where) return null;
        // The workspace's row first, then the invitation's: the order a create and a revocation take.
        const member = await standing(tx, Number(where.workspace_id), { userId, viaSso: null }, false);
        const [found] = await tx.query(I.byDigest, { digest, userId, now });
        if (!found) return null;
        const invitation = fromRow(found);
        const workspaceId = invitation.workspaceId;
        if (member) return { workspaceId, role: member.role, changed: false };
        // Used by this user, who has left since: used is used.
        if (found.accepted_by !== null) return null;
        const [user] = await tx.query(I.user, { userId });
        const [room] = await tx.query(I.room, { workspaceId, now });
        judge(invitation.email, user!, room!.members);
        await tx.query(I.join, { workspaceId, userId, role: invitation.role, now });
        await tx.query(I.accepted, { id: invitation.id, userId, now });
        await tx.query(I.audit, {
          workspaceId,
          action: 'invitation_accepted',
          actorId: userId,
          subjectId: userId,
          subjectEmail: user!.email,
          role: invitation.role,
          invitationId: invitation.id,
          now,
        });
        return { workspaceId, role: invitation.role, changed: true };
      });
    },
  };
}
