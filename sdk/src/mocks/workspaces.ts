/**
 * Workspaces in the stateful mock, by the server's rules (server/src/workspace/): a user's list with their role, a
 * new one owned by its maker, and the membership a create or list naming a workspace needs (403 `forbidden` for a
 * workspace the caller is not in, or that does not exist). Kept in memory, per mock; members are known by email.
 */
import type { Workspace, WorkspaceAuditEntry, WorkspaceMember, WorkspaceRole } from '../generated/types.gen.js';
import {
  ApiError,
  type ApiKeyScope,
  confirmsDeletion,
  judgeMemberChange,
  listedWorkspace,
  type MemberChange,
  type MemberStanding,
  mayDeleteWorkspace,
  validationFailed,
  workspaceNotFound,
} from '@secret-push/rules';
import { type InvitationWorkspaces, MockInvitations } from './invitations.js';
import type { MockActor, MockStore } from './store.js';
import { MockWorkspaceBrands } from './workspace-brand.js';
import { settingsOf } from './workspace-settings.js';

const MAX_WORKSPACES_PER_USER = 100;
const MAY_CREATE: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'member']);
const SEES_EVERY_PUSH: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'auditor']);
const MANAGES: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin']);
/** A workspace's API key acts there with an admin's rights, whoever made it. */
const KEY_ROLE: WorkspaceRole = 'admin';

interface StoredWorkspace {
  id: number;
  name: string;
  createdAt: string;
  updatedAt: string;
  members: Map<string, WorkspaceRole>;
  /** When each member joined (the list's order after the owner). */
  joined: Map<string, string>;
  /** Its audit trail, oldest first (each member change, as the server's `workspace_audit`). */
  trail?: WorkspaceAuditEntry[];
}

/** Who reads a workspace's audit trail. */
const READS_TRAIL: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'auditor']);
let trailIds = 0;

/** A caller's standing in a workspace, once checked. */
export interface MockMembership {
  workspaceId: number;
  /** Sees every push of the workspace, not only the caller's own. */
  seesAll: boolean;
}

export class MockWorkspaces implements InvitationWorkspaces {
  private readonly workspaces = new Map<number, StoredWorkspace>();
  /** Their invitations (./invitations.ts). */
  readonly invitations = new MockInvitations(this);
  /** Each user's id (mock users are known by email; an id is made the first time one is needed). */
  private readonly userIds = new Map<string, string>();
  private nextId = 1;
  /** Their brands (issue 42, ./workspace-brand.ts). */
  readonly brands = new MockWorkspaceBrands();

  /** The user's workspaces; a workspace's key (`keyWorkspace`) sees its own alone. */
  list(email: string, keyWorkspace: number | null = null): Workspace[] {
    if (keyWorkspace !== null) {
      const own = this.workspaces.get(keyWorkspace);
      return own ? [this.record(own, KEY_ROLE)] : [];
    }
    return [...this.workspaces.values()]
      .filter((w) => w.members.has(email))
      .map((w) => this.record(w, w.members.get(email)!));
  }

