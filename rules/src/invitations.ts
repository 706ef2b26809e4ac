/**
 * Invitations to a workspace (issue 41; the contract's `createWorkspaceInvitation` and `acceptWorkspaceInvitation`):
 * who may invite with which role, the bounds, and who may accept. The server and the stateful mock both decide with
 * these.
 */
import { ApiError, validationFailed } from './errors.js';
import type { AssignableRole } from './generated/types.gen.js';
import { judgeMemberChange, MAX_MEMBERS_PER_WORKSPACE, type MemberStanding } from './workspaces.js';

/** Pending invitations a workspace may have at once. */
export const MAX_PENDING_INVITATIONS = 100;
/** Days an invitation lasts when the inviter names none, and the most they may name. */
export const INVITATION_DEFAULT_DAYS = 7;
export const INVITATION_MAX_DAYS = 30;

/**
 * Whether `actor` may invite someone with `role`: an invitation gives a new member a role, so it follows the rules of
 * a role change (`judgeMemberChange`) made to a member who is not the owner: the owner and admins may (403 for the
 * others), with any role an admin may give. Throws the refusal.
 */
export function judgeInvitation(actor: MemberStanding, role: AssignableRole): void {
  judgeMemberChange({ kind: 'role', role }, actor, { userId: '', role: 'member' });
}

/** 422 when the workspace already has as many pending invitations or members as it may (an acceptance: pending 0). */
export function judgeInvitationRoom(pending: number, members: number): void {
  if (pending >= MAX_PENDING_INVITATIONS)
    throw validationFailed({
      invitation: [`a workspace has at most ${MAX_PENDING_INVITATIONS} pending invitations; revoke one first`],
    });
  if (members >= MAX_MEMBERS_PER_WORKSPACE)
    throw validationFailed({ invitation: [`a workspace has at most ${MAX_MEMBERS_PER_WORKSPACE} members`] });
}

/** The answer for a token that is unknown, used, revoked or expired: one answer for all, so tokens cannot be probed. */
export const invitationNotFound = (): ApiError =>
  new ApiError('not_found', 'This invitation is not valid any more; ask for a new one.');

/**
 * Whether a user (their sign-in `email`, `verified` when they proved it) may accept an invitation sent to
 * `invited` (null: by link, anyone signed in): 403 `forbidden` otherwise.
 */
export function judgeAcceptance(invited: string | null, email: string, verified: boolean): void {
  if (invited === null) return;
  if (!verified || invited !== email.toLowerCase())
    throw new ApiError(
      'forbidden',
      'This invitation was sent to another address: sign in with the account of the verified address it was sent to.',
    );
}
