/**
 * Which workspace a create or a list names (the contract's "Workspaces"): the Pro clients put the id in different
 * places under two names (pwpush-cli 0.16 and the Chrome extension `account_id`, top-level and in the query; Raycast
 * and CIPP forks `workspace_id`, top-level in JSON and as a form field beside `push[…]`), as a number or as digits.
 * The server and the stateful mock read them all with this one rule.
 */
import { ApiError, validationFailed } from './errors.js';
import type { AssignableRole, WorkspaceRole } from './generated/types.gen.js';

/** The names a workspace's id goes by, ours first. */
export const WORKSPACE_ID_FIELDS = ['workspace_id', 'account_id'] as const;

/** An id as sent: a JSON number, or its digits as text (the contract's `WorkspaceRef`). */
function idOf(value: unknown): number | null | 'invalid' {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 1 && value <= 2_147_483_647 ? value : 'invalid';
  if (typeof value === 'string' && /^[1-9][0-9]{0,9}$/.test(value)) {
    const id = Number(value);
    return id <= 2_147_483_647 ? id : 'invalid';
  }
  return 'invalid';
}

/** The workspace named in `places`, or null; `refuse` makes the error for an id that is none, or ids that disagree. */
function namedWorkspace(
  places: (Record<string, unknown> | undefined | null)[],
  refuse: (why: string) => ApiError,
): number | null {
  let found: number | null = null;
  for (const place of places) {
    if (!place) continue;
    for (const field of WORKSPACE_ID_FIELDS) {
      const id = idOf(place[field]);
      if (id === 'invalid') throw refuse(`${field} must be a workspace id`);
      if (id === null) continue;
      if (found !== null && found !== id) throw refuse(`names workspace ${found} and workspace ${id}: name one`);
      found = id;
    }
  }
  return found;
}

/**
 * The workspace named by any of `places` (each an object that may hold `workspace_id` and `account_id`: the body,
 * the `push` inside it, the query), or null for none: the personal space. Ids that disagree, or one that is not an
 * id, answer 422 on `workspace_id` (the schema already refuses the second; this keeps the mock and forms exact).
 */
export function requestedWorkspace(...places: (Record<string, unknown> | undefined | null)[]): number | null {
  return namedWorkspace(places, (why) => validationFailed({ workspace_id: [why] }));
}

/**
 * The workspace a list's query names (`workspace_id`, `account_id`), or null: the personal list. On a list the ids
 * are query parameters, so one that is not an id, or two that disagree, answer 400 `invalid_parameter` (as a bad
 * `page` does), not a create's 422.
 */
export function listedWorkspace(query: Record<string, unknown>): number | null {
  return namedWorkspace([query], (why) => new ApiError('invalid_parameter', `workspace_id: ${why}`));
}

/** A change to a workspace's membership (the contract's member operations). */
export type MemberChange =
  { kind: 'role'; role: AssignableRole } | { kind: 'remove' } | { kind: 'leave' } | { kind: 'transfer' };

/** A member as the rules see them: who, with which role. */
export interface MemberStanding {
  userId: string;
  role: WorkspaceRole;
}

/** Members a workspace may have (the list is one page). */
export const MAX_MEMBERS_PER_WORKSPACE = 100;

/** The answer for a workspace the caller is not in, or that does not exist: the same, so ids cannot be probed. */
export const workspaceNotFound = (): ApiError => new ApiError('not_found', 'No workspace of yours has this id.');

const memberNotFound = (): ApiError => new ApiError('not_found', 'This workspace has no member with this id.');

/**
 * Whether `actor` may make `change` to `subject` (null: no such member), by the workspace's rules; throws the refusal.
 * The actor's role is judged first (403 `forbidden`), so a member without the role learns nothing of who is in it.
 * Role changes and removals: the owner and admins; an admin never touches the owner (403), and the owner's own role
 * moves only by a hand-over (422). Leaving: anyone but the owner (422: hand it over first). A hand-over: the owner
 * only, to another member. The server and the stateful mock both decide with this.
 */