  create(email: string, body: unknown, now: number): Workspace {
    const input = (body as { workspace?: unknown } | null)?.workspace;
    if (!input || typeof input !== 'object' || Array.isArray(input))
      throw new ApiError('bad_request', 'The request body must be a JSON object with a "workspace" object.');
    const name = (input as { name?: unknown }).name;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 100)
      throw validationFailed({ name: ['must not be empty'] });
    const owned = [...this.workspaces.values()].filter((w) => w.members.get(email) === 'owner').length;
    if (owned >= MAX_WORKSPACES_PER_USER)
      throw validationFailed({
        workspace: [`a user owns at most ${MAX_WORKSPACES_PER_USER} workspaces; hand one over first`],
      });
    const made: StoredWorkspace = {
      id: this.nextId++,
      name: name.trim(),
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
      members: new Map([[email, 'owner']]),
      joined: new Map([[email, new Date(now).toISOString()]]),
    };
    this.workspaces.set(made.id, made);
    return this.record(made, 'owner');
  }

  /**
   * The caller's membership (401 without a user, 403 when not a member or the role may not `doing`); a workspace's key
   * (`keyWorkspace`) is in its own workspace with an admin's rights and in no other.
   */
  membership(
    workspaceId: number,
    email: string | null,
    doing: 'create' | 'read' | 'manage',
    keyWorkspace: number | null = null,
  ): MockMembership {
    if (email === null) throw new ApiError('authentication_required', 'A workspace needs an API token.');
    if (keyWorkspace !== null) {
      if (keyWorkspace !== workspaceId)
        throw new ApiError('forbidden', "A workspace's API key acts only in its workspace.");
      return { workspaceId, seesAll: true };
    }
    const role = this.workspaces.get(workspaceId)?.members.get(email);
    if (!role) throw new ApiError('forbidden', 'You are not a member of this workspace.');
    if (doing === 'create' && !MAY_CREATE.has(role))
      throw new ApiError('forbidden', `An ${role} of this workspace may not create in it.`);
    if (doing === 'manage' && !MANAGES.has(role))
      throw new ApiError('forbidden', `Only the workspace's owner and admins manage it; you are its ${role}.`);
    return { workspaceId, seesAll: SEES_EVERY_PUSH.has(role) };
  }

  /** A create (`readCreateBody`'s push), in the workspace it names once the caller may create there, else personal. */
  createIn(store: MockStore, body: { push: unknown; workspaceId: number | null }, actor: MockActor) {
    const keyWorkspace = actor.grantor?.workspaceId ?? null;
    const named = body.workspaceId ?? keyWorkspace;
    const inWorkspace = named
      ? this.membership(named, actor.user?.email ?? null, 'create', keyWorkspace).workspaceId
      : null;
    const { push } = body;
    return store.create(push, actor, undefined, inWorkspace);
  }

  /** The workspace a list's query names, once the caller may read it; null: the caller's personal list. */
  forList(url: URL, actor: MockActor): MockMembership | null {
    const keyWorkspace = actor.grantor?.workspaceId ?? null;
    const workspaceId = listedWorkspace(Object.fromEntries(url.searchParams)) ?? keyWorkspace;
    return workspaceId ? this.membership(workspaceId, actor.user?.email ?? null, 'read', keyWorkspace) : null;
  }

  /**
   * The workspace an API-key operation acts on once the caller manages it (owner, admin, or its own key): the one
   * named, else the caller key's; null: the personal space.
   */
  managed(named: number | null, email: string, actor: MockActor): number | null {
    const keyWorkspace = actor.grantor?.workspaceId ?? null;
    const workspaceId = named ?? keyWorkspace;
    return workspaceId === null ? null : this.membership(workspaceId, email, 'manage', keyWorkspace).workspaceId;
  }

  /** The workspace's members, the owner first (404 for anyone not in it, as the server). */
  members(workspaceId: number, email: string): WorkspaceMember[] {
    const w = this.workspaces.get(workspaceId);
    if (!w?.members.has(email)) throw workspaceNotFound();
    return [...w.members.keys()]
      .map((m) => this.member(w, m))
      .sort(
        (a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.joined_at.localeCompare(b.joined_at),
      );
  }

  /** A change to a membership, by the server's rule (`judgeMemberChange`); answers the subject as changed. */
  change(workspaceId: number, email: string, subjectId: string, change: MemberChange): WorkspaceMember {
    const w = this.workspaces.get(workspaceId);
    const actorRole = w?.members.get(email);
    if (!w || !actorRole) throw workspaceNotFound();
    const actor = { userId: this.userId(email), role: actorRole };
    const subjectEmail =
      change.kind === 'leave' ? email : [...w.members.keys()].find((m) => this.userId(m) === subjectId);
    const subject = subjectEmail ? { userId: this.userId(subjectEmail), role: w.members.get(subjectEmail)! } : null;
    judgeMemberChange(change, actor, subject);
    const target = this.member(w, subjectEmail!);
    const action = {
      role: 'role_changed',
      remove: 'member_removed',
      leave: 'member_left',
      transfer: 'ownership_transferred',
    } as const;
    (w.trail ??= []).push({
      id: ++trailIds,
      action: action[change.kind],
      actor_id: actor.userId,
      subject_id: target.user_id,
      subject_email: target.email,
      role: change.kind === 'role' ? change.role : change.kind === 'transfer' ? 'owner' : null,
      at: new Date().toISOString(),
    });
    if (change.kind === 'role') w.members.set(subjectEmail!, change.role);
    else if (change.kind === 'transfer') {
      w.members.set(email, 'admin');
      w.members.set(subjectEmail!, 'owner');
    } else {
      w.members.delete(subjectEmail!);
      w.joined.delete(subjectEmail!);
      return target;
    }
    return this.member(w, subjectEmail!);
  }

  /**
   * `updateWorkspace`, by the server's rules: its owner and admins rename it. The mock's accounts have no two-factor
   * sign-in and it has no single sign-on, so turning `require_two_factor` or `require_single_sign_on` on or tying an
   * `sso_domain` is refused as the server refuses them for such a caller and instance (422).
   */
  update(workspaceId: number, email: string, body: unknown, now: number, keyWorkspace: number | null): Workspace {
    const change = settingsOf(body);
    const w = this.workspaces.get(workspaceId);
    const role = w?.members.get(email);
    if (!w || !role) throw workspaceNotFound();
    if (keyWorkspace !== null)
      throw new ApiError('forbidden', "A workspace's API key may not change the workspace's settings.");
    if (!MANAGES.has(role))
      throw new ApiError('forbidden', "Only the workspace's owner and admins change its settings.");
    if (change.require_two_factor === true)
      throw validationFailed({
        require_two_factor: ['turn on two-factor sign-in for your own account first (nobody locks themselves out)'],
      });
    if (change.require_single_sign_on === true || typeof change.sso_domain === 'string')
      throw validationFailed({
        ...(change.require_single_sign_on === true
          ? { require_single_sign_on: ['this instance has no single sign-on'] }
          : {}),
        ...(typeof change.sso_domain === 'string' ? { sso_domain: ['this instance has no single sign-on'] } : {}),
      });
    if (change.name !== undefined) w.name = change.name.trim();
    w.updatedAt = new Date(now).toISOString();
    return this.record(w, role);
  }

  /** What else a deleted workspace takes (the pushes, requests, keys and webhooks the kit keeps elsewhere). */
  readonly onDelete: ((workspaceId: number) => void)[] = [];

  /**
   * `deleteWorkspace`, by the server's rules (`mayDeleteWorkspace`, `confirmsDeletion`): its owner alone, with its
   * name; everything it holds goes with it. Answers the workspace as it was.
   */
  remove(workspaceId: number, email: string, confirm: string, keyWorkspace: number | null): Workspace {
    const w = this.workspaces.get(workspaceId);
    const role = w?.members.get(email) ?? null;
    if (keyWorkspace !== null) throw new ApiError('forbidden', "A workspace's API key may not delete its workspace.");
    if (!w || !role) throw workspaceNotFound();
    if (!mayDeleteWorkspace(role))
      throw new ApiError('forbidden', `Only the workspace's owner deletes it; you are its ${role}.`);
    if (!confirmsDeletion(w.name, confirm))
      throw validationFailed({ confirm: ["must be the workspace's name, exactly"] });
    this.workspaces.delete(workspaceId);
    this.invitations.dropWorkspace(workspaceId);
    this.brands.dropWorkspace(workspaceId);
    for (const drop of this.onDelete) drop(workspaceId);
    return this.record(w, role);
  }

  /** The user's role in the workspace, or null: not a member (or no such workspace); a workspace's key: none. */
  roleOf(workspaceId: number, email: string, keyWorkspace: number | null): WorkspaceRole | null {
    if (keyWorkspace !== null) return null;
    return this.workspaces.get(workspaceId)?.members.get(email) ?? null;
  }

  /** The workspace's trail, newest first, for its owner, admins and auditors (403 a member, 404 anyone else). */
  audit(workspaceId: number, email: string): WorkspaceAuditEntry[] {
    const role = this.workspaces.get(workspaceId)?.members.get(email);
    if (!role) throw workspaceNotFound();
    if (!READS_TRAIL.has(role))
      throw new ApiError('forbidden', `A ${role} of this workspace does not read its audit trail.`);
    return [...(this.workspaces.get(workspaceId)!.trail ?? [])].reverse();
  }

  standing(workspaceId: number, email: string): { actor: MemberStanding | null; members: number } {
    const w = this.workspaces.get(workspaceId);
    const role = w?.members.get(email);
    return { actor: role ? { userId: this.userId(email), role } : null, members: w?.members.size ?? 0 };
  }

  join(workspaceId: number, email: string, role: WorkspaceRole, now: number): Workspace {
    const w = this.workspaces.get(workspaceId)!;
    w.members.set(email, role);
    w.joined.set(email, new Date(now).toISOString());
    return this.record(w, role);
  }

  seenBy(workspaceId: number, email: string): Workspace | null {
    const w = this.workspaces.get(workspaceId);
    const role = w?.members.get(email);
    return w && role ? this.record(w, role) : null;
  }

  reset(): void {
    this.brands.reset();
    this.invitations.reset();
    this.workspaces.clear();
    this.userIds.clear();
    this.nextId = 1;
  }

  private userId(email: string): string {
    let id = this.userIds.get(email);
    if (!id) this.userIds.set(email, (id = crypto.randomUUID()));
    return id;
  }

  private member(w: StoredWorkspace, email: string): WorkspaceMember {
    return { user_id: this.userId(email), email, role: w.members.get(email)!, joined_at: w.joined.get(email)! };
  }

  private record(w: StoredWorkspace, role: WorkspaceRole): Workspace {
    // The mock's accounts have no two-factor sign-in and it has no single sign-on: no rule is ever on.
    const rules = { require_two_factor: false, require_single_sign_on: false, sso_domain: null };
    return { id: w.id, name: w.name, role, ...rules, created_at: w.createdAt, updated_at: w.updatedAt };
  }
}

