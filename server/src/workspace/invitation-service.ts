/**
 * Invitations to a workspace (issue 41; the contract's `createWorkspaceInvitation`, `listWorkspaceInvitations`,
 * `revokeWorkspaceInvitation`, `acceptWorkspaceInvitation`): by email (a mail with the link goes out through the job
 * queue: ./invitation-mail.ts) or by link (answered once). Tokens are random, kept as their SHA-256 only, single use
 * and lapse; the rules are rules/src/invitations.ts, judged under the workspace's lock (./invitation-repository.ts).
 */
import { randomUUID } from 'node:crypto';
import type { AssignableRole, Workspace, WorkspaceInvitation, WorkspaceRole } from '@secret-push/sdk/generated';
import {
  ApiError,
  DAY_MS,
  INVITATION_DEFAULT_DAYS,
  INVITATION_MAX_DAYS,
  invitationNotFound,
  judgeAcceptance,
  judgeInvitation,
  judgeInvitationRoom,
  validationFailed,
  workspaceNotFound,
} from '@secret-push/rules';
import { newInvitationToken, tokenDigest } from '../crypto/tokens.js';
import type { JobQueue } from '../jobs/queue.js';
import { keyWorkspace, type RequestContext } from '../request-context.js';
import { EMAIL, normalizeEmail } from '../user/user-service.js';
import type { InvitationRecord, InvitationRepository } from './invitation-repository.js';
import { INVITATION_QUEUE, invitationLink, type InvitationJob } from './invitation-mail.js';
import type { WorkspaceRepository } from './workspace-repository.js';
import { signOnProof } from './workspace-rules.js';

/** What `createWorkspaceInvitation` takes (its body's `invitation`). */
interface InvitationInput {
  role: AssignableRole;
  email?: string;
  expires_in_days?: number;
}

export interface InvitationService {
  /** Invites by email (the mail is queued) or by link (`url` in the answer, this once); 404/403/422 as the contract says. */
  create(workspaceId: number, input: InvitationInput, ctx: RequestContext): Promise<WorkspaceInvitation>;
  list(workspaceId: number, ctx: RequestContext): Promise<WorkspaceInvitation[]>;
  revoke(workspaceId: number, invitationId: string, ctx: RequestContext): Promise<WorkspaceInvitation>;
  /**
   * What a token offers the caller, changing nothing (the join page's step before its button): the workspace's id,
   * name and the role offered, and the caller's role there now (null: not a member). Refused as `accept` would refuse
   * it: 404 for an unknown, used, revoked or expired token, 403 for an invitation by email to another address.
   */
  preview(token: string, ctx: RequestContext): Promise<InvitationPreview>;
  /** The caller joins (or, already a member, stays as they are); the workspace with the caller's role. */
  accept(token: string, ctx: RequestContext): Promise<Workspace>;
}

interface InvitationPreview {
  workspaceId: number;
  name: string;
  role: AssignableRole;
  memberRole: WorkspaceRole | null;
}

const toWire = (r: InvitationRecord, url?: string): WorkspaceInvitation => ({
  id: r.id,
  workspace_id: r.workspaceId,
  email: r.email,
  role: r.role,
  invited_by: r.invitedBy,
  created_at: r.createdAt.toISOString(),
  expires_at: r.expiresAt.toISOString(),
  ...(url ? { url } : {}),
});

/** Only people act on invitations: a workspace's key never invites anyone, nor joins anything. */
function requirePerson(ctx: RequestContext): string {
  if (ctx.actor.userId === null) throw new ApiError('authentication_required', 'A workspace needs an API token.');
  if (keyWorkspace(ctx) !== null)
    throw new ApiError('forbidden', "A workspace's API key does not invite or join: a person does.");
  return ctx.actor.userId;
}

/** The owner and admins manage invitations (the rule of a role change: judgeInvitation). */
const manages = (actor: Parameters<typeof judgeInvitation>[0]) => judgeInvitation(actor, 'member');

function readAddress(email: string | undefined): string | null {
  if (email === undefined) return null;
  const normalized = normalizeEmail(email);
  if (normalized.length > 320 || !EMAIL.test(normalized))
    throw validationFailed({ email: ['must be an email address'] });
  return normalized;
}

