/**
 * Requests of a workspace (issue 41; docs/workspaces.md, "A workspace's requests"): which space a create or a list
 * acts in, and who may act on one request. The roles are the workspace service's (../workspace/workspace-service.ts):
 * any member but an auditor creates in it; its owner, admins and auditors (and its API keys) list every request of it,
 * a member their own; its owner and admins (and its keys) revoke any, its creator their own while still a member.
 * Without a `workspace_id` (and not a workspace's key) nothing is looked up: the personal space, exactly as before.
 */
import { ApiError } from '@secret-push/rules';
import { keyWorkspace, type RequestContext } from '../request-context.js';
import type { WorkspaceService } from '../workspace/workspace-service.js';
import type { RequestRow } from './request-tables.js';

/** Where a list reads: a workspace's requests, every one (`onlyOf` null) or one member's. */
interface RequestListScope {
  workspaceId: number;
  onlyOf: string | null;
}

export interface RequestSpaces {
  /** The workspace a create names (or its key acts for), once the caller may create in it; null: the personal space. */
  createsIn(named: number | null, ctx: RequestContext): Promise<number | null>;
  /** The workspace a list names (or its key's), once the caller may read it; null: the personal list. */
  listsIn(named: number | null, ctx: RequestContext): Promise<RequestListScope | null>;
  /** Whether the caller may act on `row` as its requester (revoke it): false leaves the refusal to the caller. */
  mayManage(row: RequestRow, ctx: RequestContext): Promise<boolean>;
}

const noWorkspaces = () => new ApiError('forbidden', 'This instance has no workspaces.');

export function requestSpaces(workspaces: WorkspaceService | undefined): RequestSpaces {
  const member = async (named: number | null, ctx: RequestContext, doing: 'create' | 'read') => {
    const workspaceId = named ?? keyWorkspace(ctx);
    if (workspaceId === null) return null;
    if (!workspaces) throw noWorkspaces();
    return workspaces.membership(workspaceId, ctx, doing);
  };
  return {
    async createsIn(named, ctx) {
      return (await member(named, ctx, 'create'))?.workspaceId ?? null;
    },

    async listsIn(named, ctx) {
      const found = await member(named, ctx, 'read');
      if (!found) return null;
      return { workspaceId: found.workspaceId, onlyOf: found.seesAll ? null : ctx.actor.userId };
    },

    async mayManage(row, ctx) {
      const userId = ctx.actor.userId;
      if (userId === null) return false;
      const own = keyWorkspace(ctx);
      // A workspace's key acts in its workspace only: never on its creator's personal requests, nor another's.
      if (own !== null && row.workspaceId !== own) return false;
      if (row.workspaceId === null) return row.ownerId === userId;
      if (!workspaces) return false;
      if (await workspaces.governs(row.workspaceId, ctx, 'expire')) return true;
      if (row.ownerId !== userId) return false;
      // The creator, while still in the workspace (a leaver's request stays the workspace's).
      try {
        await workspaces.membership(row.workspaceId, ctx, 'read');
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.code === 'forbidden') return false;
        throw error;
      }
    },
  };
}