const keyWorkspaceOf = (ctx: { actor: MockActor }): number | null => ctx.actor.grantor?.workspaceId ?? null;

/** What the workspace routes need of the mock's kit (server.ts), and the routes they are. */
interface WorkspaceKit<Ctx extends { request: Request; url: URL; actor: MockActor }> {
  workspaces: MockWorkspaces;
  store: { now(): number };
  json(ctx: Ctx, schema: string, body: unknown, status?: number, extra?: Record<string, string>): Response;
  owner(ctx: Ctx): string;
  parsePage(url: URL): number;
  paging(ctx: Ctx, path: string, page: number, total: number): Record<string, string>;
}

interface WorkspaceRoute<Ctx> {
  operationId: string;
  scope: ApiKeyScope;
  method: string;
  path: string;
  handle: (ctx: Ctx, params: Record<string, string>) => Response | Promise<Response>;
}

/** The workspace operations (issue 41), over MockWorkspaces. */
export function workspaceRoutes<Ctx extends { request: Request; url: URL; actor: MockActor; base: string }>(
  kit: WorkspaceKit<Ctx>,
): WorkspaceRoute<Ctx>[] {
  const { workspaces, store, json, owner, parsePage, paging } = kit;
  const list = (operationId: string, path: string): WorkspaceRoute<Ctx> => ({
    operationId,
    scope: 'workspaces:read',
    method: 'GET',
    path,
    handle: (ctx) => json(ctx, 'WorkspaceList', workspaces.list(owner(ctx), keyWorkspaceOf(ctx))),
  });
  return [
    list('listWorkspaces', '/api/v2/workspaces'),
    list('listAccounts', '/api/v2/accounts'),
    {
      operationId: 'createWorkspace',
      scope: 'workspaces:manage',
      method: 'POST',
      path: '/api/v2/workspaces',
      handle: async (ctx) => {
        const email = owner(ctx);
        let body: unknown;
        try {
          body = await ctx.request.json();
        } catch {
          throw new ApiError('invalid_json');
        }
        return json(ctx, 'Workspace', workspaces.create(email, body, store.now()), 201);
      },
    },
    {
      operationId: 'updateWorkspace',
      scope: 'workspaces:manage',
      method: 'POST',
      path: '/api/v2/workspaces/{workspace_id}/settings',
      handle: async (ctx, p) => {
        const email = owner(ctx);
        const id = workspaceIdOf(p);
        let body: unknown;
        try {
          body = await ctx.request.json();
        } catch {
          throw new ApiError('invalid_json');
        }
        return json(ctx, 'Workspace', workspaces.update(id, email, body, store.now(), keyWorkspaceOf(ctx)));
      },
    },
    {
      operationId: 'deleteWorkspace',
      scope: 'workspaces:manage',
      method: 'DELETE',
      path: '/api/v2/workspaces/{workspace_id}',
      handle: (ctx, p) => {
        const email = owner(ctx);
        const id = workspaceIdOf(p);
        const confirm = ctx.url.searchParams.get('confirm');
        if (confirm === null || confirm === '' || confirm.length > 1000)
          throw new ApiError('invalid_parameter', 'Invalid or missing parameter: confirm.');
        return json(ctx, 'Workspace', workspaces.remove(id, email, confirm, keyWorkspaceOf(ctx)));
      },
    },
    {
      operationId: 'listWorkspaceMembers',
      scope: 'workspaces:read',
      method: 'GET',
      path: '/api/v2/workspaces/{workspace_id}/members',
      handle: (ctx, p) => json(ctx, 'WorkspaceMemberList', workspaces.members(workspaceIdOf(p), owner(ctx))),
    },
    {
      operationId: 'getWorkspaceBrand',
      scope: 'workspaces:read',
      method: 'GET',
      path: '/api/v2/workspaces/{workspace_id}/brand',
      handle: (ctx, p) => {
        const id = workspaceIdOf(p);
        const role = workspaces.roleOf(id, owner(ctx), keyWorkspaceOf(ctx));
        return json(ctx, 'WorkspaceBrand', workspaces.brands.get(id, role));
      },
    },
    {
      operationId: 'updateWorkspaceBrand',
      scope: 'workspaces:manage',
      method: 'POST',
      path: '/api/v2/workspaces/{workspace_id}/brand',
      handle: async (ctx, p) => {
        const id = workspaceIdOf(p);
        const role = workspaces.roleOf(id, owner(ctx), keyWorkspaceOf(ctx));
        let body: unknown;
        try {
          body = await ctx.request.json();
        } catch {
          throw new ApiError('invalid_json');
        }
        return json(ctx, 'WorkspaceBrand', workspaces.brands.update(id, role, body, store.now()));
      },
    },
    memberRoute('updateWorkspaceMember', 'POST', '/members/{user_id}/role', async (ctx) => ({
      kind: 'role',
      role: await roleOf(ctx.request),
    })),
    memberRoute('removeWorkspaceMember', 'DELETE', '/members/{user_id}', () => ({ kind: 'remove' })),
    memberRoute('leaveWorkspace', 'POST', '/leave', () => ({ kind: 'leave' })),
    memberRoute('transferWorkspace', 'POST', '/members/{user_id}/ownership', () => ({ kind: 'transfer' })),
    {
      operationId: 'listWorkspaceAudit',
      scope: 'workspaces:read',
      method: 'GET',
      path: '/api/v2/workspaces/{workspace_id}/audit',
      handle: (ctx, p) => {
        const id = workspaceIdOf(p);
        const page = parsePage(ctx.url);
        const all = workspaces.audit(id, owner(ctx));
        const items = all.slice((page - 1) * 50, page * 50);
        const headers = paging(ctx, `/api/v2/workspaces/${id}/audit`, page, all.length);
        return json(ctx, 'WorkspaceAuditList', { entries: items }, 200, headers);
      },
    },
    ...invitationRoutes(kit),
  ];

  function memberRoute(
    operationId: string,
    method: string,
    path: string,
    changeOf: (ctx: Ctx) => MemberChange | Promise<MemberChange>,
  ): WorkspaceRoute<Ctx> {
    return {
      operationId,
      scope: 'workspaces:manage',
      method,
      path: `/api/v2/workspaces/{workspace_id}${path}`,
      handle: async (ctx, p) => {
        const email = owner(ctx);
        const id = workspaceIdOf(p);
        if (p.user_id !== undefined && !UUID.test(p.user_id))
          throw new ApiError('invalid_parameter', 'Invalid or missing parameter: user_id.');
        return json(ctx, 'WorkspaceMember', workspaces.change(id, email, p.user_id ?? '', await changeOf(ctx)));
      },
    };
  }
}

