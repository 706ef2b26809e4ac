/**
 * The workspace methods of the client (issue 41): the caller's workspaces (also under Password Pusher Pro's name,
 * accounts) and a new one. A push is made in a workspace by `createPush({ …, workspace_id })`. Built on the client's
 * one sender in ./client.ts.
 */
import {
  acceptWorkspaceInvitation as genAcceptWorkspaceInvitation,
  createWorkspace as genCreateWorkspace,
  getWorkspaceBrand as genGetWorkspaceBrand,
  createWorkspaceInvitation as genCreateWorkspaceInvitation,
  deleteWorkspace as genDeleteWorkspace,
  leaveWorkspace as genLeaveWorkspace,
  listAccounts as genListAccounts,
  listWorkspaceAudit as genListWorkspaceAudit,
  listWorkspaceInvitations as genListWorkspaceInvitations,
  listWorkspaceMembers as genListWorkspaceMembers,
  listWorkspaces as genListWorkspaces,
  removeWorkspaceMember as genRemoveWorkspaceMember,
  revokeWorkspaceInvitation as genRevokeWorkspaceInvitation,
  transferWorkspace as genTransferWorkspace,
  updateWorkspace as genUpdateWorkspace,
  updateWorkspaceBrand as genUpdateWorkspaceBrand,
  updateWorkspaceMember as genUpdateWorkspaceMember,
} from './generated/sdk.gen.js';
import type {
  AssignableRole,
  UpdateWorkspaceRequest,
  UpdateWorkspaceBrandRequest,
  Workspace,
  WorkspaceBrand,
  WorkspaceAuditEntry,
  WorkspaceAuditList,
  WorkspaceInvitation,
  WorkspaceInvitationList,
  WorkspaceList,
  WorkspaceMember,
  WorkspaceMemberList,
} from './generated/types.gen.js';
import { iteratePages, type Page, pageFromResponse } from './pagination.js';
import type { GeneratedCall, PagedList, RequestOptions, Retry } from './calls.js';

type Send = <T>(
  call: GeneratedCall,
  opts: RequestOptions | undefined,
  retry: Retry,
) => Promise<{ data: T; response: Response }>;

