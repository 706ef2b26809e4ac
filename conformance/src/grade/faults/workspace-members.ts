/**
 * Faults in a workspace's members and invitations (issue 41, the TEAM class, TEAM-019 to TEAM-026): a used or revoked
 * invitation still working, a role change or an invitation made without the role it needs, the owner demoted or
 * handed on by an admin, a removal or a departure that changes nothing. Each models its bug by changing what goes
 * upstream (the server then does what the buggy one would), by answering in the server's place, or by the answer.
 */
import { randomUUID } from 'node:crypto';
import { define } from '../fault.js';
import type { Exchange } from '../proxy.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers 200 with `body` (a member record) in the server's place, or instead of its answer. */
function answer(ex: Exchange, body: unknown): void {
  ex.status = 200;
  ex.headers['content-type'] = JSON_TYPE;
  ex.json = body;
}

/** A member record of the contract's shape for `userId` with `role` (what a buggy server answers). */
const memberRecord = (userId: string, role: string) => ({
  user_id: userId,
  email: 'member@example.invalid',
  role,
  joined_at: new Date().toISOString(),
});

/** The path of the workspace an exchange's path names: `/api/v2/workspaces/{id}`. */
function workspacePath(ex: Exchange): URL {
  return new URL(`/api/v2/workspaces/${encodeURIComponent(ex.params.workspace_id ?? '')}`, ex.url);
}

/** The token an accept carries (its body's `invitation.token`). */
function tokenOf(ex: Exchange): string | undefined {
  const token = ex.sentJson?.invitation?.token;
  return typeof token === 'string' ? token : undefined;
}

/**
 * A fault that runs an operation with the credentials of the last caller for whom it succeeded (`success`): a server
 * that never checks the caller's role.
 */
function asLastAccepted(op: string, success: number) {
  return () => {
    let accepted: string | undefined;
    return {
      request(ex: Exchange) {
        if (ex.op !== op || accepted === undefined) return;
        ex.requestHeaders = { ...ex.requestHeaders, authorization: accepted };
      },
      response(ex: Exchange) {
        if (ex.op === op && ex.status === success) accepted = ex.requestHeaders.authorization;
      },
    };
  };
}

export const workspaceMemberAuthFaults = define('auth', [
  {
    name: 'invitation-token-reusable',
    models: 'an invitation token is not used up: accepting it again after leaving answers as the first acceptance did',
    killers: ['TEAM-019'],
    start: () => {
      const accepted = new Map<string, Buffer>();
      return {
        response(ex) {
          const token = tokenOf(ex);
          if (ex.op !== 'acceptWorkspaceInvitation' || token === undefined) return;
          if (ex.status === 200) accepted.set(token, ex.body);
          const first = accepted.get(token);
          if (ex.status !== 404 || !first) return;
          ex.status = 200;
          ex.headers['content-type'] = JSON_TYPE;
          ex.body = first;
        },
      };
    },
  },
  {
    name: 'member-role-change-unchecked',
    models: "updateWorkspaceMember does not check the caller's role: a member's change is made as the owner's",
    killers: ['TEAM-021', 'TEAM-022'],
    start: asLastAccepted('updateWorkspaceMember', 200),
  },
  {
    name: 'member-invites',
    models: "createWorkspaceInvitation does not check the caller's role: a member's invitation is made as the owner's",
    killers: ['TEAM-026'],
    start: asLastAccepted('createWorkspaceInvitation', 201),
  },
  {
    name: 'email-invitation-any-account',
    models: 'an invitation by email is accepted by any signed-in account: 200 instead of 403 for another address',
    killers: ['TEAM-027'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'acceptWorkspaceInvitation' || ex.status !== 403) return;
        ex.status = 200;
      },
    }),
  },
  {
    name: 'removed-member-kept',
    models: 'removeWorkspaceMember answers 200 with the member but removes nobody: the removed keep acting in it',
    killers: ['TEAM-023', 'TEAM-019', 'TEAM-026'],
    start: () => ({
      async request(ex) {
        if (ex.op !== 'removeWorkspaceMember') return;
        const list = await ex.send({ method: 'GET', url: new URL(`${workspacePath(ex).pathname}/members`, ex.url) });
        const found = Array.isArray(list.json)
          ? (list.json as { user_id: string }[]).find((m) => m.user_id === ex.params.user_id)
          : undefined;
        if (list.status === 200 && found && (found as { role?: string }).role !== 'owner') answer(ex, found);
      },
    }),
  },
  {
    name: 'leaver-keeps-reading',
    models: "a member who left keeps listing the workspace's pushes: the membership is read from a stale cache",
    killers: ['TEAM-024'],
    start: () => {
      // Who left which workspace (identity → ids), and the credentials that last read each workspace (its members,
      // its pushes, its invitations: any answer 2xx to a call naming it but a departure).
      const left = new Map<string, Set<string>>();
      const readers = new Map<string, string>();
      return {
        async response(ex) {
          const named = ex.params.workspace_id ?? ex.url.searchParams.get('workspace_id');
          const auth = ex.requestHeaders.authorization;
          if (ex.op === 'leaveWorkspace' && ex.status === 200 && named) {
            left.set(ex.identity, (left.get(ex.identity) ?? new Set<string>()).add(named));
            return;
          }
          if (ex.op === 'acceptWorkspaceInvitation' && ex.status === 200) left.delete(ex.identity);
          if (!named) return;
          if (ex.status >= 200 && ex.status < 300 && auth && !left.get(ex.identity)?.has(named))
            readers.set(named, auth);
          const reader = readers.get(named);
          if (ex.op !== 'listActivePushes' || ex.status !== 403 || !left.get(ex.identity)?.has(named) || !reader)
            return;
          ex.adopt(await ex.send({ headers: { ...ex.requestHeaders, authorization: reader } }));
        },
      };
    },
  },
]);

/** The faults of invitations by email: graded on an instance that mails (conformance/test/grade.test.ts). */
export const INVITATION_EMAIL_FAULTS = ['email-invitation-any-account'];

export const workspaceMemberStatusFaults = define('status', [
  {
    name: 'invitation-revoke-ignored',
    models: 'revokeWorkspaceInvitation answers 200 with the invitation but leaves it pending: its token still works',
    killers: ['TEAM-020'],
    start: () => ({
      async request(ex) {
        if (ex.op !== 'revokeWorkspaceInvitation') return;
        const list = await ex.send({
          method: 'GET',
          url: new URL(`${workspacePath(ex).pathname}/invitations`, ex.url),
        });
        const found = Array.isArray(list.json)
          ? (list.json as { id: string }[]).find((i) => i.id === ex.params.invitation_id)
          : undefined;
        if (list.status === 200 && found) answer(ex, found);
      },
    }),
  },
  {
    name: 'owner-demotion-accepted',
    models: "updateWorkspaceMember on the owner's own role answers 200 instead of 422 (a workspace without an owner)",
    killers: ['TEAM-022'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'updateWorkspaceMember' || ex.status !== 422) return;
        const role = ex.sentJson?.member?.role;
        if (role !== 'admin' && role !== 'member' && role !== 'auditor') return;
        answer(ex, memberRecord(ex.params.user_id ?? randomUUID(), role));
      },
    }),
  },
  {
    name: 'admin-transfer-accepted',
    models: 'transferWorkspace by an admin answers 200 instead of 403: only the owner hands a workspace over',
    killers: ['TEAM-025'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'transferWorkspace' || ex.status !== 403) return;
        answer(ex, memberRecord(ex.params.user_id ?? randomUUID(), 'owner'));
      },
    }),
  },
]);