/** The invitation operations (issue 41), over MockInvitations. */
function invitationRoutes<Ctx extends { request: Request; url: URL; actor: MockActor; base: string }>(
  kit: WorkspaceKit<Ctx>,
): WorkspaceRoute<Ctx>[] {
  const { workspaces, store, json, owner } = kit;
  const path = '/api/v2/workspaces/{workspace_id}/invitations';
  return [
    {
      operationId: 'createWorkspaceInvitation',
      scope: 'workspaces:manage',
      method: 'POST',
      path,
      handle: async (ctx, p) => {
        const email = owner(ctx);
        const id = workspaceIdOf(p);
        const made = workspaces.invitations.create(id, email, await bodyOf(ctx.request), ctx.base, store.now());
        return json(ctx, 'WorkspaceInvitation', made, 201);
      },
    },
    {
      operationId: 'listWorkspaceInvitations',
      scope: 'workspaces:read',
      method: 'GET',
      path,
      handle: (ctx, p) =>
        json(ctx, 'WorkspaceInvitationList', workspaces.invitations.list(workspaceIdOf(p), owner(ctx), store.now())),
    },
    {
      operationId: 'revokeWorkspaceInvitation',
      scope: 'workspaces:manage',
      method: 'DELETE',
      path: `${path}/{invitation_id}`,
      handle: (ctx, p) => {
        const email = owner(ctx);
        const id = workspaceIdOf(p);
        if (!UUID.test(p.invitation_id ?? ''))
          throw new ApiError('invalid_parameter', 'Invalid or missing parameter: invitation_id.');
        return json(
          ctx,
          'WorkspaceInvitation',
          workspaces.invitations.revoke(id, email, p.invitation_id!, store.now()),
        );
      },
    },
    {
      operationId: 'acceptWorkspaceInvitation',
      scope: 'workspaces:manage',
      method: 'POST',
      path: '/api/v2/invitations/accept',
      handle: async (ctx) => {
        const email = owner(ctx);
        return json(ctx, 'Workspace', workspaces.invitations.accept(email, await bodyOf(ctx.request), store.now()));
      },
    },
  ];
}

async function bodyOf(request: Request): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw new ApiError('invalid_json');
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The path's workspace id (the contract's integer 1..2^31-1), else 400 as the server. */
function workspaceIdOf(params: Record<string, string>): number {
  const raw = params.workspace_id ?? '';
  const id = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(id <= 2_147_483_647)) throw new ApiError('invalid_parameter', 'Invalid or missing parameter: workspace_id.');
  return id;
}

/** updateWorkspaceMember's body: `{member: {role}}`, a role an owner or admin may give (as the server's schema). */
async function roleOf(request: Request): Promise<'admin' | 'member' | 'auditor'> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    throw new ApiError('invalid_json');
  }
  const member = (body as { member?: unknown } | null)?.member;
  if (!member || typeof member !== 'object' || Array.isArray(member))
    throw new ApiError('bad_request', 'The request body must be a JSON object with a "member" object.');
  const role = (member as { role?: unknown }).role;
  if (role !== 'admin' && role !== 'member' && role !== 'auditor')
    throw validationFailed({ role: ['must be admin, member or auditor (ownership moves by transferWorkspace)'] });
  return role;
}
