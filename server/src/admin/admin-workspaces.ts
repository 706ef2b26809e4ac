/**
 * The admin console's workspaces (issue 41, docs/admin.md): found by name or id, paged; one workspace with its
 * members, pending invitations, keys, webhooks and recent trail; a user's workspaces; and the administrator's actions
 * on a workspace, each with its `admin_audit` row (and, for a change of membership, the workspace's own trail entry):
 *
 * - hand the ownership to another member (for a workspace whose owner left, was locked, or was deleted): the rule is
 *   the workspace's own (`judgeMemberChange`, as if its owner handed it over), applied by the same statements
 *   (`applyMemberChange`); a workspace without an owner gets one;
 * - remove a member (never the owner: the same rule says to hand the workspace over first);
 * - revoke one of the workspace's API keys (the API keys' own `revoke`, and the keys it made go with it);
 * - delete the workspace with everything it holds, its name typed as the confirmation (`deleteWorkspace`'s path,
 *   ../workspace/workspace-deletion.ts, and its rule `confirmsDeletion`), the audit row in the same transaction.
 *
 * Every call checks the administrator first (`requireAdmin`, ./admin-service.ts). Nothing here reads a secret.
 */
import {
  ApiError,
  confirmsDeletion,
  judgeMemberChange,
  type MemberChange,
  type MemberStanding,
  validationFailed,
} from '@secret-push/rules';
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { sql, type Db } from '../db/sql.js';
import type { ApiKeyService } from '../user/api-keys.js';
import { applyMemberChange, type MemberRecord } from '../workspace/member-repository.js';
import type { WorkspaceDeletion } from '../workspace/workspace-deletion.js';
import type { AuditFacts } from './admin-repository.js';
import { createAdminWorkspaceRepository, type AdminWorkspaceRow } from './admin-workspace-repository.js';

/** Workspaces a page of the console lists. */
export const WORKSPACES_PER_PAGE = 50;
/** The longest search: a workspace's name is at most 100 characters. */
const MAX_SEARCH = 100;
/** The largest workspace id PostgreSQL's `integer` holds. */
const MAX_ID = 2_147_483_647;

export type AdminWorkspaceAction = 'transfer' | 'remove_member' | 'revoke_key' | 'delete';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type MemberRow = { user_id: string; email: string; role: WorkspaceRole; created_at: Date };

const S = {
  /** The workspace, locked for the change (its name for the audit). */
  workspace: sql<{ id: number }, { name: string }>('select name from workspaces where id = :id for update'),
  /** The owner's and the subject's memberships, locked in one order. */
  lock: sql<{ id: number; subjectId: string }, MemberRow>(
    `select m.user_id, u.email, m.role, m.created_at from workspace_members m join users u on u.id = m.user_id
     where m.workspace_id = :id and (m.user_id = cast(:subjectId as uuid) or m.role = 'owner')
     order by m.user_id for update of m`,
  ),
};

const record = (r: MemberRow): MemberRecord => ({
  userId: r.user_id,
  email: r.email,
  role: r.role,
  joinedAt: new Date(r.created_at),
});

export interface AdminWorkspaceDeps {
  db: Db;
  keys: Pick<ApiKeyService, 'revoke'>;
  deletion: WorkspaceDeletion;
  /** The caller, checked an administrator again (403 otherwise): who the audit names. */
  requireAdmin(userId: string): Promise<{ userId: string; email: string }>;
  audit(tx: Db, facts: AuditFacts, now: Date): Promise<void>;
}

/** Who acts, and from where. */
interface Actor {
  userId: string;
  ip: string;
  userAgent: string;
}

/** A workspace id from the console's path or search: a positive integer PostgreSQL can hold, or null. */
export function workspaceIdOf(text: string): number | null {
  if (!/^\d{1,10}$/.test(text)) return null;
  const id = Number(text);
  return id >= 1 && id <= MAX_ID ? id : null;
}

const notFound = () => new ApiError('not_found', 'No workspace has this id.');

