/**
 * Who may do what to a push (api-decisions.md, "Authentication" and "Preview, audit, lists, delete"). Each check
 * throws the ApiError the API answers; it passes silently otherwise.
 */
import { ApiError } from './errors.js';
import { turnOn } from './feature-gates.js';
import { isOwner, type PushState } from './push-state.js';
import type { PushRuleSettings } from './settings.js';

type Caller = string | null;

/** With anonymous access off, every push operation needs a token. */
export function requireCallerAllowed(settings: Pick<PushRuleSettings, 'allowAnonymous' | 'env'>, userId: Caller): void {
  if (!settings.allowAnonymous && userId === null) {
    throw new ApiError(
      'authentication_required',
      `This instance does not allow anonymous access: send an API token. ${turnOn('anonymousPushes', settings.env)}`,
    );
  }
}

/** The refusal of files from an anonymous caller while files need a token. */
export function filesNeedToken(settings: Pick<PushRuleSettings, 'env'>): ApiError {
  return new ApiError(
    'authentication_required',
    `File pushes need an API token on this instance. ${turnOn('anonymousFiles', settings.env)}`,
  );
}

/** Whether a create request needs a token because of files (files present at all, or kind file). */
export function wantsFiles(input: unknown): boolean {
  const raw = (input ?? {}) as Record<string, unknown>;
  return raw.files !== undefined || raw.kind === 'file';
}

/** Create: anonymous access, and files only with a token while the instance says so. */
export function requireMayCreate(
  settings: Pick<PushRuleSettings, 'allowAnonymous' | 'filesRequireAuth' | 'env'>,
  userId: Caller,
  input: unknown,
): void {
  if (userId === null && !settings.allowAnonymous) {
    throw new ApiError(
      'authentication_required',
      `This instance does not allow anonymous pushes: send an API token. ${turnOn('anonymousPushes', settings.env)}`,
    );
  }
  if (userId === null && settings.filesRequireAuth && wantsFiles(input)) throw filesNeedToken(settings);
}

/** Expire: the owner, or anyone when the push is deletable by viewers (401 anonymous, 403 signed-in otherwise). */
export function requireMayExpire(state: Pick<PushState, 'ownerId' | 'deletableByViewer'>, userId: Caller): void {
  if (isOwner(state, userId) || state.deletableByViewer) return;
  if (userId === null)
    throw new ApiError('authentication_required', 'Only the owner may expire this push; send their API token.');
  throw new ApiError('forbidden', 'This push is not deletable by viewers and does not belong to you.');
}

/** Audit: a token (checked before the push is looked up) … */
export function requireAuditCaller(userId: Caller): asserts userId is string {
  if (userId === null) throw new ApiError('authentication_required', "The audit log needs the owner's API token.");
}

/** … and the owner's. */
export function requireAuditOwner(state: Pick<PushState, 'ownerId'>, userId: string): void {
  if (!isOwner(state, userId)) throw new ApiError('forbidden', 'That push does not belong to you.');
}

/** Lists: a token. */
export function requireListCaller(userId: Caller): asserts userId is string {
  if (userId === null) throw new ApiError('authentication_required', 'Listing pushes needs an API token.');
}
