/**
 * A workspace's invitations in the stateful mock (issue 41), by the server's rules (rules/src/invitations.ts,
 * server/src/workspace/invitation-service.ts): the owner and admins invite (by email or by link), list the pending
 * ones and revoke them; a signed-in user accepts by the token in the body. Mock users are known by email and count
 * as verified; an invitation by email mails nothing here
 * (the mock sends no mail), so only invitations by link are accepted in it.
 */
import type { AssignableRole, Workspace, WorkspaceInvitation, WorkspaceRole } from '../generated/types.gen.js';
import {
  ApiError,
  DAY_MS,
  INVITATION_DEFAULT_DAYS,
  INVITATION_MAX_DAYS,
  invitationNotFound,
  judgeAcceptance,
  judgeInvitation,
  judgeInvitationRoom,
  type MemberStanding,
  validationFailed,
  workspaceNotFound,
} from '@secret-push/rules';

/** What the invitations need of the mock's workspaces (./workspaces.ts). */
export interface InvitationWorkspaces {
  /** The caller's standing (null: not a member, or no such workspace) and the workspace's member count. */
  standing(workspaceId: number, email: string): { actor: MemberStanding | null; members: number };
  /** Adds a member with `role`; answers the workspace as they see it. */
  join(workspaceId: number, email: string, role: WorkspaceRole, now: number): Workspace;
  /** The workspace as `email` sees it, or null when they are not in it. */
  seenBy(workspaceId: number, email: string): Workspace | null;
}

interface StoredInvitation {
  record: WorkspaceInvitation;
  token: string;
  acceptedBy: string | null;
  revoked: boolean;
}

const EMAIL = /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class MockInvitations {
  private readonly invitations = new Map<string, StoredInvitation>();

  constructor(private readonly workspaces: InvitationWorkspaces) {}

  create(workspaceId: number, email: string, body: unknown, base: string, now: number): WorkspaceInvitation {
    const input = invitationOf(body);
    const role = input.role;
    if (role !== 'admin' && role !== 'member' && role !== 'auditor')
      throw validationFailed({ role: ['must be admin, member or auditor (ownership moves by transferWorkspace)'] });
    const invited = addressOf(input.email);
    const days = input.expires_in_days ?? INVITATION_DEFAULT_DAYS;
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > INVITATION_MAX_DAYS)
      throw validationFailed({ expires_in_days: [`must be a whole number of days from 1 to ${INVITATION_MAX_DAYS}`] });
    const { actor, members } = this.workspaces.standing(workspaceId, email);
    if (!actor) throw workspaceNotFound();
    judgeInvitation(actor, role);
    judgeInvitationRoom(this.pending(workspaceId, now).length, members);
    const token = newToken();
    const record: WorkspaceInvitation = {
      id: crypto.randomUUID(),
      workspace_id: workspaceId,
      email: invited,
      role,
      invited_by: email,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + days * DAY_MS).toISOString(),
    };
    this.invitations.set(record.id, { record, token, acceptedBy: null, revoked: false });
    return invited === null ? { ...record, url: `${base.replace(/\/+$/, '')}/workspaces/join#${token}` } : record;
  }

  list(workspaceId: number, email: string, now: number): WorkspaceInvitation[] {
    this.manager(workspaceId, email);
    return this.pending(workspaceId, now)
      .map((i) => i.record)
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
  }

  revoke(workspaceId: number, email: string, id: string, now: number): WorkspaceInvitation {
    this.manager(workspaceId, email);
    const found = this.pending(workspaceId, now).find((i) => i.record.id === id);
    if (!found) throw new ApiError('not_found', 'This workspace has no pending invitation with this id.');
    found.revoked = true;
    return found.record;
  }

  accept(email: string, body: unknown, now: number): Workspace {
    const token = invitationOf(body).token;
    if (typeof token !== 'string' || !TOKEN.test(token))
      throw validationFailed({ token: ["must be the 43 characters that follow # in the invitation's link"] });
    const found = [...this.invitations.values()].find((i) => i.token === token && !i.revoked);
    if (!found) throw invitationNotFound();
    const workspaceId = found.record.workspace_id;
    const seen = this.workspaces.seenBy(workspaceId, email);
    const usable = found.acceptedBy === null && Date.parse(found.record.expires_at) > now;
    if (seen && (usable || found.acceptedBy === email)) return seen;
    if (!usable) throw invitationNotFound();
    judgeAcceptance(found.record.email, email, true);
    judgeInvitationRoom(0, this.workspaces.standing(workspaceId, email).members);
    found.acceptedBy = email;
    return this.workspaces.join(workspaceId, email, found.record.role, now);
  }

  /** A deleted workspace's (deleteWorkspace): they go with it. */
  dropWorkspace(workspaceId: number): void {
    for (const [id, item] of this.invitations)
      if (item.record.workspace_id === workspaceId) this.invitations.delete(id);
  }

  reset(): void {
    this.invitations.clear();
  }

  private manager(workspaceId: number, email: string): void {
    const { actor } = this.workspaces.standing(workspaceId, email);
    if (!actor) throw workspaceNotFound();
    judgeInvitation(actor, 'member');
  }

  private pending(workspaceId: number, now: number): StoredInvitation[] {
    return [...this.invitations.values()].filter(
      (i) =>
        i.record.workspace_id === workspaceId &&
        !i.revoked &&
        i.acceptedBy === null &&
        Date.parse(i.record.expires_at) > now,
    );
  }
}

/** The body's `invitation` object, else 400 as the server. */
function invitationOf(body: unknown): { role?: unknown; email?: unknown; expires_in_days?: unknown; token?: unknown } {
  const input = (body as { invitation?: unknown } | null)?.invitation;
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw new ApiError('bad_request', 'The request body must be a JSON object with an "invitation" object.');
  return input as { role?: AssignableRole };
}

function addressOf(email: unknown): string | null {
  if (email === undefined) return null;
  const normalized = typeof email === 'string' ? email.trim().toLowerCase() : '';
  if (normalized.length > 320 || !EMAIL.test(normalized))
    throw validationFailed({ email: ['must be an email address'] });
  return normalized;
}
