/**
 * Workspaces (issue 41; the contract's "Workspaces"): the caller's list, a new one, and the membership check every
 * create or list that names a workspace passes first. The roles' rules are here, once: who may create in a
 * workspace, and who sees every push of it.
 */
import type { Workspace, WorkspaceAuditEntry, WorkspaceMember, WorkspaceRole } from '@secret-push/sdk/generated';
import {
  ApiError,
  confirmsDeletion,
  judgeMemberChange,
  mayDeleteWorkspace,
  type MemberChange,
  PAGE_SIZE,
  validationFailed,
  workspaceNotFound,
} from '@secret-push/rules';
import { keyWorkspace, type RequestContext } from '../request-context.js';
import type { AuditTrail } from './audit-trail.js';
import type { MemberRecord, MemberRepository } from './member-repository.js';
import { MAX_WORKSPACES_PER_USER, type MemberWorkspace, type WorkspaceRepository } from './workspace-repository.js';
import type { WorkspaceDeletion } from './workspace-deletion.js';
import { signOnProof, type SettingsRefusal, type WorkspaceSettingsChange } from './workspace-rules.js';

/** What a caller may do in a workspace, by role. */
const MAY_CREATE: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'member']);
const SEES_EVERY_PUSH: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'auditor']);
const EXPIRES_EVERY_PUSH: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin']);
/** Who reads a workspace's audit trail (`workspace_audit`). */
const READS_TRAIL: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'auditor']);
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
  /**
   * `updateWorkspace`: the workspace's name and sign-in rules (two-factor, single sign-on, an email domain), changed by its owner or an admin signed in as
   * themselves (a workspace's key → 403); 404 for a non-member, 422 for a field that breaks its rule. Audited.
   */
  update(workspaceId: number, change: WorkspaceSettingsChange, ctx: RequestContext): Promise<Workspace>;
  /**
   * One page of the workspace's audit trail, newest first, for its owner, admins and auditors; 403 for a member, 404
   * for anyone not in it (or no such workspace).
   */
  audit(
    workspaceId: number,
    ctx: RequestContext,
    page: number,
  ): Promise<{ items: WorkspaceAuditEntry[]; total: number }>;
  /**
   * `deleteWorkspace`: the workspace and everything it holds (./workspace-deletion.ts), by its owner signed in as
   * themselves, `confirm` its name exactly (422 otherwise); an admin, member or auditor or a workspace's key → 403,
   * anyone else (or no such workspace) → 404. Answers the workspace as it was.
   */
  remove(workspaceId: number, confirm: string, ctx: RequestContext): Promise<Workspace>;
}

/** What the instance's single sign-on allows, for `sso_domain` (null: no single sign-on). */
export interface WorkspaceSignOn {
  /** The email domains that may sign in (PWPUSH_OIDC_ALLOWED_DOMAINS); empty: any. */
  allowedDomains: readonly string[];
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
  require_two_factor: w.requireTwoFactor,
  require_single_sign_on: w.requireSingleSignOn,
  sso_domain: w.ssoDomain,
  created_at: w.createdAt.toISOString(),
  updated_at: w.updatedAt.toISOString(),
});

function requireUser(ctx: RequestContext): string {
  if (ctx.actor.userId === null) throw new ApiError('authentication_required', 'A workspace needs an API token.');
  return ctx.actor.userId;
}

/** The refusal a member shut out by the workspace's two-factor rule gets, wherever they act in it. */
const twoFactorRequired = () =>
  new ApiError(
    'two_factor_required',
    'This workspace requires two-factor sign-in: turn it on for your account (the page /users/two_factor), then try again.',
  );

/** The refusal a member shut out by the workspace's single sign-on rule gets, wherever they act in it. */
const singleSignOnRequired = () =>
  new ApiError(
    'single_sign_on_required',
    "This workspace requires single sign-on: sign in with your organisation's single sign-on (the page /users/sign_in), then try again.",
  );

/** The refusal of a standing the workspace's sign-in rules shut out now, or null: let in. */
export function shutOut(standing: { blocked: boolean; ssoBlocked: boolean } | null): ApiError | null {
  if (standing?.blocked) return twoFactorRequired();
  if (standing?.ssoBlocked) return singleSignOnRequired();
  return null;
}

const SETTINGS_REFUSALS: Record<Exclude<SettingsRefusal, 'not_member'>, () => ApiError> = {
  blocked: twoFactorRequired,
  sso_blocked: singleSignOnRequired,
  own_single_sign_on: () =>
    validationFailed({
      require_single_sign_on: [
        'sign in by single sign-on yourself first (your account must be linked to its provider: nobody locks themselves out)',
      ],
    }),
  role: () => new ApiError('forbidden', "Only the workspace's owner and admins change its settings."),
  own_two_factor: () =>
    validationFailed({
      require_two_factor: ['turn on two-factor sign-in for your own account first (nobody locks themselves out)'],
    }),
  domain_not_own: () => validationFailed({ sso_domain: ['must be the domain of your own email address'] }),
  domain_taken: () => validationFailed({ sso_domain: ['another workspace is tied to this domain'] }),
};