export interface WorkspaceMethods {
  /** The workspaces the caller belongs to, with the caller's role in each, oldest first. */
  listWorkspaces(options?: RequestOptions): Promise<Workspace[]>;
  /** `listWorkspaces` under Password Pusher Pro's name (`GET /api/v2/accounts`): the same list. */
  listAccounts(options?: RequestOptions): Promise<Workspace[]>;
  /** Makes a workspace; the caller is its owner. Not retried automatically (a retry could make a second one). */
  createWorkspace(name: string, options?: RequestOptions): Promise<Workspace>;
  /**
   * Changes the workspace's name and sign-in rules (`require_two_factor`, `require_single_sign_on`, `sso_domain`): its
   * owner and admins, signed in as themselves. Answers the workspace as the caller now sees it.
   */
  updateWorkspace(
    workspaceId: number,
    settings: UpdateWorkspaceRequest['workspace'],
    options?: RequestOptions,
  ): Promise<Workspace>;
  /**
   * Deletes the workspace with everything it holds (its pushes, requests, keys, webhooks, invitations, brand,
   * members and trail): its owner only. `confirmName` must be the workspace's name, exactly (422 otherwise, and
   * nothing is deleted). Answers the workspace as it was. Never retried automatically.
   */
  deleteWorkspace(workspaceId: number, confirmName: string, options?: RequestOptions): Promise<Workspace>;
  /** The workspace's members, the owner first (any member may read them; 404 for a workspace the caller is not in). */
  listWorkspaceMembers(workspaceId: number, options?: RequestOptions): Promise<WorkspaceMember[]>;
  /** Gives a member another role (the owner and admins; never `owner`: see transferWorkspace). */
  updateWorkspaceMember(
    workspaceId: number,
    userId: string,
    role: AssignableRole,
    options?: RequestOptions,
  ): Promise<WorkspaceMember>;
  /** Takes a member out (the owner and admins; never the owner). Their pushes stay in the workspace. */
  removeWorkspaceMember(workspaceId: number, userId: string, options?: RequestOptions): Promise<WorkspaceMember>;
  /** The caller leaves the workspace (anyone but the owner). */
  leaveWorkspace(workspaceId: number, options?: RequestOptions): Promise<WorkspaceMember>;
  /** The owner hands the workspace to another member and becomes an admin. */
  transferWorkspace(workspaceId: number, userId: string, options?: RequestOptions): Promise<WorkspaceMember>;
  /** The brand the workspace's recipients see (any member; `configured` false: the instance's). */
  getWorkspaceBrand(workspaceId: number, options?: RequestOptions): Promise<WorkspaceBrand>;
  /**
   * Replaces the workspace's brand (the owner and admins): fields left out are unset, except `logo` (base64; left
   * out keeps the stored one, null removes it). 422 on a colour too light, a link that is not https, a logo of
   * another kind or an SVG that could run script.
   */
  updateWorkspaceBrand(
    workspaceId: number,
    brand: UpdateWorkspaceBrandRequest['brand'],
    options?: RequestOptions,
  ): Promise<WorkspaceBrand>;
  /**
   * The workspace's audit trail (role changes, removals, departures, hand-overs), newest first, over all pages; for
   * its owner, admins and auditors (a member: `ForbiddenError`). `workspaceAudit.page(id, n)` reads one page.
   */
  workspaceAudit: PagedList<WorkspaceAuditEntry, [workspaceId: number]>;
  /**
   * Invites someone with a role (the owner and admins): with `email`, a mail carries the link; without, the answer's
   * `url` is the link, shown this once. Not retried automatically (a retry would make a second invitation).
   */
  createWorkspaceInvitation(
    workspaceId: number,
    invitation: { role: AssignableRole; email?: string; expires_in_days?: number },
    options?: RequestOptions,
  ): Promise<WorkspaceInvitation>;
  /** The pending invitations, newest first (the owner and admins; never their tokens). */
  listWorkspaceInvitations(workspaceId: number, options?: RequestOptions): Promise<WorkspaceInvitation[]>;
  /** Revokes a pending invitation: its link stops working. */
  revokeWorkspaceInvitation(
    workspaceId: number,
    invitationId: string,
    options?: RequestOptions,
  ): Promise<WorkspaceInvitation>;
  /**
   * Joins the workspace of an invitation (the token: what follows `#` in its link, or the whole link); answers the
   * workspace with the caller's role. Safe to retry: a member gets the same answer.
   */
  acceptWorkspaceInvitation(token: string, options?: RequestOptions): Promise<Workspace>;
}

