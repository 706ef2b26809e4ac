/**
 * Workspaces in the stateful mock, by the server's rules (server/src/workspace/): a user's list with their role, a
 * new one owned by its maker, and the membership a create or list naming a workspace needs (403 `forbidden` for a
 * workspace the caller is not in, or that does not exist). Kept in memory, per mock; members are known by email.
 */
import type { Workspace, WorkspaceRole } from '../generated/types.gen.js';
import { ApiError, type ApiKeyScope, listedWorkspace, validationFailed } from '@secret-push/rules';
import type { MockActor, MockStore } from './store.js';

const MAX_WORKSPACES_PER_USER = 100;
const MAY_CREATE: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'member']);
const SEES_EVERY_PUSH: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin', 'auditor']);

interface StoredWorkspace {
  id: number;
  name: string;
  createdAt: string;
  members: Map<string, WorkspaceRole>;
}

/** A caller's standing in a workspace, once checked. */
export interface MockMembership {
  workspaceId: number;
  /** Sees every push of the workspace, not only the caller's own. */
  seesAll: boolean;
}

export class MockWorkspaces {
  private readonly workspaces = new Map<number, StoredWorkspace>();
  private nextId = 1;

  list(email: string): Workspace[] {
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
      members: new Map([[email, 'owner']]),
    };
    this.workspaces.set(made.id, made);
    return this.record(made, 'owner');
  }

  /** The caller's membership (401 without a user, 403 when not a member or the role may not `doing`). */
  membership(workspaceId: number, email: string | null, doing: 'create' | 'read'): MockMembership {
    if (email === null) throw new ApiError('authentication_required', 'A workspace needs an API token.');
    const role = this.workspaces.get(workspaceId)?.members.get(email);
    if (!role) throw new ApiError('forbidden', 'You are not a member of this workspace.');
    if (doing === 'create' && !MAY_CREATE.has(role))
      throw new ApiError('forbidden', `An ${role} of this workspace may not create in it.`);
    return { workspaceId, seesAll: SEES_EVERY_PUSH.has(role) };
  }

  /** A create (`readCreateBody`'s push), in the workspace it names once the caller may create there, else personal. */
  createIn(store: MockStore, body: { push: unknown; workspaceId: number | null }, actor: MockActor) {
    const { push, workspaceId } = body;
    const inWorkspace = workspaceId
      ? this.membership(workspaceId, actor.user?.email ?? null, 'create').workspaceId
      : null;
    return store.create(push, actor, undefined, inWorkspace);
  }

  /** The workspace a list's query names, once the caller may read it; null: the caller's personal list. */
  forList(url: URL, actor: MockActor): MockMembership | null {
    const workspaceId = listedWorkspace(Object.fromEntries(url.searchParams));
    return workspaceId ? this.membership(workspaceId, actor.user?.email ?? null, 'read') : null;
  }

  reset(): void {
    this.workspaces.clear();
    this.nextId = 1;
  }

  private record(w: StoredWorkspace, role: WorkspaceRole): Workspace {
    return { id: w.id, name: w.name, role, created_at: w.createdAt, updated_at: w.createdAt };
  }
}

/** What the workspace routes need of the mock's kit (server.ts), and the routes they are. */
interface WorkspaceKit<Ctx extends { request: Request }> {
  workspaces: MockWorkspaces;
  store: { now(): number };
  json(ctx: Ctx, schema: string, body: unknown, status?: number): Response;
  owner(ctx: Ctx): string;
}

interface WorkspaceRoute<Ctx> {
  operationId: string;
  scope: ApiKeyScope;
  method: string;
  path: string;
  handle: (ctx: Ctx) => Response | Promise<Response>;
}

/** The workspace operations (issue 41), over MockWorkspaces. */
export function workspaceRoutes<Ctx extends { request: Request }>(kit: WorkspaceKit<Ctx>): WorkspaceRoute<Ctx>[] {
  const { workspaces, store, json, owner } = kit;
  const list = (operationId: string, path: string): WorkspaceRoute<Ctx> => ({
    operationId,
    scope: 'workspaces:read',
    method: 'GET',
    path,
    handle: (ctx) => json(ctx, 'WorkspaceList', workspaces.list(owner(ctx))),
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
  ];
}
