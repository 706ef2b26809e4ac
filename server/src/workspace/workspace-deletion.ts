/**
 * Deleting a workspace (issue 41, docs/workspaces.md "Deleting a workspace"): one path for the owner's
 * `deleteWorkspace`, the admin console's delete and a user's deletion that takes the workspaces they were alone in.
 *
 * In one transaction, under the workspace's row lock (which also holds off every create naming it: a new push's,
 * request's, key's or webhook's foreign key needs that row), set-based statements whatever the workspace holds:
 *
 * - its requests are deleted (a pending one is thereby revoked: its link answers 404; its files and audit go with it);
 * - its pushes are deleted, live ones included: their payloads, passphrase hashes, notes, files, audit logs, access
 *   codes and receipts go with the rows (foreign keys `on delete cascade`), so nothing is left half-written and a
 *   recipient's link answers 404, as a purged push's does. The rows are not kept "expired": a workspace's push is
 *   listed only in its workspace, so nobody could ever list such a row again;
 * - the workspace's row goes, and with it (`on delete cascade`) its API keys (refused at once: authentication reads
 *   them on every call), its webhooks and their queued deliveries, its invitations (their tokens are dead: an accept
 *   finds no row), its brand, its storage count, its members and its trail.
 *
 * No `push.*` or `request.*` event is sent: the workspace's webhooks, the only ones that would receive them, go too.
 * The objects of files kept in an object store are handed to `objectsGone` after the commit (the reconcile removes
 * any it could not). `log` is told what went, by whom: ids and counts, never a name, a payload or a token.
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { sql, type Db } from '../db/sql.js';

type WorkspaceRow = {
  id: number;
  name: string;
  require_two_factor: boolean;
  require_single_sign_on: boolean;
  sso_domain: string | null;
  created_at: Date;
  updated_at: Date;
};

const D = {
  /** The workspace, locked, with the actor's standing in it (read under the lock: a hand-over waits or went first). */
  lock: sql<
    { id: number; actorId: string | null },
    WorkspaceRow & { role: WorkspaceRole | null; blocked: boolean; members: string | number }
  >(
    `select w.id, w.name, w.require_two_factor, w.require_single_sign_on, w.sso_domain, w.created_at, w.updated_at, m.role,
       coalesce(w.require_two_factor and u.totp_enabled_at is null, false) as blocked,
       (select count(*) from workspace_members a where a.workspace_id = w.id) as members
     from workspaces w
     left join workspace_members m on m.workspace_id = w.id and m.user_id = cast(:actorId as uuid)
     left join users u on u.id = m.user_id
     where w.id = :id for update of w`,
  ),
  objects: sql<{ id: number }, { object_key: string }>(
    `select f.object_key from request_files f join requests r on r.id = f.request_id
     where r.workspace_id = :id and f.object_key is not null
     union all
     select f.object_key from push_files f join pushes p on p.id = f.push_id
     where p.workspace_id = :id and f.object_key is not null`,
  ),
  requests: sql<{ id: number }, { pending: string | number; total: string | number }>(
    `with gone as (delete from requests where workspace_id = :id returning state)
     select count(*) filter (where state = 'pending') as pending, count(*) as total from gone`,
  ),
  pushes: sql<{ id: number; now: Date }, { live: string | number; total: string | number }>(
    `with gone as (delete from pushes where workspace_id = :id returning expired, expires_at)
     select count(*) filter (where not expired and expires_at > :now) as live, count(*) as total from gone`,
  ),
  workspace: sql<{ id: number }>('delete from workspaces where id = :id'),
};

/** What a deletion took away (counts only). */
interface WorkspaceDeleted {
  workspace: {
    id: number;
    name: string;
    requireTwoFactor: boolean;
    requireSingleSignOn: boolean;
    ssoDomain: string | null;
    createdAt: Date;
    updatedAt: Date;
  };
  livePushes: number;
  pushes: number;
  pendingRequests: number;
  requests: number;
}

/** The actor's standing in the workspace, read under its lock: null, not a member (or nobody: an administrator). */
interface DeletingActor {
  role: WorkspaceRole | null;
  /** The workspace requires two-factor sign-in and the actor's account has none. */
  blocked: boolean;
  /** How many members the workspace has (read under its lock: a join waits for the deletion). */
  members: number;
}

/** Throws to refuse (nothing is deleted). */
type DeletionCheck = (workspace: WorkspaceDeleted['workspace'], actor: DeletingActor) => void;

export interface WorkspaceDeletion {
  /**
   * Locks the workspace and hands it, with `actorId`'s standing, to `check`, then deletes it with everything it
   * holds, in `tx`'s transaction. Null: no such workspace. `by`: who, for the log (an id or "admin:<id>").
   */
  deleteIn(
    tx: Db,
    workspaceId: number,
    actorId: string | null,
    check: DeletionCheck,
    by: string,
    now: Date,
  ): Promise<WorkspaceDeleted | null>;
  /** `deleteIn` in a transaction of its own. */
  delete(
    workspaceId: number,
    actorId: string | null,
    check: DeletionCheck,
    by: string,
    now: Date,
  ): Promise<WorkspaceDeleted | null>;
}

export function createWorkspaceDeletion(
  db: Db,
  objectsGone?: (keys: string[]) => void,
  log?: (facts: Record<string, unknown>) => void,
): WorkspaceDeletion {
  const deletion: WorkspaceDeletion = {
    delete: (workspaceId, actorId, check, by, now) =>
      db.transaction((tx) => deletion.deleteIn(tx, workspaceId, actorId, check, by, now)),
    async deleteIn(tx, workspaceId, actorId, check, by, now) {
      const [row] = await tx.query(D.lock, { id: workspaceId, actorId });
      if (!row) return null;
      const workspace = {
        id: Number(row.id),
        name: row.name,
        requireTwoFactor: row.require_two_factor,
        requireSingleSignOn: row.require_single_sign_on,
        ssoDomain: row.sso_domain,
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
      };
      check(workspace, { role: row.role, blocked: row.blocked, members: Number(row.members) });
      const objects = (await tx.query(D.objects, { id: workspaceId })).map((r) => r.object_key);
      const [requests] = await tx.query(D.requests, { id: workspaceId });
      const [pushes] = await tx.query(D.pushes, { id: workspaceId, now });
      await tx.query(D.workspace, { id: workspaceId });
      const deleted: WorkspaceDeleted = {
        workspace,
        livePushes: Number(pushes?.live ?? 0),
        pushes: Number(pushes?.total ?? 0),
        pendingRequests: Number(requests?.pending ?? 0),
        requests: Number(requests?.total ?? 0),
      };
      tx.afterCommit(() => {
        if (objects.length > 0) objectsGone?.(objects);
        log?.({
          workspace_deleted: {
            workspace_id: workspaceId,
            by,
            pushes: deleted.pushes,
            live_pushes: deleted.livePushes,
            requests: deleted.requests,
            pending_requests: deleted.pendingRequests,
          },
        });
      });
      return deleted;
    },
  };
  return deletion;
}