export function workspaceMethods(send: Send, baseUrl: string): WorkspaceMethods {
  const auditPage = async (id: number, n: number, opts?: RequestOptions): Promise<Page<WorkspaceAuditEntry>> => {
    const { data, response } = await send<WorkspaceAuditList>(
      (x) => genListWorkspaceAudit({ ...x, path: { workspace_id: id }, query: { page: n } }),
      opts,
      'safe',
    );
    return pageFromResponse(data.entries, n, response.headers, baseUrl);
  };
  return {
    workspaceAudit: Object.assign((id: number, opts?: RequestOptions) => iteratePages((n) => auditPage(id, n, opts)), {
      page: auditPage,
    }),
    async listWorkspaces(opts) {
      return (await send<WorkspaceList>((x) => genListWorkspaces(x), opts, 'safe')).data;
    },
    async listAccounts(opts) {
      return (await send<WorkspaceList>((x) => genListAccounts(x), opts, 'safe')).data;
    },
    async createWorkspace(name, opts) {
      return (await send<Workspace>((x) => genCreateWorkspace({ ...x, body: { workspace: { name } } }), opts, 'never'))
        .data;
    },
    // Safe to repeat: the same settings again leave the workspace as the first call left it.
    async updateWorkspace(workspaceId, settings, opts) {
      const path = { workspace_id: workspaceId };
      const body = { workspace: settings };
      return (await send<Workspace>((x) => genUpdateWorkspace({ ...x, path, body }), opts, 'safe')).data;
    },
    // Not retried automatically: a retried deletion would answer 404.
    async deleteWorkspace(workspaceId, confirmName, opts) {
      const path = { workspace_id: workspaceId };
      const query = { confirm: confirmName };
      return (await send<Workspace>((x) => genDeleteWorkspace({ ...x, path, query }), opts, 'never')).data;
    },
    async listWorkspaceMembers(workspaceId, opts) {
      const path = { workspace_id: workspaceId };
      return (await send<WorkspaceMemberList>((x) => genListWorkspaceMembers({ ...x, path }), opts, 'safe')).data;
    },
    // Not retried automatically: a retried removal would answer 404, a retried hand-over 403.
    async updateWorkspaceMember(workspaceId, userId, role, opts) {
      const path = { workspace_id: workspaceId, user_id: userId };
      const body = { member: { role } };
      return (await send<WorkspaceMember>((x) => genUpdateWorkspaceMember({ ...x, path, body }), opts, 'never')).data;
    },
    async removeWorkspaceMember(workspaceId, userId, opts) {
      const path = { workspace_id: workspaceId, user_id: userId };
      return (await send<WorkspaceMember>((x) => genRemoveWorkspaceMember({ ...x, path }), opts, 'never')).data;
    },
    async leaveWorkspace(workspaceId, opts) {
      const path = { workspace_id: workspaceId };
      return (await send<WorkspaceMember>((x) => genLeaveWorkspace({ ...x, path }), opts, 'never')).data;
    },
    async createWorkspaceInvitation(workspaceId, invitation, opts) {
      const path = { workspace_id: workspaceId };
      const body = { invitation };
      return (await send<WorkspaceInvitation>((x) => genCreateWorkspaceInvitation({ ...x, path, body }), opts, 'never'))
        .data;
    },
    async listWorkspaceInvitations(workspaceId, opts) {
      const path = { workspace_id: workspaceId };
      return (await send<WorkspaceInvitationList>((x) => genListWorkspaceInvitations({ ...x, path }), opts, 'safe'))
        .data;
    },
    async revokeWorkspaceInvitation(workspaceId, invitationId, opts) {
      const path = { workspace_id: workspaceId, invitation_id: invitationId };
      return (await send<WorkspaceInvitation>((x) => genRevokeWorkspaceInvitation({ ...x, path }), opts, 'never')).data;
    },
    async acceptWorkspaceInvitation(token, opts) {
      const body = { invitation: { token: token.includes('#') ? token.slice(token.lastIndexOf('#') + 1) : token } };
      return (await send<Workspace>((x) => genAcceptWorkspaceInvitation({ ...x, body }), opts, 'safe')).data;
    },
    async transferWorkspace(workspaceId, userId, opts) {
      const path = { workspace_id: workspaceId, user_id: userId };
      return (await send<WorkspaceMember>((x) => genTransferWorkspace({ ...x, path }), opts, 'never')).data;
    },
    async getWorkspaceBrand(workspaceId, opts) {
      const path = { workspace_id: workspaceId };
      return (await send<WorkspaceBrand>((x) => genGetWorkspaceBrand({ ...x, path }), opts, 'safe')).data;
    },
    // Not retried automatically, as the other changes of a workspace: each one is an entry of its audit trail.
    async updateWorkspaceBrand(workspaceId, brand, opts) {
      const path = { workspace_id: workspaceId };
      const body = { brand };
      return (await send<WorkspaceBrand>((x) => genUpdateWorkspaceBrand({ ...x, path, body }), opts, 'never')).data;
    },
  };
}
