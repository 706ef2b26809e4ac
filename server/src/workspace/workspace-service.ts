/**
 * Workspaces (issue 41; the contract's "Workspaces"): the caller's list, a new one, and the membership check every
 * create or list that names a workspace passes first. The roles' rules are here, once: who may create in a
 * workspace, and who sees every push of it.
 */
import type { Workspace, WorkspaceMember, WorkspaceRole } from '@secret-push/sdk/generated';
import {
  ApiError,
  judgeMemberChange,
  type MemberChange,
  validationFailed,
  workspaceNotFound,
} from '@secret-push/rules';
import { keyWorkspace, type RequestContext } from '../request-context.js';
import type { MemberRecord, MemberRepository } from './member-repository.js';
import { MAX_WORKSPACES_PER_USER, type MemberWorkspace, type WorkspaceRepository } from './workspace-repository.js';

/** What a caller may do in a workspace, by role. */
const MAY_CREATE: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'member']);
const SEES_EVERY_PUSH: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'auditor']);
const EXPIRES_EVERY_PUSH: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin']);
/** Who manages a workspace's API keys (and makes them). */
const MANAGES_KEYS: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin']);
/**
 * The role a workspace's API key acts with: only owners and admins make one, and it acts with their rights whoever
 * made it (and whether they are still a member).
 */
const KEY_ROLE: WorkspaceRole = 'admin';

/** A caller's standing in a workspace, once checked. */
interface Membership {
  workspaceId: number;
  role: WorkspaceRole;
  /** Sees (lists) every push of the workspace, not only the caller's own. */
  seesAll: boolean;
}

export interface WorkspaceService {
  list(ctx: RequestContext): Promise<Workspace[]>;
  create(name: string, ctx: RequestContext): Promise<Workspace>;
  /**
   * The caller's membership in the workspace, or 401 without a user, 403 `forbidden` when the caller is not a member
   * (or the workspace does not exist: the same answer, so ids cannot be probed) or the role may not `do` it
   * (`manage`: its API keys, for its owner and admins). A workspace's API key is in its own workspace with an admin's
   * rights, and in no other; a personal key's membership is its user's, read on every call.
   */
  membership(workspaceId: number, ctx: RequestContext, doing: 'create' | 'read' | 'manage'): Promise<Membership>;
  /**
   * Whether the caller may `doing` a push of the workspace that is not their own: its owners and admins expire any
   * and read any audit log, its auditors read any audit log. False for everyone else (no error: the push's own rules
   * then decide).
   */
  governs(workspaceId: number, ctx: RequestContext, doing: 'expire' | 'audit'): Promise<boolean>;
  /** The workspace's members, for any member of it; 404 for anyone else (or no such workspace). */
  members(workspaceId: number, ctx: RequestContext): Promise<WorkspaceMember[]>;
  /**
   * Makes a change to the membership of `subjectId` (ignored for `leave`: the caller leaves), by the workspace's
   * rules (`judgeMemberChange`); 404 when the caller is not a member, 403/422 when the rules refuse. Audited.
   */
  changeMember(
    workspaceId: number,
    subjectId: string,
    change: MemberChange,
    ctx: RequestContext,
  ): Promise<WorkspaceMember>;
}

const memberToWire = (m: MemberRecord): WorkspaceMember => ({
  user_id: m.userId,
  email: m.email,
  role: m.role,
  joined_at: m.joinedAt.toISOString(),
});

const toWire = (w: MemberWorkspace): Workspace => ({
  id: w.id,
  name: w.name,
  role: w.role,
  created_at: w.createdAt.toISOString(),
  updated_at: w.updatedAt.toISOString(),
});

function requireUser(ctx: RequestContext): string {
  if (ctx.actor.userId === null) throw new ApiError('authentication_required', 'A workspace needs an API token.');
  return ctx.actor.userId;
}

export function createWorkspaceService(repository: WorkspaceRepository, members: MemberRepository): WorkspaceService {
  return {
    async list(ctx) {
      const own = keyWorkspace(ctx);
      if (own !== null) {
        // A workspace's key sees its workspace alone, not its creator's others.
        const workspace = await repository.byId(own, KEY_ROLE);
        return workspace ? [toWire(workspace)] : [];
      }
      return (await repository.listFor(requireUser(ctx))).map(toWire);
    },

    async create(name, ctx) {
      const userId = requireUser(ctx);
      if (keyWorkspace(ctx) !== null)
        throw new ApiError('forbidden', "A workspace's API key acts only in its workspace: it makes no other.");
      const trimmed = name.trim();
      if (trimmed === '') throw validationFailed({ name: ['must not be empty'] });
      const made = await repository.create(userId, trimmed, ctx.now ?? new Date());
      if (!made)
        throw validationFailed({
          workspace: [`a user owns at most ${MAX_WORKSPACES_PER_USER} workspaces; hand one over first`],
        });
      return toWire(made);
    },

    async membership(workspaceId, ctx, doing) {
      const userId = requireUser(ctx);
      const own = keyWorkspace(ctx);
      if (own !== null) {
        if (own !== workspaceId) throw new ApiError('forbidden', "A workspace's API key acts only in its workspace.");
        return { workspaceId, role: KEY_ROLE, seesAll: true };
      }
      // Asked on every request: a membership that ends ends its personal keys' rights here at once.
      const role = await repository.roleOf(workspaceId, userId);
      if (role === null) throw new ApiError('forbidden', 'You are not a member of this workspace.');
      if (doing === 'create' && !MAY_CREATE.has(role))
        throw new ApiError('forbidden', `An ${role} of this workspace may not create in it.`);
      if (doing === 'manage' && !MANAGES_KEYS.has(role))
        throw new ApiError('forbidden', `Only the workspace's owner and admins manage it; you are its ${role}.`);
      return { workspaceId, role, seesAll: SEES_EVERY_PUSH.has(role) };
    },

    async governs(workspaceId, ctx, doing) {
      if (ctx.actor.userId === null) return false;
      const own = keyWorkspace(ctx);
      if (own !== null) return own === workspaceId;
      const role = await repository.roleOf(workspaceId, ctx.actor.userId);
      return role !== null && (doing === 'expire' ? EXPIRES_EVERY_PUSH : SEES_EVERY_PUSH).has(role);
    },

    async members(workspaceId, ctx) {
      const listed = await members.list(workspaceId, requireUser(ctx));
      if (!listed) throw workspaceNotFound();
      return listed.map(memberToWire);
    },

    async changeMember(workspaceId, subjectId, change, ctx) {
      const userId = requireUser(ctx);
      const subject = change.kind === 'leave' ? userId : subjectId;
      const judge = judgeMemberChange.bind(null, change);
      const changed = await members.change(workspaceId, userId, subject, change, judge, ctx.now ?? new Date());
      if (!changed) throw workspaceNotFound();
      return memberToWire(changed);
    },
  };
}