export function judgeMemberChange(change: MemberChange, actor: MemberStanding, subject: MemberStanding | null): void {
  if (change.kind === 'leave') {
    if (actor.role === 'owner')
      throw validationFailed({ workspace: ['the owner hands the workspace over (transferWorkspace) before leaving'] });
    return;
  }
  if (change.kind === 'transfer') {
    if (actor.role !== 'owner') throw new ApiError('forbidden', 'Only the owner hands a workspace over.');
    if (!subject) throw memberNotFound();
    if (subject.userId === actor.userId) throw validationFailed({ user_id: ['is already the owner'] });
    return;
  }
  if (actor.role !== 'owner' && actor.role !== 'admin')
    throw new ApiError('forbidden', `An ${actor.role} of this workspace may not manage its members.`);
  if (!subject) throw memberNotFound();
  if (subject.role !== 'owner') return;
  if (actor.role !== 'owner')
    throw new ApiError('forbidden', "An admin may not change or remove the workspace's owner.");
  throw change.kind === 'role'
    ? validationFailed({ role: ["the owner's role changes only by transferWorkspace"] })
    : validationFailed({ user_id: ['the owner is not removed; hand the workspace over (transferWorkspace) first'] });
}

/**
 * What a workspace's API key may call (issue 41): the operations that act in a workspace (pushes, its keys, its
 * webhooks, its requests, the workspaces list, which shows it its own) and those anyone may call about a push. Every
 * other operation acts in a personal space (a request's own view and audit, notification emails, a new workspace) and answers 403 `forbidden` to such a
 * key, whatever its scopes: the key acts for the workspace, never for the person who made it. A new operation is
 * refused to such keys until it is listed here. The server's edge and the stateful mock both ask it.
 */
const ACTS_IN_A_WORKSPACE: ReadonlySet<string> = new Set([
  'createPush',
  'listActivePushes',
  'listExpiredPushes',
  'getPush',
  'previewPush',
  'expirePush',
  'getPushAudit',
  'downloadPushFile',
  'requestAccessCode',
  'getVersion',
  'listWorkspaces',
  'listAccounts',
  // Its requests (a personal request of its creator's is not its: 403).
  'createRequest',
  'listActiveRequests',
  'listExpiredRequests',
  'revokeRequest',
  'createApiKey',
  'listApiKeys',
  'revokeApiKey',
  // Its webhooks (a personal webhook is as unknown to it as another account's: 404).
  'createWebhook',
  'listWebhooks',
  'getWebhook',
  'deleteWebhook',
  'rotateWebhookSecret',
  'testWebhook',
  'listWebhookDeliveries',
  'retryWebhookDelivery',
  // v1: pushes only.
  'createPasswordV1',
  'createUrlPushV1',
  'createFilePushV1',
  'listActivePushesV1',
  'listExpiredPushesV1',
  'getPushV1',
  'previewPushV1',
  'expirePushV1',
  'getPushAuditV1',
  'getVersionV1',
]);

/** 403 `forbidden` when a workspace's key (`keyWorkspace` not null) calls an operation that acts in a personal space. */
export function requireWorkspaceKeyOperation(operationId: string, keyWorkspace: number | null | undefined): void {
  if (keyWorkspace === null || keyWorkspace === undefined || ACTS_IN_A_WORKSPACE.has(operationId)) return;
  throw new ApiError(
    'forbidden',
    `A workspace's API key acts only in its workspace; ${operationId} acts in a personal space.`,
  );
}

/** Who deletes a workspace (`deleteWorkspace`): its owner alone. The server and the stateful mock both ask. */
export function mayDeleteWorkspace(role: WorkspaceRole | null): boolean {
  return role === 'owner';
}

/**
 * Whether `confirm` (deleteWorkspace's `confirm`, the pages' typed name) confirms deleting the workspace named
 * `name`: its name exactly, nothing trimmed or folded, so it is sent on purpose.
 */
export function confirmsDeletion(name: string, confirm: string): boolean {
  return confirm === name;
}
