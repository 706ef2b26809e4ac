/**
 * Every statement about workspaces and their members (tables `workspaces`, `workspace_members`:
 * Migration20270121000000_workspaces). A push's, key's, webhook's or request's workspace is a column of its own row,
 * written by its own area; this module answers who belongs where, with which role.
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { sql, type Db } from '../db/sql.js';
import {
  changeSettings,
  SSO_BLOCKED,
  type SettingsRefusal,
  type SignOnProof,
  type WorkspaceSettingsChange,
} from './workspace-rules.js';

/** A workspace as its member sees it: with the member's role. */
export interface MemberWorkspace {
  id: number;
  name: string;
  role: WorkspaceRole;
  /** Its members need two-factor sign-in (`require_two_factor`). */
  requireTwoFactor: boolean;
  /** Its members need single sign-on (`require_single_sign_on`). */
  requireSingleSignOn: boolean;
  /** The email domain whose people join it at single sign-on, or null. */
  ssoDomain: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A user's standing in a workspace: the role, and whether the workspace's sign-in rules shut them out now. */
interface Standing {
  role: WorkspaceRole;
  /** The workspace requires two-factor sign-in and the user's account has none. */
  blocked: boolean;
  /** The workspace requires single sign-on and the caller's credential did not come through it (`signOnProof`). */
  ssoBlocked: boolean;
}

/** Workspaces one user may own at once (and belong to, listed). */
export const MAX_WORKSPACES_PER_USER = 100;

type WorkspaceRow = {
  id: number;
  name: string;
  role: WorkspaceRole;
  require_two_factor: boolean;
  require_single_sign_on: boolean;
  sso_domain: string | null;
  created_at: Date;
  updated_at: Date;
};

const W = {
  roleOf: sql<
    { workspaceId: number; userId: string; viaSso: SignOnProof; issuer: string },
    { role: WorkspaceRole; blocked: boolean; sso_blocked: boolean }
  >(
    `select m.role, w.require_two_factor and u.totp_enabled_at is null as blocked, ${SSO_BLOCKED}
     from workspace_members m join workspaces w on w.id = m.workspace_id join users u on u.id = m.user_id
     where m.workspace_id = :workspaceId and m.user_id = :userId`,
    { prepare: true },
  ),
  byId: sql<{ workspaceId: number }, Omit<WorkspaceRow, 'role'>>(
    'select id, name, require_two_factor, require_single_sign_on, sso_domain, created_at, updated_at from workspaces where id = :workspaceId',
  ),
  listFor: sql<{ userId: string; limit: number }, WorkspaceRow>(
    `select w.id, w.name, m.role, w.require_two_factor, w.require_single_sign_on, w.sso_domain, w.created_at, w.updated_at
     from workspace_members m join workspaces w on w.id = m.workspace_id
     where m.user_id = :userId order by w.created_at, w.id limit :limit`,
  ),
  /**
   * A workspace and its owner's membership, in one statement, while the user owns fewer than the limit (two creates
   * at once may both pass the count: the limit bounds a user's rows, it is not a business rule).
   */
  create: sql<{ userId: string; name: string; now: Date; limit: number }, WorkspaceRow>(
    `with made as (
       insert into workspaces (name, created_by, created_at, updated_at)
       select :name, :userId, :now, :now
       where (select count(*) from workspace_members where user_id = :userId and role = 'owner') < :limit
       returning id, name, require_two_factor, require_single_sign_on, sso_domain, created_at, updated_at
     ), owner as (
       insert into workspace_members (workspace_id, user_id, role, created_at)
       select id, :userId, 'owner', :now from made
     )
     select id, name, 'owner' as role, require_two_factor, require_single_sign_on, sso_domain, created_at, updated_at from made`,
  ),
};

const fromRow = (r: WorkspaceRow): MemberWorkspace => ({
  id: Number(r.id),
  name: r.name,
  role: r.role,
  requireTwoFactor: r.require_two_factor,
  requireSingleSignOn: r.require_single_sign_on,
  ssoDomain: r.sso_domain,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

export interface WorkspaceRepository {
  /** The user's standing in the workspace, acting with `viaSso`, or null: not a member (or no such workspace). */
  roleOf(workspaceId: number, userId: string, viaSso: SignOnProof): Promise<Standing | null>;
  listFor(userId: string): Promise<MemberWorkspace[]>;
  /** The new workspace, its maker its owner; null when the maker already owns the most there may be. */
  create(userId: string, name: string, now: Date): Promise<MemberWorkspace | null>;
  /** The workspace seen with `role` (a workspace's API key sees its own workspace so), or null: no such workspace. */
  byId(workspaceId: number, role: WorkspaceRole): Promise<MemberWorkspace | null>;
  /** `updateWorkspace`'s change by `userId` (./workspace-rules.ts), or why nothing changed. */
  update(
    workspaceId: number,
    caller: { userId: string; viaSso: SignOnProof },
    change: WorkspaceSettingsChange,
    now: Date,
  ): Promise<MemberWorkspace | SettingsRefusal>;
}

/** `issuer`: the instance's single sign-on provider, or null without one (then no account is linked to it). */
export function createWorkspaceRepository(db: Db, issuer: string | null = null): WorkspaceRepository {
  const provider = issuer ?? '';
  return {
    async roleOf(workspaceId, userId, viaSso) {
      const [row] = await db.query(W.roleOf, { workspaceId, userId, viaSso, issuer: provider });
      return row ? { role: row.role, blocked: row.blocked, ssoBlocked: row.sso_blocked } : null;
    },
    async listFor(userId) {
      return (await db.query(W.listFor, { userId, limit: MAX_WORKSPACES_PER_USER })).map(fromRow);
    },
    async byId(workspaceId, role) {
      const [row] = await db.query(W.byId, { workspaceId });
      return row ? fromRow({ ...row, role }) : null;
    },
    async update(workspaceId, caller, change, now) {
      const changed = await changeSettings(db, workspaceId, { ...caller, issuer: provider }, change, now);
      return typeof changed === 'string' ? changed : fromRow(changed);
    },
    async create(userId, name, now) {
      const [row] = await db.query(W.create, { userId, name, now, limit: MAX_WORKSPACES_PER_USER });
      return row ? fromRow(row) : null;
    },
  };
}