export function createAdminWorkspaces(deps: AdminWorkspaceDeps) {
  const { db } = deps;
  const repo = createAdminWorkspaceRepository(db);
  const find = async (id: number): Promise<AdminWorkspaceRow> => {
    const row = await repo.workspace(id);
    if (!row) throw notFound();
    return row;
  };

  /** A change of membership by the administrator, under the workspace's rules, with both audit entries. */
  const changeMember = async (by: Actor, workspaceId: number, subjectId: string, change: MemberChange, now: Date) => {
    const admin = await deps.requireAdmin(by.userId);
    if (!UUID.test(subjectId)) throw new ApiError('not_found', 'This person is not a member of the workspace.');
    return db.transaction(async (tx) => {
      const [workspace] = await tx.query(S.workspace, { id: workspaceId });
      if (!workspace) throw notFound();
      const rows = (await tx.query(S.lock, { id: workspaceId, subjectId })).map(record);
      const owner = rows.find((r) => r.role === 'owner') ?? null;
      const subject = rows.find((r) => r.userId === subjectId) ?? null;
      // The administrator acts with the owner's rights: the owner's own standing when there is one.
      const actor: MemberStanding = owner ?? { userId: admin.userId, role: 'owner' };
      judgeMemberChange(change, actor, subject);
      const changed = await applyMemberChange(
        tx,
        workspaceId,
        change,
        subject!,
        { actorId: admin.userId, formerOwnerId: owner?.userId ?? null },
        now,
      );
      const action = change.kind === 'transfer' ? 'workspace_transfer' : 'workspace_remove_member';
      const facts = { admin, action, targetEmail: changed.email, ip: by.ip, userAgent: by.userAgent };
      await deps.audit(tx, { ...facts, workspace: { id: workspaceId, name: workspace.name } }, now);
      return changed.email;
    });
  };

  /** Deletes the workspace once `confirm` is its name; the admin audit row in the same transaction. */
  const remove = async (by: Actor, id: number, confirm: string, now: Date) => {
    const admin = await deps.requireAdmin(by.userId);
    return db.transaction(async (tx) => {
      const deleted = await deps.deletion.deleteIn(
        tx,
        id,
        null,
        (workspace) => {
          if (!confirmsDeletion(workspace.name, confirm))
            throw validationFailed({ confirm: ["type the workspace's name exactly"] });
        },
        `admin:${admin.userId}`,
        now,
      );
      if (!deleted) throw notFound();
      const facts = { admin, action: 'workspace_delete', targetEmail: null, ip: by.ip, userAgent: by.userAgent };
      await deps.audit(tx, { ...facts, workspace: { id, name: deleted.workspace.name } }, now);
      return deleted.workspace.name;
    });
  };

  return {
    /** `page`: 1 to 10,000 (the route refuses others). */
    async search(by: Actor, search: string, page: number) {
      await deps.requireAdmin(by.userId);
      const text = search
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .trim()
        .toLowerCase();
      if (text.length > MAX_SEARCH)
        throw new ApiError('invalid_parameter', `Search for at most ${MAX_SEARCH} characters.`);
      const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const id = workspaceIdOf(text.replace(/^#/, ''));
      const offset = (Math.min(Math.max(page, 1), 10_000) - 1) * WORKSPACES_PER_PAGE;
      return repo.search(pattern, id, WORKSPACES_PER_PAGE, offset);
    },
    async workspace(by: Actor, id: number, now = new Date()) {
      await deps.requireAdmin(by.userId);
      const workspace = await find(id);
      return { workspace, ...(await repo.details(id, now)) };
    },
    async ofUser(by: Actor, userId: string) {
      await deps.requireAdmin(by.userId);
      return UUID.test(userId) ? repo.ofUser(userId) : [];
    },
    async storage(by: Actor) {
      await deps.requireAdmin(by.userId);
      return repo.storage();
    },
    /**
     * One action on a workspace; `subject`: the member (transfer, remove_member), the key's id (revoke_key) or the
     * workspace's name typed to confirm (delete).
     */
    async act(by: Actor, action: AdminWorkspaceAction, id: number, subject: string, now = new Date()) {
      if (action === 'delete') return remove(by, id, subject, now);
      if (action === 'transfer') return changeMember(by, id, subject, { kind: 'transfer' }, now);
      if (action === 'remove_member') return changeMember(by, id, subject, { kind: 'remove' }, now);
      const admin = await deps.requireAdmin(by.userId);
      const workspace = await find(id);
      if (!UUID.test(subject)) throw new ApiError('not_found', 'No API key of this workspace has this id.');
      const key = await deps.keys.revoke(admin.userId, subject, id).catch((error: unknown) => {
        throw error instanceof ApiError && error.code === 'not_found'
          ? new ApiError('not_found', 'No API key of this workspace has this id.')
          : error;
      });
      const facts = { admin, action: 'workspace_revoke_key', targetEmail: null, ip: by.ip, userAgent: by.userAgent };
      await deps.audit(db, { ...facts, workspace: { id, name: workspace.name } }, now);
      return key.name;
    },
  };
}

export type AdminWorkspaces = ReturnType<typeof createAdminWorkspaces>;