/** Why the instance's single sign-on could never sign anyone of `domain` in, or null (or no domain: nothing to say). */
function domainProblem(domain: string | null | undefined, signOn: WorkspaceSignOn | null): string | null {
  if (domain == null) return null;
  if (!signOn) return 'this instance has no single sign-on';
  if (signOn.allowedDomains.length > 0 && !signOn.allowedDomains.includes(domain))
    return "this instance's single sign-on does not allow this domain";
  return null;
}

export function createWorkspaceService(
  repository: WorkspaceRepository,
  members: MemberRepository,
  trail: AuditTrail,
  signOn: WorkspaceSignOn | null = null,
  deletion: WorkspaceDeletion | null = null,
): WorkspaceService {
  /** A member's standing, once the workspace's sign-in rules let them in; null: not a member. */
  const standing = async (workspaceId: number, userId: string, ctx: RequestContext) => {
    const found = await repository.roleOf(workspaceId, userId, signOnProof(ctx));
    const refused = shutOut(found);
    if (refused) throw refused;
    return found;
  };
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
      const role = (await standing(workspaceId, userId, ctx))?.role ?? null;
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
      const found = await repository.roleOf(workspaceId, ctx.actor.userId, signOnProof(ctx));
      return !!found && !shutOut(found) && (doing === 'expire' ? EXPIRES_EVERY_PUSH : SEES_EVERY_PUSH).has(found.role);
    },

    async members(workspaceId, ctx) {
      const userId = requireUser(ctx);
      await standing(workspaceId, userId, ctx);
      const listed = await members.list(workspaceId, userId);
      if (!listed) throw workspaceNotFound();
      return listed.map(memberToWire);
    },

    async changeMember(workspaceId, subjectId, change, ctx) {
      const userId = requireUser(ctx);
      // Leaving stays open to a member the sign-in rules shut out; every other change needs them let in.
      if (change.kind !== 'leave') await standing(workspaceId, userId, ctx);
      const subject = change.kind === 'leave' ? userId : subjectId;
      const judge = judgeMemberChange.bind(null, change);
      const changed = await members.change(workspaceId, userId, subject, change, judge, ctx.now ?? new Date());
      if (!changed) throw workspaceNotFound();
      return memberToWire(changed);
    },

    async update(workspaceId, change, ctx) {
      const userId = requireUser(ctx);
      if (keyWorkspace(ctx) !== null)
        throw new ApiError('forbidden', "A workspace's API key may not change the workspace's settings.");
      const name = change.name?.trim();
      if (name === '') throw validationFailed({ name: ['must not be empty'] });
      const ssoDomain = change.ssoDomain == null ? change.ssoDomain : change.ssoDomain.toLowerCase();
      const domainRefusal = domainProblem(ssoDomain, signOn);
      const ssoRefusal = change.requireSingleSignOn === true && !signOn ? 'this instance has no single sign-on' : null;
      if (domainRefusal || ssoRefusal) {
        // A non-member learns nothing of the instance's rules: 404 first, as for every other refusal.
        if (!(await repository.roleOf(workspaceId, userId, signOnProof(ctx)))) throw workspaceNotFound();
        throw validationFailed({
          ...(ssoRefusal ? { require_single_sign_on: [ssoRefusal] } : {}),
          ...(domainRefusal ? { sso_domain: [domainRefusal] } : {}),
        });
      }
      const changed = await repository.update(
        workspaceId,
        { userId, viaSso: signOnProof(ctx) },
        { ...change, ...(name === undefined ? {} : { name }), ...(ssoDomain === undefined ? {} : { ssoDomain }) },
        ctx.now ?? new Date(),
      );
      if (changed === 'not_member') throw workspaceNotFound();
      if (typeof changed === 'string') throw SETTINGS_REFUSALS[changed]();
      return toWire(changed);
    },

    async audit(workspaceId, ctx, page) {
      const role = (await standing(workspaceId, requireUser(ctx), ctx))?.role ?? null;
      if (role === null) throw workspaceNotFound();
      if (!READS_TRAIL.has(role))
        throw new ApiError('forbidden', `A ${role} of this workspace does not read its audit trail.`);
      return trail.page(workspaceId, PAGE_SIZE, (page - 1) * PAGE_SIZE);
    },

    async remove(workspaceId, confirm, ctx) {
      const userId = requireUser(ctx);
      if (!deletion) throw new ApiError('no_route', 'Workspaces are not deleted by this instance.');
      const key = keyWorkspace(ctx) !== null;
      // The sign-in rules first, as everywhere in the workspace (a member they shut out is told why).
      if (!key) await standing(workspaceId, userId, ctx);
      const deleted = await deletion.delete(
        workspaceId,
        userId,
        (workspace, actor) => {
          if (actor.role === null && !key) throw workspaceNotFound();
          if (key) throw new ApiError('forbidden', "A workspace's API key may not delete its workspace.");
          if (actor.blocked) throw twoFactorRequired();
          if (!mayDeleteWorkspace(actor.role))
            throw new ApiError('forbidden', `Only the workspace's owner deletes it; you are its ${actor.role}.`);
          if (!confirmsDeletion(workspace.name, confirm))
            throw validationFailed({ confirm: ["must be the workspace's name, exactly"] });
        },
        userId,
        ctx.now ?? new Date(),
      );
      if (!deleted) throw workspaceNotFound();
      return toWire({ ...deleted.workspace, role: 'owner' });
    },
  };
}
