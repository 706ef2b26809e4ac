/**
 * What a user's deletion (the admin console's, `npm run users -- delete`) does to the workspaces they are in
 * (issue 41, docs/admin.md "Deleting a user"):
 *
 * - refused while they are the only owner of a workspace that has other members (a workspace is never left without
 *   an owner by a deletion): the refusal names those workspaces, to be handed over or deleted first;
 * - a workspace they are the only member of is deleted with them, by the path of `deleteWorkspace`
 *   (../workspace/workspace-deletion.ts), each under its lock, which checks again that nobody joined meanwhile;
 * - in every other workspace only their membership goes (`on delete cascade`); the pushes they made there stay the
 *   workspace's, without a creator (`pushes.user_id on delete set null`), listed and governed by its owner and admins.
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { validationFailed } from '@secret-push/rules';
import { sql, type Db } from '../db/sql.js';
import type { WorkspaceDeletion } from '../workspace/workspace-deletion.js';

const S = {
  /** The user's workspaces, with their role and the workspace's member count (they are in at most 100). */
  of: sql<{ userId: string }, { id: number; name: string; role: WorkspaceRole; members: string | number }>(
    `select w.id, w.name, m.role, (select count(*) from workspace_members a where a.workspace_id = w.id) as members
     from workspace_members m join workspaces w on w.id = m.workspace_id
     where m.user_id = :userId order by w.id`,
  ),
};

/** A workspace named in a refusal or deleted with its last member. */
interface Named {
  id: number;
  name: string;
}

const refusal = (blocking: Named[]) =>
  validationFailed({
    workspaces: [
      `the user is the only owner of ${blocking.map((w) => `“${w.name}” (#${w.id})`).join(', ')}, which ${
        blocking.length === 1 ? 'has' : 'have'
      } other members: hand each over (or delete it) first`,
    ],
  });

/** The user's workspaces as a deletion sees them: those that refuse it, and those that go with them. */
async function userWorkspaces(db: Db, userId: string): Promise<{ blocking: Named[]; alone: Named[] }> {
  const rows = (await db.query(S.of, { userId })).map((r) => ({ ...r, id: Number(r.id), members: Number(r.members) }));
  return {
    blocking: rows.filter((r) => r.role === 'owner' && r.members > 1).map(({ id, name }) => ({ id, name })),
    alone: rows.filter((r) => r.members === 1).map(({ id, name }) => ({ id, name })),
  };
}

/** Throws the refusal (422 `validation_failed` naming the workspaces) when the user may not be deleted yet. */
export async function requireDeletableUser(db: Db, userId: string): Promise<Named[]> {
  const { blocking, alone } = await userWorkspaces(db, userId);
  if (blocking.length > 0) throw refusal(blocking);
  return alone;
}

/**
 * Deletes, in `tx`, the workspaces `userId` was alone in; refuses (and so rolls back) when one has gained a member
 * since `requireDeletableUser` read it. The number deleted.
 */
export async function deleteWorkspacesAlone(
  tx: Db,
  deletion: WorkspaceDeletion,
  userId: string,
  alone: Named[],
  by: string,
  now: Date,
): Promise<number> {
  let deleted = 0;
  for (const workspace of alone) {
    try {
      const done = await deletion.deleteIn(
        tx,
        workspace.id,
        userId,
        (_w, actor) => {
          if (actor.role === 'owner' && actor.members > 1) throw refusal([workspace]);
          if (actor.role === null || actor.members > 1) throw new WorkspaceChanged();
        },
        by,
        now,
      );
      if (done) deleted++;
    } catch (error) {
      // Only the lock's read ran: the transaction goes on without this workspace.
      if (!(error instanceof WorkspaceChanged)) throw error;
    }
  }
  return deleted;
}

/** A workspace the user was alone in gained another member (the user not its owner) or lost the user meanwhile. */
class WorkspaceChanged extends Error {}