export function createInvitationService(deps: {
  invitations: InvitationRepository;
  workspaces: WorkspaceRepository;
  /** The queue the mails go through; null when the instance sends no mail (invitations by link only, then). */
  queue: JobQueue | null;
  /** The base of the links answered (PWPUSH_PUBLIC_BASE_URL, else the request's own). */
  publicBaseUrl: string | null;
}): InvitationService {
  const { invitations, workspaces, queue } = deps;
  return {
    async create(workspaceId, input, ctx) {
      const userId = requirePerson(ctx);
      const email = readAddress(input.email);
      if (email !== null && queue === null)
        throw validationFailed({ email: ['this instance sends no mail: invite by link (leave email out)'] });
      const days = input.expires_in_days ?? INVITATION_DEFAULT_DAYS;
      if (!Number.isInteger(days) || days < 1 || days > INVITATION_MAX_DAYS)
        throw validationFailed({
          expires_in_days: [`must be a whole number of days from 1 to ${INVITATION_MAX_DAYS}`],
        });
      const now = ctx.now ?? new Date();
      const id = randomUUID();
      const token = email === null ? newInvitationToken() : null;
      const made = await invitations.create(
        workspaceId,
        { userId, viaSso: signOnProof(ctx) },
        {
          id,
          email,
          role: input.role,
          digest: token === null ? null : tokenDigest(token),
          expiresAt: new Date(now.getTime() + days * DAY_MS),
          ...(email !== null && queue !== null
            ? { enqueue: (tx) => queue.enqueue(tx, INVITATION_QUEUE, { invitation: id } satisfies InvitationJob) }
            : {}),
        },
        (actor, room) => {
          judgeInvitation(actor, input.role);
          judgeInvitationRoom(room.pending, room.members);
        },
        now,
      );
      if (!made) throw workspaceNotFound();
      return toWire(made, token === null ? undefined : invitationLink(deps.publicBaseUrl ?? ctx.baseUrl, token));
    },

    async list(workspaceId, ctx) {
      const listed = await invitations.list(
        workspaceId,
        { userId: requirePerson(ctx), viaSso: signOnProof(ctx) },
        manages,
        ctx.now ?? new Date(),
      );
      if (!listed) throw workspaceNotFound();
      return listed.map((r) => toWire(r));
    },

    async revoke(workspaceId, invitationId, ctx) {
      const done = await invitations.revoke(
        workspaceId,
        { userId: requirePerson(ctx), viaSso: signOnProof(ctx) },
        invitationId,
        manages,
        ctx.now ?? new Date(),
      );
      if (done === null) throw workspaceNotFound();
      if (done === 'none') throw new ApiError('not_found', 'This workspace has no pending invitation with this id.');
      return toWire(done);
    },

    async preview(token, ctx) {
      const userId = requirePerson(ctx);
      const offer = await invitations.preview(tokenDigest(token), userId, ctx.now ?? new Date());
      if (!offer) throw invitationNotFound();
      // A member already is one (accept answers their role as it is); anyone else is judged as accept judges them.
      if (offer.memberRole === null) judgeAcceptance(offer.email, offer.user.email, offer.user.verified);
      return { workspaceId: offer.workspaceId, name: offer.name, role: offer.role, memberRole: offer.memberRole };
    },

    async accept(token, ctx) {
      const userId = requirePerson(ctx);
      const joined = await invitations.accept(
        tokenDigest(token),
        userId,
        (invited, user, members) => {
          judgeAcceptance(invited, user.email, user.verified);
          judgeInvitationRoom(0, members);
        },
        ctx.now ?? new Date(),
      );
      if (!joined) throw invitationNotFound();
      const workspace = await workspaces.byId(joined.workspaceId, joined.role);
      if (!workspace) throw invitationNotFound();
      return {
        id: workspace.id,
        name: workspace.name,
        role: workspace.role,
        require_two_factor: workspace.requireTwoFactor,
        require_single_sign_on: workspace.requireSingleSignOn,
        sso_domain: workspace.ssoDomain,
        created_at: workspace.createdAt.toISOString(),
        updated_at: workspace.updatedAt.toISOString(),
      };
    },
  };
}
