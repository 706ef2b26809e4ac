/**
 * A push's state, as both the server (from its row) and the stateful mock (in memory) hold it, and how that state
 * becomes the wire's push record. State is always read at a given instant: a push past `expiresAt` is expired even
 * when nothing has touched it since.
 *
 * Adding a field to the push record starts here: PushState gets it, `newPushState` sets it from the validated input,
 * and `pushRecord` puts it on the wire (the compiler points at each once the spec's `Push` requires it).
 */
import type { ClientEncryption, Push, PushKind, PushOwner } from './generated/types.gen.js';
import { durationOfSeconds } from './durations.js';
import { DAY_MS } from './limits.js';
import type { ValidPush } from './push-input.js';

export interface PushState {
  urlToken: string;
  kind: PushKind;
  /** The owner's user id; null for an anonymous push. */
  ownerId: string | null;
  passphraseProtected: boolean;
  /** Set for an end-to-end encrypted push: its payload, file names and bytes are the client's envelopes. */
  clientEncryption: ClientEncryption | null;
  /** Whole days, rounded up for a lifetime under a day. */
  expireAfterDays: number;
  /** The exact lifetime: `expiresAt` − `createdAt`. */
  expireAfterSeconds: number;
  expireAfterViews: number;
  /** Counting views used (owner views and failed views do not count). */
  viewsUsed: number;
  deletableByViewer: boolean;
  retrievalStep: boolean;
  /** The stored flag; `isExpired` adds time expiry. */
  expired: boolean;
  expiredOn: Date | null;
  /** Expired by an explicit delete. */
  deleted: boolean;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  /** The workspace it was made in (issue 41); null: its owner's personal space (and every anonymous push). */
  workspaceId: number | null;
  /** Who may open it (issue 42): the ranges a retrieval must come from, and the addresses (empty: no limit). */
  allowedNetworks: string[];
  recipientEmails: string[];
}

/** The state of a push created now from a validated input. */
export function newPushState(
  valid: ValidPush,
  ids: { urlToken: string; ownerId: string | null; workspaceId?: number | null },
  now: Date,
): PushState {
  return {
    urlToken: ids.urlToken,
    kind: valid.kind,
    ownerId: ids.ownerId,
    passphraseProtected: valid.passphrase !== null,
    clientEncryption: valid.clientEncryption,
    expireAfterDays: valid.expireAfterDays,
    expireAfterSeconds: valid.expireAfterSeconds,
    expireAfterViews: valid.expireAfterViews,
    viewsUsed: 0,
    deletableByViewer: valid.deletableByViewer,
    retrievalStep: valid.retrievalStep,
    expired: false,
    expiredOn: null,
    deleted: false,
    createdAt: now,
    updatedAt: now,
    expiresAt: new Date(now.getTime() + valid.expireAfterSeconds * 1000),
    workspaceId: ids.workspaceId ?? null,
    allowedNetworks: valid.allowedNetworks,
    recipientEmails: valid.recipientEmails,
  };
}

export function isPastTime(state: Pick<PushState, 'expiresAt'>, now: Date): boolean {
  return state.expiresAt.getTime() <= now.getTime();
}

/** The real state: the stored flag, or time run out. */
export function isExpired(state: Pick<PushState, 'expired' | 'expiresAt'>, now: Date): boolean {
  return state.expired || isPastTime(state, now);
}

export function isOwner(state: Pick<PushState, 'ownerId'>, userId: string | null): boolean {
  return userId !== null && userId === state.ownerId;
}

export function trimBase(base: string): string {
  return base.replace(/\/+$/, '');
}

export function htmlUrl(base: string, state: Pick<PushState, 'urlToken' | 'retrievalStep'>): string {
  return `${trimBase(base)}/p/${state.urlToken}${state.retrievalStep ? '/r' : ''}`;
}

export function jsonUrl(base: string, urlToken: string): string {
  return `${trimBase(base)}/api/v2/pushes/${urlToken}`;
}

/**
 * The view that uses the last one answers as the claim found the push: not expired, no view remaining (the push is
 * expired by then, and every later answer says so).
 */
export function lastViewAnswer(afterClaim: PushState): PushState {
  return afterClaim.expired ? { ...afterClaim, expired: false, expiredOn: null } : afterClaim;
}

/** The wire's push record of a state at `now`, with URLs under `base`. */
export function pushRecord(state: PushState, now: Date, base: string): Push {
  const timeUp = isPastTime(state, now);
  const expired = state.expired || timeUp;
  const expiredOn = state.expiredOn ?? (timeUp ? state.expiresAt : null);
  // Time left counts time only (a push expired by views or deleted keeps it), never more than the lifetime; days round
  // up, so 0 still means the time is up (for a push made with days: days − whole days elapsed, as before).
  const msLeft = timeUp ? 0 : Math.min(state.expiresAt.getTime() - now.getTime(), state.expireAfterSeconds * 1000);
  const daysRemaining = Math.min(Math.ceil(msLeft / DAY_MS), state.expireAfterDays);
  return {
    url_token: state.urlToken,
    kind: state.kind,
    expired,
    expired_on: expiredOn ? expiredOn.toISOString() : null,
    deleted: state.deleted,
    created_at: state.createdAt.toISOString(),
    updated_at: state.updatedAt.toISOString(),
    expires_at: state.expiresAt.toISOString(),
    expire_after_days: state.expireAfterDays,
    expire_after_duration: durationOfSeconds(state.expireAfterSeconds),
    expire_after_seconds: state.expireAfterSeconds,
    seconds_remaining: Math.floor(msLeft / 1000),
    expire_after_views: state.expireAfterViews,
    days_remaining: daysRemaining,
    views_remaining: Math.max(state.expireAfterViews - state.viewsUsed, 0),
    deletable_by_viewer: state.deletableByViewer,
    retrieval_step: state.retrievalStep,
    passphrase_protected: state.passphraseProtected,
    client_encryption: state.clientEncryption ? { ...state.clientEncryption } : null,
    json_url: jsonUrl(base, state.urlToken),
    html_url: htmlUrl(base, state),
  };
}

/** The owner's variant: name and note (the note is erased at expiry, so an expired record never shows it). */
export function ownerRecord(
  state: PushState,
  now: Date,
  base: string,
  secrets: { name: string; note: string },
): PushOwner {
  const record = pushRecord(state, now, base);
  return {
    ...record,
    name: secrets.name,
    note: record.expired ? '' : secrets.note,
    ...(state.recipientEmails.length > 0 ? { recipient_emails: [...state.recipientEmails] } : {}),
    ...(state.allowedNetworks.length > 0 ? { allowed_networks: [...state.allowedNetworks] } : {}),
    // The workspace, by our name and by Pro's (issue 41); absent outside one, as before workspaces.
    ...(state.workspaceId !== null ? { workspace_id: state.workspaceId, account_id: state.workspaceId } : {}),
  };
}
